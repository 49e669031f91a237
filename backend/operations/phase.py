"""The selected Discover execution's phase, from durable facts only (pure).

Vocabulary: ``discovering``, ``draining``, ``completed``, ``completed_with_issues``,
``failed``, ``canceled``. Both execution cohorts participate: unresolved observed jobs or
swept backlog keep an otherwise closed workflow ``draining``. So does an open
``enrichment_pass`` / ``pdf_render`` boundary: terminal reconciliation owns those
boundaries and settles them after the last member job, so until it has, the execution's
downstream work is not proven done and the phase cannot read ``completed``.

Blocked work is settled, not remaining: a downstream stage blocked by an exhausted
upstream does not keep the execution draining (the exhausted stage itself makes it
``completed_with_issues``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

BOUNDARY_KINDS = ("enrichment_pass", "pdf_render")
OPEN_STEP_STATUSES = ("queued", "running")


@dataclass(frozen=True)
class PhaseFacts:
    workflow_status: str      # running | completed | failed | canceled | reconciled_not_found
    families_planned: int
    families_reported: int    # families with a recorded outcome
    families_failed: int
    unresolved_jobs: int      # waiting + processing + unverified per-job work, both cohorts
    stage_failures: int       # failed + exhausted per-job stages, both cohorts
    open_boundaries: int      # enrichment_pass / pdf_render steps not yet terminal
    failed_steps: int = 0     # pipeline steps whose newest attempt failed


def execution_phase(facts: PhaseFacts) -> str:
    if facts.workflow_status == "running":
        return "discovering" if facts.families_reported < facts.families_planned else "draining"
    if facts.unresolved_jobs or facts.open_boundaries:
        return "draining"
    if facts.workflow_status == "canceled":
        return "canceled"
    if facts.workflow_status in ("failed", "reconciled_not_found"):
        return "failed"
    issues = facts.families_failed or facts.stage_failures or facts.failed_steps
    return "completed_with_issues" if issues else "completed"


def open_boundary_count(steps: Iterable) -> int:
    """Enrichment-pass / PDF-render steps of one execution that are not settled yet."""
    return sum(1 for step in steps
               if step.step_kind in BOUNDARY_KINDS and step.status in OPEN_STEP_STATUSES)


def failed_step_count(steps: Iterable) -> int:
    """Steps whose newest attempt ended failed (the fold keeps only the newest attempt)."""
    return sum(1 for step in steps if step.status == "failed")

