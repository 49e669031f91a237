"""The event-log reads of the projection builders (``backend/projections/paging.py``):
one page of a projection's event types after its watermark, the log's newest id, and the
wipe of a projection's tables before a rebuild."""

from __future__ import annotations

from collections.abc import Sequence

import aiosqlite

from backend.store.db import Database, fetch_rows
from backend.store.events import StoredEvent

EVENT_COLUMNS = "id, type, job_id, workflow_id, run_id, payload_json, created_at"


async def events_after(conn: aiosqlite.Connection, tenant_id: str, after: int,
                       event_types: Sequence[str], limit: int) -> list[StoredEvent]:
    """The next ``limit`` events of ``event_types`` after id ``after``, in id order."""
    marks = ",".join("?" * len(event_types))
    records = await fetch_rows(
        conn,
        f"SELECT {EVENT_COLUMNS} FROM job_events WHERE tenant_id = ? AND id > ?"
        f" AND type IN ({marks}) ORDER BY id LIMIT ?",
        (tenant_id, after, *event_types, limit),
    )
    return [StoredEvent(*tuple(record)) for record in records]


async def newest_event_id(reader: Database | aiosqlite.Connection, tenant_id: str) -> int:
    rows = await fetch_rows(
        reader, "SELECT COALESCE(MAX(id), 0) FROM job_events WHERE tenant_id = ?", (tenant_id,))
    return int(rows[0][0])


async def delete_tenant_rows(conn: aiosqlite.Connection, tables: Sequence[str],
                             tenant_id: str) -> None:
    """Every row of the tenant in each of ``tables`` (a projection's own tables, named by
    its module, never by a caller's input)."""
    for table in tables:
        await conn.execute(f"DELETE FROM {table} WHERE tenant_id = ?", (tenant_id,))
