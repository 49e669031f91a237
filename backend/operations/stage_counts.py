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

from backend.domain.model import CamelModel
from backend.domain.stages import STAGES
from backend.store import stage_count_rows as count_rows
from backend.store.db import Database
from backend.store.stage_count_rows import ExecutionKey, Scope, cohort_scope, unresolved_work

# Re-exported: the counts' scopes and the unresolved-work sum are the store's reads.
__all__ = ["COHORTS", "COUNT_FIELDS", "CountBlock", "ExecutionKey", "Scope", "SnapshotCounts",
           "cohort_scope", "global_stage_counts", "remaining", "snapshot_stage_counts",
           "stage_counts", "subtract", "unresolved_work"]

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


def _bucket(status: str, owner_alive: bool) -> str:
    if status in ("pending", "queued"):
        return "waiting"
    if status == "running":
        return "processing" if owner_alive else "needs_verification"
    return DIRECT.get(status, "unknown")


async def stage_counts(db: Database, scope: Scope) -> dict[str, CountBlock]:
    rows, jobs = await count_rows.scope_rows(db, scope)
    return _blocks_from(rows, jobs=jobs, stale=await count_rows.scope_stale_scores(db, scope))


async def global_stage_counts(db: Database) -> dict[str, CountBlock]:
    """Every job's stage counts without grouping every stage row: per-(stage, status)
    totals and the job count come from the trigger-maintained ``job_stage_status_counts``
    / ``job_counts``; only running rows (to split processing from needsVerification by
    their owner run) and scores against an older profile revision are read row by row.
    Equal to ``stage_counts(db, Scope("1 = 1"))``."""
    return (await snapshot_stage_counts(db, None)).everything


@dataclass(frozen=True)
class SnapshotCounts:
    everything: dict[str, CountBlock]
    cohorts: dict[str, dict[str, CountBlock]]   # cohort -> stage -> block (selected only)


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
    totals = await count_rows.status_totals(db)
    running = await count_rows.running_rows(db, execution)
    jobs = await count_rows.job_total(db)
    stale = await count_rows.stale_score_total(db)
    rows = [(stage, status, True, n) for stage, status, n in totals]
    rows += [(stage, "running", bool(alive), n) for stage, alive, _cohort, n in running]
    everything = _blocks_from(rows, jobs=jobs, stale=stale)
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


async def _cohort_totals(db: Database, execution: ExecutionKey
                         ) -> tuple[dict[str, list[tuple]], dict[str, int]]:
    """The execution's non-running totals per cohort, and its job totals: maintained
    rows when the execution is counted, else derived from its members."""
    totals, jobs = await count_rows.cohort_totals(db, execution)
    rows: dict[str, list[tuple]] = {}
    for cohort, stage, status, n in totals:
        rows.setdefault(cohort, []).append((stage, status, True, n))
    return rows, {cohort: int(n) for cohort, n in jobs}


async def _cohort_stale(db: Database, execution: ExecutionKey, global_stale: int,
                        cohort_jobs: dict[str, int]) -> dict[str, int]:
    """Stale scores per cohort, from whichever side is smaller: none when no score at
    all is stale (the common case), else the stale scores labelled with their cohort,
    else each cohort's jobs checked one by one."""
    if global_stale == 0:
        return {}
    if global_stale <= sum(cohort_jobs.values()):
        return await count_rows.cohort_stale_scores(db, execution)
    return {cohort: await count_rows.scope_stale_scores(db, cohort_scope(execution, cohort))
            for cohort in COHORTS}


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
