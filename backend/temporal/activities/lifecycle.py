"""A run's ``WorkflowStarted`` and terminal events, written from its :class:`RunRef`
(the lifecycle activities of every per-job workflow record them the same way)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import aiosqlite

from backend.llm.admission import release as release_reservation
from backend.store.db import Database
from backend.store.lifecycle import record_workflow_started, record_workflow_terminal
from backend.temporal.contracts import RunRef, WorkflowLifecycleInput

# What a per-job run gives back when it ends, inside the terminal event's transaction.
ReleaseHeld = Callable[[aiosqlite.Connection, WorkflowLifecycleInput], Awaitable[None]]


async def record_run_started(conn, run: RunRef, *, job_id: str | None,
                             input_summary: dict) -> None:
    await record_workflow_started(
        conn, workflow_id=run.workflow_id, run_id=run.run_id,
        workflow_type=run.workflow_type, job_id=job_id, input_summary=input_summary)


async def record_run_terminal(conn, run: RunRef, *, outcome: str, error_code: str | None,
                              job_id: str | None) -> None:
    await record_workflow_terminal(
        conn, workflow_id=run.workflow_id, run_id=run.run_id,
        workflow_type=run.workflow_type, outcome=outcome,
        error_code=error_code, job_id=job_id)


async def record_run_lifecycle(db: Database, input: WorkflowLifecycleInput,
                               release_held: ReleaseHeld) -> None:
    """One lifecycle activity call, in one transaction: ``started`` records the start; a
    terminal outcome releases the run's spend reservation, then ``release_held`` gives back
    what this kind of run held, then the terminal event is written."""
    run = input.run
    async with db.transaction() as conn:
        if input.outcome == "started":
            await record_run_started(conn, run, job_id=input.job_id,
                                     input_summary=input.input_summary)
            return
        await release_reservation(conn, run.run_id)
        await release_held(conn, input)
        await record_run_terminal(conn, run, outcome=input.outcome,
                                  error_code=input.error_code, job_id=input.job_id)
