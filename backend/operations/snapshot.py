"""``GET /v1/pipeline/operations``: which execution owns work, what remains in each scope,
what the worker can execute now, and whether an ETA can be defended.

Selection: the newest Discover execution that is in progress or still draining, else the
latest terminal one; with none, global backlog and capacity only (execution, source
family and reconciliation summaries are null). Per-job counts come from canonical
``job_stage_states``; orchestration from attempt-aware ``pipeline_step_projections``;
runtime facts from fresh worker heartbeats. Unknown stays null or a typed reason.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from backend.config import TENANT_ID, AppPaths, AppSettings
from backend.domain.clock import parse_iso, to_iso, utc_now
from backend.domain.stages import STAGES
from backend.llm.budget import read_spend_budget_status
from backend.operations import eta as eta_v1
from backend.operations.capacity import read_capacity, stage_slots
from backend.operations.phase import (
    PhaseFacts,
    execution_phase,
    failed_step_count,
    membership_facts,
    membership_open,
    open_boundary_count,
)
from backend.operations.stage_counts import (
    CountBlock,
    ExecutionKey,
    remaining,
    snapshot_stage_counts,
    subtract,
    unresolved_work,
)
from backend.projections.coverage import read_coverage
from backend.projections.pipeline_steps import list_steps
from backend.store import operations_reads
from backend.store.db import Database
from backend.store.preparation_halts import (
    count_budget_halted_with_pending_work,
    count_interrupted_with_pending_work,
)
from backend.store.provider_progress import read_provider_progress, select_provider_progress
from backend.temporal.contracts import DiscoveryExecutionRef

RECONCILIATION_KINDS = ("enrichment_pass", "preparation_fanout", "existing_backlog_sweep",
                        "pdf_render")
WORKFLOW_STATUS = {"running": "in_progress", "completed": "completed", "failed": "failed",
                   "canceled": "canceled", "reconciled_not_found": "reconciled_not_found"}
DRAINING_LOOKBACK = 5  # closed executions checked for unresolved work before the newest


async def _executions(db: Database) -> list[dict]:
    return await operations_reads.recent_executions(db, DRAINING_LOOKBACK + 1)


def _key(execution: dict) -> ExecutionKey:
    return ExecutionKey(workflow_id=execution["discover_workflow_id"],
                        run_id=execution["discover_run_id"])


async def select_execution(db: Database) -> dict | None:
    executions = await _executions(db)
    for execution in executions:
        if execution["workflow_status"] == "running":
            return execution
    for execution in executions:
        if await unresolved_work(db, _key(execution)):
            return execution  # closed but still draining
    return executions[0] if executions else None


def _families_planned_and_reported(execution: dict) -> tuple[int, int]:
    families = json.loads(execution["families_json"])
    return len(families), len(json.loads(execution["progress_json"]).get("families", {}))


def _phase(execution: dict, *, unresolved: int, families_failed: int,
           stage_failures: int, steps=()) -> str:
    """See backend/operations/phase.py: an open enrichment_pass / pdf_render boundary
    keeps a closed execution draining, like unresolved per-job work."""
    planned, done = _families_planned_and_reported(execution)
    return execution_phase(PhaseFacts(
        workflow_status=execution["workflow_status"], families_planned=planned,
        families_reported=done, families_failed=families_failed,
        unresolved_jobs=unresolved, stage_failures=stage_failures,
        open_boundaries=open_boundary_count(steps), failed_steps=failed_step_count(steps)))


async def _membership_open(db: Database, ref: DiscoveryExecutionRef, execution: dict,
                           steps) -> bool:
    """backend/operations/phase.membership_open. Whether an outside job could still be
    swept in is read only when it decides the answer (sources done, sweep not linked
    yet), in one read: the outside counts are a difference of reads taken apart, which
    flickered above zero while rows moved."""
    planned, reported = _families_planned_and_reported(execution)
    facts = membership_facts(steps, workflow_running=execution["workflow_status"] == "running",
                             sources_done=reported >= planned, backlog_may_join=None)
    if facts.workflow_running and facts.sources_done and not (
            facts.sweep_linked or facts.fanout_closed):
        facts = replace(facts, backlog_may_join=await operations_reads.sweep_may_take_a_job(
            db, ref))
    return membership_open(facts)


def _source_families(execution: dict) -> dict:
    families = json.loads(execution["families_json"])
    progress = json.loads(execution["progress_json"])
    outcomes = progress.get("families", {})
    failed = [name for name, item in outcomes.items() if item.get("status") == "failed"]
    succeeded = [name for name, item in outcomes.items() if item.get("status") == "succeeded"]
    recovered = sum(int(item.get("recoveredUnits") or 0) for item in outcomes.values())
    return {
        "planned": len(families),
        "succeeded": len(succeeded),
        "failed": len(failed),
        "remaining": len(families) - len(succeeded) - len(failed),
        "progressCurrent": execution["progress_current"],
        "progressTotal": execution["progress_total"],
        "families": [{"family": name, **outcomes.get(name, {"status": "waiting"})}
                     for name in families],
        "recoveredUnits": recovered or None,
        # Filled by the reader for the exact execution while a jobspy family runs.
        "providerProgress": None,
    }


async def _provider_progress(db: Database, ref: DiscoveryExecutionRef, steps) -> dict | None:
    """The latest traversal observation bound to this exact workflow AND run id, only
    while its family's source step is running (a terminal step omits it)."""
    running = {step.item_key.removeprefix("family:") for step in steps
               if step.step_kind == "source_family" and step.status == "running"}
    if not running:
        return None
    observations = await read_provider_progress(
        db, ref.tenant_id, ref.discover_workflow_id, ref.discover_run_id)
    return select_provider_progress(
        observations, discover_workflow_id=ref.discover_workflow_id,
        discover_run_id=ref.discover_run_id, running_families=running)


def _step_payload(step) -> dict:
    return {"stepKind": step.step_kind, "itemKey": step.item_key, "status": step.status,
            "attempt": step.attempt, "queuedAt": step.queued_at, "startedAt": step.started_at,
            "finishedAt": step.finished_at, "durationMs": step.duration_ms,
            "errorCode": step.error_code, "counts": step.counts}


def _reconciliation(steps, *, workflow_running: bool) -> dict:
    by_kind = {kind: [s for s in steps if s.step_kind == kind] for kind in RECONCILIATION_KINDS}
    summary = {}
    for kind, rows in by_kind.items():
        if rows:
            summary[kind] = [_step_payload(row) for row in rows]
        else:
            # Not started yet while the workflow runs; afterwards no evidence is unknown.
            summary[kind] = {"status": "waiting" if workflow_running else "unknown"}
    return summary


async def _samples(db: Database, now: datetime) -> list[eta_v1.DurationSample]:
    """pipeline-eta-v1 keeps the 50 most recent successful samples per stage in the
    14-day window: read only those (an index range per stage, not every stage row)."""
    since = to_iso(now - timedelta(days=14))
    rows = await operations_reads.succeeded_durations(
        db, STAGES, since=since, per_stage=eta_v1.MAX_SAMPLES_PER_STAGE)
    return [eta_v1.DurationSample(stage=stage, duration_seconds=ms / 1000,
                                  finished_at=parse_iso(finished))
            for stage, ms, finished in rows]


async def _last_dispatch(db: Database) -> datetime | None:
    started = await operations_reads.last_stage_start(db)
    return parse_iso(started) if started else None


# Rows that count toward the measured pace: every final state but canceled (a canceled
# run settles its rows at once without doing their work).
PACE_STATUSES = ("succeeded", "skipped", "blocked", "failed", "exhausted")


async def _settled_since(db: Database, since: datetime, now: datetime) -> eta_v1.Throughput:
    """Stage rows that reached a final state after ``since``, per stage: index ranges on
    (tenant, stage, status, finished_at), never a scan of every stage row."""
    settled = {stage: 0 for stage in STAGES} | await operations_reads.settled_counts(
        db, STAGES, PACE_STATUSES, after=to_iso(since))
    return eta_v1.Throughput(settled=settled,
                             window_seconds=max(0.0, (now - since).total_seconds()))


async def _pace(db: Database, now: datetime, execution_started_at: str) -> eta_v1.Pace:
    """The pace over the trailing window and over the run so far, both starting no
    earlier than the selected execution (the idle time before it is not its pace)."""
    started = min(parse_iso(execution_started_at), now)
    recent = await _settled_since(db, max(now - eta_v1.PACE_WINDOW, started), now)
    run = await _settled_since(db, max(now - eta_v1.RUN_PACE_WINDOW, started), now)
    return eta_v1.Pace(recent=recent, run=run)


def eta_capacity(capacity) -> eta_v1.RuntimeCapacity:
    """The ETA's view of the runtime: freshness, and the slots a stage can use."""
    newest = capacity.freshness.newest_heartbeat_at
    return eta_v1.RuntimeCapacity(
        last_heartbeat_at=parse_iso(newest) if newest else None,
        freshness=capacity.freshness.state,
        configured_slots=stage_slots(capacity) or 0,
        available_slots=capacity.available_slots or 0,
    )


async def read_operations_snapshot(db: Database, paths: AppPaths, settings: AppSettings,
                                   now: datetime | None = None) -> dict[str, Any]:
    now = now or utc_now()
    capacity = await read_capacity(db, database_path=str(paths.database), now=now)
    execution = await select_execution(db)
    run_id = execution["discover_run_id"] if execution else None
    scopes: dict[str, Any] = {}
    current = sweep = None
    # The cohorts' and the global totals are incremental (migrations 0012 / 0013), so
    # this read grows neither with the whole backlog nor with the execution's size.
    counts = await snapshot_stage_counts(db, _key(execution) if execution else None)
    if execution:
        current = counts.cohorts["observed_this_run"]
        sweep = counts.cohorts["existing_backlog"]
        scopes["current_execution"] = _blocks(current)
        scopes["execution_sweep"] = {**_blocks(sweep), "orchestration": "not_separate"}
    # Outside = every job minus the selected execution's two disjoint cohorts.
    everything = counts.everything
    outside = subtract(everything, current, sweep) if execution else everything
    scopes["global_outside_execution"] = _blocks(outside)
    budget = await read_spend_budget_status(db, settings, now)
    # The ceiling refuses a job whose estimate the budget left cannot cover, so work is
    # budget-blocked before today's spend literally meets the ceiling.
    budget_halted = await count_budget_halted_with_pending_work(db)
    fresh_idle = capacity.freshness.state == "fresh" and capacity.active_slots == 0

    summary = coverage = families = reconciliation = None
    overall = eta_v1.withheld("no_work") if fresh_idle and not execution else None
    stage_etas: dict[str, Any] = {}
    if execution:
        ref = DiscoveryExecutionRef(tenant_id=TENANT_ID,
                                    discover_workflow_id=execution["discover_workflow_id"],
                                    discover_run_id=run_id)
        coverage_row = await read_coverage(db, ref)
        coverage = coverage_row.to_payload()
        steps = await list_steps(db, ref)
        workflow_running = execution["workflow_status"] == "running"
        membership_is_open = await _membership_open(db, ref, execution, steps)
        families = _source_families(execution)
        families["providerProgress"] = await _provider_progress(db, ref, steps)
        reconciliation = _reconciliation(steps, workflow_running=workflow_running)
        unresolved = sum(remaining(b) for b in (*current.values(), *sweep.values()))
        failures = sum(b.failed + b.exhausted for b in (*current.values(), *sweep.values()))
        summary = {
            "discoverWorkflowId": execution["discover_workflow_id"],
            "discoverRunId": run_id,
            "workflowStatus": WORKFLOW_STATUS.get(execution["workflow_status"], "unknown"),
            "phase": _phase(execution, unresolved=unresolved,
                            families_failed=families["failed"], stage_failures=failures,
                            steps=steps),
            "startedAt": execution["started_at"],
            "finishedAt": execution["finished_at"],
            "membershipOpen": membership_is_open,
        }
        inputs = eta_v1.EtaInputs(
            now=now,
            demand=[eta_v1.StageDemand(stage=stage, remaining=remaining(current[stage])
                                       + remaining(sweep[stage]),
                                       outside_queued=outside[stage].waiting
                                       if outside[stage].processing else 0,
                                       outside_running=outside[stage].processing)
                    for stage in current],
            samples=await _samples(db, now),
            capacity=eta_capacity(capacity),
            membership_open=membership_is_open,
            coverage_ready=coverage_row.ready,
            budget_blocked=budget.exhausted or budget_halted > 0,
            inventory_truncated=bool(capacity.active_items_truncated),
            last_dispatch_at=await _last_dispatch(db),
            active_in_scope=sum(b.processing for b in (*current.values(), *sweep.values())),
            pace=await _pace(db, now, execution["started_at"]),
        )
        overall = eta_v1.estimate_overall(inputs)
        stage_etas = {stage: value.model_dump(by_alias=True)
                      for stage, value in eta_v1.estimate_stages(inputs).items()}
    elif not fresh_idle:
        # Never a fabricated idle checkpoint: inventory is unknown or busy.
        coverage = {"status": "recovering"}
    return {
        "generatedAt": to_iso(now),
        "etaEstimatorVersion": eta_v1.ETA_ESTIMATOR_VERSION,
        "freshness": capacity.freshness.model_dump(by_alias=True),
        "execution": summary,
        "projectionCoverage": coverage,
        "scopes": scopes,
        "sourceFamilies": families,
        "reconciliation": reconciliation,
        "capacity": capacity.model_dump(by_alias=True, exclude={"active_items"}),
        "activeStageCounts": capacity.active_stage_counts,
        "activeItems": [item.model_dump(by_alias=True) for item in capacity.active_items]
        if capacity.active_items is not None else None,
        "activeItemsTotal": capacity.active_items_total,
        "activeItemsTruncated": capacity.active_items_truncated,
        "budget": budget.model_dump(by_alias=True, mode="json"),
        # Jobs whose preparation an infrastructure fault ended with work left: the worker
        # starts them again (never shown as done while they wait).
        "interruptedPreparations": await count_interrupted_with_pending_work(db),
        # Jobs the daily ceiling refused with work left: they resume once it allows them.
        "budgetHaltedPreparations": budget_halted,
        "overallEta": overall.model_dump(by_alias=True) if overall else None,
        "stageEtas": stage_etas,
    }


def _blocks(blocks: dict[str, CountBlock]) -> dict[str, Any]:
    return {stage: block.model_dump(by_alias=True) for stage, block in blocks.items()}
