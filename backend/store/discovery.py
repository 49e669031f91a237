"""The ``discovery_runs`` aggregate and its monotonic progress payload."""

from __future__ import annotations

import json
from typing import Any

import aiosqlite

from backend.config import TENANT_ID
from backend.domain.clock import utc_now_iso
from backend.store.db import Database

PROGRESS_COMPLETE = 2**31  # ``reached`` value that fills the bar to progress_total


async def insert_run(
    conn: aiosqlite.Connection, *, workflow_id: str, run_id: str, families: list[str]
) -> bool:
    """Returns False when a retried activity finds the run already recorded."""
    total = len(families) + 2
    payload = discovery_progress_payload(current=0, total=total, families={})
    cursor = await conn.execute(
        "INSERT INTO discovery_runs (discover_run_id, tenant_id, discover_workflow_id, status,"
        " families_json, progress_current, progress_total, progress_json, started_at)"
        " VALUES (?, ?, ?, 'running', ?, 0, ?, ?, ?) ON CONFLICT DO NOTHING",
        (run_id, TENANT_ID, workflow_id, json.dumps(families), total, json.dumps(payload),
         utc_now_iso()),
    )
    return cursor.rowcount == 1


def discovery_progress_payload(
    *, current: int, total: int, families: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """The Runs progress bar's payload: one step per family plus enrichment and preparation."""
    return {
        "progressCurrent": current,
        "progressTotal": total,
        "percent": round(100 * current / total) if total else None,
        "families": families,
    }


async def advance_progress(
    conn: aiosqlite.Connection,
    run_id: str,
    *,
    reached: int,
    family: str | None = None,
    family_progress: dict[str, Any] | None = None,
) -> None:
    """Move the spine forward (never backward) and record one family's outcome."""
    row = await (
        await conn.execute(
            "SELECT progress_current, progress_total, progress_json FROM discovery_runs"
            " WHERE discover_run_id = ?",
            (run_id,),
        )
    ).fetchone()
    current = max(int(row[0]), min(reached, int(row[1])))
    families = json.loads(row[2]).get("families", {})
    if family is not None and family_progress is not None:
        families[family] = family_progress
    payload = discovery_progress_payload(current=current, total=int(row[1]), families=families)
    await conn.execute(
        "UPDATE discovery_runs SET progress_current = ?, progress_json = ? WHERE discover_run_id = ?",
        (current, json.dumps(payload), run_id),
    )


async def finish_run(
    conn: aiosqlite.Connection, run_id: str, *, status: str, error_code: str | None
) -> bool:
    """Terminal status is written once; returns False if the run was already finished."""
    cursor = await conn.execute(
        "UPDATE discovery_runs SET status = ?, error_code = ?, finished_at = ?,"
        " jobs_new = (SELECT COUNT(*) FROM source_observations o"
        "   WHERE o.discover_run_id = discovery_runs.discover_run_id AND o.first_observation = 1),"
        " jobs_observed = (SELECT COUNT(DISTINCT job_id) FROM source_observations o"
        "   WHERE o.discover_run_id = discovery_runs.discover_run_id)"
        " WHERE discover_run_id = ? AND status = 'running'",
        (status, error_code, utc_now_iso(), run_id),
    )
    return cursor.rowcount == 1


async def run_counts(conn: aiosqlite.Connection, run_id: str) -> tuple[int, int]:
    row = await (
        await conn.execute(
            "SELECT jobs_observed, jobs_new FROM discovery_runs WHERE discover_run_id = ?",
            (run_id,),
        )
    ).fetchone()
    return int(row[0]), int(row[1])


async def list_runs(db: Database, *, limit: int) -> list[dict[str, Any]]:
    rows = await db.fetchall(
        "SELECT discover_run_id, discover_workflow_id, status, families_json, progress_current,"
        " progress_total, progress_json, jobs_new, jobs_observed, error_code, started_at,"
        " finished_at FROM discovery_runs WHERE tenant_id = ? ORDER BY started_at DESC LIMIT ?",
        (TENANT_ID, limit),
    )
    return [dict(row) for row in rows]
