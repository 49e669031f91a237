"""The no-op workflow and activity of ``floor_children.py``'s worker (a module of its own:
the workflow sandbox re-imports a workflow's module by name, which ``__main__`` is not)."""

from __future__ import annotations

from datetime import timedelta

from temporalio import activity, workflow


@activity.defn
async def noop_activity(value: str) -> str:
    return value


@workflow.defn
class NoopWorkflow:
    @workflow.run
    async def run(self, value: str) -> str:
        return await workflow.execute_activity(
            noop_activity, value, start_to_close_timeout=timedelta(seconds=10))
