"""The budget-resume pass: work halted by the daily ceiling starts again by itself once
the budget has room (the UTC spend day rolled over, or the ceiling was raised or
cleared), as the desktop's budget notification promises. Three kinds of work are halted
that way (``backend/temporal/loops/halted_work.py``): a job's preparation, a selected batch (or
the items of one refused mid-run) and a job's contact research.

The pass runs in the worker's reconciler (at start and every pass) and right after a
settings save changes the ceiling, like the auto-apply loop's budget halt. For each
halted piece of work, oldest halt first:

- nothing while the budget is exhausted (the pass stops there);
- nothing when its estimated cost does not fit what is left of the ceiling, the same
  arithmetic its spend preflight admits by (so a resume is not refused at once);
- at most once per piece of work and *budget episode* (spend day + ceiling): the
  dispatch intent is committed with a dedupe key of both before Temporal is asked, and
  work halted again after that intent waits for the next episode;
- an intent whose start was lost to a worker kill is delivered by the next pass: the
  intent is newer than the halt (and Temporal refuses a second start of it);
- a batch whose jobs are being prepared right now waits (they would be deferred).

At most ``RESUME_LIMIT_PER_PASS`` runs are started per pass."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Literal

from temporalio.client import Client

from backend.config import AppPaths, AppSettings, load_settings
from backend.domain.clock import utc_now
from backend.llm.admission import SOURCE_SHARE_REACHED, per_call_estimate, source_share_refusal
from backend.llm.budget import BudgetStatus, read_spend_budget_status
from backend.llm.factory import provider_from_settings
from backend.llm.rates import load_rates
from backend.secrets.store import SecretStore
from backend.store.budget_halts import event_id_by_dedupe_key
from backend.store.db import Database
from backend.store.spend import job_source, source_spent_in, to_micro_usd
from backend.store.spend_reservations import open_reserved
from backend.temporal.loops.halted_work import (
    RESUMED_EVENT,
    BatchHalt,
    ContactHalt,
    Halt,
    batch_halts,
    contact_halts,
    halted_jobs,
    intent_dedupe_key,
    newer_execution_exists,
    paid_calls,
)

__all__ = [  # the halted work, named here for the callers of the pass
    "RESUMED_EVENT", "BatchHalt", "ContactHalt", "Halt", "halted_jobs", "intent_dedupe_key",
    "newer_execution_exists", "paid_calls",
]

log = logging.getLogger(__name__)

RESUME_LIMIT_PER_PASS = 20  # runs one pass may start
HALT_SCAN_LIMIT = 1000  # halted runs of each kind one pass looks at (the rest: next pass)

Verdict = Literal["resume", "budget_exhausted", "halted_again_this_episode", "no_room",
                  "source_budget_share_reached"]
AnyHalt = Halt | BatchHalt | ContactHalt


@dataclass
class ResumeReport:
    """Halted work by subject: a job id (preparation), a batch id (``batch-…``), or
    ``contacts-{jobId}`` (contact research)."""

    episode: str | None = None
    halted: int = 0
    resumed: list[str] = field(default_factory=list)  # subjects started (or re-delivered)
    waiting: dict[str, str] = field(default_factory=dict)  # subject -> verdict / in flight
    stopped_exhausted: bool = False


def budget_episode(status: BudgetStatus) -> str:
    """The budget episode: the spend day and the ceiling. A new day or a changed ceiling is
    a new episode, in which every halted job may be resumed once more."""
    ceiling = "unlimited" if status.unlimited else str(to_micro_usd(status.ceiling_usd))
    return f"{status.day}:{ceiling}"


def resume_verdict(status: BudgetStatus, *, open_reserved: Decimal, estimate: Decimal,
                   intent_event_id: int | None, halted_started_event_id: int) -> Verdict:
    """Whether one piece of halted work starts again now (pure).

    ``intent_event_id``: its resume intent of the current episode, if any. Older than the
    halted run means the halted run *is* that resume (halted again in this episode): wait
    for the next episode. Newer means the intent was committed but its start may have been
    lost: deliver it (when it fits)."""
    if status.exhausted:
        return "budget_exhausted"
    if intent_event_id is not None and intent_event_id < halted_started_event_id:
        return "halted_again_this_episode"
    if not status.unlimited and status.spent_usd + open_reserved + estimate > status.ceiling_usd:
        return "no_room"
    return "resume"


# --- reads -------------------------------------------------------------------------------


async def all_halts(db: Database) -> list[AnyHalt]:
    """Every kind of halted work, oldest halt first."""
    halts: list[AnyHalt] = [*await halted_jobs(db, limit=HALT_SCAN_LIMIT),
                            *await batch_halts(db, HALT_SCAN_LIMIT),
                            *await contact_halts(db, HALT_SCAN_LIMIT)]
    return sorted(halts, key=lambda halt: (halt.closed_at, halt.subject))


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


async def _source_share_verdict(db: Database, settings: AppSettings, halt: AnyHalt,
                                status: BudgetStatus, per_call: Decimal) -> str:
    """A job halted because its source used its share of the day resumes only once that
    source has room for a call again (the share was raised, the ceiling too, a new day)."""
    job_id = getattr(halt, "job_id", None)
    async with db.transaction() as conn:
        source = await job_source(conn, job_id) if job_id else None
        spent = await source_spent_in(conn, status.day, source) if source else Decimal(0)
    if source and source_share_refusal(
            status, share=settings.max_source_share_of_daily_budget, source_spent=spent,
            estimate=per_call):
        return SOURCE_SHARE_REACHED
    return "resume"


# --- the pass ----------------------------------------------------------------------------


async def resume_budget_halted(db: Database, client: Client, paths: AppPaths, *,
                               now: datetime | None = None) -> ResumeReport:
    """One bounded pass (``now`` injects the spend day's clock; default: the real one)."""
    settings = load_settings(paths)  # re-read: the ceiling may have just changed
    report = ResumeReport()
    halts = await all_halts(db)
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
        estimate = per_call * halt.paid_calls
        verdict: str = resume_verdict(
            status, open_reserved=await _open_reserved(db, status.day) + pending_estimate,
            estimate=estimate,
            intent_event_id=await event_id_by_dedupe_key(db, halt.intent_key(episode)),
            halted_started_event_id=halt.halted_started_event_id)
        if verdict == "budget_exhausted":
            report.stopped_exhausted = True
            break
        if verdict == "resume" and getattr(halt, "error_code", None) == SOURCE_SHARE_REACHED:
            verdict = await _source_share_verdict(db, settings, halt, status, per_call)
        if verdict == "resume":
            verdict = await halt.blocked(db) or verdict
        if verdict != "resume":
            report.waiting[halt.subject] = verdict
            continue
        if await halt.resume(db, client, settings, episode):
            report.resumed.append(halt.subject)
            pending_estimate += estimate
        else:
            report.waiting[halt.subject] = "resume_in_flight"
    if report.resumed:
        log.info("budget has room (%s): resumed %s halted run(s)", report.episode,
                 len(report.resumed))
    return report


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
