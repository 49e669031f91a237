"""The worker's heartbeat loop: proof of life plus slot usage, every few seconds."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import uuid

from backend.config import AppPaths
from backend.domain.clock import utc_now_iso
from backend.store.db import Database
from backend.store.heartbeats import WorkerIdentity, write_heartbeat
from backend.temporal.interceptors import ActivitySlotTracker

HEARTBEAT_INTERVAL_S = 2.0
log = logging.getLogger(__name__)


def worker_identity(paths: AppPaths, *, task_queue: str, namespace: str, slots: int) -> WorkerIdentity:
    return WorkerIdentity(
        worker_id=f"worker-{uuid.uuid4().hex[:12]}",
        pid=os.getpid(),
        hostname=socket.gethostname(),
        app_dir=str(paths.app_dir),
        database_path=str(paths.database),
        task_queue=task_queue,
        namespace=namespace,
        configured_slots=slots,
        started_at=utc_now_iso(),
    )


async def heartbeat_loop(
    db: Database, identity: WorkerIdentity, tracker: ActivitySlotTracker
) -> None:
    """Runs until cancelled; a failed write is logged and retried on the next beat."""
    while True:
        try:
            await write_heartbeat(db, identity, active_slots=tracker.active)
        except Exception:  # noqa: BLE001 - a missed beat must not kill the worker
            log.exception("heartbeat write failed")
        await asyncio.sleep(HEARTBEAT_INTERVAL_S)
