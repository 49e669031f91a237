"""Policy reruns: re-preparing every job a policy change made stale, as one durable batch.

Plain functions (no I/O, no Temporal imports): the API, the workflow and unit tests share
them. "Rescore stale", "Re-tailor stale" and a lowered fit threshold each select a set of
jobs in the request and hand them to one ``PolicyRerunWorkflow`` under a deterministic id
(the action and a digest of the job set), which starts the jobs' ``prep-{jobId}``
preparations outside the request. A repeated request for the same set attaches to the
batch in flight; a job already being prepared is not started twice (its ``prep-{jobId}``
id is taken)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from backend.domain.stages import STAGES

WORKFLOW_TYPE = "PolicyRerunWorkflow"
FANOUT_BATCH = 50  # child starts issued together in one workflow task (as Discover does)


@dataclass(frozen=True)
class PolicyRerun:
    """What one action re-runs: the stages from ``first`` on, ``force`` even when done."""

    first: str
    force: tuple[str, ...]

    def stages(self) -> list[str]:
        return list(STAGES[STAGES.index(self.first):])


POLICY_RERUNS: dict[str, PolicyRerun] = {
    "rescore_stale": PolicyRerun("score", ("score",)),
    "retailor_stale": PolicyRerun("tailor", ("tailor", "cover", "pdf")),
    # A lowered threshold: Tailor was skipped, so it runs again without forcing anything.
    "threshold_cleared": PolicyRerun("tailor", ()),
}


def policy_rerun_workflow_id(action: str, job_ids: list[str]) -> str:
    """``policy-rerun-{action}-{digest}``: one id per (action, job set), in any order, so a
    double submit attaches to the batch already in flight."""
    if action not in POLICY_RERUNS:
        raise ValueError(f"unknown policy rerun {action!r}")
    digest = hashlib.sha256("\n".join([action, *sorted(set(job_ids))]).encode()).hexdigest()
    return f"policy-rerun-{action.replace('_', '-')}-{digest[:16]}"


def fanout_chunks(job_ids: list[str], size: int = FANOUT_BATCH) -> list[list[str]]:
    """The job ids in consecutive groups of at most ``size``, in the given order."""
    return [job_ids[start:start + size] for start in range(0, len(job_ids), size)]
