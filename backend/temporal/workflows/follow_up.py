"""FollowUpEmailWorkflow (``follow-up-email-{jobKey}-{round}``): send one follow-up email
the user wrote (or approved) through their own SMTP account, at most once.

The API committed the round and its gated text before starting the run. One activity
sends; a worker that dies mid-send is retried by Temporal and the retry never sends
twice (see ``backend.temporal.activities.follow_up``). When the send gives up, the round
is settled as failed (or unknown, when it may have gone out)."""

from __future__ import annotations

from functools import partial

from temporalio import workflow
from temporalio.exceptions import ActivityError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from backend.temporal.activities.follow_up import (
        FailFollowUpInput,
        FollowUpEmailInput,
        FollowUpEmailOutcome,
    )
    from backend.temporal.contracts import RunRef
    from backend.temporal.start_contracts import FOLLOW_UP_WORKFLOW_TYPE, FollowUpWorkflowInput
    from backend.temporal.workflows.common import (
        BOOKKEEPING,
        closing_on_error,
        current_run,
        failure_code,
        record_lifecycle,
        stage_options,
    )

WORKFLOW_TYPE = FOLLOW_UP_WORKFLOW_TYPE


@workflow.defn(name=WORKFLOW_TYPE)
class FollowUpEmailWorkflow:
    @workflow.run
    async def run(self, input: FollowUpWorkflowInput) -> FollowUpEmailOutcome:
        run = current_run(WORKFLOW_TYPE)
        async with closing_on_error("follow-up email", partial(self._lifecycle, run, input)):
            await self._lifecycle(run, input, "started")
            outcome = await self._send(run, input)
        await self._lifecycle(run, input, "completed")
        return outcome

    async def _send(self, run: RunRef, input: FollowUpWorkflowInput) -> FollowUpEmailOutcome:
        try:
            return await workflow.execute_activity(
                "send_follow_up_email",
                FollowUpEmailInput(run=run, job_id=input.job_key, round=input.round),
                result_type=FollowUpEmailOutcome, **stage_options(input.heartbeat_timeout_s))
        except ActivityError as error:
            if is_cancelled_exception(error):
                raise
            return await workflow.execute_activity(
                "fail_follow_up_email",
                FailFollowUpInput(run=run, job_id=input.job_key, round=input.round,
                                  error_code=failure_code(error)[0]),
                result_type=FollowUpEmailOutcome, **BOOKKEEPING)

    async def _lifecycle(self, run: RunRef, input: FollowUpWorkflowInput, outcome: str,
                         error_code: str | None = None) -> None:
        await record_lifecycle(run, outcome, {"jobId": input.job_key, "round": input.round},
                               error_code=error_code, job_id=input.job_key,
                               activity="record_follow_up_lifecycle")
