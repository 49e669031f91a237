"""``apply_run_projections``: the rows of ``backend/projections/apply_runs.py``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import aiosqlite

from backend.store.db import Database

COLUMNS = ("job_id", "status", "target_kind", "packet_json", "approval_json", "failure_code",
           "park_reason", "dry_run", "workflow_id", "run_id", "updated_at", "last_event_id")

_WRITE_SQL = (f"INSERT OR REPLACE INTO apply_run_projections (tenant_id, {', '.join(COLUMNS)})"
              f" VALUES ({', '.join('?' * (len(COLUMNS) + 1))})")


async def read_row(conn: aiosqlite.Connection, tenant_id: str, job_id: str):
    """The job's row (``COLUMNS``, in order), or None."""
    async with conn.execute(
            f"SELECT {', '.join(COLUMNS)} FROM apply_run_projections WHERE tenant_id = ?"
            " AND job_id = ?", (tenant_id, job_id)) as cursor:
        return await cursor.fetchone()


async def write_row(conn: aiosqlite.Connection, values: tuple) -> None:
    """``values``: the tenant id, then ``COLUMNS`` in order."""
    await conn.execute(_WRITE_SQL, values)


async def job_events_of(db: Database, tenant_id: str, event_types: Sequence[str]) -> list:
    """(id, type, job_id, workflow_id, run_id, payload_json) of every job event of
    ``event_types``, in log order (a rebuild's input)."""
    marks = ", ".join("?" * len(event_types))
    return await db.fetchall(
        f"SELECT id, type, job_id, workflow_id, run_id, payload_json FROM job_events"
        f" WHERE tenant_id = ? AND type IN ({marks}) AND job_id IS NOT NULL ORDER BY id",
        (tenant_id, *event_types))


async def replace_rows(db: Database, tenant_id: str, rows: Iterable[tuple]) -> None:
    """The tenant's rows become exactly ``rows`` (each as :func:`write_row` takes it), in
    one transaction, so no reader sees a half-built table."""
    async with db.transaction() as conn:
        await conn.execute("DELETE FROM apply_run_projections WHERE tenant_id = ?",
                           (tenant_id,))
        for values in rows:
            await write_row(conn, values)
