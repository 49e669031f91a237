"""The budget-resume pass: preparation halted by the daily ceiling starts again by itself
once the budget has room (the UTC spend day rolled over, or the ceiling was raised or
cleared), as the desktop's budget notification promises.

A job is *budget-halted* when its newest JobPreparationWorkflow run failed with
``budget_exceeded``, no preparation run of it is open, and its stage rows still hold
work (``decide_preparation`` plans it). The pass runs in the worker's reconciler (at
start and every pass) and right after a settings save changes the ceiling, like the
auto-apply loop's budget halt. For each halted job, oldest halt first:

- nothing while the budget is exhausted (the pass stops there);
- nothing when the job's estimated cost does not fit what is left of the ceiling, the
  same arithmetic the spend preflight admits by (so a resume is not refused at once);
- at most once per job and *budget episode* (spend day + ceiling): the dispatch intent
  ``PreparationBudgetResumed`` is committed with a dedupe key of both before Temporal is
  asked, and a job halted again after that intent waits for the next episode;
- started through the ordinary idempotent dispatch (``start_preparation``, the job's
  deterministic ``prep-{jobId}`` id). An intent whose start was lost to a worker kill is
  delivered by the next pass: the intent is newer than the halt and Temporal's newest
  execution under that id is still the halted run.

At most ``RESUME_LIMIT_PER_PASS`` jobs are started per pass."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Literal

from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from backend.config import TENANT_ID, AppPaths, AppSettings, load_settings
from backend.domain import events as ev
from backend.domain.clock import utc_now
from backend.llm.admission import per_call_estimate
from backend.llm.budget import BudgetStatus, read_spend_budget_status
from backend.llm.factory import provider_from_settings
from backend.llm.rates import load_rates
from backend.projections.workflow_runs import refresh_workflow_runs
from backend.secrets.store import SecretStore
from backend.store.db import Database
from backend.store.events import append_event
from backend.store.preparation_halts import newest_failed_preparations
from backend.store.spend import to_micro_usd
from backend.store.spend_reservations import open_reserved
from backend.temporal.activities.discovery import decide_preparation
from backend.temporal.dispatch import start_preparation
from backend.temporal.workflows.preparation import PAID_STAGES, prep_workflow_id

log = logging.getLogger(__name__)

RESUME_LIMIT_PER_PASS = 20  # preparation workflows one pass may start
HALT_SCAN_LIMIT = 1000  # halted jobs one pass looks at (the rest wait for the next pass)
RESUMED_EVENT = "PreparationBudgetResumed"

Verdict = Literal["resume", "budget_exhausted", "halted_again_this_episode", "no_room"]


@dataclass(frozen=True)
class Halt:
    """One budget-halted job: its halted run and the stages it still needs."""

    job_id: str
    halted_run_id: str
    halted_started_event_id: int  # the halted run's WorkflowStarted
    stages: tuple[str, ...]
    error_code: str = "budget_exceeded"  # what ended the halted run


@dataclass
class ResumeReport:
    episode: str | None = None
    halted: int = 0
    resumed: list[str] = field(default_factory=list)  # job ids started (or re-delivered)
    waiting: dict[str, str] = field(default_factory=dict)  # job id -> verdict / in flight
    stopped_exhausted: bool = False


def budget_episode(status: BudgetStatus) -> str:
    """The budget episode: the spend day and the ceiling. A new day or a changed ceiling is
    a new episode, in which every halted job may be resumed once more."""
    ceiling = "unlimited" if status.unlimited else str(to_micro_usd(status.ceiling_usd))
    return f"{status.day}:{ceiling}"


def resume_verdict(status: BudgetStatus, *, open_reserved: Decimal, estimate: Decimal,
                   intent_event_id: int | None, halted_started_event_id: int) -> Verdict:
    """Whether one halted job starts again now (pure).

    ``intent_event_id``: this job's ``PreparationBudgetResumed`` of the current episode,
    if any. Older than the halted run means the halted run *is* that resume (halted again
    in this episode): wait for the next episode. Newer means the intent was committed but
    its start may have been lost: deliver it (when it fits)."""
    if status.exhausted:
        return "budget_exhausted"
    if intent_event_id is not None and intent_event_id < halted_started_event_id:
        return "halted_again_this_episode"
    if not status.unlimited and status.spent_usd + open_reserved + estimate > status.ceiling_usd:
        return "no_room"
    return "resume"


def paid_calls(stages: tuple[str, ...]) -> int:
    """What the preparation preflight reserves for: one call per paid stage."""
    return sum(1 for stage in stages if stage in PAID_STAGES)


# --- reads -------------------------------------------------------------------------------


async def halted_jobs(db: Database, *,
                      error_codes: tuple[str, ...] = ("budget_exceeded",)) -> list[Halt]:
    """Jobs whose newest preparation run failed with one of ``error_codes`` (the budget
    halt by default), with no preparation run open and stage work left, oldest halt first."""
    halts = []
    for failed in await newest_failed_preparations(db, error_codes, limit=HALT_SCAN_LIMIT):
        stages = await _remaining_stages(db, failed.job_id)
        if stages:
            halts.append(Halt(failed.job_id, failed.run_id, failed.started_event_id, stages,
                              failed.error_code))
    return halts


async def _remaining_stages(db: Database, job_id: str) -> tuple[str, ...]:
    """The stages a new preparation of this job would run: the Discover planner's rule."""
    states = await db.fetchall(
        "SELECT stage, status, blocked_reason FROM job_stage_states WHERE tenant_id = ?"
        " AND job_id = ?", (TENANT_ID, job_id))
    user = await db.fetchone("SELECT user_status FROM jobs WHERE job_id = ?", (job_id,))
    decision = decide_preparation([tuple(row) for row in states] or None,
                                  user_status=user[0] if user else None,
                                  exists=user is not None)
    return decision.required_steps if decision.state == "planned" else ()


async def _intent_event_id(db: Database, job_id: str, episode: str) -> int | None:
    row = await db.fetchone(
        "SELECT id FROM job_events WHERE tenant_id = ? AND dedupe_key = ?",
        (TENANT_ID, intent_dedupe_key(job_id, episode)))
    return int(row[0]) if row else None


async def _open_reserved(db: Database, day: str) -> Decimal:
    async with db.transaction() as conn:
        return await open_reserved(conn, day)


async def _per_call_estimate(db: Database, settings: AppSettings, paths: AppPaths) -> Decimal:
    """The preflight's own per-call estimate (0 for an offline provider)."""
    provider = provider_from_settings(settings.llm, SecretStore(paths))
    if provider.is_offline:
        return Decimal(0)
    async with db.transaction() as conn:
        return await per_call_estimate(
            conn, settings, load_rates(paths), provider=provider.name, model=provider.model,
            local=bool(getattr(provider, "is_local", False)))


def intent_dedupe_key(job_id: str, episode: str) -> str:
    return f"{RESUMED_EVENT}:{job_id}:{episode}"


# --- the pass ----------------------------------------------------------------------------


async def resume_budget_halted(db: Database, client: Client, paths: AppPaths, *,
                               now: datetime | None = None) -> ResumeReport:
    """One bounded pass (``now`` injects the spend day's clock; default: the real one)."""
    settings = load_settings(paths)  # re-read: the ceiling may have just changed
    await refresh_workflow_runs(db)
    report = ResumeReport()
    halts = await halted_jobs(db)
    report.halted = len(halts)
    if not halts:
        return report
    moment = now or utc_now()
    per_call = await _per_call_estimate(db, settings, paths)
    pending_estimate = Decimal(0)  # what this pass's own starts will reserve
    for halt in halts:
        if len(report.resumed) >= RESUME_LIMIT_PER_PASS:
            break
        status = await read_spend_budget_status(db, settings, moment)
        report.episode = episode = budget_episode(status)
        estimate = per_call * paid_calls(halt.stages)
        verdict = resume_verdict(
            status, open_reserved=await _open_reserved(db, status.day) + pending_estimate,
            estimate=estimate, intent_event_id=await _intent_event_id(db, halt.job_id, episode),
            halted_started_event_id=halt.halted_started_event_id)
        if verdict == "budget_exhausted":
            report.stopped_exhausted = True
            break
        if verdict != "resume":
            report.waiting[halt.job_id] = verdict
            continue
        if await _resume(db, client, settings, halt, episode):
            report.resumed.append(halt.job_id)
            pending_estimate += estimate
        else:
            report.waiting[halt.job_id] = "resume_in_flight"
    if report.resumed:
        log.info("budget has room (%s): resumed preparation of %s job(s)",
                 report.episode, len(report.resumed))
    return report


async def _resume(db: Database, client: Client, settings: AppSettings, halt: Halt,
                  episode: str) -> bool:
    """Commit the intent, then start; False when Temporal already runs a newer execution
    of this job (the intent was delivered by an earlier or concurrent pass)."""
    workflow_id = prep_workflow_id(halt.job_id)
    async with db.transaction() as conn:
        recorded = await append_event(
            conn,
            ev.PreparationBudgetResumed(job_id=halt.job_id, workflow_id=workflow_id,
                                        halted_run_id=halt.halted_run_id,
                                        budget_episode=episode, stages=list(halt.stages)),
            job_id=halt.job_id, workflow_id=workflow_id,
            dedupe_key=intent_dedupe_key(halt.job_id, episode))
    if recorded is None and await newer_execution_exists(client, workflow_id,
                                                          halt.halted_run_id):
        return False
    await start_preparation(client, halt.job_id, stages=list(halt.stages),
                            heartbeat_timeout_s=settings.stage_heartbeat_timeout_s)
    return True


async def newer_execution_exists(client: Client, workflow_id: str, halted_run_id: str) -> bool:
    try:
        described = await client.get_workflow_handle(workflow_id).describe()
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            return False  # the history is gone: nothing newer can be running
        raise
    return described.run_id != halted_run_id


async def resume_budget_halted_safely(db: Database, client: Client, paths: AppPaths) -> None:
    try:
        await resume_budget_halted(db, client, paths)
    except Exception:  # noqa: BLE001 - the next pass tries again
        log.exception("budget-resume pass failed")


async def nudge_budget_resume(context) -> None:
    """Called after a settings save changed the ceiling: resume now instead of on the
    worker's next pass. Best effort; the worker's pass resumes regardless."""
    client = await context.temporal()
    if client is None:
        return
    await resume_budget_halted_safely(context.db, client, context.paths)
