"""JobPreparationWorkflow (``prep-{idempotencyKey}``): the spend preflight, then
Enrich → Score → Tailor → Cover → PDF for one job. The preflight and the two lifecycle
records run as local activities (``local-bookkeeping-v1``): the worker that runs this
workflow registers them, and a job's five stages are its only trips through the task queue.

A stage that cannot run (blocked / skipped) does not fail the workflow; a stage that
gives up fails only this job's workflow, after the mandatory reconciliation step."""

from __future__ import annotations

from functools import partial

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from backend.domain.stages import STAGE_ACTIVITY
    from backend.temporal.contracts import (
        PrepInput,
        PrepResult,
        RunRef,
        StageInput,
        StageOutcome,
    )
    from backend.temporal.workflows.common import (
        check_spend,
        closing_on_error,
        current_run,
        reconcile_stage,
        record_lifecycle,
        stage_options,
    )

WORKFLOW_TYPE = "JobPreparationWorkflow"
PAID_STAGES = ("score", "tailor", "cover")  # the stages that may call a paid model



@workflow.defn(name=WORKFLOW_TYPE)
class JobPreparationWorkflow:
    @workflow.run
    async def run(self, input: PrepInput) -> PrepResult:
        run = current_run(WORKFLOW_TYPE)
        await self._lifecycle(run, input, "started")
        outcomes: list[StageOutcome] = []
        async with closing_on_error("preparation", partial(self._lifecycle, run, input)):
            paid_calls = sum(1 for stage in input.stages if stage in PAID_STAGES)
            await check_spend(run, paid_calls, local=True)
            for stage in input.stages:
                outcomes.append(await self._stage(run, input, stage))
        await self._lifecycle(run, input, "completed")
        return PrepResult(job_id=input.job_id, outcomes=outcomes)

    async def _stage(self, run: RunRef, input: PrepInput, stage: str) -> StageOutcome:
        stage_input = StageInput(run=run, job_id=input.job_id, stage=stage,
                                 force=stage in input.force_stages)
        try:
            return await workflow.execute_activity(
                STAGE_ACTIVITY[stage], stage_input, result_type=StageOutcome,
                **stage_options(input.heartbeat_timeout_s, stage))
        except ActivityError as error:
            if is_cancelled_exception(error):
                raise
            code, status = await reconcile_stage(run, input.job_id, stage, error)
            if status == "succeeded":  # the result was committed before the activity died
                return StageOutcome(stage=stage, status="succeeded")
            raise ApplicationError(f"{stage} {status}", type=code, non_retryable=True) from None

    async def _lifecycle(self, run: RunRef, input: PrepInput, outcome: str,
                         error_code: str | None = None) -> None:
        summary = {"jobId": input.job_id, "stages": list(input.stages),
                   "discoverRunId": input.discover_run_id}
        await record_lifecycle(run, outcome, summary, error_code=error_code,
                               job_id=input.job_id, local=True)
