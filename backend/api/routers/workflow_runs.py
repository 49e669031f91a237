"""Workflow runs: the projection-backed list, one run's detail and timeline, and the
cooperative, idempotent cancel command.

Reads only read: ``workflow_run_projections`` is folded in each append's own transaction,
so the answer reflects every event already in the log, and a requester from Temporal's
history (a cancel asked outside JobCtrl) is recorded by the worker's reconcile pass.
Discover, job preparation and Apply share this one history contract: one status
vocabulary, one terminal interpretation and one cancellation boundary."""

from __future__ import annotations

import contextlib
import json
import logging
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from fastapi import APIRouter, Body, Depends, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import ConfigDict, Field
from temporalio.service import RPCError, RPCStatusCode

from backend.api.errors import ApiError, error_responses
from backend.api.params import UtcDateTime
from backend.api.security import require_token
from backend.config import TENANT_ID
from backend.domain import events as ev
from backend.domain.clock import to_iso, utc_now_iso
from backend.domain.model import CamelModel
from backend.projections.workflow_runs import (
    TERMINAL_STATUSES,
    WorkflowRunRow,
    get_run,
    row_from_record,
)
from backend.store import run_records
from backend.store.db import Database
from backend.store.provider_failures import provider_failures_for_run

log = logging.getLogger(__name__)

router = APIRouter(tags=["workflow-runs"], dependencies=[Depends(require_token)])

RUN_ID = Path(pattern=r"^[A-Za-z0-9._:-]{1,128}$", description="The exact Temporal run id")

DISCOVER_TYPE = "DiscoverWorkflow"
PREPARATION_TYPE = "JobPreparationWorkflow"
APPLY_LOOP_WORKFLOW_ID = "apply-auto-local"
DISPLAY_NAMES = {DISCOVER_TYPE: "Discover run", PREPARATION_TYPE: "Job preparation",
                 "BatchStageWorkflow": "Selected batch", "ApplyWorkflow": "Application",
                 "ContactResearchWorkflow": "Contact research",
                 "FollowUpEmailWorkflow": "Follow-up email",
                 "PreparationContinuationWorkflow": "Preparation after a change"}

# Error classes Temporal keeps retrying on its own while the run is still going.
TRANSIENT_ERROR_CODES = frozenset({
    "provider_unavailable", "provider_response_invalid", "source_unavailable",
    "source_failed", "activity_timeout", "worker_unavailable",
})
MANUAL_RECOVERY_STAGE_STATUSES = ("failed", "exhausted")

LOCAL_REQUESTER = "local_operator"

Status = Literal["running", "completed", "failed", "canceled"]
SortKey = Literal["startedAt", "closedAt", "durationMs", "workflowType", "status"]
SORT_COLUMNS = {
    "startedAt": "started_at", "closedAt": "closed_at", "durationMs": "duration_ms",
    "workflowType": "workflow_type", "status": "status",
}


def display_name(workflow_id: str, workflow_type: str) -> str:
    if workflow_id == APPLY_LOOP_WORKFLOW_ID:
        return "Standing apply loop"
    return DISPLAY_NAMES.get(workflow_type, workflow_type)


class RelatedJob(CamelModel):
    job_key: str
    title: str
    company: str


class WorkflowRunSummary(CamelModel):
    workflow_id: str
    run_id: str
    workflow_type: str
    display_name: str
    status: str
    started_at: str | None
    closed_at: str | None
    duration_ms: int | None
    error_code: str | None
    cancel_requested: bool
    related_job: RelatedJob | None


class WorkflowRunPage(CamelModel):
    total: int
    limit: int
    offset: int
    items: list[WorkflowRunSummary]


class TimelineEntry(CamelModel):
    event_id: int
    type: str
    occurred_at: str
    stage: str | None = None
    error_code: str | None = None
    reason: str | None = None
    requester: str | None = None
    source_boundary: str | None = None
    requested_at: str | None = None


class ProviderFailureGroup(CamelModel):
    provider: str
    model: str
    count: int
    codes: dict[str, int]


class ProviderFailureLatest(CamelModel):
    provider: str
    model: str
    operation: str
    category: str
    code: str
    type: str | None
    http_status: int | None
    retryable: bool
    attempt: int | None
    activity_id: str | None
    workflow_id: str | None
    run_id: str | None
    occurred_at: str


class ProviderFailures(CamelModel):
    """Bounded provider failure counts of this exact run plus the latest safe diagnostic;
    never a provider message, prompt, content, URL or secret."""

    source: Literal["recorded"]
    total: int
    by_provider: list[ProviderFailureGroup]
    latest: ProviderFailureLatest


class FailureDiagnostics(CamelModel):
    error_code: str | None
    automatic_retryable: bool
    manual_recovery_available: bool
    provider_failures: ProviderFailures | None = None


class TechnicalDetail(CamelModel):
    workflow_id: str
    run_id: str
    raw_error_code: str | None


class WorkflowRunDetail(WorkflowRunSummary):
    cancel_requested_at: str | None
    timeline: list[TimelineEntry]
    failure_diagnostics: FailureDiagnostics
    technical: TechnicalDetail


class CancelRequest(CamelModel):
    model_config = ConfigDict(extra="forbid")
    reason: str | None = Field(default=None, max_length=500)


class CancelAccepted(CamelModel):
    workflow_id: str
    run_id: str
    cancellation_requested: bool = True


class CancelAlreadyTerminal(CamelModel):
    workflow_id: str
    run_id: str
    status: str
    already_terminal: bool = True


def _summary(row: WorkflowRunRow, job: dict | None) -> dict[str, Any]:
    return {
        "workflow_id": row.workflow_id, "run_id": row.run_id, "workflow_type": row.workflow_type,
        "display_name": display_name(row.workflow_id, row.workflow_type), "status": row.status,
        "started_at": row.started_at, "closed_at": row.closed_at,
        "duration_ms": row.duration_ms, "error_code": row.error_code,
        "cancel_requested": row.cancel_requested_at is not None,
        "related_job": RelatedJob(**job) if job else None,
    }


def _ceil_ms_iso(moment: datetime) -> str:
    """Stored times are whole milliseconds: rounding a bound up keeps both the inclusive
    lower and the exclusive upper comparison exact."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    if moment.microsecond % 1000:
        with contextlib.suppress(OverflowError):  # the last instant of year 9999 stays as is
            moment += timedelta(microseconds=1000 - moment.microsecond % 1000)
    return to_iso(moment)


@router.get("/v1/workflow-runs", response_model=WorkflowRunPage,
            responses=error_responses(401, 422))
async def list_workflow_runs(
    request: Request,
    status: Status | None = None,
    workflow_type: str | None = Query(default=None, alias="workflowType", min_length=1,
                                      max_length=200),
    started_since: UtcDateTime | None = Query(
        default=None, alias="startedSince", description="Inclusive lower bound (RFC 3339, with an offset)"),
    started_before: UtcDateTime | None = Query(
        default=None, alias="startedBefore", description="Exclusive upper bound (RFC 3339, with an offset)"),
    sort: SortKey = "startedAt",
    order: Literal["asc", "desc"] = "desc",
    limit: int = Query(default=50, ge=1, le=200),
    offset: int = Query(default=0, ge=0, le=10_000_000),
) -> WorkflowRunPage:
    """Filtering happens on the folded lifecycle, before pagination; ``total`` counts the
    whole filtered set."""
    db: Database = request.app.state.context.db
    filters = run_records.RunFilter(
        status=status or None, workflow_type=workflow_type or None,
        started_since=_ceil_ms_iso(started_since) if started_since is not None else None,
        started_before=_ceil_ms_iso(started_before) if started_before is not None else None)
    total, records = await run_records.run_page(
        db, filters, sort_column=SORT_COLUMNS[sort], descending=order == "desc",
        limit=limit, offset=offset)
    items = []
    for record in records:
        row = row_from_record(record)
        job = ({"job_key": row.job_id, "title": record["job_title"],
                "company": record["job_company"]}
               if row.job_id and record["job_title"] is not None else None)
        items.append(WorkflowRunSummary(**_summary(row, job)))
    return WorkflowRunPage(total=int(total), limit=limit, offset=offset, items=items)


async def _related_job(db: Database, job_id: str | None) -> dict | None:
    if not job_id:
        return None
    record = await run_records.job_heading(db, job_id)
    return ({"job_key": record["job_id"], "title": record["title"],
             "company": record["company"]} if record else None)


async def _run_or_404(db: Database, run_id: str) -> WorkflowRunRow:
    row = await get_run(db, run_id)
    if row is None:
        raise ApiError(404, "workflow_run_not_found", f"No workflow run {run_id}.")
    return row


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


async def _timeline(db: Database, run_id: str) -> list[TimelineEntry]:
    records = await run_records.run_events(db, run_id)
    entries = []
    for record in records:
        try:
            payload = json.loads(record["payload_json"])
        except ValueError:
            payload = {}
        if not isinstance(payload, dict):
            payload = {}
        entries.append(TimelineEntry(
            event_id=record["id"], type=record["type"],
            occurred_at=_str(payload.get("occurredAt")) or record["created_at"],
            stage=_str(payload.get("stage")), error_code=_str(payload.get("errorCode")),
            reason=_str(payload.get("reason")), requester=_str(payload.get("requester")),
            source_boundary=_str(payload.get("sourceBoundary")),
            requested_at=_str(payload.get("requestedAt")),
        ))
    return entries


async def _diagnostics(db: Database, row: WorkflowRunRow,
                       timeline: list[TimelineEntry]) -> FailureDiagnostics:
    if row.status == "failed":
        code = row.error_code
    elif row.status == "running":
        code = next((e.error_code for e in reversed(timeline) if e.error_code), None)
    else:
        code = None
    manual = False
    if row.status == "failed" and row.workflow_type == PREPARATION_TYPE and row.job_id:
        manual = await run_records.job_has_stage_in(db, row.job_id,
                                                    MANUAL_RECOVERY_STAGE_STATUSES)
    failures = await provider_failures_for_run(db, TENANT_ID, row.workflow_id, row.run_id)
    return FailureDiagnostics(
        error_code=code,
        automatic_retryable=row.status == "running" and code in TRANSIENT_ERROR_CODES,
        manual_recovery_available=manual,
        provider_failures=ProviderFailures.model_validate(failures) if failures else None,
    )


def intent_dedupe_key(run_id: str) -> str:
    return f"CancelRequested:request_intent:{run_id}"


@router.get("/v1/workflow-runs/{run_id}", response_model=WorkflowRunDetail,
            responses=error_responses(401, 404, 422))
async def get_workflow_run(request: Request, run_id: str = RUN_ID) -> WorkflowRunDetail:
    """The run's folded state, its ordered timeline (every event recorded under this
    exact run), failure diagnostics and the raw identifiers."""
    db: Database = request.app.state.context.db
    row = await _run_or_404(db, run_id)
    # Reads only: a requester from Temporal's own history (a cancel asked outside JobCtrl)
    # is recorded by the worker's reconcile pass (loops/recovered_history.py).
    timeline = await _timeline(db, run_id)
    return WorkflowRunDetail(
        **_summary(row, await _related_job(db, row.job_id)),
        cancel_requested_at=row.cancel_requested_at,
        timeline=timeline,
        failure_diagnostics=await _diagnostics(db, row, timeline),
        technical=TechnicalDetail(workflow_id=row.workflow_id, run_id=row.run_id,
                                  raw_error_code=row.error_code),
    )


def _already_terminal(row: WorkflowRunRow) -> JSONResponse:
    body = CancelAlreadyTerminal(workflow_id=row.workflow_id, run_id=row.run_id,
                                 status=row.status)
    return JSONResponse(body.model_dump(by_alias=True), status_code=200)


@router.post(
    "/v1/workflow-runs/{run_id}/actions/cancel", response_model=CancelAccepted, status_code=202,
    responses={200: {"model": CancelAlreadyTerminal}, **error_responses(401, 404, 422, 503)},
)
async def cancel_workflow_run(
    request: Request, run_id: str = RUN_ID, body: CancelRequest | None = Body(default=None),
):
    """Requests cooperative cancellation of this exact run. 202 means the request was
    delivered, not that the run is canceled yet; repeating it answers the same and records
    nothing new. A run that already ended answers 200 ``alreadyTerminal`` and nothing is
    written; a terminal result is never overwritten."""
    context = request.app.state.context
    db: Database = context.db
    row = await _run_or_404(db, run_id)
    if row.status in TERMINAL_STATUSES:
        return _already_terminal(row)
    client = await context.require_runtime()
    reason = body.reason if body else None
    handle = client.get_workflow_handle(row.workflow_id, run_id=row.run_id)
    try:
        await handle.cancel(reason=reason or "")
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            # Either Temporal never knew the run, or it closed while we asked: the
            # projection tells which.
            current = await _run_or_404(db, run_id)
            if current.status in TERMINAL_STATUSES:
                return _already_terminal(current)
            raise ApiError(404, "workflow_run_not_found",
                           f"Temporal has no run {run_id} of {row.workflow_id}.") from None
        raise ApiError(503, "worker_runtime_unavailable",
                       "Temporal did not accept the cancellation; nothing was recorded.") from None
    await run_records.record_run_fact(
        db,
        ev.WorkflowCancellationRequested(
            workflow_id=row.workflow_id, run_id=row.run_id, workflow_type=row.workflow_type,
            requester=LOCAL_REQUESTER, source_boundary="request_intent", reason=reason,
            requested_at=utc_now_iso()),
        job_id=row.job_id, dedupe_key=intent_dedupe_key(row.run_id))
    body_out = CancelAccepted(workflow_id=row.workflow_id, run_id=row.run_id)
    return JSONResponse(body_out.model_dump(by_alias=True), status_code=202)
