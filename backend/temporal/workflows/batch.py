"""BatchStageWorkflow (``batch-{stage}-{digest}``): an explicitly selected Tailor or Cover
batch, run in waves of at most the requested number of workers.

For each stage of the chain (Tailor → Cover → PDF, or Cover → PDF) the selected jobs run
in waves of ``workers`` concurrent stage activities; the next wave starts when the
previous one has settled, so no more than ``workers`` jobs of this batch are ever in
flight. Only the jobs whose stage succeeded go on to the next stage. A job that fails
keeps its failure on its own stage row (after the mandatory reconciliation) while the
rest of the batch continues.

Each wave's activities get a deadline of 30 minutes (``schedule_to_close``: every retry
included), and the batch as a whole gets 30 minutes per wave capped at 6 hours; a wave
that would start after that budget is spent does not start and its jobs are reported
``not_started``. The heartbeat timeout (2 minutes by default) still detects a lost
worker inside a wave. The deadline rule is replay-versioned with a patch marker so it can
change later without breaking the histories of running batches."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from functools import partial

from temporalio import workflow
from temporalio.exceptions import ActivityError, is_cancelled_exception

with workflow.unsafe.imports_passed_through():
    from backend.domain.stages import STAGE_ACTIVITY
    from backend.pipeline.batch import batch_deadline, wave_count, wave_timeout, waves
    from backend.temporal.batch_contracts import (
        BatchCancelInput,
        BatchInput,
        BatchItem,
        BatchResult,
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

WORKFLOW_TYPE = "BatchStageWorkflow"
PAID_STAGES = ("score", "tailor", "cover")
WAVE_DEADLINE_PATCH = "batch-wave-deadline-v1"


@workflow.defn(name=WORKFLOW_TYPE)
class BatchStageWorkflow:
    @workflow.run
    async def run(self, input: BatchInput) -> BatchResult:
        run = current_run(WORKFLOW_TYPE)
        await self._lifecycle(run, input, "started")
        async with closing_on_error("batch", partial(self._lifecycle, run, input),
                                    on_cancel=partial(self._cancel_items, run, input)):
            paid = sum(1 for stage in input.stages if stage in PAID_STAGES)
            await check_spend(run, paid * len(input.job_ids))
            result = await self._stages(run, input)
        await self._lifecycle(run, input, "completed")
        return result

    async def _stages(self, run: RunRef, input: BatchInput) -> BatchResult:
        started = workflow.now()
        versioned = workflow.patched(WAVE_DEADLINE_PATCH)
        deadline = batch_deadline(wave_count(len(input.job_ids), input.workers,
                                             len(input.stages)))
        items: list[BatchItem] = []
        passing = list(input.job_ids)
        ran = 0
        for stage in input.stages:
            survivors: list[str] = []
            for wave in waves(passing, input.workers):
                timeout = wave_timeout(workflow.now() - started, deadline) if versioned else (
                    timedelta(minutes=30))
                if timeout is None:
                    items += [BatchItem(job_id=job, stage=stage, status="not_started",
                                        reason="batch_deadline_exceeded") for job in wave]
                    continue
                ran += 1
                settled = await asyncio.gather(
                    *(self._item(run, input, job, stage, timeout) for job in wave))
                items += settled
                survivors += [item.job_id for item in settled if item.status == "succeeded"]
            passing = survivors
        return BatchResult(stages=list(input.stages), workers=input.workers, waves=ran,
                           items=items, succeeded_job_ids=passing)

    async def _item(self, run: RunRef, input: BatchInput, job_id: str, stage: str,
                    timeout: timedelta) -> BatchItem:
        options = stage_options(input.heartbeat_timeout_s, stage)
        options["schedule_to_close_timeout"] = timeout
        options["start_to_close_timeout"] = min(options["start_to_close_timeout"], timeout)
        try:
            outcome = await workflow.execute_activity(
                STAGE_ACTIVITY[stage], StageInput(run=run, job_id=job_id, stage=stage, force=True),
                result_type=StageOutcome, **options)
        except ActivityError as error:
            if is_cancelled_exception(error):
                raise
            return await self._reconcile(run, job_id, stage, error)
        return BatchItem(job_id=job_id, stage=stage, status=outcome.status, reason=outcome.reason)

    async def _reconcile(self, run: RunRef, job_id: str, stage: str,
                         error: ActivityError) -> BatchItem:
        """The mandatory step after a stage gave up: its row keeps the failure (or accepts
        a result committed before the activity died) and the batch goes on."""
        code, status = await reconcile_stage(run, job_id, stage, error)
        if status == "succeeded":
            return BatchItem(job_id=job_id, stage=stage, status="succeeded")
        known = status if status in ("failed", "exhausted") else "failed"
        return BatchItem(job_id=job_id, stage=stage, status=known, reason=code)

    async def _cancel_items(self, run: RunRef, input: BatchInput) -> None:
        await workflow.execute_activity(
            "cancel_batch_items", BatchCancelInput(run=run, job_ids=input.job_ids),
            **BOOKKEEPING)

    async def _lifecycle(self, run: RunRef, input: BatchInput, outcome: str,
                         error_code: str | None = None) -> None:
        # jobIds: the selection, so the budget-resume pass can run a refused batch again.
        summary = {"stages": list(input.stages), "jobCount": len(input.job_ids),
                   "workers": input.workers, "jobIds": list(input.job_ids)}
        await record_lifecycle(run, outcome, summary, error_code=error_code)
