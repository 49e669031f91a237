"""The selected Discover execution's phase, from durable facts only (pure).

Vocabulary: ``discovering``, ``draining``, ``completed``, ``completed_with_issues``,
``failed``, ``canceled``. Both execution cohorts participate: unresolved observed jobs or
swept backlog keep an otherwise closed workflow ``draining``. So does an open
``enrichment_pass`` / ``pdf_render`` boundary: terminal reconciliation owns those
boundaries and settles them after the last member job, so until it has, the execution's
downstream work is not proven done and the phase cannot read ``completed``.

Membership (:func:`membership_open`): the execution's job set is open until nothing can
join it any more. Sources add jobs until every planned family has reported; after that
only the backlog sweep can, and it adds only pre-existing jobs with work left. So the set
is final once the sweep has linked its cohort, or (earlier) once the sources are done and
no job outside the execution could be swept in: on a loaded machine the sweep's own
activity runs late, behind the preparation work, and the overall ETA need not wait for it.

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



SWEEP_STEP_KEY = "sweep"              # existing_backlog_sweep: links the swept cohort
TERMINAL_FANOUT_KEY = "fanout:sweep"  # the terminal preparation_fanout


@dataclass(frozen=True)
class MembershipFacts:
    workflow_running: bool
    sources_done: bool        # every planned family has reported an outcome
    sweep_linked: bool        # the existing_backlog_sweep step succeeded (cohort linked)
    fanout_closed: bool       # the terminal fanout:sweep step is terminal
    # Some job outside the execution has work left or could be swept in (None: not read,
    # which counts as "could"): only the sweep can still add it.
    backlog_may_join: bool | None


def membership_open(facts: MembershipFacts) -> bool:
    """Whether the selected execution can still gain jobs (the overall ETA waits for it)."""
    if not facts.workflow_running or facts.fanout_closed:
        return False
    if not facts.sources_done:
        return True   # a source may still observe new jobs
    if facts.sweep_linked:
        return False  # the sweep has linked its cohort: nothing else can join
    return facts.backlog_may_join is not False


def membership_facts(steps: Iterable, *, workflow_running: bool, sources_done: bool,
                     backlog_may_join: bool | None) -> MembershipFacts:
    """The facts :func:`membership_open` needs, from one execution's step rows."""
    steps = list(steps)
    return MembershipFacts(
        workflow_running=workflow_running, sources_done=sources_done,
        sweep_linked=any(step.step_kind == "existing_backlog_sweep"
                         and step.item_key == SWEEP_STEP_KEY and step.status == "succeeded"
                         for step in steps),
        fanout_closed=any(step.item_key == TERMINAL_FANOUT_KEY and step.terminal
                          for step in steps),
        backlog_may_join=backlog_may_join)
