"""Dispatch intents of the worker's resume passes: the fact that a halted or interrupted
piece of work starts again, committed (with a dedupe key of the work and its episode)
before Temporal is asked, so a pass repeated after a kill delivers it once."""

from __future__ import annotations

from backend.domain import events as ev
from backend.store import budget_halts
from backend.store import contacts as contact_store
from backend.store.db import Database
from backend.store.events import append_event

ResumeIntent = (ev.PreparationBudgetResumed | ev.BatchBudgetResumed
                | ev.PreparationInterruptedResumed)


async def record_resume_intent(db: Database, intent: ResumeIntent, *, dedupe_key: str,
                               job_id: str | None = None) -> bool:
    """True when this call recorded it; False when the key was recorded before."""
    async with db.transaction() as conn:
        written = await append_event(conn, intent, job_id=job_id,
                                     workflow_id=intent.workflow_id, dedupe_key=dedupe_key)
    return written is not None


async def request_contact_research_resume(
    db: Database, *, dedupe_key: str, job_id: str, halted_task_id: str, halted_run_id: str,
    budget_episode: str,
) -> contact_store.TaskRow:
    """A new research task and the intent naming it, in one transaction; the task of an
    intent committed meanwhile by a concurrent pass."""
    async with db.transaction() as conn:
        committed = await budget_halts.intent_task_id(conn, dedupe_key)
        if committed is not None:
            return await contact_store.read_task(conn, committed)
        task, _ = await contact_store.request_task(conn, job_id)
        await append_event(
            conn,
            ev.ContactResearchBudgetResumed(
                job_id=task.job_id, task_id=task.task_id, workflow_id=task.workflow_id,
                halted_task_id=halted_task_id, halted_run_id=halted_run_id,
                budget_episode=budget_episode),
            job_id=task.job_id, workflow_id=task.workflow_id, dedupe_key=dedupe_key)
        return task
