"""The bare Temporal baseline of the pipeline benchmark: workflows and an activity that
do nothing, in a module of their own (the workflow sandbox re-imports it, so it imports
nothing but temporalio)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import activity, workflow
from temporalio.workflow import ParentClosePolicy

ACTIVITIES_PER_JOB = 8  # preflight + 5 stages + 2 lifecycle records, as in preparation


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


@workflow.defn(name="BareFanout")
class BareFanout:
    """Starts the jobs in batches of 50, like DiscoverWorkflow's preparation fan-out."""

    @workflow.run
    async def run(self, jobs: int) -> None:
        for start in range(0, jobs, 50):
            await asyncio.gather(*(
                workflow.start_child_workflow("BareJob", f"job-{i}", id=f"bare-job-{i}",
                                              parent_close_policy=ParentClosePolicy.ABANDON)
                for i in range(start, min(jobs, start + 50))))
