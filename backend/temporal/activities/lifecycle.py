"""A run's ``WorkflowStarted`` and terminal events, written from its :class:`RunRef`
(the lifecycle activities of every per-job workflow record them the same way)."""

from __future__ import annotations

from backend.store.lifecycle import record_workflow_started, record_workflow_terminal
from backend.temporal.contracts import RunRef


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
