"""PolicyRerunWorkflow (``policy-rerun-{action}-{digest}``): the fan-out of a bulk policy
action ("Rescore stale", "Re-tailor stale", a lowered fit threshold) outside the request.

It starts one ``JobPreparationWorkflow`` child per selected job under the job's
deterministic ``prep-{jobId}`` id, a few dozen per workflow task, as Discover fans out.
Each start is recorded in this run's history, so a worker killed half-way resumes with
the jobs not yet started and never starts one twice; a job already being prepared keeps
its running preparation. The children outlive the batch (``ABANDON``): each opens with
its own spend preflight, exactly as a preparation started from the API."""

from __future__ import annotations

import asyncio
from functools import partial

from temporalio import workflow
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.workflow import ParentClosePolicy

with workflow.unsafe.imports_passed_through():
    from backend.config import PREP_TASK_QUEUE
    from backend.pipeline.policy_rerun import WORKFLOW_TYPE, fanout_chunks
    from backend.temporal.contracts import PrepInput, RunRef, prep_workflow_id
    from backend.temporal.policy_contracts import PolicyRerunInput, PolicyRerunResult
    from backend.temporal.workflows.common import closing_on_error, current_run, record_lifecycle


@workflow.defn(name=WORKFLOW_TYPE)
class PolicyRerunWorkflow:
    @workflow.run
    async def run(self, input: PolicyRerunInput) -> PolicyRerunResult:
        run = current_run(WORKFLOW_TYPE)
        await self._lifecycle(run, input, "started")
        started: list[str] = []
        attached: list[str] = []
        async with closing_on_error("policy rerun", partial(self._lifecycle, run, input)):
            for chunk in fanout_chunks(input.job_ids):
                fresh = await asyncio.gather(*(self._start(input, job) for job in chunk))
                for job_id, is_new in zip(chunk, fresh, strict=True):
                    (started if is_new else attached).append(job_id)
        await self._lifecycle(run, input, "completed")
        return PolicyRerunResult(action=input.action, started_job_ids=started,
                                 already_running_job_ids=attached)

    async def _start(self, input: PolicyRerunInput, job_id: str) -> bool:
        """True when this batch started the job's preparation, False when one ran already."""
        try:
            await workflow.start_child_workflow(
                "JobPreparationWorkflow",
                PrepInput(job_id=job_id, idempotency_key=job_id, stages=list(input.stages),
                          force_stages=list(input.force_stages),
                          heartbeat_timeout_s=input.heartbeat_timeout_s),
                id=prep_workflow_id(job_id), task_queue=PREP_TASK_QUEUE,
                parent_close_policy=ParentClosePolicy.ABANDON)
        except WorkflowAlreadyStartedError:
            return False
        return True

    async def _lifecycle(self, run: RunRef, input: PolicyRerunInput, outcome: str,
                         error_code: str | None = None) -> None:
        summary = {"action": input.action, "jobCount": len(input.job_ids),
                   "stages": list(input.stages)}
        await record_lifecycle(run, outcome, summary, error_code=error_code)
