"""The ``discovery_runs`` aggregate and its monotonic progress payload."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import aiosqlite

from backend.config import TENANT_ID
from backend.domain import events as ev
from backend.domain.clock import utc_now_iso
from backend.store.db import Database
from backend.store.events import append_event
from backend.store.lifecycle import record_workflow_started

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


async def family_observation_counts(db: Database, run_id: str, family: str) -> tuple[int, int]:
    """(new jobs, distinct jobs observed) by one family in one Discover run."""
    row = await db.fetchone(
        "SELECT COALESCE(SUM(first_observation), 0), COUNT(DISTINCT job_id)"
        " FROM source_observations WHERE discover_run_id = ? AND source_family = ?",
        (run_id, family),
    )
    return int(row[0]), int(row[1])


async def observed_by_other_families(db: Database, run_id: str, family: str) -> int:
    """Distinct jobs one Discover run observed through its other families (what counts
    against the run's posting cap before ``family`` stores its own)."""
    row = await db.fetchone(
        "SELECT COUNT(DISTINCT job_id) FROM source_observations"
        " WHERE discover_run_id = ? AND source_family <> ?", (run_id, family))
    return int(row[0])


# --- the run's own events ----------------------------------------------------------------


async def record_run_started(conn: aiosqlite.Connection, *, workflow_id: str, run_id: str,
                             workflow_type: str, families: list[str]) -> None:
    """The run row, its WorkflowStarted and DiscoveryRunStarted, once per run."""
    await insert_run(conn, workflow_id=workflow_id, run_id=run_id, families=families)
    await record_workflow_started(conn, workflow_id=workflow_id, run_id=run_id,
                                  workflow_type=workflow_type,
                                  input_summary={"families": families})
    await append_event(
        conn,
        ev.DiscoveryRunStarted(discover_workflow_id=workflow_id, discover_run_id=run_id,
                               families=families, progress_total=len(families) + 2),
        workflow_id=workflow_id, run_id=run_id, dedupe_key=f"DiscoveryRunStarted:{run_id}",
    )


async def record_run_outcome(
    conn: aiosqlite.Connection, event: ev.DiscoveryRunCompleted | ev.DiscoveryRunFailed,
) -> None:
    """The run's one terminal Discovery event, however often its writer is retried."""
    run_id = event.discover_run_id
    await append_event(conn, event, workflow_id=event.discover_workflow_id, run_id=run_id,
                       dedupe_key=f"DiscoveryRunTerminal:{run_id}")


async def close_run_after_workflow(conn: aiosqlite.Connection, *, workflow_id: str,
                                   run_id: str, outcome: str, error_code: str | None) -> None:
    """A Discover run whose workflow closed without finalizing (the reconciler saw it
    closed): its row is finished, and a failed or canceled one gets its terminal event."""
    if outcome == "completed":
        await finish_run(conn, run_id, status="completed", error_code=None)
        return
    status = "canceled" if outcome == "canceled" else "failed"
    if await finish_run(conn, run_id, status=status, error_code=error_code):
        await record_run_outcome(conn, ev.DiscoveryRunFailed(
            discover_workflow_id=workflow_id, discover_run_id=run_id, status=status,
            error_code=error_code or "canceled", families_failed=[]))


async def run_status(db: Database, run_id: str) -> str | None:
    """The Discover run's status, or None before its row exists."""
    row = await db.fetchone("SELECT status FROM discovery_runs WHERE discover_run_id = ?",
                            (run_id,))
    return row[0] if row else None


@dataclass(frozen=True)
class ExecutionKey:
    """One exact Discover execution, as its checkpoint row names it."""

    tenant_id: str
    discover_workflow_id: str
    discover_run_id: str


async def ready_checkpoints(db: Database, *, limit: int) -> list[ExecutionKey]:
    """The executions whose coverage checkpoint is ``ready``, newest run first (the ones
    the operations view reads), for the repair pass's revalidation."""
    rows = await db.fetchall(
        "SELECT r.tenant_id, r.discover_workflow_id, r.discover_run_id"
        " FROM discovery_execution_recoveries r LEFT JOIN discovery_runs d"
        "   ON d.discover_run_id = r.discover_run_id AND d.tenant_id = r.tenant_id"
        " WHERE r.status = 'ready' ORDER BY d.started_at DESC LIMIT ?", (limit,))
    return [ExecutionKey(row[0], row[1], row[2]) for row in rows]


async def executions_to_check(db: Database, *, started_before: str, limit: int
                              ) -> list[tuple[str, str, str]]:
    """(tenant, workflow id, run id) of the Discover executions the history repair looks at:
    those still recovering or retrying, then runs started before ``started_before`` it has
    never checked (newest first)."""
    rows = await db.fetchall(
        "SELECT tenant_id, discover_workflow_id, discover_run_id"
        " FROM discovery_execution_recoveries WHERE status IN ('recovering', 'retrying')"
        " ORDER BY checked_at LIMIT ?", (limit,))
    rows += await db.fetchall(
        "SELECT d.tenant_id, d.discover_workflow_id, d.discover_run_id FROM discovery_runs d"
        " WHERE d.started_at <= ? AND NOT EXISTS (SELECT 1 FROM discovery_execution_recoveries r"
        "   WHERE r.tenant_id = d.tenant_id AND r.discover_workflow_id = d.discover_workflow_id"
        "   AND r.discover_run_id = d.discover_run_id)"
        " ORDER BY d.started_at DESC LIMIT ?", (started_before, limit))
    return [(row[0], row[1], row[2]) for row in rows]
