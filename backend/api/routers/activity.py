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
from backend.domain.model import CamelModel
from backend.projections.workflow_runs import get_run
from backend.store import event_log
from backend.store.db import Database
from backend.store.jobs import job_exists

router = APIRouter(tags=["debug"], dependencies=[Depends(require_token)])

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
    filters = event_log.ActivityFilter(q=q or None, type=type or None, job_id=job_id or None,
                                       workflow_id=workflow_id or None, before_id=before_id)
    records = await event_log.activity_rows(db, filters, limit + 1)
    items = [ActivityItem(**_item(record)) for record in records[:limit]]
    next_before = items[-1].event_id if len(records) > limit else None
    return ActivityPage(items=items, next_before_id=next_before)


@router.get("/v1/debug/activity/{event_id}", response_model=ActivityDetail,
            responses=error_responses(401, 404, 422))
async def get_activity_event(
    request: Request, event_id: int = Path(ge=1, le=SQLITE_MAX_INT)
) -> ActivityDetail:
    db: Database = request.app.state.context.db
    record = await event_log.activity_row(db, event_id)
    if record is None:
        raise ApiError(404, "activity_event_not_found", f"No event {event_id}.")
    try:
        payload = json.loads(record["payload_json"])
    except ValueError:
        payload = {}
    related_job = None
    if record["job_id"]:
        related_job = (RelatedJobLink(job_key=record["job_id"])
                       if await job_exists(db, record["job_id"]) else None)
    related_run = None
    if record["run_id"]:
        run = await get_run(db, record["run_id"])
        if run is not None:
            related_run = RelatedRunLink(workflow_id=run.workflow_id, run_id=run.run_id)
    return ActivityDetail(**_item(record), created_at=record["created_at"],
                          payload=payload if isinstance(payload, dict) else {},
                          related_job=related_job, related_run=related_run)
