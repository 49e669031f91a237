"""PreparationContinuationWorkflow: condition-driven preparation, resumed by the mutation
that resolved the condition.

* ``profile-continuation-{revision}``: after a genuine profile change, Score → Tailor →
  Cover for the jobs waiting on it. Stages run unforced, so a valid current score is
  reused rather than bought again.
* ``enrich-condition-{code}-{host}``: after the user resolved a typed Enrich block for a
  host, Enrich → Score → Tailor → Cover for exactly the jobs carrying that block.

The jobs are selected once, when the run starts; then the spend preflight (sized for
those jobs) and the per-job stages, a few jobs at a time. One job's failure is recorded
for that job (after the mandatory owner-scoped reconciliation) and does not stop others.
"""

from __future__ import annotations

import asyncio
from functools import partial

from temporalio import workflow
from temporalio.exceptions import ActivityError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from backend.domain.stages import STAGE_ACTIVITY
    from backend.temporal.activities.continuation import (
        WORKFLOW_TYPE,
        ContinuationInput,
        ContinuationResult,
    )
    from backend.temporal.contracts import RunRef, StageInput, StageOutcome
    from backend.temporal.workflows.common import (
        BOOKKEEPING,
        check_spend,
        closing_on_error,
        current_run,
        reconcile_stage,
        record_lifecycle,
        stage_options,
    )

PAID_STAGES = ("score", "tailor", "cover")
# Resumed jobs end with their PDFs like any prepared job ($0, no model call). A patch, so
# continuations already running when this shipped replay as they were recorded.
RENDERS_PDFS_PATCH = "continuation-renders-pdfs"
JOBS_AT_ONCE = 4


@workflow.defn(name=WORKFLOW_TYPE)
class PreparationContinuationWorkflow:
    @workflow.run
    async def run(self, input: ContinuationInput) -> ContinuationResult:
        run = current_run(WORKFLOW_TYPE)
        await self._lifecycle(run, input, "started")
        stages = input.stages()
        if workflow.patched(RENDERS_PDFS_PATCH):
            stages = [*stages, "pdf"]
        failed: list[str] = []
        async with closing_on_error("continuation", partial(self._lifecycle, run, input)):
            job_ids: list[str] = await workflow.execute_activity(
                "select_continuation_jobs", input, result_type=list[str], **BOOKKEEPING)
            paid_calls = len(job_ids) * sum(1 for stage in stages if stage in PAID_STAGES)
            await check_spend(run, paid_calls)
            for start in range(0, len(job_ids), JOBS_AT_ONCE):
                chunk = job_ids[start:start + JOBS_AT_ONCE]
                done = await asyncio.gather(*(self._job(run, input, job_id, stages)
                                              for job_id in chunk))
                failed.extend(job for job, ok in zip(chunk, done, strict=True) if not ok)
        await self._lifecycle(run, input, "completed")
        return ContinuationResult(trigger=input.trigger, job_ids=job_ids, failed_job_ids=failed)

    async def _job(self, run: RunRef, input: ContinuationInput, job_id: str,
                   stages: list[str]) -> bool:
        """Each stage decides its own pickup (done, blocked, skipped) as in preparation."""
        for stage in stages:
            stage_input = StageInput(run=run, job_id=job_id, stage=stage)
            try:
                await workflow.execute_activity(
                    STAGE_ACTIVITY[stage], stage_input, result_type=StageOutcome,
                    **stage_options(input.heartbeat_timeout_s, stage))
            except ActivityError as error:
                if is_cancelled_exception(error):
                    raise
                _, status = await reconcile_stage(run, job_id, stage, error)
                if status != "succeeded":
                    return False
        return True

    async def _lifecycle(self, run: RunRef, input: ContinuationInput, outcome: str,
                         error_code: str | None = None) -> None:
        await record_lifecycle(run, outcome, input.summary(), error_code=error_code)
