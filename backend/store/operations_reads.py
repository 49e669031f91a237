"""The Operations snapshot's raw reads besides the stage counts: recent Discover
executions with their workflow's status, and the stage timings the ETA and the pace are
measured from (index ranges on (tenant, stage, status, finished_at), never a scan of
every stage row)."""

from __future__ import annotations

from collections.abc import Iterable

from backend.config import TENANT_ID
from backend.store.db import Database
from backend.store.plan_inputs import backlog_candidates
from backend.store.stages import REDO_STATUSES, RETRYABLE_BLOCKS


async def recent_executions(db: Database, limit: int) -> list[dict]:
    """The newest Discover runs, each with ``workflow_status`` (the run read model's, else
    running / completed from the run row)."""
    rows = await db.fetchall(
        "SELECT d.discover_workflow_id, d.discover_run_id, d.status, d.families_json,"
        " d.progress_current, d.progress_total, d.progress_json, d.started_at, d.finished_at,"
        " COALESCE(w.status, CASE d.status WHEN 'running' THEN 'running' ELSE 'completed' END)"
        " AS workflow_status FROM discovery_runs d"
        # Both keys: the projection's (tenant_id, run_id) primary key serves the lookup.
        " LEFT JOIN workflow_run_projections w ON w.tenant_id = d.tenant_id"
        " AND w.run_id = d.discover_run_id"
        " WHERE d.tenant_id = ? ORDER BY d.started_at DESC LIMIT ?",
        (TENANT_ID, limit),
    )
    return [dict(row) for row in rows]


async def succeeded_durations(db: Database, stages: Iterable[str], *, since: str,
                              per_stage: int) -> list[tuple[str, int, str]]:
    """(stage, duration_ms, finished_at) of the newest ``per_stage`` successes of each
    stage finished at or after ``since``."""
    rows = []
    for stage in stages:
        rows += await db.fetchall(
            "SELECT stage, duration_ms, finished_at FROM job_stage_states WHERE tenant_id = ?"
            " AND stage = ? AND status = 'succeeded' AND finished_at >= ?"
            " AND duration_ms IS NOT NULL ORDER BY finished_at DESC LIMIT ?",
            (TENANT_ID, stage, since, per_stage),
        )
    return [(row[0], row[1], row[2]) for row in rows]


async def last_stage_start(db: Database) -> str | None:
    row = await db.fetchone("SELECT MAX(started_at) FROM job_stage_states WHERE tenant_id = ?",
                            (TENANT_ID,))
    return row[0] if row else None


async def settled_counts(db: Database, stages: tuple[str, ...], statuses: tuple[str, ...],
                         *, after: str) -> dict[str, int]:
    """Per stage, the rows that reached one of ``statuses`` after ``after``."""
    rows = await db.fetchall(
        f"SELECT stage, COUNT(*) FROM job_stage_states WHERE tenant_id = ?"
        f" AND stage IN ({','.join('?' * len(stages))})"
        f" AND status IN ({','.join('?' * len(statuses))}) AND finished_at > ?"
        " GROUP BY stage",
        (TENANT_ID, *stages, *statuses, after),
    )
    return {stage: int(n) for stage, n in rows}


async def sweep_may_take_a_job(db: Database, ref) -> bool:
    """Whether one job outside the execution ``ref`` is one its backlog sweep would take
    now, or may take once its active stage ends (one read, one snapshot). A superset of
    the sweep's rule: every block that can lift counts (the sweep drops a profile block
    while no profile exists) and so does work in progress, so "no" is safe to rely on."""
    async with db.read_snapshot() as conn:
        found = await backlog_candidates(
            conn, tenant_id=ref.tenant_id, discover_workflow_id=ref.discover_workflow_id,
            discover_run_id=ref.discover_run_id, redo_statuses=REDO_STATUSES,
            lifting_blocks=RETRYABLE_BLOCKS, limit=1, include_active=True)
    return bool(found)
