"""DiscoverWorkflow (``discover-local``): plan the source families, crawl each one as
its own activity (one failing family is a partial result) and fan its jobs out to
preparation right away, sweep the pre-existing eligible backlog into this execution and
fan it out (the terminal ``fanout:sweep`` step closes membership), then finalize the run.

The execution identity is read once from ``workflow.info()`` into an immutable
:class:`DiscoveryExecutionRef`; every activity writes lineage and pipeline-step events
under it. Orchestration only: every read and write happens in the activities."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    WorkflowAlreadyStartedError,
    is_cancelled_exception,
)
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from backend.config import PREP_TASK_QUEUE, TENANT_ID
    from backend.sources.errors import BOUNDED_SOURCE_CODES
    from backend.temporal.contracts import (
        DiscoverInput,
        DiscoverResult,
        DiscoveryExecutionRef,
        DiscoveryPlan,
        FamilyFailureInput,
        FamilyInput,
        FamilyOutcome,
        FanoutInput,
        FanoutPlan,
        FinalizeInput,
        PlanInput,
        PrepInput,
        prep_workflow_id,
    )
    from backend.temporal.start_contracts import DISCOVER_WORKFLOW_ID  # noqa: F401 - re-exported
    from backend.temporal.workflows.common import BOOKKEEPING, NON_RETRYABLE

FANOUT_BATCH = 50  # child starts issued together in one workflow task
# Replay guard: executions recorded before the backlog sweep existed skip it on replay.
SWEEP_PATCH = "existing-backlog-sweep-v1"
FANOUT_SWEEP_KEY = "fanout:sweep"


def fanout_item_key(family: str) -> str:
    return f"fanout:family:{family}"


def family_options(heartbeat_timeout_s: int) -> dict:
    """A family crawl heartbeats while it works: a dead worker is noticed within the
    heartbeat timeout and the crawl resumes on the next attempt."""
    return {
        "start_to_close_timeout": timedelta(minutes=30),
        "heartbeat_timeout": timedelta(seconds=heartbeat_timeout_s),
        "retry_policy": RetryPolicy(
            initial_interval=timedelta(seconds=2),
            maximum_attempts=3,
            non_retryable_error_types=NON_RETRYABLE,
        ),
    }


def _source_error_code(error: ActivityError) -> str:
    cause = error.cause
    code = getattr(cause, "type", None)
    return code if code in BOUNDED_SOURCE_CODES else "source_failed"


@workflow.defn(name="DiscoverWorkflow")
class DiscoverWorkflow:
    @workflow.run
    async def run(self, input: DiscoverInput) -> DiscoverResult:
        info = workflow.info()
        ref = DiscoveryExecutionRef(
            tenant_id=TENANT_ID, discover_workflow_id=info.workflow_id, discover_run_id=info.run_id
        )
        outcomes: list[FamilyOutcome] = []
        try:
            plan = await workflow.execute_activity(
                "plan_discovery",
                PlanInput(ref=ref, source_ids=input.source_ids),
                result_type=DiscoveryPlan,
                **BOOKKEEPING,
            )
            for index, source in enumerate(plan.sources):
                outcome = await self._crawl_family(ref, source, index, plan.heartbeat_timeout_s)
                outcomes.append(outcome)
                # Score as you discover: this family's jobs start preparing right away.
                if outcome.job_ids:
                    await self._fan_out(FanoutInput(ref=ref, job_ids=outcome.job_ids,
                                                    item_key=fanout_item_key(source.id)))
            if workflow.patched(SWEEP_PATCH):
                # Sweep pre-existing eligible work into this execution and fan it out.
                await self._fan_out(FanoutInput(ref=ref, job_ids=[], item_key=FANOUT_SWEEP_KEY,
                                                sweep=True))
        except (asyncio.CancelledError, ActivityError) as error:
            if is_cancelled_exception(error):
                # Finalize still runs: a canceled workflow may schedule new activities.
                await self._finalize(FinalizeInput(ref=ref, outcomes=outcomes, canceled=True))
                raise
            code = _source_error_code(error) if isinstance(error, ActivityError) else ""
            code = code if code not in ("", "source_failed") else "planning_failed"
            await self._finalize(FinalizeInput(ref=ref, outcomes=outcomes, error_code=code))
            raise ApplicationError(
                "discovery planning failed", type=code, non_retryable=True) from None
        result = await self._finalize(FinalizeInput(ref=ref, outcomes=outcomes))
        if result.status == "failed":
            first = next(o.error_code for o in outcomes if o.status == "failed")
            raise ApplicationError("every source family failed", type=first, non_retryable=True)
        return result

    async def _crawl_family(self, ref, source, index: int, heartbeat_timeout_s: int) -> FamilyOutcome:
        try:
            return await workflow.execute_activity(
                "discover_source_family",
                FamilyInput(ref=ref, source=source, index=index),
                result_type=FamilyOutcome,
                **family_options(heartbeat_timeout_s),
            )
        except ActivityError as error:
            if is_cancelled_exception(error):
                raise
            code = _source_error_code(error)
            await workflow.execute_activity(
                "record_family_failure",
                FamilyFailureInput(ref=ref, family=source.id, index=index, error_code=code),
                **BOOKKEEPING,
            )
            return FamilyOutcome(family=source.id, status="failed", error_code=code)

    async def _fan_out(self, input: FanoutInput) -> None:
        """Plan (and record) the preparation of some jobs, then start one child per
        planned job with exactly its planned stages."""
        ref = input.ref
        plan = await workflow.execute_activity(
            "plan_preparation", input, result_type=FanoutPlan, **BOOKKEEPING,
        )
        for start in range(0, len(plan.job_ids), FANOUT_BATCH):
            batch = plan.job_ids[start : start + FANOUT_BATCH]
            await asyncio.gather(*(self._start_preparation(ref, job_id, plan) for job_id in batch))

    async def _start_preparation(self, ref: DiscoveryExecutionRef, job_id: str,
                                 plan: FanoutPlan) -> None:
        stages = plan.required_steps.get(job_id)
        extra = {"stages": stages} if stages else {}
        with contextlib.suppress(WorkflowAlreadyStartedError):  # already preparing
            await workflow.start_child_workflow(
                "JobPreparationWorkflow",
                PrepInput(job_id=job_id, idempotency_key=job_id,
                          heartbeat_timeout_s=plan.heartbeat_timeout_s,
                          discover_workflow_id=ref.discover_workflow_id,
                          discover_run_id=ref.discover_run_id, **extra),
                id=prep_workflow_id(job_id),
                task_queue=PREP_TASK_QUEUE,
                # Preparation outlives the Discover run that started it.
                parent_close_policy=ParentClosePolicy.ABANDON,
            )

    async def _finalize(self, input: FinalizeInput) -> DiscoverResult:
        return await workflow.execute_activity(
            "finalize_discovery", input, result_type=DiscoverResult, **BOOKKEEPING
        )
