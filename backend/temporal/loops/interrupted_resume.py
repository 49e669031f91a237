"""The interrupted-preparation pass: a preparation that ended for an infrastructure reason
(its worker vanished mid-task and an activity timed out, its workflow timed out) is started
again by the worker itself, without the user and without waiting for the next Discover.

A job is *interrupted* when its newest JobPreparationWorkflow run failed with an
infrastructure code (``INFRASTRUCTURE_CODES``), no preparation run of it is open, and its
stage rows still hold work the Discover planner would run (``pending`` with no owner; a
stage whose retries ended ``exhausted`` blocks its downstream and is not resumed). For each,
oldest first:

- the dispatch intent ``PreparationInterruptedResumed`` is committed with a dedupe key of
  the interrupted run before Temporal is asked, so one interrupted run is resumed once;
- a job is resumed at most ``MAX_RESUMES_PER_JOB`` times: an infrastructure fault that
  recurs every time is left failed for the user to see, not retried forever;
- the start is the ordinary idempotent dispatch (``start_preparation``, the job's
  deterministic ``prep-{jobId}`` id). An intent whose start was lost to a worker kill is
  delivered by the next pass: Temporal's newest execution under that id is still the
  interrupted run.

The budget-halted case (``budget_exceeded``) is the budget-resume pass's, which waits for
room under the ceiling first."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from temporalio.client import Client

from backend.config import AppPaths, load_settings
from backend.domain import events as ev
from backend.faults import stall_point
from backend.store.db import Database
from backend.store.preparation_halts import INFRASTRUCTURE_CODES, count_job_events, has_event
from backend.store.resume_intents import record_resume_intent
from backend.temporal.contracts import prep_workflow_id
from backend.temporal.dispatch import start_preparation
from backend.temporal.loops.budget_resume import Halt, halted_jobs, newer_execution_exists

log = logging.getLogger(__name__)

MAX_RESUMES_PER_JOB = 3
RESUME_LIMIT_PER_PASS = 20
RESUMED_EVENT = "PreparationInterruptedResumed"


@dataclass
class InterruptedReport:
    interrupted: int = 0
    resumed: list[str] = field(default_factory=list)  # job ids started (or re-delivered)
    given_up: list[str] = field(default_factory=list)  # resumed MAX_RESUMES_PER_JOB times


def intent_dedupe_key(job_id: str, interrupted_run_id: str) -> str:
    return f"{RESUMED_EVENT}:{job_id}:{interrupted_run_id}"


async def interrupted_jobs(db: Database) -> list[Halt]:
    """Jobs whose newest preparation failed for an infrastructure reason, with no
    preparation open and stage work left, oldest first."""
    return await halted_jobs(db, error_codes=INFRASTRUCTURE_CODES)


async def resume_interrupted(db: Database, client: Client, paths: AppPaths) -> InterruptedReport:
    """One bounded pass."""
    report = InterruptedReport()
    halts = await interrupted_jobs(db)
    report.interrupted = len(halts)
    if not halts:
        return report
    await stall_point(paths, "interrupted-resume-stall")  # a slow pass, for the tests
    settings = load_settings(paths)
    for halt in halts:
        if len(report.resumed) >= RESUME_LIMIT_PER_PASS:
            break
        if await _resume(db, client, halt, settings.stage_heartbeat_timeout_s, report):
            report.resumed.append(halt.job_id)
    if report.resumed:
        log.info("resumed %s interrupted preparation(s)", len(report.resumed))
    return report


async def _resume(db: Database, client: Client, halt: Halt, heartbeat_timeout_s: int,
                  report: InterruptedReport) -> bool:
    """Commit the intent, then start; False when the job was resumed too often already or
    Temporal already runs a newer execution (an earlier pass delivered the intent)."""
    workflow_id = prep_workflow_id(halt.job_id)
    dedupe_key = intent_dedupe_key(halt.job_id, halt.halted_run_id)
    if not await has_event(db, dedupe_key):
        attempt = await count_job_events(db, halt.job_id, RESUMED_EVENT) + 1
        if attempt > MAX_RESUMES_PER_JOB:
            report.given_up.append(halt.job_id)
            return False
        await record_resume_intent(
            db, ev.PreparationInterruptedResumed(
                job_id=halt.job_id, workflow_id=workflow_id,
                interrupted_run_id=halt.halted_run_id, error_code=halt.error_code,
                stages=list(halt.stages), attempt=attempt),
            job_id=halt.job_id, dedupe_key=dedupe_key)
    elif await newer_execution_exists(client, workflow_id, halt.halted_run_id):
        return False
    await start_preparation(client, halt.job_id, stages=list(halt.stages),
                            heartbeat_timeout_s=heartbeat_timeout_s)
    return True


async def resume_interrupted_safely(db: Database, client: Client, paths: AppPaths) -> None:
    try:
        await resume_interrupted(db, client, paths)
    except Exception:  # noqa: BLE001 - the next pass tries again
        log.exception("interrupted-preparation pass failed")
