"""ApplyWorkflow: one job (``apply-{jobKey}``) or the standing loop (``apply-auto-local``).

Both open with the spend preflight (``check_spend_budget``, one attempt), so a depleted
budget fails the run before any apply work. The continuous mode polls: claim (settings
re-read by the activity), apply the claimed jobs side by side, sleep, repeat; it
continues as new now and then to keep its history short. Cancellation is cooperative:
claims still held are given back and the run ends as ``WorkflowCanceled``."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from functools import partial

from pydantic import Field
from temporalio import workflow
from temporalio.exceptions import ActivityError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from backend.config import PREP_TASK_QUEUE
    from backend.domain.model import CamelModel
    from backend.temporal.activities.apply import (
        ApplyOutcome,
        ClaimInput,
        ClaimResult,
        ExecuteInput,
        FailClaimInput,
    )
    from backend.temporal.contracts import RunRef
    from backend.temporal.start_contracts import (  # noqa: F401 - re-exported for starters
        APPLY_LOOP_WORKFLOW_ID,
        APPLY_WORKFLOW_TYPE,
        ApplyWorkflowInput,
        apply_workflow_id,
    )
    from backend.temporal.workflows.common import (
        BOOKKEEPING,
        check_spend,
        closing_on_error,
        current_run,
        failure_code,
        record_lifecycle,
        stage_options,
    )

WORKFLOW_TYPE = APPLY_WORKFLOW_TYPE
POLLS_PER_RUN = 200  # then continue as new, so the history stays small


class ApplyResult(CamelModel):
    outcomes: list[ApplyOutcome] = Field(default_factory=list)
    polls: int = 0


@workflow.defn(name=WORKFLOW_TYPE)
class ApplyWorkflow:
    @workflow.run
    async def run(self, input: ApplyWorkflowInput) -> ApplyResult:
        run = current_run(WORKFLOW_TYPE)
        outcomes: list[ApplyOutcome] = []
        polls = 0
        async with closing_on_error("apply", partial(self._lifecycle, run, input)):
            # Inside the block: a cancel that lands while the start is recorded still ends
            # the run with its terminal event.
            await self._lifecycle(run, input, "started")
            await check_spend(run, 0, task_queue=PREP_TASK_QUEUE)
            if input.continuous:
                polls = await self._loop(run, input)
            else:
                outcomes = await self._poll(run, input, 0)
                polls = 1
        await self._lifecycle(run, input, "completed")
        if input.continuous:
            workflow.continue_as_new(input)
        return ApplyResult(outcomes=outcomes, polls=polls)

    async def _loop(self, run: RunRef, input: ApplyWorkflowInput) -> int:
        polls = 0
        while polls < POLLS_PER_RUN and not workflow.info().is_continue_as_new_suggested():
            outcomes = await self._poll(run, input, polls)
            polls += 1
            if not outcomes:
                await workflow.sleep(timedelta(seconds=input.poll_interval_s))
        return polls

    async def _poll(self, run: RunRef, input: ApplyWorkflowInput,
                    poll: int) -> list[ApplyOutcome]:
        claimed = await workflow.execute_activity(
            "claim_apply_jobs", ClaimInput(run=run, poll=poll, job_key=input.job_key),
            result_type=ClaimResult, **BOOKKEEPING)
        return list(await asyncio.gather(
            *(self._apply_one(run, input, job_id) for job_id in claimed.job_ids)))

    async def _apply_one(self, run: RunRef, input: ApplyWorkflowInput,
                         job_id: str) -> ApplyOutcome:
        try:
            return await workflow.execute_activity(
                "execute_apply", ExecuteInput(run=run, job_id=job_id),
                result_type=ApplyOutcome, **stage_options(input.heartbeat_timeout_s))
        except ActivityError as error:
            if is_cancelled_exception(error):
                raise
            # One job giving up never stops the others (or the loop).
            code = failure_code(error)[0]
            return await workflow.execute_activity(
                "fail_apply_claim", FailClaimInput(run=run, job_id=job_id, error_code=code),
                result_type=ApplyOutcome, **BOOKKEEPING)

    async def _lifecycle(self, run: RunRef, input: ApplyWorkflowInput, outcome: str,
                         error_code: str | None = None) -> None:
        summary = {"jobId": input.job_key, "continuous": int(input.continuous),
                   "autoApplyLoop": int(input.auto_apply_loop)}
        await record_lifecycle(run, outcome, summary, error_code=error_code,
                               job_id=input.job_key, activity="record_apply_lifecycle")
