"""Workflows for the start-signing tests: one activity call each, a signal, an update,
a child and a continue-as-new (sandbox-safe: imports only temporalio)."""

from __future__ import annotations

from datetime import timedelta

from temporalio import activity, workflow

CALLS: list[str] = []  # the activity runs in the test process: what it was asked to do


@activity.defn
async def paid_call(what: str) -> str:
    CALLS.append(what)
    return what


@workflow.defn
class ProbeWorkflow:
    def __init__(self) -> None:
        self.signals: list[str] = []

    @workflow.run
    async def run(self, what: str) -> str:
        await workflow.execute_activity(paid_call, what, start_to_close_timeout=timedelta(seconds=10))
        if what.startswith("wait"):
            await workflow.wait_condition(lambda: "done" in self.signals)
        return what

    @workflow.signal
    def note(self, value: str) -> None:
        self.signals.append(value)

    @workflow.query
    def notes(self) -> list[str]:
        return list(self.signals)

    @workflow.update
    def add(self, value: str) -> str:
        self.signals.append(value)
        return value


@workflow.defn
class ParentProbeWorkflow:
    @workflow.run
    async def run(self, rounds: int) -> str:
        if rounds > 0:
            workflow.continue_as_new(rounds - 1)
        return await workflow.execute_child_workflow(
            ProbeWorkflow.run, "child", id=f"{workflow.info().workflow_id}-child")
