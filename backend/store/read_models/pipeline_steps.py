"""``pipeline_step_projections``: the rows of ``backend/projections/pipeline_steps.py``."""

from __future__ import annotations

from collections.abc import Sequence

import aiosqlite

from backend.store.db import Database, fetch_rows
from backend.store.event_pages import EVENT_COLUMNS
from backend.store.events import StoredEvent
from backend.store.read_models import insert_or_replace

TABLES = ("pipeline_step_projections",)


async def read_row(reader: Database | aiosqlite.Connection, columns: Sequence[str], *,
                   tenant_id: str, run_id: str, step_kind: str, item_key: str):
    """One step's row (``columns``, in order), or None."""
    records = await fetch_rows(
        reader,
        f"SELECT {', '.join(columns)} FROM pipeline_step_projections WHERE tenant_id = ?"
        " AND discover_run_id = ? AND step_kind = ? AND item_key = ?",
        (tenant_id, run_id, step_kind, item_key))
    return records[0] if records else None


async def write_rows(conn: aiosqlite.Connection, columns: Sequence[str],
                     rows: Sequence[tuple]) -> None:
    """Insert or replace each row (``columns``, in order)."""
    await insert_or_replace(conn, "pipeline_step_projections", columns, rows)


async def execution_rows(reader: Database | aiosqlite.Connection, columns: Sequence[str],
                         ref) -> list:
    """Every step row of one exact execution, in a stable order."""
    return await fetch_rows(
        reader,
        f"SELECT {', '.join(columns)} FROM pipeline_step_projections WHERE tenant_id = ?"
        " AND discover_workflow_id = ? AND discover_run_id = ?"
        " ORDER BY COALESCE(queued_at, started_at, finished_at), step_kind, item_key",
        (ref.tenant_id, ref.discover_workflow_id, ref.discover_run_id))


async def delete_execution(conn: aiosqlite.Connection, ref) -> None:
    await conn.execute(
        "DELETE FROM pipeline_step_projections WHERE tenant_id = ? AND discover_workflow_id = ?"
        " AND discover_run_id = ?",
        (ref.tenant_id, ref.discover_workflow_id, ref.discover_run_id))


async def run_events(conn: aiosqlite.Connection, tenant_id: str, run_id: str,
                     event_types: Sequence[str]) -> list[StoredEvent]:
    """Every event of ``event_types`` recorded under the run, in log order."""
    marks = ",".join("?" * len(event_types))
    records = await fetch_rows(
        conn,
        f"SELECT {EVENT_COLUMNS} FROM job_events WHERE tenant_id = ? AND run_id = ?"
        f" AND type IN ({marks}) ORDER BY id",
        (tenant_id, run_id, *event_types))
    return [StoredEvent(*tuple(record)) for record in records]
