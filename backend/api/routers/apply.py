"""Apply Review: the approval queue, the per-job apply commands and the standing loop.

A queue item is a prepared job (fit score at or above ``minFitScore``, both PDFs
rendered) or any job with apply history. Its status comes from
``apply_run_projections`` (folded from the Apply* events); a prepared job without any
apply event is ``awaiting_approval``."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import ConfigDict, Field
from temporalio.exceptions import WorkflowAlreadyStartedError

from backend.api.errors import ApiError, error_responses
from backend.api.security import require_token
from backend.apply.failures import failure_message
from backend.apply.packet import ApplyPacket, approval_matches, build_packet
from backend.config import TASK_QUEUE
from backend.domain import events as ev
from backend.domain.apply_targets import ApplyTarget, classify_target
from backend.domain.model import CamelModel
from backend.projections.apply_runs import STATUSES, TERMINAL_STATUSES, read_state
from backend.store import apply as store
from backend.store.jobs import job_exists
from backend.store.profile import read_profile
from backend.temporal.loops.auto_apply import LoopStatus, describe_loop, observe, reconcile_auto_apply
from backend.temporal.start_contracts import ApplyWorkflowInput, apply_workflow_id

router = APIRouter(tags=["apply"], dependencies=[Depends(require_token)])

JOB_KEY = Path(pattern=r"^job_[0-9a-f]{24}$", description="The job's stable JobId")
ApplyStatus = Literal["awaiting_approval", "approved", "in_progress",
                      "awaiting_manual_completion", "applied", "rejected", "failed"]


class ApplyTargetOut(CamelModel):
    kind: Literal["browser_form", "email", "unknown"]
    url: str | None
    recipient: str | None


class ApplyPacketOut(CamelModel):
    target_url: str | None
    resume_pdf: str
    cover_letter_pdf: str
    answers: dict[str, str]


class ApprovalOut(CamelModel):
    approved_at: str | None
    recipient: str | None
    attachments: list[str]


class FailureOut(CamelModel):
    code: str
    message: str


class ApplyItem(CamelModel):
    job_key: str
    title: str
    company: str
    fit_score: int | None
    status: ApplyStatus
    target: ApplyTargetOut
    packet: ApplyPacketOut | None
    approval: ApprovalOut | None
    failure: FailureOut | None
    updated_at: str | None


class ApplyQueue(CamelModel):
    items: list[ApplyItem]
    total: int


class ApproveRequest(CamelModel):
    model_config = ConfigDict(extra="forbid")
    recipient: str | None = Field(default=None, max_length=320)
    attachments: list[str] | None = Field(default=None, max_length=10)


class RejectRequest(CamelModel):
    model_config = ConfigDict(extra="forbid")
    reason: str | None = Field(default=None, max_length=500)


class ApplyLoop(CamelModel):
    enabled: bool
    workflow_id: str
    state: Literal["running", "stopped", "budget_halted", "failed", "unknown"]
    run_id: str | None
    reason: str | None


# -- reading -------------------------------------------------------------------------------


def _packet_for(job: store.PreparedJob, state, profile) -> tuple[ApplyTarget, ApplyPacket | None]:
    target = classify_target(job.apply_url, job.description_html)
    if state is not None and state.packet:
        return target, ApplyPacket.from_json(state.packet)
    if job.resume_pdf is None or job.cover_pdf is None:
        return target, None
    return target, build_packet(target, resume_pdf=job.resume_pdf,
                                cover_letter_pdf=job.cover_pdf, profile=profile)


def _item(job: store.PreparedJob, state, profile) -> ApplyItem:
    target, packet = _packet_for(job, state, profile)
    failure = None
    if state is not None and state.status == "failed" and state.failure_code:
        failure = FailureOut(code=state.failure_code, message=failure_message(state.failure_code))
    return ApplyItem(
        job_key=job.job_id, title=job.title, company=job.company, fit_score=job.score,
        status=job.status, target=ApplyTargetOut(**target.as_json()),
        packet=ApplyPacketOut.model_validate(packet.as_json()) if packet else None,
        approval=ApprovalOut.model_validate(state.approval) if state and state.approval
        else None,
        failure=failure, updated_at=job.updated_at)


async def _load(request: Request, job_id: str | None = None):
    context = request.app.state.context
    async with context.db.transaction() as conn:  # one consistent snapshot
        jobs = await store.prepared_jobs(conn, min_fit_score=context.settings.min_fit_score,
                                         job_id=job_id)
        states = {job.job_id: await read_state(conn, job.job_id) for job in jobs}
        profile = await read_profile(conn)
    return jobs, states, profile[1] if profile else None


@router.get("/v1/apply/queue", response_model=ApplyQueue, responses=error_responses(401, 422))
async def apply_queue(
    request: Request,
    status: ApplyStatus | None = None,
    limit: int = Query(default=50, ge=1, le=500),
    offset: int = Query(default=0, ge=0, le=10_000_000),
) -> ApplyQueue:
    """``status`` omitted: every item that is not finished (applied / rejected)."""
    jobs, states, profile = await _load(request)
    chosen = [job for job in jobs if (job.status == status if status
                                      else job.status not in TERMINAL_STATUSES)]
    page = chosen[offset:offset + limit]
    return ApplyQueue(items=[_item(job, states[job.job_id], profile) for job in page],
                      total=len(chosen))


async def _prepared_or_error(request: Request, job_key: str):
    jobs, states, profile = await _load(request, job_key)
    if not jobs:
        if not await job_exists(request.app.state.context.db, job_key):
            raise ApiError(404, "job_not_found", f"No job {job_key}.")
        raise ApiError(409, "job_not_prepared",
                       "This job is not prepared yet (fit score and both PDFs are needed).")
    return jobs[0], states[job_key], profile


def _wrong_state(job: store.PreparedJob, action: str) -> ApiError:
    return ApiError(409, "apply_wrong_state",
                    f"Cannot {action} a job whose apply status is {job.status}.")


# -- commands ------------------------------------------------------------------------------


@router.post("/v1/apply/{job_key}/approve", response_model=ApplyItem,
             responses=error_responses(401, 404, 409, 422))
async def approve(request: Request, body: ApproveRequest | None = None,
                  job_key: str = JOB_KEY) -> ApplyItem:
    """For email targets the exact recipient and attachment list must be named."""
    body = body or ApproveRequest()
    job, state, profile = await _prepared_or_error(request, job_key)
    if job.status not in ("awaiting_approval", "approved", "failed"):
        raise _wrong_state(job, "approve")
    target, packet = _packet_for(job, None, profile)
    if packet is None:
        raise ApiError(409, "apply_target_unknown", failure_message("apply_target_unknown"))
    if target.kind == "email" and not approval_matches(
            packet, target, recipient=body.recipient, attachments=body.attachments):
        raise ApiError(422, "approval_mismatch",
                       f"Approve the exact recipient ({target.recipient}) and attachments"
                       f" ({', '.join(packet.attachments)}).",
                       fields=["recipient", "attachments"])
    recipient = target.recipient if target.kind == "email" else None
    attachments = packet.attachments if target.kind == "email" else (body.attachments or [])
    async with request.app.state.context.db.transaction() as conn:
        await store.approve(conn, job_key, recipient=recipient, attachments=attachments)
    return await _current(request, job_key)


@router.post("/v1/apply/{job_key}/reject", response_model=ApplyItem,
             responses=error_responses(401, 404, 409, 422))
async def reject(request: Request, body: RejectRequest | None = None,
                 job_key: str = JOB_KEY) -> ApplyItem:
    body = body or RejectRequest()
    job, _, _ = await _prepared_or_error(request, job_key)
    if job.status in ("in_progress", "applied", "rejected"):
        raise _wrong_state(job, "reject")
    async with request.app.state.context.db.transaction() as conn:
        await store.drop_approval(conn, job_key)
        await store.record_apply_event(conn, ev.ApplyRejected(job_id=job_key,
                                                              reason=body.reason))
    return await _current(request, job_key)


@router.post("/v1/apply/{job_key}/mark-applied", response_model=ApplyItem,
             responses=error_responses(401, 404, 409, 422))
async def mark_applied(request: Request, job_key: str = JOB_KEY) -> ApplyItem:
    """The user finished the application themselves (a form, or a send we could not
    confirm)."""
    # Imported here: the apply activities' module (the worker's) costs the API's start.
    from backend.temporal.activities.apply import mark_user_applied

    job, _, _ = await _prepared_or_error(request, job_key)
    if job.status in ("in_progress", "applied", "rejected"):
        raise _wrong_state(job, "mark applied")
    async with request.app.state.context.db.transaction() as conn:
        await store.record_apply_event(conn, ev.ApplyMarkedApplied(job_id=job_key))
        await mark_user_applied(conn, job_key, request.app.state.context.settings,
                                via="apply_review")
    return await _current(request, job_key)


@router.post("/v1/apply/{job_key}/start", status_code=202,
             responses=error_responses(401, 404, 409, 422, 503))
async def start(request: Request, job_key: str = JOB_KEY) -> JSONResponse:
    """One ApplyWorkflow for this job (``apply-{jobKey}``); 409 while one is live."""
    context = request.app.state.context
    job, _, _ = await _prepared_or_error(request, job_key)
    if job.status == "in_progress":
        raise ApiError(409, "apply_running", "An apply attempt for this job is live.")
    allowed = ("approved",) if context.settings.apply_approval_required \
        else ("approved", "awaiting_approval")
    if job.status not in allowed:
        raise _wrong_state(job, "start applying")
    client = await context.require_runtime()
    workflow_id = apply_workflow_id(job_key)
    try:
        handle = await client.start_workflow(
            "ApplyWorkflow",
            ApplyWorkflowInput(job_key=job_key,
                               heartbeat_timeout_s=context.settings.stage_heartbeat_timeout_s),
            id=workflow_id, task_queue=TASK_QUEUE)
    except WorkflowAlreadyStartedError:
        raise ApiError(409, "apply_running", "An apply attempt for this job is live.") from None
    return JSONResponse({"jobKey": job_key, "workflowId": workflow_id,
                         "firstExecutionRunId": handle.first_execution_run_id},
                        status_code=202)


async def _current(request: Request, job_key: str) -> ApplyItem:
    jobs, states, profile = await _load(request, job_key)
    return _item(jobs[0], states[job_key], profile)


# -- the standing loop ---------------------------------------------------------------------


@router.get("/v1/apply/loop", response_model=ApplyLoop, responses=error_responses(401))
async def apply_loop(request: Request) -> ApplyLoop:
    """Toggle with ``PATCH /v1/settings {"autoApply": ...}``; ``unknown`` when Temporal
    cannot be asked right now."""
    return ApplyLoop.model_validate((await loop_status(request)).as_json())


async def loop_status(request: Request) -> LoopStatus:
    context = request.app.state.context
    client = await context.temporal()
    if client is None:
        return LoopStatus(context.settings.auto_apply, "unknown", reason="temporal_unreachable")
    try:
        described = await describe_loop(client)
    except Exception:  # noqa: BLE001 - unknown stays unknown
        return LoopStatus(context.settings.auto_apply, "unknown", reason="temporal_unreachable")
    return await observe(context.db, context.settings, described)


async def nudge_auto_apply(context) -> None:
    """Called after a settings change: reconcile the loop now instead of on the worker's
    next pass. Best effort; the worker reconciles regardless."""
    client = await context.temporal()
    if client is None:
        return
    try:
        await reconcile_auto_apply(context.db, client, context.paths)
    except Exception:  # noqa: BLE001 - the worker's pass will do it
        return


__all__ = ["router", "STATUSES", "nudge_auto_apply"]
