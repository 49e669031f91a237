"""DiscoverWorkflow (``discover-local``): plan the source families, crawl each one as
its own activity (one failing family is a partial result), then finalize the run.

Orchestration only: every read and write happens in the activities."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from backend.config import TENANT_ID
    from backend.sources.errors import BOUNDED_SOURCE_CODES
    from backend.temporal.contracts import (
        DiscoverInput,
        DiscoverResult,
        DiscoveryExecutionRef,
        FamilyFailureInput,
        FamilyInput,
        FamilyOutcome,
        FinalizeInput,
        DiscoveryPlan,
        PlanInput,
    )

DISCOVER_WORKFLOW_ID = "discover-local"
NON_RETRYABLE = ["configuration", "source_payload_invalid", "budget_exceeded", "missing_input"]

BOOKKEEPING = {
    "start_to_close_timeout": timedelta(seconds=30),
    "retry_policy": RetryPolicy(maximum_attempts=5, non_retryable_error_types=NON_RETRYABLE),
}
FAMILY = {
    "start_to_close_timeout": timedelta(minutes=10),
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
                outcomes.append(await self._crawl_family(ref, source, index))
        except (asyncio.CancelledError, ActivityError) as error:
            if is_cancelled_exception(error):
                # Finalize still runs: a canceled workflow may schedule new activities.
                await self._finalize(FinalizeInput(ref=ref, outcomes=outcomes, canceled=True))
                raise
            code = getattr(error.cause, "type", None) or "planning_failed"
            await self._finalize(FinalizeInput(ref=ref, outcomes=outcomes, error_code=code))
            raise ApplicationError("discovery planning failed", type=code, non_retryable=True)
        result = await self._finalize(FinalizeInput(ref=ref, outcomes=outcomes))
        if result.status == "failed":
            first = next(o.error_code for o in outcomes if o.status == "failed")
            raise ApplicationError("every source family failed", type=first, non_retryable=True)
        return result

    async def _crawl_family(self, ref, source, index: int) -> FamilyOutcome:
        try:
            return await workflow.execute_activity(
                "discover_source_family",
                FamilyInput(ref=ref, source=source, index=index),
                result_type=FamilyOutcome,
                **FAMILY,
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

    async def _finalize(self, input: FinalizeInput) -> DiscoverResult:
        return await workflow.execute_activity(
            "finalize_discovery", input, result_type=DiscoverResult, **BOOKKEEPING
        )
