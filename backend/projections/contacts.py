"""``contact_research_task_projections`` and ``contact_projections``, folded from the
Contact* events.

Fold rules (pure, idempotent under replay):

* ``ContactResearchRequested`` creates a ``queued`` task row (or fills a missing request
  time); ``ContactResearchStarted`` moves a non-terminal row to ``running`` under that run;
* the first terminal event (``ContactResearchCompleted`` / ``ContactResearchFailed``) wins;
* ``ContactCandidateFound`` writes the (job, contact) row; a newer event's facts replace
  an older one's, an older event never replaces a newer one.

Kept by the projection builder (fold-at-write): :func:`catch_up` is registered for the
Contact* events and folds everything after the watermark inside the appending
transaction; :func:`rebuild_contacts` drops both tables and folds the whole log again.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from typing import Any

import aiosqlite

from backend.config import TENANT_ID
from backend.projections import paging
from backend.store import projection_builder, watermarks
from backend.store.db import Database
from backend.store.events import StoredEvent
from backend.store.read_models import contacts as rows

PAGE_SIZE = 500
TASK_EVENTS = ("ContactResearchRequested", "ContactResearchStarted",
               "ContactResearchCompleted", "ContactResearchFailed")
CANDIDATE_EVENT = "ContactCandidateFound"
CONTACT_EVENT_TYPES = (*TASK_EVENTS, CANDIDATE_EVENT)
TERMINAL = frozenset({"completed", "failed", "canceled"})


def watermark_name(tenant_id: str = TENANT_ID) -> str:
    return f"contacts:{tenant_id}"


@dataclass(frozen=True)
class TaskProjection:
    task_id: str
    job_id: str
    workflow_id: str
    status: str
    run_id: str | None = None
    requested_at: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    source_attempts_json: str = "[]"
    candidate_count: int | None = None
    provider: str | None = None
    model: str | None = None
    failure_code: str | None = None
    last_event_id: int = 0


def fold_task(row: TaskProjection | None, event: StoredEvent) -> TaskProjection | None:
    """Fold one task event into its row (None: no row yet)."""
    if event.type not in TASK_EVENTS:
        return row
    p = paging.payload_dict(event)
    at = p.get("occurredAt") or event.created_at
    if row is None:
        row = TaskProjection(task_id=p.get("taskId", ""), job_id=p.get("jobId", ""),
                             workflow_id=p.get("workflowId", ""), status="queued")
    seen = max(row.last_event_id, event.id)
    if event.type == "ContactResearchRequested":
        return replace(row, requested_at=row.requested_at or at, last_event_id=seen)
    if row.status in TERMINAL:
        return row  # the first terminal result wins; a late start never reopens it
    if event.type == "ContactResearchStarted":
        return replace(row, status="running", run_id=p.get("runId") or row.run_id,
                       started_at=row.started_at or at, last_event_id=seen)
    attempts = json.dumps(p.get("sourceAttempts") or [], sort_keys=True)
    if event.type == "ContactResearchCompleted":
        return replace(row, status="completed", finished_at=at, source_attempts_json=attempts,
                       candidate_count=p.get("candidateCount"), provider=p.get("provider"),
                       model=p.get("model"), run_id=p.get("runId") or row.run_id,
                       last_event_id=seen)
    return replace(row, status=p.get("status") or "failed", finished_at=at,
                   source_attempts_json=attempts, failure_code=p.get("errorCode"),
                   run_id=p.get("runId") or row.run_id, last_event_id=seen)


_TASK_COLUMNS = tuple(TaskProjection.__dataclass_fields__)


async def _load_task(conn: aiosqlite.Connection, tenant_id: str,
                     task_id: str) -> TaskProjection | None:
    record = await rows.read_task(conn, tenant_id, task_id, _TASK_COLUMNS)
    return TaskProjection(*tuple(record)) if record else None


async def _save_task(conn: aiosqlite.Connection, tenant_id: str, row: TaskProjection) -> None:
    await rows.write_task(conn, tenant_id, asdict(row))


async def _fold_candidate(conn: aiosqlite.Connection, tenant_id: str,
                          event: StoredEvent) -> None:
    p = paging.payload_dict(event)
    if not p.get("jobId") or not p.get("contactId"):
        return
    await rows.upsert_candidate(
        conn, tenant_id, job_id=p["jobId"], contact_id=p["contactId"],
        candidate_id=p.get("candidateId", ""), task_id=p.get("taskId", ""),
        name=p.get("name"), title=p.get("title"), email=p.get("email"),
        source_url=p.get("sourceUrl"), confidence=(p.get("confidencePct") or 0) / 100,
        evidence=p.get("evidence") or "", found_at=p.get("occurredAt") or event.created_at,
        event_id=event.id)


async def _fold_one_page(conn: aiosqlite.Connection, tenant_id: str, page_size: int) -> bool:
    name = watermark_name(tenant_id)
    after = await watermarks.read_watermark(conn, name)
    page = await paging.next_page(conn, tenant_id, after, CONTACT_EVENT_TYPES, page_size)
    tasks: dict[str, TaskProjection | None] = {}
    for event in page.events:
        if event.type == CANDIDATE_EVENT:
            await _fold_candidate(conn, tenant_id, event)
            continue
        task_id = paging.payload_dict(event).get("taskId")
        if not task_id:
            continue
        if task_id not in tasks:
            tasks[task_id] = await _load_task(conn, tenant_id, task_id)
        tasks[task_id] = fold_task(tasks[task_id], event)
    for row in tasks.values():
        if row is not None:
            await _save_task(conn, tenant_id, row)
    if page.newest > after:
        await watermarks.write_watermark(conn, name, page.newest)
    return page.more


async def catch_up(conn: aiosqlite.Connection, tenant_id: str) -> None:
    """The registered fold: every Contact* event after the watermark, in ``conn``'s
    transaction."""
    await paging.fold_to_end(conn, lambda c: _fold_one_page(c, tenant_id, PAGE_SIZE))


projection_builder.register("contacts", CONTACT_EVENT_TYPES, catch_up)


async def refresh_contacts(db: Database, *, tenant_id: str = TENANT_ID,
                           page_size: int = PAGE_SIZE) -> int:
    """Fold every contact event after the watermark in transactions of its own (tests,
    the start-up catch-up); cheap when nothing is new."""
    return await paging.refresh(db, tenant_id, watermark_name(tenant_id),
                                lambda conn: _fold_one_page(conn, tenant_id, page_size))


async def rebuild_contacts(db: Database, *, tenant_id: str = TENANT_ID,
                           page_size: int = PAGE_SIZE) -> int:
    return await paging.rebuild(
        db, tenant_id, watermark_name(tenant_id),
        rows.TABLES,
        lambda conn: _fold_one_page(conn, tenant_id, page_size))


# --- reads -------------------------------------------------------------------------------


async def job_contacts(db: Database, job_id: str, *, tenant_id: str = TENANT_ID
                       ) -> dict[str, list[dict[str, Any]]]:
    """The read model of ``GET /v1/jobs/{jobKey}/contacts`` (newest task first; the most
    confident candidates first)."""
    tasks = await rows.job_tasks(db, tenant_id, job_id)
    candidates = await rows.job_candidates(db, tenant_id, job_id)
    return {
        "tasks": [{
            "taskId": t["task_id"], "workflowId": t["workflow_id"], "runId": t["run_id"],
            "status": t["status"], "requestedAt": t["requested_at"],
            "startedAt": t["started_at"], "finishedAt": t["finished_at"],
            "sourceAttempts": json.loads(t["source_attempts_json"] or "[]"),
            "candidateCount": t["candidate_count"], "provider": t["provider"],
            "model": t["model"],
            "failure": {"code": t["failure_code"]} if t["failure_code"] else None,
        } for t in tasks],
        "candidates": [{
            "candidateId": c["candidate_id"], "contactId": c["contact_id"],
            "taskId": c["task_id"], "name": c["name"], "title": c["title"],
            "email": c["email"], "sourceUrl": c["source_url"], "confidence": c["confidence"],
            "evidence": c["evidence"], "foundAt": c["found_at"],
        } for c in candidates],
    }
