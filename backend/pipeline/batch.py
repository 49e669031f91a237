"""Selected-job batches: waves of at most ``workers`` jobs and their deadlines.

Plain functions (no I/O, no Temporal imports) so the batch workflow can use them inside
the sandbox and unit tests can call them directly.

The rule from the spec: an explicitly selected Tailor / Cover batch honours the requested
worker count, and gets an activity deadline of 30 minutes per worker wave, capped at
6 hours for the whole batch. The separate heartbeat timeout still detects a lost worker.
"""

from __future__ import annotations

import hashlib
import math
from datetime import timedelta

from backend.domain.stages import STAGES

BATCH_STAGES = ("tailor", "cover")  # the stages a selected batch may start from
WAVE_DEADLINE = timedelta(minutes=30)
BATCH_CAP = timedelta(hours=6)
MAX_WORKERS = 16
MAX_BATCH_JOBS = 500


def batch_stages(stage: str) -> list[str]:
    """The selected stage and everything downstream of it (Tailor → Cover → PDF)."""
    if stage not in BATCH_STAGES:
        raise ValueError(f"a selected batch starts at tailor or cover, not {stage!r}")
    return list(STAGES[STAGES.index(stage):])


def waves(job_ids: list[str], workers: int) -> list[list[str]]:
    """Consecutive groups of at most ``workers`` jobs, in the given order."""
    if workers < 1:
        raise ValueError("workers must be at least 1")
    return [job_ids[start:start + workers] for start in range(0, len(job_ids), workers)]


def wave_count(jobs: int, workers: int, stages: int) -> int:
    """Waves the batch may need: every stage of the chain runs its own waves."""
    return stages * math.ceil(jobs / workers) if jobs else 0


def batch_deadline(total_waves: int) -> timedelta:
    """The whole batch's budget: 30 minutes per wave, never more than 6 hours."""
    return min(WAVE_DEADLINE * total_waves, BATCH_CAP)


def wave_timeout(elapsed: timedelta, deadline: timedelta) -> timedelta | None:
    """The activity deadline of the next wave: 30 minutes, or whatever is left of the
    batch's budget if that is less. None once the budget is spent (no wave starts)."""
    left = deadline - elapsed
    if left <= timedelta(0):
        return None
    return min(WAVE_DEADLINE, left)


def batch_workflow_id(stage: str, job_ids: list[str]) -> str:
    """One deterministic id per (stage, selection): a double submit attaches to the run
    already in flight instead of preparing the same jobs twice."""
    digest = hashlib.sha256("\n".join([stage, *sorted(job_ids)]).encode()).hexdigest()[:16]
    return f"batch-{stage}-{digest}"
