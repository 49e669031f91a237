"""The standing auto-apply loop reconciler: ``auto_apply`` in settings → exactly one
``apply-auto-local`` run (or none).

It runs at worker startup and every few seconds from the worker (and the API nudges it
when the setting changes), so toggling needs no restart. Starting uses the deterministic
id with ``USE_EXISTING``, so however many reconcilers race, at most one loop runs. A loop
that failed its spend preflight is a *budget halt*: it is not restarted while today's
spend is at or above the ceiling, and restarts on its own once the day rolls over or the
ceiling is raised."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from temporalio.client import Client, WorkflowExecutionDescription, WorkflowExecutionStatus
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.service import RPCError, RPCStatusCode

from backend.config import TASK_QUEUE, AppPaths, AppSettings, load_settings
from backend.domain.clock import utc_now
from backend.llm.budget import read_spend_budget_status
from backend.store import apply as apply_store
from backend.store import run_records
from backend.store.db import Database
from backend.temporal.start_contracts import APPLY_LOOP_WORKFLOW_ID, ApplyWorkflowInput

log = logging.getLogger(__name__)

LoopState = Literal["running", "stopped", "budget_halted", "failed", "unknown"]
RECONCILE_EVERY_S = 2.0  # the heartbeat cadence
FAILED_RESTART_AFTER = timedelta(seconds=60)  # a loop that failed for another reason


@dataclass(frozen=True)
class LoopStatus:
    enabled: bool
    state: LoopState
    run_id: str | None = None
    reason: str | None = None

    def as_json(self) -> dict:
        return {"enabled": self.enabled, "workflowId": APPLY_LOOP_WORKFLOW_ID,
                "state": self.state, "runId": self.run_id, "reason": self.reason}


async def describe_loop(client: Client) -> WorkflowExecutionDescription | None:
    try:
        return await client.get_workflow_handle(APPLY_LOOP_WORKFLOW_ID).describe()
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            return None
        raise


async def _terminal_error_code(db: Database, run_id: str) -> str | None:
    return await run_records.failed_run_error_code(db, run_id)


async def observe(db: Database, settings: AppSettings,
                  described: WorkflowExecutionDescription | None) -> LoopStatus:
    """What the loop is doing now, without changing anything."""
    enabled = settings.auto_apply
    if described is None:
        return LoopStatus(enabled, "stopped")
    run_id = described.run_id
    if described.status == WorkflowExecutionStatus.RUNNING:
        return LoopStatus(enabled, "running", run_id)
    if described.status == WorkflowExecutionStatus.FAILED:
        code = await _terminal_error_code(db, run_id)
        if code == "budget_exceeded":
            budget = await read_spend_budget_status(db, settings)
            if budget.exhausted:
                return LoopStatus(enabled, "budget_halted", run_id, "budget_exceeded")
            return LoopStatus(enabled, "stopped", run_id, "budget_exceeded")
        return LoopStatus(enabled, "failed", run_id, code or "workflow_failed")
    if described.status in (WorkflowExecutionStatus.TERMINATED,
                            WorkflowExecutionStatus.TIMED_OUT):
        return LoopStatus(enabled, "failed", run_id, described.status.name.lower())
    return LoopStatus(enabled, "stopped", run_id,
                      "canceled" if described.status == WorkflowExecutionStatus.CANCELED
                      else None)


async def reconcile_auto_apply(db: Database, client: Client, paths: AppPaths) -> LoopStatus:
    settings = load_settings(paths)  # re-read: the toggle lives in settings.json
    await release_orphaned_claims(db)
    described = await describe_loop(client)
    status = await observe(db, settings, described)
    if not settings.auto_apply:
        if status.state == "running":
            await client.get_workflow_handle(APPLY_LOOP_WORKFLOW_ID).cancel()
            log.info("auto-apply off: cancel requested for %s", status.run_id)
        return status
    if status.state in ("running", "budget_halted"):
        return status
    if status.state == "failed" and described is not None and described.close_time and (
            utc_now() - described.close_time < FAILED_RESTART_AFTER):
        return status  # no restart storm for a loop that keeps failing
    handle = await client.start_workflow(
        "ApplyWorkflow",
        ApplyWorkflowInput(continuous=True, auto_apply_loop=True,
                           heartbeat_timeout_s=settings.stage_heartbeat_timeout_s),
        id=APPLY_LOOP_WORKFLOW_ID, task_queue=TASK_QUEUE,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
    )
    log.info("auto-apply on: loop %s running", handle.result_run_id)
    return LoopStatus(True, "running", handle.result_run_id)


async def release_orphaned_claims(db: Database) -> int:
    """Give back claims whose owning run has ended without releasing them (a terminated
    run, a lost history): nothing stays in progress without a live owner."""
    released = 0
    for workflow_id, run_id in await apply_store.runs_holding_closed_claims(db):
        async with db.transaction() as conn:
            released += len(await apply_store.release_run_claims(
                conn, workflow_id=workflow_id, run_id=run_id))
    return released


async def reconcile_auto_apply_safely(db: Database, client: Client, paths: AppPaths) -> None:
    try:
        await reconcile_auto_apply(db, client, paths)
    except Exception:  # noqa: BLE001 - the next pass tries again
        log.exception("auto-apply reconciliation failed")


async def auto_apply_loop(db: Database, client: Client, paths: AppPaths,
                          stop: asyncio.Event) -> None:
    while not stop.is_set():
        await reconcile_auto_apply_safely(db, client, paths)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=RECONCILE_EVERY_S)
