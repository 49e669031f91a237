"""Per-job stage counts for one scope, from canonical ``job_stage_states``.

Every block carries the same twelve fields. ``eligible`` is the scope's demand for the
stage (every job in scope); ``waiting`` is pending or queued work; ``processing`` is
running work whose owning run is alive; ``needsVerification`` is running work whose
owning run the read model shows as closed or not found (the reconciler settles it);
``stale`` is a succeeded score computed against an older profile revision; ``unknown``
is a job in scope with no row for the stage or an unrecognized status.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend.config import TENANT_ID
from backend.domain.model import CamelModel
from backend.domain.stages import STAGES
from backend.store.db import Database

DIRECT = {"succeeded": "succeeded", "skipped": "skipped", "blocked": "blocked",
          "failed": "failed", "exhausted": "exhausted", "canceled": "canceled"}


class CountBlock(CamelModel):
    eligible: int = 0
    waiting: int = 0
    processing: int = 0
    succeeded: int = 0
    skipped: int = 0
    blocked: int = 0
    failed: int = 0
    exhausted: int = 0
    canceled: int = 0
    needs_verification: int = 0
    stale: int = 0
    unknown: int = 0


@dataclass(frozen=True)
class Scope:
    """Which jobs a scope holds, as an SQL condition on ``j.job_id`` (never user text)."""

    condition: str
    params: tuple = ()


def _bucket(status: str, owner_alive: bool) -> str:
    if status in ("pending", "queued"):
        return "waiting"
    if status == "running":
        return "processing" if owner_alive else "needs_verification"
    return DIRECT.get(status, "unknown")


async def stage_counts(db: Database, scope: Scope) -> dict[str, CountBlock]:
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
    return _blocks_from(rows, jobs=jobs, stale=await _stale_scores(db, scope))


async def _stale_scores(db: Database, scope: Scope) -> int:
    row = await db.fetchone(
        "SELECT COUNT(*) FROM jobs j JOIN job_scores sc ON sc.job_id = j.job_id"
        " AND sc.version = (SELECT MAX(version) FROM job_scores x WHERE x.job_id = j.job_id)"
        " JOIN candidate_profiles p ON p.tenant_id = j.tenant_id"
        f" WHERE j.tenant_id = ? AND {scope.condition} AND sc.profile_revision < p.revision",
        (TENANT_ID, *scope.params),
    )
    return int(row[0])


async def global_stage_counts(db: Database) -> dict[str, CountBlock]:
    """Every job's stage counts without grouping every stage row: per-(stage, status)
    totals and the job count come from the trigger-maintained ``job_stage_status_counts``
    / ``job_counts``; only running rows (to split processing from needsVerification by
    their owner run) and scores against an older profile revision are read row by row.
    Equal to ``stage_counts(db, Scope("1 = 1"))``."""
    return (await snapshot_stage_counts(db, None)).everything


@dataclass(frozen=True)
class ExecutionKey:
    """One exact Discover execution (its lineage rows' key)."""

    workflow_id: str
    run_id: str


@dataclass(frozen=True)
class SnapshotCounts:
    everything: dict[str, CountBlock]
    cohorts: dict[str, dict[str, CountBlock]]   # cohort -> stage -> block (selected only)


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


async def snapshot_stage_counts(db: Database, execution: ExecutionKey | None
                                ) -> SnapshotCounts:
    """Global counts and the selected execution's two cohorts, none of which groups the
    stage rows of every job or of the whole execution: non-running (stage, status) totals
    and job totals are trigger-maintained (``job_stage_status_counts`` / ``job_counts``,
    migration 0012; ``execution_cohort_stage_counts`` / ``execution_cohort_job_counts``,
    migration 0013, kept for the executions in ``counted_executions``, migration 0014;
    any other execution's are derived from its members); running rows are read once
    through the status index (their owner run decides processing vs needsVerification,
    which no trigger can keep) and labelled with their cohort; stale scores are read
    only when any exists. Each cohort equals
    ``stage_counts(db, cohort scope)``; ``everything`` equals ``stage_counts(db, 1 = 1)``."""
    workflow_id, run_id = (execution.workflow_id, execution.run_id) if execution else (None,
                                                                                        None)
    totals = await db.fetchall(
        "SELECT stage, status, n FROM job_stage_status_counts WHERE tenant_id = ?"
        " AND status != 'running' AND n > 0", (TENANT_ID,))
    running = await db.fetchall(_RUNNING_ROWS, (workflow_id, run_id, TENANT_ID, *STAGES))
    jobs_row = await db.fetchone("SELECT n FROM job_counts WHERE tenant_id = ?", (TENANT_ID,))
    stale = await _global_stale(db)
    rows = [(stage, status, True, n) for stage, status, n in totals]
    rows += [(stage, "running", bool(alive), n) for stage, alive, _cohort, n in running]
    everything = _blocks_from(rows, jobs=int(jobs_row[0]) if jobs_row else 0, stale=stale)
    cohorts: dict[str, dict[str, CountBlock]] = {}
    if execution is not None:
        cohort_rows, cohort_jobs = await _cohort_totals(db, execution)
        for cohort, stage, alive, n in ((c, s, a, n) for s, a, c, n in running if c):
            cohort_rows.setdefault(cohort, []).append((stage, "running", bool(alive), n))
        cohort_stale = await _cohort_stale(db, execution, stale, cohort_jobs)
        cohorts = {cohort: _blocks_from(cohort_rows.get(cohort, []),
                                        jobs=cohort_jobs.get(cohort, 0),
                                        stale=cohort_stale.get(cohort, 0))
                   for cohort in COHORTS}
    return SnapshotCounts(everything=everything, cohorts=cohorts)


COHORTS = ("observed_this_run", "existing_backlog")


async def _is_counted(db: Database, execution: ExecutionKey) -> bool:
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


async def _cohort_totals(db: Database, execution: ExecutionKey
                         ) -> tuple[dict[str, list[tuple]], dict[str, int]]:
    """The execution's non-running totals per cohort, and its job totals: maintained
    rows when the execution is counted, else derived from its members."""
    key = (TENANT_ID, execution.workflow_id, execution.run_id)
    if await _is_counted(db, execution):
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
    rows: dict[str, list[tuple]] = {}
    for cohort, stage, status, n in totals:
        rows.setdefault(cohort, []).append((stage, status, True, n))
    return rows, {cohort: int(n) for cohort, n in jobs}


async def _global_stale(db: Database) -> int:
    row = await db.fetchone(
        "SELECT COUNT(*) FROM candidate_profiles p JOIN job_scores sc"
        " ON sc.tenant_id = p.tenant_id AND sc.profile_revision < p.revision"
        " WHERE p.tenant_id = ? AND NOT EXISTS (SELECT 1 FROM job_scores x"
        "   WHERE x.job_id = sc.job_id AND x.version > sc.version)", (TENANT_ID,))
    return int(row[0])


async def _cohort_stale(db: Database, execution: ExecutionKey, global_stale: int,
                        cohort_jobs: dict[str, int]) -> dict[str, int]:
    """Stale scores per cohort, from whichever side is smaller: none when no score at
    all is stale (the common case), else the stale scores labelled with their cohort,
    else each cohort's jobs checked one by one."""
    if global_stale == 0:
        return {}
    if global_stale <= sum(cohort_jobs.values()):
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
    return {cohort: await _stale_scores(db, cohort_scope(execution, cohort))
            for cohort in COHORTS}


def cohort_scope(execution: ExecutionKey, cohort: str) -> Scope:
    """The jobs of one cohort of one exact execution, for the row-by-row readers."""
    return Scope("j.job_id IN (SELECT job_id FROM discovery_execution_jobs WHERE"
                 " tenant_id = j.tenant_id AND discover_workflow_id = ?"
                 " AND discover_run_id = ? AND cohort = ?)",
                 (execution.workflow_id, execution.run_id, cohort))


async def unresolved_work(db: Database, execution: ExecutionKey) -> int:
    """``remaining`` summed over both cohorts' blocks (waiting + processing + unverified =
    pending, queued and running rows of the canonical stages), from the maintained
    totals when the execution is counted, else from its members: the owner-run split does
    not matter for the sum."""
    key = (TENANT_ID, execution.workflow_id, execution.run_id)
    stages = f"({','.join('?' * len(STAGES))})"
    if await _is_counted(db, execution):
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


def _blocks_from(rows, *, jobs: int, stale: int) -> dict[str, CountBlock]:
    counts: dict[str, dict[str, int]] = {stage: {} for stage in STAGES}
    for stage, status, owner_alive, number in rows:
        if stage not in counts:
            continue
        bucket = _bucket(status, bool(owner_alive))
        counts[stage][bucket] = counts[stage].get(bucket, 0) + number
    blocks = {}
    for stage, buckets in counts.items():
        known = sum(buckets.values())
        buckets["unknown"] = buckets.get("unknown", 0) + max(jobs - known, 0)
        if stage == "score":
            buckets["stale"] = stale
        blocks[stage] = CountBlock(eligible=jobs, **buckets)
    return blocks


def subtract(total: dict[str, CountBlock], *parts: dict[str, CountBlock]) -> dict[str, CountBlock]:
    """``total`` minus disjoint scopes inside it, field by field (every count is additive
    over disjoint job sets, ``unknown`` and ``eligible`` included)."""
    result = {}
    for stage, block in total.items():
        values = block.model_dump()
        for part in parts:
            for name, number in part[stage].model_dump().items():
                values[name] -= number
        result[stage] = CountBlock(**{name: max(number, 0) for name, number in values.items()})
    return result


def remaining(block: CountBlock) -> int:
    """Work still to do in a block: waiting, processing and unverified."""
    return block.waiting + block.processing + block.needs_verification


COUNT_FIELDS = tuple(CountBlock.model_fields)
