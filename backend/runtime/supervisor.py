"""Starts and stops the three services in order: Temporal, then the worker, then the API.

Used by ``jobctrl serve`` and by the desktop shell alike. It owns the app dir while it
runs (an exclusive lock), writes ``runtime.json`` for scripts and removes it on exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from pathlib import Path

import httpx
from filelock import FileLock, Timeout

from backend.config import (
    AppPaths,
    AppSettings,
    RuntimeInfo,
    load_settings,
    new_api_token,
    read_runtime_info,
    write_runtime_info,
)
from backend.runtime.children import ChildRegistry
from backend.runtime.embedded_temporal import dev_server_argv, temporal_binary
from backend.runtime.ports import LOOPBACK, port_or_free
from backend.runtime.private_files import make_private, restrict_umask
from backend.runtime.process import console_log_file, log_file
from backend.runtime.readiness import READY_WITHIN
from backend.runtime.services import ManagedService, ServiceSpec, ServiceStatus, StatusCallback
from backend.store.db import Database, migrate
from backend.store.heartbeats import newest_heartbeats
from backend.temporal.client import connect_temporal, connect_with_retry

log = logging.getLogger(__name__)

TEMPORAL_READY_TIMEOUT_S = 30.0
WORKER_READY_TIMEOUT_S = 60.0
API_READY_TIMEOUT_S = 30.0


class AppDirInUseError(RuntimeError):
    def __init__(self, app_dir: Path):
        info = None
        with contextlib.suppress(ValueError):
            info = read_runtime_info(app_dir)
        owner = f" (API {info.api_base_url}, pids {info.pids})" if info else ""
        super().__init__(
            f"The app dir {app_dir} is already in use by another JobCtrl instance{owner}."
            " Close that instance, or start this one with a different --app-dir."
        )


def child_command(*args: str) -> list[str]:
    """Frozen builds are one executable: the shell starts its children as itself."""
    if getattr(sys, "frozen", False):
        return [sys.executable, *args]
    return [sys.executable, "-m", "backend.cli", *args]


class Supervisor:
    def __init__(
        self,
        app_dir: Path,
        *,
        api_port: int | None = None,
        temporal_port: int | None = None,
        temporal_ui: bool = True,
        on_status: StatusCallback | None = None,
    ):
        self.paths = AppPaths(app_dir)
        self.settings: AppSettings = load_settings(self.paths)
        self._requested_api_port = api_port
        self._requested_temporal_port = temporal_port
        self._temporal_ui = temporal_ui
        self._user_on_status = on_status or (lambda status: None)
        self._lock = FileLock(str(self.paths.instance_lock))
        self._children = ChildRegistry(self.paths.children_pids)
        self._services: list[ManagedService] = []
        self._db: Database | None = None
        self.token = new_api_token()
        self.info: RuntimeInfo | None = None

    # -- start -------------------------------------------------------------------------

    async def start(self) -> RuntimeInfo:
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            raise AppDirInUseError(self.paths.app_dir) from None
        try:
            return await self._start_locked()
        except BaseException:
            await self.stop()
            raise

    async def _start_locked(self) -> RuntimeInfo:
        reaped = self._children.reap_leftovers()
        if reaped:
            log.warning("reaped leftover child processes of an earlier run: %s", reaped)
        # Before anything is written: what this process and its children create is
        # private, and what an older version left readable is repaired.
        restrict_umask()
        make_private(self.paths.app_dir)
        self.paths.logs.mkdir(exist_ok=True)
        self.paths.temporal_dir.mkdir(exist_ok=True)
        migrate(self.paths.database)
        self._db = await Database.open(self.paths.database, run_migrations=False)

        temporal_address, ui_url = await self._start_temporal()
        api_port = port_or_free(self._requested_api_port, "JobCtrl API")
        base_env = {**os.environ, "JOBCTRL_APP_DIR": str(self.paths.app_dir),
                    "JOBCTRL_TEMPORAL_ADDRESS": temporal_address,
                    "JOBCTRL_PARENT_PID": str(os.getpid())}
        # The API does not need the worker to start (health says "degraded" until the
        # worker beats), so both come up at once: their imports overlap.
        results = await asyncio.gather(
            self._start_service(self._worker_spec(base_env)),
            self._start_service(self._api_spec(base_env, api_port)),
            return_exceptions=True,  # let both settle before any cleanup
        )
        for result in results:
            if isinstance(result, BaseException):
                raise result

        self.info = RuntimeInfo(
            app_dir=str(self.paths.app_dir),
            database=str(self.paths.database),
            api_base_url=f"http://{LOOPBACK}:{api_port}",
            api_token=self.token,
            temporal_address=temporal_address,
            temporal_namespace=self.settings.temporal.namespace,
            temporal_ui_url=ui_url,
        )
        self._refresh_runtime_pids()
        return self.info

    async def _start_temporal(self) -> tuple[str, str | None]:
        temporal = self.settings.temporal
        if temporal.external:
            self._on_status(ServiceStatus("temporal", "external", temporal.address))
            await self._wait_temporal(temporal.address)  # fail early with a clear message
            return temporal.address, None
        port = port_or_free(self._requested_temporal_port, "Temporal dev server")
        ui_port = port_or_free(None, "Temporal Web UI") if self._temporal_ui else None
        address = f"{LOOPBACK}:{port}"
        binary = temporal_binary()
        spec = ServiceSpec(
            name="temporal",
            argv=lambda: dev_server_argv(
                binary, history_file=self.paths.temporal_history, port=port, ui_port=ui_port
            ),
            env=dict(os.environ),
            ready=lambda _pid: self._temporal_answers(address),
            ready_timeout=TEMPORAL_READY_TIMEOUT_S,
            console_log=console_log_file(self.paths.logs, "temporal"),
        )
        await self._start_service(spec)
        return address, (f"http://{LOOPBACK}:{ui_port}" if ui_port else None)

    async def _temporal_answers(self, address: str) -> bool:
        client = await connect_temporal(self.settings.temporal, address)
        await client.service_client.check_health()
        return True

    async def _wait_temporal(self, address: str) -> None:
        await connect_with_retry(self.settings.temporal, address, timeout=TEMPORAL_READY_TIMEOUT_S)

    def _worker_spec(self, env: dict[str, str]) -> ServiceSpec:
        async def worker_ready(pid: int) -> bool:
            rows = await newest_heartbeats(
                self._db, database_path=str(self.paths.database), within=READY_WITHIN
            )
            return any(row.pid == pid and row.state == "running" for row in rows)

        return ServiceSpec(
            name="worker",
            argv=lambda: child_command("worker", "--app-dir", str(self.paths.app_dir)),
            env=env,
            ready=worker_ready,
            ready_timeout=WORKER_READY_TIMEOUT_S,
            console_log=console_log_file(self.paths.logs, "worker"),
            log_file=log_file(self.paths.logs, "worker"),
        )

    def _api_spec(self, env: dict[str, str], port: int) -> ServiceSpec:
        base_url = f"http://{LOOPBACK}:{port}"

        async def api_ready(_pid: int) -> bool:
            async with httpx.AsyncClient(timeout=2) as client:
                response = await client.get(f"{base_url}/v1/health")
                return response.status_code == 200

        return ServiceSpec(
            name="api",
            argv=lambda: child_command(
                "api", "--app-dir", str(self.paths.app_dir), "--port", str(port)
            ),
            env={**env, "JOBCTRL_API_TOKEN": self.token},
            ready=api_ready,
            ready_timeout=API_READY_TIMEOUT_S,
            console_log=console_log_file(self.paths.logs, "api"),
            log_file=log_file(self.paths.logs, "api"),
        )

    async def _start_service(self, spec: ServiceSpec) -> None:
        service = ManagedService(spec, self._children, self._on_status)
        self._services.append(service)
        await service.start()

    # -- stop --------------------------------------------------------------------------

    async def stop(self) -> None:
        """Ordered shutdown: API, then worker, then Temporal. Safe to call twice."""
        for service in reversed(self._services):
            try:
                await service.stop()
            except Exception:  # noqa: BLE001 - keep stopping the others
                log.exception("stopping %s failed", service.spec.name)
        self._services.clear()
        if self._db is not None:
            await self._db.close()
            self._db = None
        if self._lock.is_locked:
            self.paths.runtime_file.unlink(missing_ok=True)
            self._lock.release()

    def _on_status(self, status: ServiceStatus) -> None:
        if status.state == "ready" and self.info is not None:
            self._refresh_runtime_pids()  # a restarted child has a new pid
        self._user_on_status(status)

    def _refresh_runtime_pids(self) -> None:
        pids = {"supervisor": os.getpid(),
                **{service.spec.name: service.pid for service in self._services}}
        self.info = self.info.model_copy(update={"pids": pids})
        write_runtime_info(self.paths, self.info)

    def service(self, name: str) -> ManagedService | None:
        return next((s for s in self._services if s.spec.name == name), None)
