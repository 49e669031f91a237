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
    counts: dict[str, dict[str, int]] = {stage: {} for stage in STAGES}
    for stage, status, owner_alive, number in rows:
        if stage not in counts:
            continue
        bucket = _bucket(status, bool(owner_alive))
        counts[stage][bucket] = counts[stage].get(bucket, 0) + number
    jobs = (await db.fetchone(
        f"SELECT COUNT(*) FROM jobs j WHERE j.tenant_id = ? AND {scope.condition}",
        (TENANT_ID, *scope.params)))[0]
    stale = await _stale_scores(db, scope)
    blocks = {}
    for stage, buckets in counts.items():
        known = sum(buckets.values())
        buckets["unknown"] = buckets.get("unknown", 0) + max(jobs - known, 0)
        if stage == "score":
            buckets["stale"] = stale
        blocks[stage] = CountBlock(eligible=jobs, **buckets)
    return blocks


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
    totals = await db.fetchall(
        "SELECT stage, status, n FROM job_stage_status_counts WHERE tenant_id = ?"
        " AND status != 'running' AND n > 0", (TENANT_ID,))
    running = await db.fetchall(
        "SELECT s.stage, (s.owner_run_id IS NULL OR w.run_id IS NULL OR w.status = 'running'),"
        " COUNT(*) FROM job_stage_states s LEFT JOIN workflow_run_projections w"
        " ON w.tenant_id = s.tenant_id AND w.run_id = s.owner_run_id"
        f" WHERE s.tenant_id = ? AND s.stage IN ({','.join('?' * len(STAGES))})"
        " AND s.status = 'running' GROUP BY 1, 2", (TENANT_ID, *STAGES))
    jobs_row = await db.fetchone("SELECT n FROM job_counts WHERE tenant_id = ?", (TENANT_ID,))
    stale = await db.fetchone(
        "SELECT COUNT(*) FROM candidate_profiles p JOIN job_scores sc"
        " ON sc.tenant_id = p.tenant_id AND sc.profile_revision < p.revision"
        " WHERE p.tenant_id = ? AND NOT EXISTS (SELECT 1 FROM job_scores x"
        "   WHERE x.job_id = sc.job_id AND x.version > sc.version)", (TENANT_ID,))
    rows = [(stage, status, True, n) for stage, status, n in totals]
    rows += [(stage, "running", bool(alive), n) for stage, alive, n in running]
    return _blocks_from(rows, jobs=int(jobs_row[0]) if jobs_row else 0, stale=int(stale[0]))


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
