"""``workflow_run_projections``: the rows of ``backend/projections/workflow_runs.py``,
and the log counts its repair pass compares them with."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import aiosqlite

from backend.store.db import Database
from backend.store.read_models import insert_or_replace

TABLES = ("workflow_run_projections",)


async def read_rows(conn: aiosqlite.Connection, columns: Sequence[str], tenant_id: str,
                    run_ids: Iterable[str]) -> list:
    """The rows (``columns``, by name) of ``run_ids`` that exist."""
    run_ids = tuple(run_ids)
    if not run_ids:
        return []
    marks = ",".join("?" * len(run_ids))
    async with conn.execute(
            f"SELECT {', '.join(columns)} FROM workflow_run_projections"
            f" WHERE tenant_id = ? AND run_id IN ({marks})", (tenant_id, *run_ids)) as cursor:
        return list(await cursor.fetchall())


async def read_row(db: Database, columns: Sequence[str], tenant_id: str, run_id: str):
    return await db.fetchone(
        f"SELECT {', '.join(columns)} FROM workflow_run_projections"
        " WHERE tenant_id = ? AND run_id = ?", (tenant_id, run_id))


async def write_rows(conn: aiosqlite.Connection, columns: Sequence[str],
                     rows: Sequence[tuple]) -> None:
    """Insert or replace each row (``columns``, in order)."""
    await insert_or_replace(conn, "workflow_run_projections", columns, rows)


async def started_runs_between(db: Database, tenant_id: str, started_type: str, *,
                               after: int, upto: int) -> int:
    """Runs whose first ``started_type`` event has an id in (after, upto]."""
    row = await db.fetchone(
        "SELECT COUNT(DISTINCT e.run_id) FROM job_events e"
        " WHERE e.tenant_id = ? AND e.type = ? AND e.id > ? AND e.id <= ?"
        " AND NOT EXISTS (SELECT 1 FROM job_events x WHERE x.tenant_id = e.tenant_id"
        "   AND x.run_id = e.run_id AND x.id <= ? AND x.type = e.type)",
        (tenant_id, started_type, after, upto, after))
    return int(row[0])


async def started_runs_upto(db: Database, tenant_id: str, started_type: str, upto: int) -> int:
    """Distinct runs with a ``started_type`` event at or below id ``upto``."""
    row = await db.fetchone(
        "SELECT COUNT(DISTINCT run_id) FROM job_events"
        " WHERE tenant_id = ? AND type = ? AND id <= ?", (tenant_id, started_type, upto))
    return int(row[0])


async def started_row_count(db: Database, tenant_id: str) -> int:
    """Rows that know their start (a started run the fold has seen)."""
    row = await db.fetchone(
        "SELECT COUNT(*) FROM workflow_run_projections"
        " WHERE tenant_id = ? AND started_at IS NOT NULL", (tenant_id,))
    return int(row[0])
