"""The rows the Operations stage counts are summed from (``backend/operations/
stage_counts.py`` turns them into count blocks): per-(stage, status) rows of a scope, the
trigger-maintained totals (``job_stage_status_counts`` / ``job_counts``, migration 0012;
``execution_cohort_stage_counts`` / ``execution_cohort_job_counts`` for the executions in
``counted_executions``, migrations 0013/0014), running rows with their owner run's
liveness, and stale scores. Rows are ``(stage, status, owner_alive, n)`` tuples."""

from __future__ import annotations

from dataclasses import dataclass

from backend.config import TENANT_ID
from backend.domain.stages import STAGES
from backend.store.db import Database


@dataclass(frozen=True)
class Scope:
    """Which jobs a scope holds, as an SQL condition on ``j.job_id`` (never user text)."""

    condition: str
    params: tuple = ()


@dataclass(frozen=True)
class ExecutionKey:
    """One exact Discover execution (its lineage rows' key)."""

    workflow_id: str
    run_id: str


def cohort_scope(execution: ExecutionKey, cohort: str) -> Scope:
    """The jobs of one cohort of one exact execution, for the row-by-row readers."""
    return Scope("j.job_id IN (SELECT job_id FROM discovery_execution_jobs WHERE"
                 " tenant_id = j.tenant_id AND discover_workflow_id = ?"
                 " AND discover_run_id = ? AND cohort = ?)",
                 (execution.workflow_id, execution.run_id, cohort))


def run_member_scope(run_id: str, cohort: str) -> Scope:
    """The jobs of one cohort of a Discover run (by run id alone)."""
    return Scope("j.job_id IN (SELECT job_id FROM discovery_execution_jobs WHERE"
                 " discover_run_id = ? AND cohort = ?)", (run_id, cohort))


def outside_run_scope(run_id: str | None) -> Scope:
    """Every job outside the run's members (every job without a run)."""
    if run_id is None:
        return Scope("1 = 1")
    return Scope("j.job_id NOT IN (SELECT job_id FROM discovery_execution_jobs WHERE"
                 " discover_run_id = ?)", (run_id,))


# --- one scope, row by row ---------------------------------------------------------------


async def scope_rows(db: Database, scope: Scope) -> tuple[list, int]:
    """The scope's (stage, status, owner_alive, n) rows and its job count."""
    rows = await db.fetchall(
        "SELECT s.stage, s.status,"
        " (s.owner_run_id IS NULL OR w.run_id IS NULL OR w.status = 'running') AS owner_alive,"
        " COUNT(*) FROM jobs j JOIN job_stage_states s"
        " ON s.tenant_id = j.tenant_id AND s.job_id = j.job_id"
        # Both keys: the projection's (tenant_id, run_id) primary key serves the lookup.
        " LEFT JOIN workflow_run_projections w"
        " ON w.tenant_id = s.tenant_id AND w.run_id = s.owner_run_id"
        f" WHERE j.tenant_id = ? AND {scope.condition} GROUP BY 1, 2, 3",
        (TENANT_ID, *scope.params),
    )
    jobs = (await db.fetchone(
        f"SELECT COUNT(*) FROM jobs j WHERE j.tenant_id = ? AND {scope.condition}",
        (TENANT_ID, *scope.params)))[0]
    return rows, int(jobs)


async def scope_stale_scores(db: Database, scope: Scope) -> int:
    row = await db.fetchone(
        "SELECT COUNT(*) FROM jobs j JOIN job_scores sc ON sc.job_id = j.job_id"
        " AND sc.version = (SELECT MAX(version) FROM job_scores x WHERE x.job_id = j.job_id)"
        " JOIN candidate_profiles p ON p.tenant_id = j.tenant_id"
        f" WHERE j.tenant_id = ? AND {scope.condition} AND sc.profile_revision < p.revision",
        (TENANT_ID, *scope.params),
    )
    return int(row[0])


# --- everything, from the maintained totals ----------------------------------------------


_RUNNING_ROWS = (
    "SELECT s.stage, (s.owner_run_id IS NULL OR w.run_id IS NULL OR w.status = 'running'),"
    # The row's cohort in the selected execution (NULL outside it): one primary-key lookup
    # per running row. A scalar subquery, not a LEFT JOIN: SQLite would build a Bloom
    # filter for the join by scanning every lineage row.
    " (SELECT m.cohort FROM discovery_execution_jobs m WHERE m.tenant_id = s.tenant_id"
    "  AND m.discover_workflow_id = ? AND m.discover_run_id = ? AND m.job_id = s.job_id),"
    " COUNT(*) FROM job_stage_states s LEFT JOIN workflow_run_projections w"
    " ON w.tenant_id = s.tenant_id AND w.run_id = s.owner_run_id"
    f" WHERE s.tenant_id = ? AND s.stage IN ({','.join('?' * len(STAGES))})"
    " AND s.status = 'running' GROUP BY 1, 2, 3"
)


async def status_totals(db: Database) -> list:
    """Maintained (stage, status, n) totals of every non-running status."""
    return await db.fetchall(
        "SELECT stage, status, n FROM job_stage_status_counts WHERE tenant_id = ?"
        " AND status != 'running' AND n > 0", (TENANT_ID,))


async def running_rows(db: Database, execution: ExecutionKey | None) -> list:
    """(stage, owner_alive, cohort in ``execution`` or None, n) of the running rows, read
    once through the status index."""
    workflow_id, run_id = ((execution.workflow_id, execution.run_id) if execution
                           else (None, None))
    return await db.fetchall(_RUNNING_ROWS, (workflow_id, run_id, TENANT_ID, *STAGES))


async def job_total(db: Database) -> int:
    row = await db.fetchone("SELECT n FROM job_counts WHERE tenant_id = ?", (TENANT_ID,))
    return int(row[0]) if row else 0


async def stale_score_total(db: Database) -> int:
    row = await db.fetchone(
        "SELECT COUNT(*) FROM candidate_profiles p JOIN job_scores sc"
        " ON sc.tenant_id = p.tenant_id AND sc.profile_revision < p.revision"
        " WHERE p.tenant_id = ? AND NOT EXISTS (SELECT 1 FROM job_scores x"
        "   WHERE x.job_id = sc.job_id AND x.version > sc.version)", (TENANT_ID,))
    return int(row[0])


# --- one execution's cohorts -------------------------------------------------------------


async def is_counted(db: Database, execution: ExecutionKey) -> bool:
    """Whether triggers keep this execution's cohort counts (migration 0014: only the
    newest few executions and any still running; one primary-key lookup)."""
    row = await db.fetchone(
        "SELECT 1 FROM counted_executions WHERE tenant_id = ? AND discover_workflow_id = ?"
        " AND discover_run_id = ?", (TENANT_ID, execution.workflow_id, execution.run_id))
    return row is not None


# An execution outside counted_executions: the same totals the triggers would keep, with
# one GROUP BY over its own members (O(execution size), only when an old run is selected).
_DERIVED_STAGE_TOTALS = (
    # CROSS JOIN: walk the execution's members, not every stage row of the tenant.
    "SELECT m.cohort, s.stage, s.status, COUNT(*) FROM discovery_execution_jobs m"
    " CROSS JOIN job_stage_states s ON s.tenant_id = m.tenant_id AND s.job_id = m.job_id"
    " WHERE m.tenant_id = ? AND m.discover_workflow_id = ? AND m.discover_run_id = ?"
    " AND s.status != 'running' GROUP BY 1, 2, 3")
_DERIVED_JOB_TOTALS = (
    "SELECT m.cohort, COUNT(*) FROM discovery_execution_jobs m JOIN jobs j"
    " ON j.job_id = m.job_id AND j.tenant_id = m.tenant_id WHERE m.tenant_id = ?"
    " AND m.discover_workflow_id = ? AND m.discover_run_id = ? GROUP BY 1")


async def cohort_totals(db: Database, execution: ExecutionKey) -> tuple[list, list]:
    """The execution's non-running (cohort, stage, status, n) totals and its (cohort, n)
    job totals: maintained rows when the execution is counted, else derived from its
    members."""
    key = (TENANT_ID, execution.workflow_id, execution.run_id)
    if await is_counted(db, execution):
        totals = await db.fetchall(
            "SELECT cohort, stage, status, n FROM execution_cohort_stage_counts"
            " WHERE tenant_id = ? AND discover_workflow_id = ? AND discover_run_id = ?"
            " AND status != 'running' AND n > 0", key)
        jobs = await db.fetchall(
            "SELECT cohort, n FROM execution_cohort_job_counts WHERE tenant_id = ?"
            " AND discover_workflow_id = ? AND discover_run_id = ?", key)
    else:
        totals = await db.fetchall(_DERIVED_STAGE_TOTALS, key)
        jobs = await db.fetchall(_DERIVED_JOB_TOTALS, key)
    return totals, jobs


async def cohort_stale_scores(db: Database, execution: ExecutionKey) -> dict[str, int]:
    """The stale scores of the execution's jobs, per cohort (one pass over stale scores)."""
    rows = await db.fetchall(
        "SELECT m.cohort, COUNT(*) FROM candidate_profiles p JOIN job_scores sc"
        " ON sc.tenant_id = p.tenant_id AND sc.profile_revision < p.revision"
        " JOIN discovery_execution_jobs m ON m.tenant_id = p.tenant_id"
        " AND m.discover_workflow_id = ? AND m.discover_run_id = ? AND m.job_id = sc.job_id"
        " JOIN jobs j ON j.job_id = sc.job_id AND j.tenant_id = p.tenant_id"
        " WHERE p.tenant_id = ? AND NOT EXISTS (SELECT 1 FROM job_scores x"
        "   WHERE x.job_id = sc.job_id AND x.version > sc.version) GROUP BY m.cohort",
        (execution.workflow_id, execution.run_id, TENANT_ID))
    return {cohort: int(n) for cohort, n in rows}


async def unresolved_work(db: Database, execution: ExecutionKey) -> int:
    """``remaining`` summed over both cohorts' blocks (waiting + processing + unverified =
    pending, queued and running rows of the canonical stages), from the maintained
    totals when the execution is counted, else from its members: the owner-run split does
    not matter for the sum."""
    key = (TENANT_ID, execution.workflow_id, execution.run_id)
    stages = f"({','.join('?' * len(STAGES))})"
    if await is_counted(db, execution):
        sql = ("SELECT COALESCE(SUM(n), 0) FROM execution_cohort_stage_counts"
               " WHERE tenant_id = ? AND discover_workflow_id = ? AND discover_run_id = ?"
               f" AND stage IN {stages} AND status IN ('pending', 'queued', 'running')")
    else:
        sql = ("SELECT COUNT(*) FROM discovery_execution_jobs m CROSS JOIN job_stage_states s"
               " ON s.tenant_id = m.tenant_id AND s.job_id = m.job_id WHERE m.tenant_id = ?"
               " AND m.discover_workflow_id = ? AND m.discover_run_id = ?"
               f" AND s.stage IN {stages} AND s.status IN ('pending', 'queued', 'running')")
    row = await db.fetchone(sql, (*key, *STAGES))
    return int(row[0])
