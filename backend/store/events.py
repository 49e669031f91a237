"""The append-only ``job_events`` log: the source of truth for projections and SSE.

:func:`append_event` is the one writer of the log; every append also folds the event into
the read models registered for its type, in the same transaction
(:mod:`backend.store.projection_builder`)."""

from __future__ import annotations

from dataclasses import dataclass

import aiosqlite

from backend.config import TENANT_ID
from backend.domain.events import DomainEvent
from backend.store import projection_builder
from backend.store.db import Database
from backend.store.event_rows import EVENT_INSERT_SQL, event_params  # noqa: F401 - re-exported


@dataclass(frozen=True)
class StoredEvent:
    id: int
    type: str
    job_id: str | None
    workflow_id: str | None
    run_id: str | None
    payload_json: str
    created_at: str




async def append_event(
    conn: aiosqlite.Connection,
    event: DomainEvent,
    *,
    job_id: str | None = None,
    workflow_id: str | None = None,
    run_id: str | None = None,
    dedupe_key: str | None = None,
    tenant_id: str = TENANT_ID,
) -> int | None:
    """Append inside the caller's transaction and fold the event into its projections
    there too. With a dedupe key, a repeat is a no-op (returns None, folds nothing),
    which is what makes a retried activity safe."""
    cursor = await conn.execute(
        EVENT_INSERT_SQL,
        event_params(event, job_id=job_id, workflow_id=workflow_id, run_id=run_id,
                     dedupe_key=dedupe_key, tenant_id=tenant_id),
    )
    if cursor.rowcount != 1:
        return None
    event_id = cursor.lastrowid
    await projection_builder.fold_appended(conn, event.event_type, tenant_id)
    return event_id


async def read_events_after(
    db: Database, after_id: int, limit: int, tenant_id: str = TENANT_ID
) -> list[StoredEvent]:
    rows = await db.fetchall(
        "SELECT id, type, job_id, workflow_id, run_id, payload_json, created_at FROM job_events"
        " WHERE tenant_id = ? AND id > ? ORDER BY id LIMIT ?",
        (tenant_id, after_id, limit),
    )
    return [StoredEvent(*row) for row in rows]


async def latest_event_id(db: Database, tenant_id: str = TENANT_ID) -> int:
    row = await db.fetchone(
        "SELECT COALESCE(MAX(id), 0) FROM job_events WHERE tenant_id = ?", (tenant_id,)
    )
    return int(row[0])


async def any_recorded(reader: Database | aiosqlite.Connection, *dedupe_keys: str,
                       tenant_id: str = TENANT_ID) -> bool:
    """Is an event with one of ``dedupe_keys`` in the log? ``reader`` is the database or,
    inside a write transaction, its connection (to re-check under the write lock)."""
    marks = ",".join("?" * len(dedupe_keys))
    sql = f"SELECT 1 FROM job_events WHERE tenant_id = ? AND dedupe_key IN ({marks}) LIMIT 1"
    params = (tenant_id, *dedupe_keys)
    if isinstance(reader, Database):
        return await reader.fetchone(sql, params) is not None
    async with reader.execute(sql, params) as cursor:
        return await cursor.fetchone() is not None
