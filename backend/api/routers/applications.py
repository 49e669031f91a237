"""After applying: the application board, its moves and undo, follow-ups, interviews (with
an ``.ics`` export) and Insights.

Every applied job is on the board (``backend.store.applications.set_user_status``). A
command on a job that does not exist is ``404 job_not_found``; on a job that was never
applied to ``409 not_applied``; a refused move is a typed 409 / 422. Each command runs in
one transaction, so a refusal writes nothing. Days are the user's local calendar days."""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Literal

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import JSONResponse, Response
from pydantic import AwareDatetime, Field

from backend.api.errors import ApiError, error_responses
from backend.api.partial import REQUEST_CONFIG
from backend.api.security import require_token
from backend.config import TASK_QUEUE
from backend.domain import applications as domain
from backend.domain.application_state import ApplicationState
from backend.domain.clock import local_today, local_zone, to_iso, utc_now
from backend.domain.fit import FitLedger
from backend.domain.model import CamelModel
from backend.pipeline.documents import CoverLetterDoc
from backend.store import applications as store
from backend.store.profile import read_profile
from backend.temporal.start_contracts import FOLLOW_UP_WORKFLOW_TYPE as FOLLOW_UP_WORKFLOW
from backend.temporal.start_contracts import FollowUpWorkflowInput

if TYPE_CHECKING:
    from backend.pipeline.truth import UnsupportedClaim

# The follow-up writer, its honest-claims gate (the fit rules) and the calendar export are
# imported by the routes that use them: the API's start then does not pay for them
# (bench/README.md, "Start-up after issue 18, session 5").

log = logging.getLogger(__name__)

router = APIRouter(tags=["applications"], dependencies=[Depends(require_token)])

JOB_KEY = Path(pattern=r"^job_[0-9a-f]{24}$", description="The job's stable JobId")
INTERVIEW_ID = Path(pattern=r"^[a-z0-9][a-z0-9-]{0,63}$", description="The interview's id")
Stage = Literal["applied", "heard_back", "interviewing", "offer", "rejected", "withdrawn",
                "ghosted"]


# -- shapes --------------------------------------------------------------------------------


class MoveOut(CamelModel):
    event_id: int
    stage: Stage
    date: str
    note: str | None
    undone: bool


class FollowUpOut(CamelModel):
    due_on: str | None = Field(description="The local day of the next step; null once done")
    status: Literal["scheduled", "done"]
    reason: Literal["after_applying", "snoozed"]
    due: bool = Field(description="Due today or overdue (and still needed)")


class InterviewOut(CamelModel):
    interview_id: str
    round: int
    starts_at: str
    duration_minutes: int
    location: str | None
    notes: str | None
    canceled: bool


class EmailRoundOut(CamelModel):
    round: int
    recipient: str
    status: Literal["requested", "sent", "failed"]
    message_id: str | None
    error_code: str | None
    at: str | None


class ApplicationCard(CamelModel):
    job_key: str
    title: str
    company: str
    stage: Stage
    via: Literal["email", "apply_review", "job_action"]
    applied_at: str
    applied_on: str
    source: str | None
    fit_score: int | None
    days_without_reply: int | None = Field(
        description="Days since applying with nothing heard; null after a reply")
    no_reply_text: str | None = Field(
        description="'no reply yet (31 days)' once the ghosting threshold has passed")
    follow_up: FollowUpOut | None
    next_interview: InterviewOut | None
    last_move: MoveOut | None = Field(description="The move Undo would take back")
    updated_at: str | None


class ColumnOut(CamelModel):
    stage: Stage
    label: str
    count: int


class ApplicationBoard(CamelModel):
    items: list[ApplicationCard]
    total: int
    columns: list[ColumnOut]
    follow_ups_due: int
    today: str = Field(description="The user's local day the figures are computed for")
    ghost_after_days: int


class PostingOut(CamelModel):
    """The posting as it was when applied (postings change and disappear)."""

    title: str
    company: str
    location: str | None
    url: str
    apply_url: str | None
    description_html: str | None
    description_text: str | None
    resume_template: str | None


class ApplicationDetail(ApplicationCard):
    moves: list[MoveOut]
    interviews: list[InterviewOut]
    emails: list[EmailRoundOut]
    posting: PostingOut | None


class MoveRequest(CamelModel):
    model_config = REQUEST_CONFIG
    stage: Stage
    date: dt.date | None = Field(default=None, description="When it happened (default: today)")
    note: str | None = Field(default=None, max_length=1000)


class SnoozeForDays(CamelModel):
    """Follow up in this many days."""

    model_config = REQUEST_CONFIG
    days: int = Field(ge=1, le=90)


class SnoozeUntil(CamelModel):
    """Follow up on this day (today or later)."""

    model_config = REQUEST_CONFIG
    until: dt.date


# Exactly one of the two: each refuses the other's key, so the document says so too.
SnoozeRequest = SnoozeForDays | SnoozeUntil


class InterviewRequest(CamelModel):
    model_config = REQUEST_CONFIG
    interview_id: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9-]{0,63}$",
                                     description="An existing interview to change")
    round: int | None = Field(default=None, ge=1, le=20)
    starts_at: AwareDatetime
    duration_minutes: int = Field(default=60, ge=5, le=600)
    location: str | None = Field(default=None, max_length=300)
    notes: str | None = Field(default=None, max_length=2000)


class FigureOut(CamelModel):
    label: str
    applications: int
    reply_rate: float | None
    interview_rate: float | None
    median_days_to_first_reply: float | None
    ghosted_rate: float | None
    withheld: str | None = Field(description="Why the figures are null (a group under 5)")


class DimensionOut(CamelModel):
    key: Literal["source", "fitBand", "roleFamily", "resumeTemplate"]
    title: str
    groups: list[FigureOut]


class InsightsOut(CamelModel):
    today: str
    min_group_size: int
    ghost_after_days: int
    caption: str
    overall: FigureOut
    dimensions: list[DimensionOut]


# -- building the answers ------------------------------------------------------------------


def _today() -> dt.date:
    return local_today(local_zone())


def _move(move: domain.Move) -> MoveOut:
    return MoveOut(event_id=move.event_id, stage=move.stage, date=move.on, note=move.note,
                   undone=move.undone)


def _interview(interview: domain.Interview) -> InterviewOut:
    return InterviewOut.model_validate(interview.__dict__)


def _card_fields(state: ApplicationState, snapshot: store.Snapshot | None, today: dt.date,
                 ghost_after_days: int) -> dict:
    applied_on = dt.date.fromisoformat(state.applied_on)
    days = domain.days_without_reply(state.moves, applied_on, today)
    follow_up = state.follow_up
    now = to_iso(utc_now())
    upcoming = [i for i in state.interviews if not i.canceled and i.starts_at >= now]
    last = domain.last_undoable(state.moves)
    return dict(
        job_key=state.job_id, title=state.title, company=state.company, stage=state.stage,
        via=state.via, applied_at=state.applied_at, applied_on=state.applied_on,
        source=snapshot.source if snapshot else None,
        fit_score=snapshot.fit_score if snapshot else None,
        days_without_reply=days, no_reply_text=domain.no_reply_text(days, ghost_after_days),
        follow_up=None if follow_up is None else FollowUpOut(
            due_on=follow_up.due_on, status=follow_up.status, reason=follow_up.reason,
            due=domain.follow_up_is_due(follow_up, state.moves, today)),
        next_interview=_interview(upcoming[0]) if upcoming else None,
        last_move=_move(last) if last else None, updated_at=state.updated_at)


def _detail(state: ApplicationState, snapshot: store.Snapshot | None, today: dt.date,
            ghost_after_days: int) -> ApplicationDetail:
    posting = None if snapshot is None else PostingOut(
        title=snapshot.title, company=snapshot.company, location=snapshot.location,
        url=snapshot.url, apply_url=snapshot.apply_url,
        description_html=snapshot.description_html, description_text=snapshot.description_text,
        resume_template=snapshot.resume_template)
    return ApplicationDetail(
        **_card_fields(state, snapshot, today, ghost_after_days),
        moves=[_move(m) for m in state.moves],
        interviews=[_interview(i) for i in state.interviews],
        emails=[EmailRoundOut.model_validate(e.__dict__) for e in state.emails],
        posting=posting)


# Refused moves: a state conflict is 409, a date that cannot be is bad input (422).
REFUSAL_STATUS = {"application_same_stage": 409, "nothing_to_undo": 409,
                  "interview_not_found": 404, "outcome_before_applying": 422,
                  "outcome_in_future": 422, "snooze_in_past": 422}


async def _read_detail(request: Request, job_key: str) -> ApplicationDetail:
    context = request.app.state.context
    async with context.db.read_snapshot() as conn:
        if not await store.job_exists(conn, job_key):
            raise ApiError(404, "job_not_found", f"No job {job_key}.")
        state = await store.read_state(conn, job_key)
        if state is None or not state.tracked:
            raise _not_applied(job_key)
        snapshot = await store.read_snapshot(conn, job_key)
    return _detail(state, snapshot, _today(), context.settings.ghost_after_days)


def _not_applied(job_key: str) -> ApiError:
    return ApiError(409, "not_applied", "This job was never applied to (or its applied "
                    "mark was cleared): mark it applied first.")


async def _command(request: Request, job_key: str,
                   command: Callable[..., Awaitable[ApplicationState]]) -> ApplicationDetail:
    """Run one board command in one transaction; any refusal rolls it back."""
    async with request.app.state.context.db.transaction() as conn:
        if not await store.job_exists(conn, job_key):
            raise ApiError(404, "job_not_found", f"No job {job_key}.")
        try:
            await command(conn)
        except store.NotTracked:
            raise _not_applied(job_key) from None
        except domain.MoveRefused as refused:
            status = REFUSAL_STATUS.get(refused.code, 409)
            raise ApiError(status, refused.code, refused.message,
                           fields=[refused.field] if status == 422 else None) from None
    return await _read_detail(request, job_key)


COMMAND_ERRORS = error_responses(401, 404, 409, 422)


# -- the board -----------------------------------------------------------------------------


@router.get("/v1/applications", response_model=ApplicationBoard,
            responses=error_responses(401))
async def application_board(request: Request) -> ApplicationBoard:
    """Every applied job, the most recently applied first, with the columns' counts."""
    context = request.app.state.context
    async with context.db.read_snapshot() as conn:
        entries = await store.board(conn)
    today, ghost_days = _today(), context.settings.ghost_after_days
    cards = [ApplicationCard(**_card_fields(state, snapshot, today, ghost_days))
             for state, snapshot in entries]
    columns = [ColumnOut(stage=stage, label=domain.STAGE_LABELS[stage],
                         count=sum(card.stage == stage for card in cards))
               for stage in domain.STAGES]
    return ApplicationBoard(
        items=cards, total=len(cards), columns=columns,
        follow_ups_due=sum(bool(card.follow_up and card.follow_up.due) for card in cards),
        today=today.isoformat(), ghost_after_days=ghost_days)


@router.get("/v1/applications/{job_key}", response_model=ApplicationDetail,
            responses=COMMAND_ERRORS)
async def application_detail(request: Request, job_key: str = JOB_KEY) -> ApplicationDetail:
    """One application: its moves (undone ones too), interviews, follow-up emails and the
    posting as it was when applied."""
    return await _read_detail(request, job_key)


@router.post("/v1/applications/{job_key}/moves", response_model=ApplicationDetail,
             responses=COMMAND_ERRORS)
async def move_application(body: MoveRequest, request: Request,
                           job_key: str = JOB_KEY) -> ApplicationDetail:
    """Move the card to ``stage`` (``ApplicationOutcomeRecorded``)."""
    today = _today()
    return await _command(request, job_key, lambda conn: store.record_move(
        conn, job_key, body.stage, on=body.date or today, note=body.note, today=today))


@router.post("/v1/applications/{job_key}/undo", response_model=ApplicationDetail,
             responses=COMMAND_ERRORS)
async def undo_move(request: Request, job_key: str = JOB_KEY) -> ApplicationDetail:
    """Take back the latest move that counts (``ApplicationOutcomeUndone``)."""
    return await _command(request, job_key, lambda conn: store.undo_last_move(conn, job_key))


@router.post("/v1/applications/{job_key}/follow-up/snooze", response_model=ApplicationDetail,
             responses=COMMAND_ERRORS)
async def snooze_follow_up(body: SnoozeRequest, request: Request,  # type: ignore[valid-type]
                           job_key: str = JOB_KEY) -> ApplicationDetail:
    today = _today()
    due_on = domain.snoozed_until(today, days=getattr(body, "days", None),
                                  until=getattr(body, "until", None))
    return await _command(request, job_key, lambda conn: store.snooze_follow_up(
        conn, job_key, due_on=due_on, today=today))


@router.post("/v1/applications/{job_key}/follow-up/done", response_model=ApplicationDetail,
             responses=COMMAND_ERRORS)
async def follow_up_done(request: Request, job_key: str = JOB_KEY) -> ApplicationDetail:
    return await _command(request, job_key, lambda conn: store.follow_up_done(conn, job_key))


# -- interviews ----------------------------------------------------------------------------


@router.post("/v1/applications/{job_key}/interviews", response_model=ApplicationDetail,
             responses=COMMAND_ERRORS)
async def schedule_interview(body: InterviewRequest, request: Request,
                             job_key: str = JOB_KEY) -> ApplicationDetail:
    """Add an interview round (or change one, by ``interviewId``)."""
    today = _today()
    return await _command(request, job_key, lambda conn: store.schedule_interview(
        conn, job_key, interview_id=body.interview_id, round=body.round,
        starts_at=to_iso(body.starts_at), duration_minutes=body.duration_minutes,
        location=body.location, notes=body.notes, today=today))


@router.post("/v1/applications/{job_key}/interviews/{interview_id}/cancel",
             response_model=ApplicationDetail, responses=COMMAND_ERRORS)
async def cancel_interview(request: Request, job_key: str = JOB_KEY,
                           interview_id: str = INTERVIEW_ID) -> ApplicationDetail:
    return await _command(request, job_key,
                          lambda conn: store.cancel_interview(conn, job_key, interview_id))


@router.get("/v1/applications/{job_key}/interviews.ics", response_class=Response,
            responses={200: {"content": {"text/calendar": {}},
                             "description": "The interviews as an iCalendar file"},
                       **COMMAND_ERRORS})
async def interviews_calendar(request: Request, job_key: str = JOB_KEY) -> Response:
    detail = await _read_detail(request, job_key)
    interviews = [domain.Interview(**i.model_dump()) for i in detail.interviews]
    from backend.domain.interview_calendar import interviews_ics

    text = interviews_ics(job_key, detail.title, detail.company, interviews, now=utc_now())
    return Response(text, media_type="text/calendar; charset=utf-8", headers={
        "Content-Disposition": f'attachment; filename="interviews-{job_key}.ics"'})


# -- the follow-up email -------------------------------------------------------------------

# Spelled with explicit ranges, not \s: JSON Schema's \s (ECMAScript) and Python's differ
# (U+0085), and the document must refuse exactly what the route refuses.
EMAIL_PATTERN = r"^[^@\x00-\x20<>,;]+@[^@\x00-\x20<>,;]+\.[^@\x00-\x20<>,;]+$"


class FollowUpDraftOut(CamelModel):
    recipient: str | None = Field(description="Where the application went, or the contact "
                                  "research found; null when unknown")
    subject: str
    body: str
    from_letter: bool = Field(description="The draft recalls the letter sent with the "
                              "application")


class FollowUpEmailRequest(CamelModel):
    model_config = REQUEST_CONFIG
    recipient: str = Field(max_length=320, pattern=EMAIL_PATTERN)
    subject: str = Field(min_length=1, max_length=200)
    body: str = Field(min_length=1, max_length=domain.MAX_FOLLOW_UP_BODY_CHARS)


class FollowUpEmailAccepted(CamelModel):
    job_key: str
    round: int
    workflow_id: str
    first_execution_run_id: str


async def _writing_facts(request: Request, job_key: str):
    """(profile, letter, ledger, job text, recipient) for the follow-up of an applied job."""
    async with request.app.state.context.db.read_snapshot() as conn:
        if not await store.job_exists(conn, job_key):
            raise ApiError(404, "job_not_found", f"No job {job_key}.")
        state = await store.read_state(conn, job_key)
        if state is None or not state.tracked:
            raise _not_applied(job_key)
        facts = await store.follow_up_context(conn, job_key)
        saved = await read_profile(conn)
    if saved is None:
        raise ApiError(409, "profile_missing", "Save your profile first (Settings): the email "
                       "is written from it.")
    from backend.pipeline.text import JobText

    snapshot = facts.snapshot
    job = JobText(title=state.title, company=state.company,
                  location=snapshot.location if snapshot else None, remote=None,
                  description=(snapshot.description_text if snapshot else None) or "")
    letter = CoverLetterDoc.model_validate(facts.letter) if facts.letter else None
    ledger = FitLedger.model_validate(facts.ledger) if facts.ledger else None
    return saved[1], letter, ledger, job, facts.recipient


def _unsupported(claim: UnsupportedClaim) -> ApiError:
    return ApiError(422, "follow_up_claim_unsupported",
                    f"The email says something your profile does not hold: {claim.claim}",
                    fields=["body"])


@router.get("/v1/applications/{job_key}/follow-up/email", response_model=FollowUpDraftOut,
            responses=COMMAND_ERRORS)
async def follow_up_draft(request: Request, job_key: str = JOB_KEY) -> FollowUpDraftOut:
    """A follow-up email drafted from the profile and the letter sent; nothing is saved or
    sent. It passed the honest-claims gate."""
    from backend.pipeline.follow_up import check_follow_up, draft_follow_up
    from backend.pipeline.truth import UnsupportedClaim

    profile, letter, ledger, job, recipient = await _writing_facts(request, job_key)
    draft = draft_follow_up(profile, title=job.title, company=job.company, letter=letter)
    try:
        check_follow_up(draft.body, profile, ledger, job, subject=draft.subject)
    except UnsupportedClaim as claim:
        raise _unsupported(claim) from None
    return FollowUpDraftOut(recipient=recipient, subject=draft.subject, body=draft.body,
                            from_letter=letter is not None)


@router.post("/v1/applications/{job_key}/follow-up/email", status_code=202,
             response_model=FollowUpEmailAccepted, responses=error_responses(401, 404, 409,
                                                                              422, 503))
async def send_follow_up(body: FollowUpEmailRequest, request: Request,
                         job_key: str = JOB_KEY) -> Response:
    """Send this email from the user's own account (``FollowUpEmailWorkflow``), at most
    once: the text must pass the honest-claims gate, and the worker must be running,
    before anything is recorded."""
    from backend.pipeline.follow_up import check_follow_up
    from backend.pipeline.truth import UnsupportedClaim

    context = request.app.state.context
    profile, _letter, ledger, job, _recipient = await _writing_facts(request, job_key)
    try:
        check_follow_up(body.body, profile, ledger, job, subject=body.subject)
    except UnsupportedClaim as claim:
        raise _unsupported(claim) from None
    if not context.settings.smtp.configured:
        raise ApiError(409, "smtp_not_configured", "Set up your email account in Settings "
                       "first: follow-ups go out from it.")
    client = await context.require_runtime()  # 503 before anything durable
    async with context.db.transaction() as conn:
        try:
            email = await store.request_follow_up_email(
                conn, job_key, recipient=body.recipient, subject=body.subject, body=body.body)
        except store.NotTracked:
            raise _not_applied(job_key) from None
        except store.EmailInProgress:
            raise ApiError(409, "follow_up_email_in_progress",
                           "The last follow-up email for this job is still being sent.") \
                from None
    try:
        handle = await client.start_workflow(
            FOLLOW_UP_WORKFLOW, FollowUpWorkflowInput(
                job_key=job_key, round=email.round,
                heartbeat_timeout_s=context.settings.stage_heartbeat_timeout_s),
            id=email.workflow_id, task_queue=TASK_QUEUE)
    except Exception as error:  # noqa: BLE001 - Temporal went away after the readiness check
        log.warning("follow-up email start failed: %s", type(error).__name__)
        async with context.db.transaction() as conn:
            await store.mark_follow_up_failed(conn, email, error_code="workflow_start_failed",
                                              run_id=None)
        raise ApiError(503, "worker_runtime_unavailable",
                       "Temporal did not accept the email; nothing was sent.") from None
    accepted = FollowUpEmailAccepted(job_key=job_key, round=email.round,
                                     workflow_id=email.workflow_id,
                                     first_execution_run_id=handle.first_execution_run_id)
    return JSONResponse(accepted.model_dump(by_alias=True), status_code=202)


# -- what is working -----------------------------------------------------------------------


def _figure(figures: domain.GroupFigures) -> FigureOut:
    return FigureOut.model_validate(figures.__dict__)


@router.get("/v1/insights", response_model=InsightsOut, responses=error_responses(401))
async def insights(request: Request) -> InsightsOut:
    """Reply rate, interview rate, time to the first reply and ghosting, overall and by
    source, fit-score band, role family and résumé template; a group under 5 applications
    gets no figures (``withheld``)."""
    context = request.app.state.context
    async with context.db.read_snapshot() as conn:
        facts = store.insight_facts(await store.board(conn))
    today, ghost_days = _today(), context.settings.ghost_after_days
    return InsightsOut(
        today=today.isoformat(), min_group_size=domain.MIN_GROUP_SIZE,
        ghost_after_days=ghost_days, caption=domain.ghosting_caption(ghost_days),
        overall=_figure(domain.group_figures("All applications", facts, today, ghost_days)),
        dimensions=[DimensionOut(key=key, title=title, groups=[
            _figure(g) for g in domain.grouped_figures(key, facts, today, ghost_days)])
            for key, title in domain.DIMENSIONS.items()])
