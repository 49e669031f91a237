"""``worker_runtime_heartbeats``: runtime facts only a live worker can report."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from backend.config import TENANT_ID
from backend.domain.clock import parse_iso, utc_now, utc_now_iso
from backend.store.db import Database


@dataclass(frozen=True)
class WorkerIdentity:
    worker_id: str
    pid: int
    hostname: str
    app_dir: str
    database_path: str
    task_queue: str
    namespace: str
    configured_slots: int
    started_at: str


async def write_heartbeat(
    db: Database, identity: WorkerIdentity, *, active_slots: int, state: str = "running"
) -> None:
    async with db.transaction() as conn:
        await conn.execute(
            "INSERT INTO worker_runtime_heartbeats (worker_id, tenant_id, pid, hostname, app_dir,"
            " database_path, task_queue, namespace, configured_slots, active_slots, state,"
            " started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (worker_id) DO UPDATE SET active_slots = excluded.active_slots,"
            " state = excluded.state, heartbeat_at = excluded.heartbeat_at",
            (identity.worker_id, TENANT_ID, identity.pid, identity.hostname, identity.app_dir,
             identity.database_path, identity.task_queue, identity.namespace,
             identity.configured_slots, active_slots, state, identity.started_at, utc_now_iso()),
        )


@dataclass(frozen=True)
class HeartbeatRow:
    worker_id: str
    pid: int
    task_queue: str
    configured_slots: int
    active_slots: int
    state: str
    heartbeat_at: str

    def age_seconds(self) -> float:
        return (utc_now() - parse_iso(self.heartbeat_at)).total_seconds()


async def newest_heartbeats(
    db: Database, *, database_path: str, within: timedelta
) -> list[HeartbeatRow]:
    """Heartbeats of workers serving this very database, newest first."""
    since = (utc_now() - within).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    rows = await db.fetchall(
        "SELECT worker_id, pid, task_queue, configured_slots, active_slots, state, heartbeat_at"
        " FROM worker_runtime_heartbeats WHERE tenant_id = ? AND database_path = ?"
        " AND heartbeat_at >= ? ORDER BY heartbeat_at DESC",
        (TENANT_ID, database_path, since),
    )
    return [HeartbeatRow(*row) for row in rows]
