"""Contact & Outreach canonical rows: research tasks, contacts, their attributes and the
candidates each task found. Every write appends its events in the caller's transaction."""

from __future__ import annotations

import json
from dataclasses import dataclass

import aiosqlite

from backend.config import TENANT_ID
from backend.domain import events as ev
from backend.domain.clock import utc_now_iso
from backend.domain.contacts import Candidate, SourceAttempt, candidate_id, contact_id
from backend.store.events import append_event
from backend.store.spend_reservations import release_run as release_reservation

ACTIVE = ("queued", "running")
TERMINAL = ("completed", "failed", "canceled")

_TASK_COLUMNS = (
    "task_id", "job_id", "seq", "workflow_id", "run_id", "status", "requested_at",
    "started_at", "finished_at", "source_attempts_json", "extracted_at", "candidate_count",
    "provider", "model", "failure_code",
)


@dataclass(frozen=True)
class TaskRow:
    task_id: str
    job_id: str
    seq: int
    workflow_id: str
    run_id: str | None
    status: str
    requested_at: str
    started_at: str | None
    finished_at: str | None
    source_attempts_json: str
    extracted_at: str | None
    candidate_count: int | None
    provider: str | None
    model: str | None
    failure_code: str | None

    @property
    def source_attempts(self) -> list[SourceAttempt]:
        return [SourceAttempt.model_validate(item)
                for item in json.loads(self.source_attempts_json or "[]")]


def research_workflow_id(job_id: str, seq: int) -> str:
    return f"contacts-{job_id}-{seq}"


def research_task_id(job_id: str, seq: int) -> str:
    return f"ctask_{job_id.removeprefix('job_')}_{seq}"


async def read_task(conn: aiosqlite.Connection, task_id: str) -> TaskRow | None:
    cursor = await conn.execute(
        f"SELECT {', '.join(_TASK_COLUMNS)} FROM contact_research_tasks"
        " WHERE tenant_id = ? AND task_id = ?", (TENANT_ID, task_id))
    row = await cursor.fetchone()
    return TaskRow(*row) if row else None


async def request_task(conn: aiosqlite.Connection, job_id: str) -> tuple[TaskRow, bool]:
    """The job's active task, or a new queued one with its request event. Returns
    (task, created). Call inside a write transaction: the next seq is read and used under
    the same lock, so two requests never share a number."""
    cursor = await conn.execute(
        "SELECT task_id FROM contact_research_tasks WHERE tenant_id = ? AND job_id = ?"
        " AND status IN ('queued', 'running') ORDER BY seq DESC LIMIT 1", (TENANT_ID, job_id))
    active = await cursor.fetchone()
    if active is not None:
        return await read_task(conn, active[0]), False
    cursor = await conn.execute(
        "SELECT COALESCE(MAX(seq), 0) FROM contact_research_tasks WHERE tenant_id = ?"
        " AND job_id = ?", (TENANT_ID, job_id))
    seq = int((await cursor.fetchone())[0]) + 1
    task_id, workflow_id = research_task_id(job_id, seq), research_workflow_id(job_id, seq)
    await conn.execute(
        "INSERT INTO contact_research_tasks (tenant_id, task_id, job_id, seq, workflow_id,"
        " status, requested_at) VALUES (?, ?, ?, ?, ?, 'queued', ?)",
        (TENANT_ID, task_id, job_id, seq, workflow_id, utc_now_iso()))
    await append_event(conn, ev.ContactResearchRequested(
        job_id=job_id, task_id=task_id, workflow_id=workflow_id),
        job_id=job_id, workflow_id=workflow_id, dedupe_key=f"ContactResearchRequested:{task_id}")
    return await read_task(conn, task_id), True


async def mark_started(conn: aiosqlite.Connection, task: TaskRow, *, run_id: str) -> None:
    """The task now belongs to this run (a later run of the same workflow id, e.g. after a
    crash before the first activity, takes it over)."""
    if task.status in TERMINAL:
        return
    await conn.execute(
        "UPDATE contact_research_tasks SET status = 'running', run_id = ?,"
        " started_at = COALESCE(started_at, ?) WHERE tenant_id = ? AND task_id = ?",
        (run_id, utc_now_iso(), TENANT_ID, task.task_id))
    await append_event(conn, ev.ContactResearchStarted(
        job_id=task.job_id, task_id=task.task_id, workflow_id=task.workflow_id, run_id=run_id),
        job_id=task.job_id, workflow_id=task.workflow_id, run_id=run_id,
        dedupe_key=f"ContactResearchStarted:{run_id}")


async def save_source_attempts(conn: aiosqlite.Connection, task_id: str,
                               attempts: list[SourceAttempt]) -> None:
    """The attempts of a task still open (a closed task's recorded facts never change)."""
    payload = json.dumps([a.model_dump(mode="json", by_alias=True) for a in attempts])
    await conn.execute(
        "UPDATE contact_research_tasks SET source_attempts_json = ? WHERE tenant_id = ?"
        " AND task_id = ? AND status IN ('queued', 'running')", (payload, TENANT_ID, task_id))


async def commit_candidates(
    conn: aiosqlite.Connection, task: TaskRow, *, company: str, candidates: list[Candidate],
    provider: str, model: str, run_id: str,
) -> bool:
    """Contacts, their attributes, the task's candidates and one event per candidate,
    with the task marked extracted: all or nothing. A task already closed (canceled or
    terminated while its extraction was still running) gains nothing: returns False.
    Pass the task as read in this same transaction."""
    if task.status in TERMINAL:
        return False
    now = utc_now_iso()
    ids = {"workflow_id": task.workflow_id, "run_id": run_id}
    for ordinal, candidate in enumerate(candidates):
        person = contact_id(company, candidate)
        found = candidate_id(task.task_id, ordinal)
        await _upsert_contact(conn, person, company, candidate, now)
        for attribute, value in (("title", candidate.title), ("email", candidate.email),
                                 ("source_url", candidate.source_url)):
            if value:
                await conn.execute(
                    "INSERT INTO contact_attributes (tenant_id, contact_id, attribute, value,"
                    " task_id, observed_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                    (TENANT_ID, person, attribute, value, task.task_id, now))
        pct = round(candidate.confidence * 100)
        await conn.execute(
            "INSERT INTO contact_candidates (tenant_id, candidate_id, task_id, job_id, contact_id,"
            " ordinal, name, title, email, source_url, confidence, evidence, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (TENANT_ID, found, task.task_id, task.job_id, person, ordinal, candidate.name,
             candidate.title, candidate.email, candidate.source_url, pct / 100,
             candidate.evidence, now))
        await append_event(conn, ev.ContactCandidateFound(
            job_id=task.job_id, task_id=task.task_id, candidate_id=found, contact_id=person,
            name=candidate.name, title=candidate.title, email=candidate.email,
            source_url=candidate.source_url, confidence_pct=pct,
            evidence=candidate.evidence[:300], **ids),
            job_id=task.job_id, dedupe_key=f"ContactCandidateFound:{found}", **ids)
    await conn.execute(
        "UPDATE contact_research_tasks SET extracted_at = ?, candidate_count = ?, provider = ?,"
        " model = ? WHERE tenant_id = ? AND task_id = ?",
        (now, len(candidates), provider, model, TENANT_ID, task.task_id))
    return True


async def _upsert_contact(conn: aiosqlite.Connection, person: str, company: str,
                          candidate: Candidate, now: str) -> None:
    await conn.execute(
        "INSERT INTO contacts (tenant_id, contact_id, company, name, email, first_seen_at,"
        " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, contact_id) DO UPDATE"
        " SET email = COALESCE(excluded.email, contacts.email), updated_at = excluded.updated_at",
        (TENANT_ID, person, company, candidate.name, candidate.email, now, now))


async def finish_task(
    conn: aiosqlite.Connection, task: TaskRow, *, run_id: str, outcome: str,
    error_code: str | None = None,
) -> None:
    """The task's one terminal state and event (a repeat of the same run's finish is a
    no-op)."""
    if task.status in TERMINAL:
        return
    if outcome != "completed":
        error_code = error_code or ("canceled" if outcome == "canceled" else "workflow_failed")
    await conn.execute(
        "UPDATE contact_research_tasks SET status = ?, finished_at = ?, failure_code = ?"
        " WHERE tenant_id = ? AND task_id = ?",
        (outcome, utc_now_iso(), error_code, TENANT_ID, task.task_id))
    common = {"job_id": task.job_id, "task_id": task.task_id, "workflow_id": task.workflow_id,
              "run_id": run_id or None, "source_attempts": task.source_attempts}
    if outcome == "completed":
        event: ev.DomainEvent = ev.ContactResearchCompleted(
            **common, candidate_count=task.candidate_count or 0,
            provider=task.provider or "unknown", model=task.model or "unknown")
    else:
        event = ev.ContactResearchFailed(**common, status=outcome, error_code=error_code)
    await append_event(conn, event, job_id=task.job_id, workflow_id=task.workflow_id,
                       run_id=run_id or None, dedupe_key=f"ContactResearchTerminal:{task.task_id}")


# Why a run closed outside its own workflow code (the reconciler's bounded codes).
CLOSED_RUN_CODES = frozenset({"terminated", "timed_out", "workflow_failed", "canceled",
                              "closed_without_result"})


def closed_run_outcome(outcome: str, error_code: str | None, *, extracted: bool
                       ) -> tuple[str, str | None]:
    """(task status, failure code) for a task whose run closed without closing it.

    ``outcome`` is the run's real result as the reconciler found it in Temporal. A run
    that completed (or continued as new) without finishing its task counts as completed
    only when the candidates were committed; anything else is failed or canceled with a
    code from :data:`CLOSED_RUN_CODES`."""
    if outcome == "completed":
        return ("completed", None) if extracted else ("failed", "closed_without_result")
    if outcome == "canceled":
        return "canceled", "canceled"
    return "failed", error_code if error_code in CLOSED_RUN_CODES else "workflow_failed"


async def close_for_closed_run(
    conn: aiosqlite.Connection, *, workflow_id: str, run_id: str, outcome: str,
    error_code: str | None,
) -> TaskRow | None:
    """Close the open task this run owned, once (the reconciler's backstop for a run that
    was terminated, timed out or canceled outside JobCtrl before its own close activity
    ran). Returns the closed task, or None when there was nothing to close: no task for
    this workflow, the task already closed, or the task now belongs to another run."""
    cursor = await conn.execute(
        "SELECT task_id FROM contact_research_tasks WHERE tenant_id = ? AND workflow_id = ?"
        " AND status IN ('queued', 'running') AND (run_id = ? OR run_id IS NULL)",
        (TENANT_ID, workflow_id, run_id))
    found = await cursor.fetchone()
    if found is None:
        return None
    task = await read_task(conn, found[0])
    status, code = closed_run_outcome(outcome, error_code, extracted=task.extracted_at is not None)
    await release_reservation(conn, run_id)  # a closed run spends nothing more
    await finish_task(conn, task, run_id=run_id, outcome=status, error_code=code)
    return await read_task(conn, task.task_id)
