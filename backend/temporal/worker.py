"""The worker process: the orchestration and preparation Temporal workers, the heartbeat,
and the reconciler that keeps the read model honest about runs it did not see finish."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from datetime import timedelta

from temporalio.worker import Worker

from backend import projections
from backend.config import (
    ORCHESTRATION_ACTIVITY_SLOTS,
    PREP_TASK_QUEUE,
    TASK_QUEUE,
    AppPaths,
    load_settings,
)
from backend.process.heap_trim import trim_after_bursts
from backend.process.ready_signal import signal_ready
from backend.process.startup_trace import milestone
from backend.store.db import Database
from backend.store.heartbeats import write_heartbeat
from backend.temporal.activities.apply import ApplyActivities
from backend.temporal.activities.batch import BatchActivities
from backend.temporal.activities.contacts import ContactActivities
from backend.temporal.activities.continuation import ContinuationActivities
from backend.temporal.activities.discovery import DiscoveryActivities
from backend.temporal.activities.follow_up import FollowUpActivities
from backend.temporal.activities.preparation import PreparationActivities
from backend.temporal.activities.spend import SpendActivities
from backend.temporal.client import connect_with_retry
from backend.temporal.interceptors import ActivitySlotTracker, FailureSanitizer
from backend.temporal.loops.auto_apply import auto_apply_loop
from backend.temporal.loops.budget_resume import resume_budget_halted_safely
from backend.temporal.loops.heartbeat import heartbeat_loop, worker_identity
from backend.temporal.loops.history_repair import repair_histories
from backend.temporal.loops.idle_recycle import IdleRecycler
from backend.temporal.loops.interrupted_resume import resume_interrupted_safely
from backend.temporal.loops.reconciler import reconcile_runs
from backend.temporal.loops.recycle_rule import RecyclePolicy
from backend.temporal.loops.task_queue import TaskQueueObserver
from backend.temporal.loops.threshold_backstop import dispatch_threshold_cleared_safely
from backend.temporal.schedule import reconcile_from_settings_file, schedule_reconcile_loop
from backend.temporal.start_signing import StartGuardInterceptor, load_or_create_signing_key
from backend.temporal.workflows.apply import ApplyWorkflow
from backend.temporal.workflows.batch import BatchStageWorkflow
from backend.temporal.workflows.contact_research import ContactResearchWorkflow
from backend.temporal.workflows.continuation import PreparationContinuationWorkflow
from backend.temporal.workflows.discover import DiscoverWorkflow
from backend.temporal.workflows.follow_up import FollowUpEmailWorkflow
from backend.temporal.workflows.policy_rerun import PolicyRerunWorkflow
from backend.temporal.workflows.preparation import JobPreparationWorkflow

log = logging.getLogger(__name__)

RECONCILE_EVERY_S = 15.0


# Workflows kept in each worker's sticky cache (the SDK's default is 1,000 per worker); a
# cached workflow keeps its sandbox and state in memory between its tasks.
# JOBCTRL_WORKER_CACHED_WORKFLOWS overrides it (for measuring: bench/README.md).
CACHED_WORKFLOWS = 1000
CACHED_WORKFLOWS_ENV = "JOBCTRL_WORKER_CACHED_WORKFLOWS"


def cached_workflows() -> int:
    return int(os.environ.get(CACHED_WORKFLOWS_ENV) or CACHED_WORKFLOWS)


def worker_build_id() -> str:
    """The build id both workers report. Without one, the SDK derives it by hashing the
    bytecode of every loaded module (~1,000 of them: tens of milliseconds with bytecode
    caches, seconds without), at every start. No worker versioning is used here, so the
    package version names the build."""
    from importlib import metadata

    try:
        return f"jobctrl-{metadata.version('jobctrl')}"
    except metadata.PackageNotFoundError:  # a source tree that was never installed
        return "jobctrl-dev"

# The workflow classes each worker registers. tests/unit/test_workflow_replay.py replays the
# recorded histories against exactly this list, so a newly registered workflow needs one.
ORCHESTRATION_WORKFLOWS = [DiscoverWorkflow, ApplyWorkflow, FollowUpEmailWorkflow]
PREPARATION_WORKFLOWS = [JobPreparationWorkflow, BatchStageWorkflow, ContactResearchWorkflow,
                         PreparationContinuationWorkflow, PolicyRerunWorkflow]
REGISTERED_WORKFLOWS = [*ORCHESTRATION_WORKFLOWS, *PREPARATION_WORKFLOWS]


async def reconcile_safely(db: Database, client, paths: AppPaths) -> None:
    try:
        await reconcile_runs(db, client)
    except Exception:  # noqa: BLE001 - a failed pass is retried on the next one
        log.exception("reconciliation pass failed")
    try:
        # Coverage not proven (recovering / retrying / no checkpoint): repair from history.
        await repair_histories(db, client)
    except Exception:  # noqa: BLE001 - a failed repair is retried on the next pass
        log.exception("history repair pass failed")
    # Preparation halted by the daily ceiling starts again once the budget has room.
    await resume_budget_halted_safely(db, client, paths)
    # Preparation ended by an infrastructure fault (its worker vanished) starts again now.
    await resume_interrupted_safely(db, client, paths)
    # Jobs a lowered fit threshold clears whose preparation was never started.
    await dispatch_threshold_cleared_safely(db, client, paths)


async def reconcile_loop(db: Database, client, paths: AppPaths, stop: asyncio.Event) -> None:
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=RECONCILE_EVERY_S)
        if not stop.is_set():
            await reconcile_safely(db, client, paths)


def orchestration_activities(db: Database, paths: AppPaths) -> list:
    discovery = DiscoveryActivities(db, paths)
    return [
        discovery.plan_discovery,
        discovery.discover_source_family,
        discovery.record_family_failure,
        discovery.plan_preparation,
        discovery.finalize_discovery,
        *apply_activities(db, paths),
    ]


def apply_activities(db: Database, paths: AppPaths) -> list:
    apply = ApplyActivities(db, paths)
    follow_up = FollowUpActivities(db, paths)
    return [apply.claim_apply_jobs, apply.execute_apply, apply.fail_apply_claim,
            apply.record_apply_lifecycle, follow_up.send_follow_up_email,
            follow_up.fail_follow_up_email, follow_up.record_follow_up_lifecycle]


def preparation_activities(db: Database, paths: AppPaths) -> list:
    preparation = PreparationActivities(db, paths)
    return [
        SpendActivities(db, paths).check_spend_budget,
        preparation.enrich_job,
        preparation.score_job,
        preparation.tailor_resume,
        preparation.write_cover_letter,
        preparation.render_pdfs,
        preparation.reconcile_stage_failure,
        preparation.record_workflow_lifecycle,
        ContinuationActivities(db).select_continuation_jobs,
        BatchActivities(db).cancel_batch_items,
        *contact_activities(db, paths),
    ]


def contact_activities(db: Database, paths: AppPaths) -> list:
    contacts = ContactActivities(db, paths)
    return [contacts.open_contact_research, contacts.research_contact_candidates,
            contacts.close_contact_research]


async def run_worker(paths: AppPaths, temporal_address: str, stop: asyncio.Event,
                     recycle: RecyclePolicy | None = None, *,
                     on_ready: Callable[[], object] = lambda: signal_ready("worker")) -> bool:
    """Runs until ``stop``; True when it stopped to be recycled (idle and grown).
    ``recycle``: None or disabled, never (only a supervised worker is started again).
    ``on_ready`` runs once, after the first heartbeat row (the supervisor's readiness)."""
    milestone("worker_imported")  # start-up milestones: logged (and traced for bench/)
    settings = load_settings(paths)
    db = await Database.open(paths.database, inline_writes=True)  # see store/one_hop.py
    await projections.catch_up(db)  # appends fold themselves; this takes any backlog
    client = await connect_with_retry(settings.temporal, temporal_address, timeout=30,
                                    app_dir=paths.app_dir)
    milestone("worker_connected")
    tracker = ActivitySlotTracker()
    slots = settings.worker_activity_slots
    identity = worker_identity(
        paths, task_queue=TASK_QUEUE, namespace=settings.temporal.namespace,
        slots=slots + ORCHESTRATION_ACTIVITY_SLOTS,
    )
    # The guard refuses any workflow this JobCtrl did not start (start_signing). The
    # sanitizer, innermost, turns every activity failure into a bounded code before it
    # reaches Temporal's history (the tracker outside it only counts).
    guard = StartGuardInterceptor(load_or_create_signing_key(paths.app_dir))
    common = {"interceptors": [guard, tracker, FailureSanitizer()],
              "graceful_shutdown_timeout": timedelta(seconds=5),
              "build_id": worker_build_id(), "max_cached_workflows": cached_workflows()}
    orchestration = Worker(
        client, task_queue=TASK_QUEUE, workflows=ORCHESTRATION_WORKFLOWS,
        activities=orchestration_activities(db, paths),
        max_concurrent_activities=ORCHESTRATION_ACTIVITY_SLOTS, **common,
    )
    preparation = Worker(
        client, task_queue=PREP_TASK_QUEUE,
        workflows=PREPARATION_WORKFLOWS,
        activities=preparation_activities(db, paths),
        max_concurrent_activities=slots, **common,
    )
    milestone("worker_built")
    await reconcile_safely(db, client, paths)  # before accepting work, as the spec asks
    await reconcile_from_settings_file(paths, client)  # the discovery schedule, too
    milestone("worker_reconciled")
    recycler = None
    try:
        async with orchestration, preparation:
            reconciler = asyncio.create_task(reconcile_loop(db, client, paths, stop))
            schedules = asyncio.create_task(schedule_reconcile_loop(paths, client, stop))
            # The standing auto-apply loop: reconciled at once, then at heartbeat cadence.
            auto_apply = asyncio.create_task(auto_apply_loop(db, client, paths, stop))
            observer = TaskQueueObserver(
                client.workflow_service, namespace=settings.temporal.namespace,
                task_queues=[TASK_QUEUE, PREP_TASK_QUEUE],
            )
            trimmer = asyncio.create_task(trim_after_bursts(stop, release=db.release_memory))
            recycler = IdleRecycler(db, client, tracker, recycle or RecyclePolicy(quiet_s=0))
            recycling = asyncio.create_task(recycler.run(stop))
            beats = asyncio.create_task(heartbeat_loop(
                db, identity, tracker, task_queues=observer,
                on_first_beat=on_ready))
            log.info("worker %s polling %s at %s", identity.worker_id, TASK_QUEUE, temporal_address)
            await stop.wait()
            for task in (beats, reconciler, schedules, auto_apply, trimmer, recycling):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
    finally:
        # Tell readers at once that this worker is gone, instead of waiting for staleness;
        # "recycling": a planned restart, back in seconds (readiness: planned_restart).
        recycled = recycler is not None and recycler.recycle_requested
        await write_heartbeat(db, identity, active_slots=0,
                              state="recycling" if recycled else "stopped")
        await db.close()
    return recycled
