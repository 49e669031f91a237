"""The bare Temporal baseline of the pipeline benchmark: workflows and an activity that
do nothing, in a module of their own (the workflow sandbox re-imports it, so it imports
nothing but temporalio)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import activity, workflow
from temporalio.workflow import ParentClosePolicy

ACTIVITIES_PER_JOB = 8  # preflight + 5 stages + 2 lifecycle records, as in preparation
# Since session 9 JobPreparationWorkflow runs its preflight and its two lifecycle records as
# local activities; BareJobLocal has that shape (the "same shape" baseline).
STAGES_PER_JOB = 5


@activity.defn(name="noop")
async def noop(_: str) -> str:
    return "ok"


@workflow.defn(name="BareJob")
class BareJob:
    @workflow.run
    async def run(self, job: str) -> None:
        for _ in range(ACTIVITIES_PER_JOB):
            await workflow.execute_activity("noop", job,
                                            start_to_close_timeout=timedelta(seconds=30))


@workflow.defn(name="BareJobLocal")
class BareJobLocal:
    """A local lifecycle record and preflight, 5 stages, a local lifecycle record."""

    @workflow.run
    async def run(self, job: str) -> None:
        local = {"start_to_close_timeout": timedelta(seconds=30)}
        await workflow.execute_local_activity("noop", job, **local)
        await workflow.execute_local_activity("noop", job, **local)
        for _ in range(STAGES_PER_JOB):
            await workflow.execute_activity("noop", job, **local)
        await workflow.execute_local_activity("noop", job, **local)


@workflow.defn(name="BareFanout")
class BareFanout:
    """Starts the jobs in batches of 50, like DiscoverWorkflow's preparation fan-out."""

    @workflow.run
    async def run(self, jobs: int, job_type: str = "BareJob") -> None:
        for start in range(0, jobs, 50):
            await asyncio.gather(*(
                workflow.start_child_workflow(job_type, f"job-{i}", id=f"bare-job-{i}",
                                              parent_close_policy=ParentClosePolicy.ABANDON)
                for i in range(start, min(jobs, start + 50))))
