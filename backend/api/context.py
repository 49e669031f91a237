"""What every route needs: the database, the settings, Temporal and the event tail."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

from temporalio.client import Client

from backend.api.errors import ApiError
from backend.api.sse import EventTail
from backend.config import AppPaths, AppSettings
from backend.process.readiness import WorkerReadiness, read_worker_readiness
from backend.store.db import Database
from backend.temporal.client import connect_temporal

log = logging.getLogger(__name__)

PLANNED_RESTART_WAIT_S = 30.0  # a recycled worker is ready again in seconds
PLANNED_RESTART_POLL_S = 0.25


@dataclass
class ApiContext:
    paths: AppPaths
    settings: AppSettings
    db: Database
    tail: EventTail
    api_token: str
    temporal_address: str
    sse_keepalive_s: float = 15.0
    _temporal: Client | None = None
    _temporal_lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def temporal(self) -> Client | None:
        """A connected client, or None when Temporal does not answer right now."""
        async with self._temporal_lock:
            if self._temporal is None:
                try:
                    # Temporal records this identity as the requester of our cancels.
                    self._temporal = await connect_temporal(
                        self.settings.temporal, self.temporal_address, identity="jobctrl_api",
                        app_dir=self.paths.app_dir,  # its starts are signed (start_signing)
                    )
                except Exception as error:  # noqa: BLE001 - reported as unreachable
                    log.warning("Temporal at %s unreachable: %s", self.temporal_address,
                                type(error).__name__)
                    return None
            return self._temporal

    async def temporal_reachable(self) -> bool:
        client = await self.temporal()
        if client is None:
            return False
        try:
            await asyncio.wait_for(client.service_client.check_health(), timeout=2)
            return True
        except Exception:  # noqa: BLE001
            return False

    async def worker_readiness(self) -> WorkerReadiness:
        return await read_worker_readiness(self.db, database_path=str(self.paths.database))

    async def require_runtime(self) -> Client:
        """The readiness rule: before anything durable, the worker and Temporal must be up.
        A worker in a planned restart (idle recycle) is back within seconds: the command
        waits for it rather than failing, and still fails if it does not come back."""
        readiness = await self.worker_readiness()
        deadline = time.monotonic() + PLANNED_RESTART_WAIT_S
        while readiness.reason == "planned_restart" and time.monotonic() < deadline:
            await asyncio.sleep(PLANNED_RESTART_POLL_S)
            readiness = await self.worker_readiness()
        if not readiness.ready:
            raise ApiError(
                503, "worker_runtime_unavailable",
                f"The worker is not running ({readiness.reason}); nothing was started.",
            )
        client = await self.temporal()
        if client is None or not await self.temporal_reachable():
            raise ApiError(
                503, "worker_runtime_unavailable",
                "Temporal is not reachable; nothing was started.",
            )
        return client
