"""Workflow lifecycle events (``WorkflowStarted`` and exactly one terminal event per run)."""

from __future__ import annotations

import aiosqlite

from backend.domain import events as ev
from backend.store.events import append_event


async def record_workflow_started(
    conn: aiosqlite.Connection, *, workflow_id: str, run_id: str, workflow_type: str,
    job_id: str | None = None, input_summary: dict | None = None,
) -> None:
    await append_event(
        conn,
        ev.WorkflowStarted(workflow_id=workflow_id, run_id=run_id, workflow_type=workflow_type,
                           input_summary=input_summary or {}),
        job_id=job_id, workflow_id=workflow_id, run_id=run_id,
        dedupe_key=f"WorkflowStarted:{run_id}",
    )


async def record_workflow_terminal(
    conn: aiosqlite.Connection, *, workflow_id: str, run_id: str, workflow_type: str,
    outcome: str, error_code: str | None = None, job_id: str | None = None,
) -> None:
    """One terminal event per run, however often a finalize activity is retried."""
    ids = {"workflow_id": workflow_id, "run_id": run_id, "workflow_type": workflow_type}
    if outcome == "completed":
        event: ev.DomainEvent = ev.WorkflowCompleted(**ids)
    elif outcome == "canceled":
        event = ev.WorkflowCanceled(**ids)
    else:
        event = ev.WorkflowFailed(**ids, error_code=error_code or "workflow_failed")
    await append_event(conn, event, job_id=job_id, workflow_id=workflow_id, run_id=run_id,
                       dedupe_key=f"WorkflowTerminal:{run_id}")
