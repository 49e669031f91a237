"""Starts and stops the three services: Temporal, the worker and the API.

Used by ``jobctrl serve`` and by the desktop shell alike. It owns the app dir while it
runs (an exclusive lock), writes ``runtime.json`` for scripts and removes it on exit.

Start-up is ordered for speed: the three children are spawned first, before this process
imports anything heavy (the settings models), so their imports and Temporal's boot
overlap with ours; then every service is awaited at once. The worker and the API connect
to Temporal with retry, so they may start before it answers. Readiness costs no imports
here: the worker and the API say when they are ready (``ready_signal``: the worker after
its first heartbeat row, the API once uvicorn listens); the dev server cannot, so its
port is probed — once it accepts connections its health check passes at the first try
(checked against ``check_health()``), and ``/v1/health`` reports Temporal from a real RPC.
Without a signal, a slow fallback reads the heartbeat table.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING

from filelock import FileLock, Timeout

from backend.paths import (
    AppPaths,
    configured_temporal_address,
    new_api_token,
    temporal_web_ui_enabled,
)
from backend.process.ready_signal import ReadyListener
from backend.store.schema_version import refuse_newer_database
from backend.supervision.children import ChildRegistry
from backend.supervision.embedded_temporal import dev_server_argv, temporal_binary
from backend.supervision.ports import LOOPBACK, settle_ports
from backend.supervision.private_files import make_private, restrict_umask
from backend.supervision.process import child_command, console_log_file, log_file
from backend.supervision.services import ManagedService, ServiceSpec, ServiceStatus, StatusCallback

if TYPE_CHECKING:
    from backend.config import AppSettings, RuntimeInfo
    from backend.store.db import Database

__all__ = ["AppDirInUseError", "Supervisor", "child_command"]

log = logging.getLogger(__name__)

TEMPORAL_READY_TIMEOUT_S = 30.0
WORKER_READY_TIMEOUT_S = 60.0
API_READY_TIMEOUT_S = 30.0
TEMPORAL_PROBE_S = 0.02  # the dev server cannot signal: its port is probed this often
PORT_PROBE_TIMEOUT_S = 0.5
# When the worker recycles itself while idle, the dev server is restarted with it if it
# holds at least this much more than when it became ready (it keeps its state in its
# SQLite file; its heap after a 1,000-job run is ~170 MiB over its empty size).
TEMPORAL_RECYCLE_GROWN_MIB = 64.0
TEMPORAL_RECYCLE_GROWN_ENV = "JOBCTRL_RECYCLE_TEMPORAL_GROWN_MIB"
# ... and the API too, past this much (~11 MiB over its empty size after a 1,000-job run,
# from the first use of its routes and the pages it served; bench/README.md). Its streams
# resume by Last-Event-ID. It is reported "recycling" before it stops, so the desktop's
# calls wait for the new API and its status line stays "Ready" (desktop/client.py).
API_RECYCLE_GROWN_MIB = 8.0
API_RECYCLE_GROWN_ENV = "JOBCTRL_RECYCLE_API_GROWN_MIB"


async def port_accepts(address: str) -> bool:
    """True when something accepts TCP connections at ``host:port`` (no import cost)."""
    host, _, port = address.rpartition(":")
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)),
                                           PORT_PROBE_TIMEOUT_S)
    except (OSError, TimeoutError, ValueError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


class AppDirInUseError(RuntimeError):
    def __init__(self, app_dir: Path):
        from backend.config import read_runtime_info

        info = None
        with contextlib.suppress(ValueError):
            info = read_runtime_info(app_dir)
        owner = f" (API {info.api_base_url}, pids {info.pids})" if info else ""
        super().__init__(
            f"The app dir {app_dir} is already in use by another JobCtrl instance{owner}."
            " Close that instance, or start this one with a different --app-dir."
        )


class Supervisor:
    def __init__(
        self,
        app_dir: Path,
        *,
        api_port: int | None = None,
        temporal_port: int | None = None,
        temporal_ui: bool | None = None,
        on_status: StatusCallback | None = None,
    ):
        self.paths = AppPaths(app_dir)
        self._settings: AppSettings | None = None
        self._requested_api_port = api_port
        self._requested_temporal_port = temporal_port
        self._temporal_ui = temporal_ui  # None: the user's setting (temporal.webUi, off)
        self._user_on_status = on_status or (lambda status: None)
        self._lock = FileLock(str(self.paths.instance_lock))
        self._children = ChildRegistry(self.paths.children_pids)
        self._services: list[ManagedService] = []
        self._ready_signals = ReadyListener()
        self._db: Database | None = None
        self.token = new_api_token()
        self.info: RuntimeInfo | None = None

    @property
    def settings(self) -> AppSettings:
        """The validated settings, read on first use (not before the children are spawned)."""
        if self._settings is None:
            from backend.config import load_settings

            self._settings = load_settings(self.paths)
        return self._settings

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
        # A newer JobCtrl's data is refused before any service starts (they would each
        # refuse it less readably); the services migrate the database themselves.
        refuse_newer_database(self.paths.database)
        external = configured_temporal_address(self.paths)
        web_ui = (temporal_web_ui_enabled(self.paths) if self._temporal_ui is None
                  else self._temporal_ui)
        # Every port is settled before anything is spawned: a taken one fails cleanly.
        ports = settle_ports({
            "JobCtrl API": self._requested_api_port,
            **({} if external else {"Temporal dev server": self._requested_temporal_port}),
            **({"Temporal Web UI": None} if web_ui and not external else {}),
        })
        api_port = ports["JobCtrl API"]
        temporal_port = ports.get("Temporal dev server")
        ui_port = ports.get("Temporal Web UI")
        await self._ready_signals.start()

        if external:
            temporal_address, ui_url = external, None
            self._on_status(ServiceStatus("temporal", "external", external))
            self._check_settings_agree(external)
            await self._wait_temporal(external)  # fail early with a clear message
        else:
            temporal_address = f"{LOOPBACK}:{temporal_port}"
            ui_url = f"http://{LOOPBACK}:{ui_port}" if ui_port else None
            temporal = self._launch(self._temporal_spec(temporal_address, temporal_port, ui_port))
        # The worker and the API connect to Temporal with retry: they start now, and
        # their imports overlap with Temporal's boot and with ours.
        base_env = {**os.environ, "JOBCTRL_APP_DIR": str(self.paths.app_dir),
                    "JOBCTRL_TEMPORAL_ADDRESS": temporal_address,
                    "JOBCTRL_PARENT_PID": str(os.getpid()),
                    **self._ready_signals.child_env()}
        starting = [self._launch(self._worker_spec(base_env)),
                    self._launch(self._api_spec(base_env, api_port))]
        if not external:
            starting.insert(0, temporal)
        if not external:
            self._check_settings_agree(None)  # the settings models load while they start
        await self._all_ready(starting)

        from backend.config import RuntimeInfo

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

    async def _all_ready(self, services: list[ManagedService]) -> None:
        """Wait for every service; the first one that fails cancels the others' waits
        (stop() then ends them), so a dead Temporal is reported at once."""
        waits = [asyncio.ensure_future(service.until_ready()) for service in services]
        try:
            done, _ = await asyncio.wait(waits, return_when=asyncio.FIRST_EXCEPTION)
        finally:
            for wait in waits:
                wait.cancel()
            await asyncio.gather(*waits, return_exceptions=True)
        for wait in done:
            if wait.exception() is not None:
                raise wait.exception()

    def _check_settings_agree(self, external: str | None) -> None:
        """The validated settings name the same Temporal as the raw peek that decided what
        to spawn (they read one field of one file; this guards against drift)."""
        if (self.settings.temporal.address or None) != external:
            raise RuntimeError(
                f"{self.paths.settings}: temporal.address reads as {external!r} before"
                f" validation and {self.settings.temporal.address!r} after")

    async def _heartbeat_database(self) -> Database:
        """Only for the fallback readiness check; the children migrate the database."""
        if self._db is None:
            from backend.store.db import Database

            self._db = await Database.open(self.paths.database)
        return self._db

    def _temporal_spec(self, address: str, port: int, ui_port: int | None) -> ServiceSpec:
        binary = temporal_binary()
        return ServiceSpec(
            name="temporal",
            argv=lambda: dev_server_argv(
                binary, history_file=self.paths.temporal_history, port=port, ui_port=ui_port
            ),
            env=dict(os.environ),
            ready=lambda _pid: port_accepts(address),
            ready_timeout=TEMPORAL_READY_TIMEOUT_S,
            poll_s=TEMPORAL_PROBE_S,
            console_log=console_log_file(self.paths.logs, "temporal"),
        )

    async def _wait_temporal(self, address: str) -> None:
        from backend.temporal.client import connect_with_retry

        await connect_with_retry(self.settings.temporal, address, timeout=TEMPORAL_READY_TIMEOUT_S)

    def _worker_spec(self, env: dict[str, str]) -> ServiceSpec:
        async def worker_ready(pid: int) -> bool:
            if self._ready_signals.signalled("worker", pid):  # after its first heartbeat
                return True
            from backend.process.readiness import READY_WITHIN
            from backend.store.heartbeats import newest_heartbeats

            rows = await newest_heartbeats(
                await self._heartbeat_database(), database_path=str(self.paths.database),
                within=READY_WITHIN)
            return any(row.pid == pid and row.state == "running" for row in rows)

        return ServiceSpec(
            name="worker",
            argv=lambda: child_command("worker", "--app-dir", str(self.paths.app_dir)),
            env=env,
            ready=worker_ready,
            ready_timeout=WORKER_READY_TIMEOUT_S,
            ready_signal=lambda pid: self._ready_signals.wait("worker", pid),
            console_log=console_log_file(self.paths.logs, "worker"),
            log_file=log_file(self.paths.logs, "worker"),
            before_planned_restart=self._recycle_grown_services,
        )

    async def _recycle_grown_services(self) -> None:
        """The worker stopped on purpose, idle: restart the embedded dev server, then the
        API, while no worker is connected, each only if that gives enough memory back.
        The API's client reconnects to Temporal by itself (health reports Temporal
        unreachable for those seconds and the worker ``planned_restart``); the window's
        calls wait for the new API and its event stream resumes from its last event."""
        await self._restart_if_grown("temporal", TEMPORAL_RECYCLE_GROWN_ENV,
                                     TEMPORAL_RECYCLE_GROWN_MIB)
        await self._restart_if_grown("api", API_RECYCLE_GROWN_ENV, API_RECYCLE_GROWN_MIB)

    async def _restart_if_grown(self, name: str, env_name: str, default_mib: float) -> None:
        service = self.service(name)
        if service is None:  # an external Temporal is not ours to restart
            return
        threshold = float(os.environ.get(env_name) or default_mib)
        grown = service.grown_bytes()
        if grown is None or grown < threshold * 1024 * 1024:
            return
        log.info("%s holds %.0f MiB more than at start: restarting it with the worker",
                 name, grown / 1024 / 1024)
        await service.restart_planned()

    def _api_spec(self, env: dict[str, str], port: int) -> ServiceSpec:
        # uvicorn binds its socket only once the app's lifespan has started: a port that
        # accepts connections is an API that answers.
        address = f"{LOOPBACK}:{port}"

        return ServiceSpec(
            name="api",
            argv=lambda: child_command(
                "api", "--app-dir", str(self.paths.app_dir), "--port", str(port)
            ),
            env={**env, "JOBCTRL_API_TOKEN": self.token},
            ready=lambda _pid: port_accepts(address),
            ready_timeout=API_READY_TIMEOUT_S,
            ready_signal=lambda pid: self._ready_signals.wait("api", pid),
            console_log=console_log_file(self.paths.logs, "api"),
            log_file=log_file(self.paths.logs, "api"),
        )

    def _launch(self, spec: ServiceSpec) -> ManagedService:
        service = ManagedService(spec, self._children, self._on_status)
        self._services.append(service)
        service.launch()
        return service

    # -- stop --------------------------------------------------------------------------

    async def stop(self) -> None:
        """Ordered shutdown: API, then worker, then Temporal. Safe to call twice."""
        for service in reversed(self._services):
            try:
                await service.stop()
            except Exception:  # noqa: BLE001 - keep stopping the others
                log.exception("stopping %s failed", service.spec.name)
        self._services.clear()
        await self._ready_signals.close()
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
        from backend.config import write_runtime_info

        pids = {"supervisor": os.getpid(),
                **{service.spec.name: service.pid for service in self._services}}
        self.info = self.info.model_copy(update={"pids": pids})
        write_runtime_info(self.paths, self.info)

    def service(self, name: str) -> ManagedService | None:
        return next((s for s in self._services if s.spec.name == name), None)
