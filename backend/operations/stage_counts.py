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
        " COUNT(*) FROM jobs j JOIN job_stage_states s ON s.job_id = j.job_id"
        " LEFT JOIN workflow_run_projections w ON w.run_id = s.owner_run_id"
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


def remaining(block: CountBlock) -> int:
    """Work still to do in a block: waiting, processing and unverified."""
    return block.waiting + block.processing + block.needs_verification


COUNT_FIELDS = tuple(CountBlock.model_fields)
