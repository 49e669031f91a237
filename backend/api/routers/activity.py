"""Debug activity: the raw event log, newest first, searchable by type, job and workflow.

Each row exposes a nullable ``workflowId`` derived from the canonical event payload
(``workflowId``, else a discovery event's ``discoverWorkflowId``, else the row's
``workflow_id`` column), and free-text ``q`` searches it, so a run's "Review activity"
action finds exactly that workflow's events. The detail route keeps the selected event as
its identity and links the related job and run when they are known."""

from __future__ import annotations

import json
from typing import Any

from fastapi import APIRouter, Depends, Path, Query, Request

from backend.api.errors import ApiError, error_responses
from backend.api.params import SQLITE_MAX_INT
from backend.api.security import require_token
from backend.config import TENANT_ID
from backend.domain.model import CamelModel
from backend.projections.workflow_runs import get_run
from backend.store.db import Database

router = APIRouter(tags=["debug"], dependencies=[Depends(require_token)])

WORKFLOW_ID_SQL = ("COALESCE(json_extract(e.payload_json, '$.workflowId'),"
                   " json_extract(e.payload_json, '$.discoverWorkflowId'), e.workflow_id)")
RUN_ID_SQL = ("COALESCE(e.run_id, json_extract(e.payload_json, '$.runId'),"
              " json_extract(e.payload_json, '$.discoverRunId'))")
JOB_ID_SQL = "COALESCE(e.job_id, json_extract(e.payload_json, '$.jobId'))"
OCCURRED_SQL = "COALESCE(json_extract(e.payload_json, '$.occurredAt'), e.created_at)"
SELECT_SQL = (f"SELECT e.id, e.type, {OCCURRED_SQL} AS occurred_at, e.created_at,"
              f" {JOB_ID_SQL} AS job_id, {WORKFLOW_ID_SQL} AS workflow_id,"
              f" {RUN_ID_SQL} AS run_id, e.payload_json FROM job_events e")


class ActivityItem(CamelModel):
    event_id: int
    type: str
    occurred_at: str
    job_id: str | None
    workflow_id: str | None
    run_id: str | None


class ActivityPage(CamelModel):
    items: list[ActivityItem]
    next_before_id: int | None


class RelatedJobLink(CamelModel):
    job_key: str


class RelatedRunLink(CamelModel):
    workflow_id: str
    run_id: str


class ActivityDetail(ActivityItem):
    created_at: str
    payload: dict[str, Any]
    related_job: RelatedJobLink | None
    related_run: RelatedRunLink | None


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _item(record) -> dict[str, Any]:
    return {"event_id": record["id"], "type": record["type"],
            "occurred_at": record["occurred_at"] or record["created_at"],
            "job_id": record["job_id"], "workflow_id": record["workflow_id"],
            "run_id": record["run_id"]}


@router.get("/v1/debug/activity", response_model=ActivityPage,
            responses=error_responses(401, 422))
async def list_activity(
    request: Request,
    q: str | None = Query(default=None, min_length=1, max_length=200,
                          description="Free text over type, job id, workflow id and run id"),
    type: str | None = Query(default=None, min_length=1, max_length=100),
    job_id: str | None = Query(default=None, alias="jobId", min_length=1, max_length=100),
    workflow_id: str | None = Query(default=None, alias="workflowId", min_length=1,
                                    max_length=200),
    before_id: int | None = Query(default=None, alias="beforeId", ge=1, le=SQLITE_MAX_INT,
                                  description="Keyset cursor: events older than this id"),
    limit: int = Query(default=100, ge=1, le=500),
) -> ActivityPage:
    db: Database = request.app.state.context.db
    clauses, params = ["e.tenant_id = ?"], [TENANT_ID]
    if before_id is not None:
        clauses.append("e.id < ?")
        params.append(before_id)
    if type:
        clauses.append("e.type = ?")
        params.append(type)
    if job_id:
        clauses.append(f"{JOB_ID_SQL} = ?")
        params.append(job_id)
    if workflow_id:
        clauses.append(f"{WORKFLOW_ID_SQL} = ?")
        params.append(workflow_id)
    if q:
        like = _like(q)
        clauses.append(f"(e.type LIKE ? ESCAPE '\\' OR {JOB_ID_SQL} LIKE ? ESCAPE '\\'"
                       f" OR {WORKFLOW_ID_SQL} LIKE ? ESCAPE '\\'"
                       f" OR {RUN_ID_SQL} LIKE ? ESCAPE '\\')")
        params += [like, like, like, like]
    records = await db.fetchall(
        f"{SELECT_SQL} WHERE {' AND '.join(clauses)} ORDER BY e.id DESC LIMIT ?",
        [*params, limit + 1],
    )
    items = [ActivityItem(**_item(record)) for record in records[:limit]]
    next_before = items[-1].event_id if len(records) > limit else None
    return ActivityPage(items=items, next_before_id=next_before)


@router.get("/v1/debug/activity/{event_id}", response_model=ActivityDetail,
            responses=error_responses(401, 404, 422))
async def get_activity_event(
    request: Request, event_id: int = Path(ge=1, le=SQLITE_MAX_INT)
) -> ActivityDetail:
    db: Database = request.app.state.context.db
    record = await db.fetchone(f"{SELECT_SQL} WHERE e.tenant_id = ? AND e.id = ?",
                               (TENANT_ID, event_id))
    if record is None:
        raise ApiError(404, "activity_event_not_found", f"No event {event_id}.")
    try:
        payload = json.loads(record["payload_json"])
    except ValueError:
        payload = {}
    related_job = None
    if record["job_id"]:
        job = await db.fetchone("SELECT job_id FROM jobs WHERE tenant_id = ? AND job_id = ?",
                                (TENANT_ID, record["job_id"]))
        related_job = RelatedJobLink(job_key=job["job_id"]) if job else None
    related_run = None
    if record["run_id"]:
        run = await get_run(db, record["run_id"])
        if run is not None:
            related_run = RelatedRunLink(workflow_id=run.workflow_id, run_id=run.run_id)
    return ActivityDetail(**_item(record), created_at=record["created_at"],
                          payload=payload if isinstance(payload, dict) else {},
                          related_job=related_job, related_run=related_run)
