"""Is a worker serving this database right now? Decided from heartbeats alone."""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from backend.domain.model import CamelModel
from backend.store.db import Database
from backend.store.heartbeats import newest_heartbeats

# A worker beats every 2 s; five missed beats and it no longer counts as ready to take work.
READY_WITHIN = timedelta(seconds=10)


class WorkerReadiness(CamelModel):
    ready: bool
    # planned_restart: the worker stopped on purpose while idle and is coming back now
    # (backend/supervision/recycle.py); not ready for these seconds, and not a fault.
    reason: Literal["fresh_heartbeat", "no_heartbeat", "worker_stopped", "planned_restart"]
    task_queue: str | None = None
    workers: int = 0
    configured_slots: int | None = None
    active_slots: int | None = None
    last_heartbeat_at: str | None = None


async def read_worker_readiness(db: Database, *, database_path: str) -> WorkerReadiness:
    rows = await newest_heartbeats(db, database_path=database_path, within=READY_WITHIN)
    if not rows:
        return WorkerReadiness(ready=False, reason="no_heartbeat")
    newest = rows[0]
    running = [row for row in rows if row.state == "running" and row.task_queue == newest.task_queue]
    if not running:
        return WorkerReadiness(
            ready=False, task_queue=newest.task_queue,
            reason="planned_restart" if newest.state == "recycling" else "worker_stopped",
            last_heartbeat_at=newest.heartbeat_at,
        )
    return WorkerReadiness(
        ready=True,
        reason="fresh_heartbeat",
        task_queue=newest.task_queue,
        workers=len(running),
        configured_slots=sum(row.configured_slots for row in running),
        active_slots=sum(row.active_slots for row in running),
        last_heartbeat_at=running[0].heartbeat_at,
    )
