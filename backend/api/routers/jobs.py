"""Jobs: the filtered list, one job's detail, and the per-job actions."""

from __future__ import annotations

import json
from datetime import date
from typing import TYPE_CHECKING, Any, Literal

from fastapi import APIRouter, Body, Depends, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import ConfigDict, Field, ValidationError

from backend.api.errors import ApiError, UnsupportedClaimOut, error_responses, noop_responses
from backend.api.security import require_token
from backend.domain.fit import FitLedger
from backend.domain.fit_reasons import reasons_from_json
from backend.domain.model import CamelModel
from backend.domain.stages import ACTIVE_STATUSES, STAGES, StageStatus
from backend.pipeline.coverage import keyword_coverage
from backend.pipeline.documents import CoverLetterDoc, ResumeDoc
from backend.store import applications
from backend.store import materials as materials_store
from backend.store import stages as stage_store
from backend.store.discovery import list_runs
from backend.store.job_queries import JobFilter, SortKey, job_detail, list_jobs
from backend.store.jobs import mark_prepare_anyway, read_job
from backend.store.profile import read_profile
from backend.temporal.contracts import prep_workflow_id
from backend.temporal.dispatch import stages_from, start_preparation

if TYPE_CHECKING:  # the gate and the writers load with the first edit, not at API start
    from backend.pipeline.material_edits import EditClaim, EditFacts

router = APIRouter(tags=["jobs"], dependencies=[Depends(require_token)])

JOB_KEY = Path(pattern=r"^job_[0-9a-f]{24}$", description="The job's stable JobId")
StageName = Literal["enrich", "score", "tailor", "cover", "pdf"]
RETRYABLE_STATUSES = frozenset({"failed", "exhausted", "blocked", "canceled"})


class JobSummary(CamelModel):
    job_id: str
    url: str
    title: str
    company: str
    location: str | None
    remote: str | None
    salary_min: int | None
    salary_max: int | None
    salary_currency: str | None
    posted_at: str | None
    first_seen_at: str
    user_status: str | None
    score: int | None
    fit_reasons: list[str] = Field(default_factory=list,
                                   description="The fit checklist's top lines")
    stages: dict[str, str]


class JobPage(CamelModel):
    total: int
    limit: int
    offset: int
    items: list[JobSummary]


@router.get("/v1/jobs", response_model=JobPage, responses=error_responses(401, 422))
async def get_jobs(
    request: Request,
    q: str | None = Query(default=None, max_length=200),
    remote: Literal["remote", "hybrid", "onsite", "unknown"] | None = None,
    min_score: int | None = Query(default=None, alias="minScore", ge=0, le=100),
    stage: StageName | None = None,
    stage_status: StageStatus | None = Query(
        default=None, alias="stageStatus",
        description="With ``stage``: that stage's status; alone: any stage in that status"),
    user_status: Literal["applied", "skipped", "none"] | None = Query(
        default=None, alias="userStatus", description="``none``: neither applied nor skipped"),
    sort: SortKey = "score",
    order: Literal["asc", "desc"] = "desc",
    limit: int = Query(default=50, ge=1, le=500),
    offset: int = Query(default=0, ge=0, le=10_000_000),
) -> JobPage:
    filters = JobFilter(q=q, remote=remote, min_score=min_score, stage=stage,
                        stage_status=stage_status, user_status=user_status)
    total, rows = await list_jobs(request.app.state.context.db, filters, sort=sort,
                                  descending=order == "desc", limit=limit, offset=offset)
    items = [JobSummary.model_validate({**row, "fit_reasons": reasons_from_json(row.pop("ledger"))})
             for row in rows]
    return JobPage(total=total, limit=limit, offset=offset, items=items)


async def _job_or_404(request: Request, job_key: str) -> dict:
    detail = await job_detail(request.app.state.context.db, job_key)
    if detail is None:
        raise ApiError(404, "job_not_found", f"No job {job_key}.")
    return detail


@router.get("/v1/jobs/{job_key}", responses=error_responses(401, 404, 422))
async def get_job(request: Request, job_key: str = JOB_KEY) -> dict[str, Any]:
    """Stages (canonical job_stage_states), enrichment, score (with its evidence ledger),
    materials, artifacts, and where the job stands against the fit threshold."""
    detail = await _job_or_404(request, job_key)
    detail["fit_threshold"] = _fit_threshold(request, detail)
    for key, model in (("resume", ResumeDoc), ("cover_letter", CoverLetterDoc)):
        if detail[key]:  # materials stored in an older shape read as today's
            detail[key]["content"] = model.model_validate(detail[key]["content"]).model_dump(
                mode="json", by_alias=True)
    detail["keyword_coverage"] = await _keyword_coverage(request, detail)
    return _camel(detail)


async def _keyword_coverage(request: Request, detail: dict) -> list[dict[str, Any]]:
    """The posting's must-have terms: proven by the profile as it is now? in the résumé?
    Empty without a score, a ledger or a saved profile."""
    ledger = (detail["score"] or {}).get("ledger")
    if not ledger:
        return []
    async with request.app.state.context.db.read_snapshot() as conn:
        saved = await read_profile(conn)
    if saved is None:
        return []
    resume = ResumeDoc.model_validate(detail["resume"]["content"]) if detail["resume"] else None
    coverage = keyword_coverage(FitLedger.model_validate(ledger), saved[1], resume, today=date.today())
    return [{"term": c.term, "proven": c.proven, "in_resume": c.in_resume} for c in coverage]


def _fit_threshold(request: Request, detail: dict) -> dict:
    """``below`` is null while the job has no score: unknown is not "above"."""
    minimum = request.app.state.context.settings.min_fit_score
    score = detail["score"]["score"] if detail["score"] else None
    below = None if score is None else score < minimum
    return {"min_fit_score": minimum, "below": below,
            "prepare_anyway": detail.get("prepare_anyway_at") is not None}


def _camel(value: Any) -> Any:
    if isinstance(value, dict):
        return {_to_camel(k): _camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_camel(v) for v in value]
    return value


def _to_camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(part.title() for part in rest)


class JobStageRequest(CamelModel):
    model_config = ConfigDict(extra="forbid")
    stage: StageName


class RetryStageRequest(JobStageRequest):
    run_after: bool = False


class StageDispatch(CamelModel):
    job_id: str
    stage: str
    workflow_id: str | None = None
    first_execution_run_id: str | None = None
    already_running: bool = False
    noop_reason: str | None = None


def _stage_status(detail: dict, stage: str) -> str:
    return next((s["status"] for s in detail["stages"] if s["stage"] == stage), "pending")


def _active(detail: dict) -> bool:
    return any(s["status"] in ACTIVE_STATUSES for s in detail["stages"])


async def _dispatch(request: Request, job_id: str, stage: str, *, force: list[str]) -> JSONResponse:
    client = await request.app.state.context.require_runtime()
    started = await start_preparation(
        client, job_id, stages=stages_from(stage), force=force,
        heartbeat_timeout_s=request.app.state.context.settings.stage_heartbeat_timeout_s)
    body = StageDispatch(job_id=job_id, stage=stage, workflow_id=started.workflow_id,
                         first_execution_run_id=started.first_execution_run_id,
                         already_running=started.already_running)
    return JSONResponse(body.model_dump(by_alias=True), status_code=202)


def _noop(job_id: str, stage: str, reason: str) -> JSONResponse:
    body = StageDispatch(job_id=job_id, stage=stage, noop_reason=reason)
    return JSONResponse(body.model_dump(by_alias=True), status_code=200)


@router.post("/v1/jobs/{job_key}/actions/run-stage", response_model=StageDispatch,
             status_code=202,
             responses={**noop_responses(StageDispatch), **error_responses(401, 404, 422, 503)})
async def run_job_stage(body: JobStageRequest, request: Request, job_key: str = JOB_KEY):
    """202 with run identity, or 200 with ``noopReason`` when there is nothing to do."""
    detail = await _job_or_404(request, job_key)
    if _active(detail):
        return _noop(job_key, body.stage, "preparation_running")
    if _stage_status(detail, body.stage) == "succeeded":
        return _noop(job_key, body.stage, "already_succeeded")
    return await _dispatch(request, job_key, body.stage, force=[])


@router.post("/v1/jobs/{job_key}/actions/retry-stage", response_model=StageDispatch,
             responses={202: {"model": StageDispatch, "description": "runAfter: the stage was "
                              "reset and its preparation started"},
                        **error_responses(401, 404, 409, 422, 503)})
async def retry_job_stage(body: RetryStageRequest, request: Request, job_key: str = JOB_KEY):
    """``runAfter: false`` is a local reset; ``runAfter: true`` checks worker readiness
    before touching anything, so a 503 leaves the failed stage and its events intact."""
    context = request.app.state.context
    detail = await _job_or_404(request, job_key)
    status = _stage_status(detail, body.stage)
    if status not in RETRYABLE_STATUSES:
        raise ApiError(409, "stage_not_retryable",
                       f"The {body.stage} stage is {status}; only failed, exhausted, blocked "
                       "or canceled stages can be retried.")
    if body.run_after:
        await context.require_runtime()
    async with context.db.transaction() as conn:
        await stage_store.reset(conn, job_key, body.stage, source="retry_stage")
    if not body.run_after:
        return JSONResponse(StageDispatch(job_id=job_key, stage=body.stage)
                            .model_dump(by_alias=True), status_code=200)
    return await _dispatch(request, job_key, body.stage, force=[])


@router.post("/v1/jobs/{job_key}/actions/rescore", response_model=StageDispatch,
             status_code=202, responses=error_responses(401, 404, 409, 503))
async def rescore(request: Request, job_key: str = JOB_KEY):
    return await _policy_rerun(request, job_key, ["score"])


class RetailorRequest(CamelModel):
    model_config = ConfigDict(extra="forbid")
    discard_edits: bool = Field(default=False, description="Replace the user's own edits")


@router.post("/v1/jobs/{job_key}/actions/retailor", response_model=StageDispatch,
             status_code=202, responses=error_responses(401, 404, 409, 422, 503))
async def retailor(request: Request, job_key: str = JOB_KEY, body: RetailorRequest | None = None):
    """409 ``materials_edited`` when the user edited the résumé or letter, unless
    ``discardEdits`` says to replace them (the desktop asks first)."""
    async with request.app.state.context.db.read_snapshot() as conn:
        edited = await materials_store.has_edits(conn, job_key)
    if edited and not (body and body.discard_edits):
        raise ApiError(409, "materials_edited", "You edited this résumé or letter; re-tailoring "
                       "replaces your edits. Confirm to go ahead.")
    return await _policy_rerun(request, job_key, ["tailor", "cover", "pdf"])


MaterialKind = Literal["resume", "cover-letter"]
MATERIAL_MODELS = {"resume": ResumeDoc, "cover-letter": CoverLetterDoc}


class MaterialSaved(StageDispatch):
    kind: str
    generation: int
    content: dict[str, Any] = Field(description="The document as stored: a letter paragraph "
                                    "the user changed rests on what its new words name")
    kept_claims: list[UnsupportedClaimOut] = Field(
        default_factory=list, description="The claims the profile does not hold that the "
        "user kept (keepUnsupported)")


async def _edit_facts(request: Request, job_key: str, stored_kind: str) -> EditFacts:
    from backend.pipeline.material_edits import EditFacts, job_text

    async with request.app.state.context.db.read_snapshot() as conn:
        job = await read_job(conn, job_key)
        stored_profile = await read_profile(conn)
        enrichment = await materials_store.read_enrichment(conn, job_key)
        score = await materials_store.latest_score(conn, job_key)
        resume = await materials_store.latest_material(conn, job_key, "resume")
        previous = await materials_store.latest_material(conn, job_key, stored_kind)
    return EditFacts(
        profile=stored_profile[1] if stored_profile else None,
        job=job_text(job, enrichment.description_text if enrichment else None) if job else None,
        ledger=FitLedger.model_validate(score.ledger) if score and score.ledger else None,
        resume=resume[1] if resume else None, previous=previous[1] if previous else None)


def unsupported_message(claims: list[EditClaim]) -> str:
    named = "; ".join(f"“{c.claim}” — {c.why}" for c in claims[:5])
    more = f" (and {len(claims) - 5} more)" if len(claims) > 5 else ""
    return (f"Your edit states what your profile does not hold: {named}{more}. Add it to your "
            "profile, or remove it; to keep it, save again with keepUnsupported=true. "
            "Nothing was saved.")


@router.put("/v1/jobs/{job_key}/materials/{kind}", response_model=MaterialSaved, status_code=202,
            responses=error_responses(401, 404, 409, 422, 503))
async def save_material(request: Request, kind: MaterialKind, body: dict[str, Any] = Body(...),
                        job_key: str = JOB_KEY,
                        keep_unsupported: bool = Query(
                            False, alias="keepUnsupported",
                            description="Save even with claims the profile does not hold "
                            "(the user can back them up); they are recorded on the generation")):
    """The user's edit of the résumé or letter: checked by the truthfulness gate, kept as a
    new generation, then its PDFs are rendered again. A claim the profile does not hold is
    answered with 409 ``unsupported_claims`` (``error.unsupportedClaims``: claim and why),
    and nothing is saved, unless ``keepUnsupported`` says the user keeps it. The worker is
    checked before anything is written, so a 503 saves nothing."""
    context = request.app.state.context
    detail = await _job_or_404(request, job_key)
    if _active(detail):
        raise ApiError(409, "preparation_running", "This job is being prepared right now.")
    try:
        document = MATERIAL_MODELS[kind].model_validate({**body, "edited": True})
    except ValidationError as error:
        raise ApiError(422, "validation_error", "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}"
            for e in error.errors()[:5])) from None
    from backend.pipeline.material_edits import checked_edit

    stored_kind = kind.replace("-", "_")
    document, claims = checked_edit(document, await _edit_facts(request, job_key, stored_kind))
    if claims and not keep_unsupported:
        raise ApiError(409, "unsupported_claims", unsupported_message(claims),
                       unsupported_claims=[c.as_json() for c in claims])
    await context.require_runtime()
    kept = [c.as_json() for c in claims]
    content = document.model_dump(mode="json", by_alias=True)
    generation = await materials_store.record_user_edit(
        context.db, job_key, kind=stored_kind, content=content, kept_claims=kept)
    dispatched = await _dispatch(request, job_key, "pdf", force=["pdf"])
    body_out = json.loads(dispatched.body)
    return JSONResponse({**body_out, "kind": kind, "generation": generation, "content": content,
                         "keptClaims": kept}, status_code=202)


@router.post("/v1/jobs/{job_key}/actions/render-pdf", response_model=StageDispatch,
             status_code=202, responses=error_responses(401, 404, 409, 503))
async def render_pdf(request: Request, job_key: str = JOB_KEY):
    """Render the résumé and letter PDFs again (e.g. after a template change)."""
    return await _policy_rerun(request, job_key, ["pdf"])


@router.post("/v1/jobs/{job_key}/actions/prepare-anyway", response_model=StageDispatch,
             status_code=202, responses=error_responses(401, 404, 409, 503))
async def prepare_anyway(request: Request, job_key: str = JOB_KEY):
    """Tailor, Cover and PDF for a job below the fit threshold: the user's call, kept for
    this job (it may then enter Apply Review). Checks the worker before writing anything."""
    context = request.app.state.context
    detail = await _job_or_404(request, job_key)
    if _active(detail):
        raise ApiError(409, "preparation_running", "This job is being prepared right now.")
    if detail["score"] is None:
        raise ApiError(409, "not_scored", "This job has no fit score yet; it is prepared "
                       "as soon as it is scored.")
    await context.require_runtime()
    async with context.db.transaction() as conn:
        await mark_prepare_anyway(conn, job_key)
    return await _dispatch(request, job_key, "tailor", force=[])


async def _policy_rerun(request: Request, job_key: str, forced: list[str]):
    detail = await _job_or_404(request, job_key)
    if _active(detail):
        raise ApiError(409, "preparation_running", "This job is being prepared right now.")
    return await _dispatch(request, job_key, forced[0], force=forced)


class MarkRequest(CamelModel):
    model_config = ConfigDict(extra="forbid")
    user_status: Literal["applied", "skipped"] | None


@router.post("/v1/jobs/{job_key}/actions/mark", responses=error_responses(401, 404, 422))
async def mark_job(body: MarkRequest, request: Request, job_key: str = JOB_KEY) -> dict:
    """Mark applied / skipped (or clear the mark): a local, synchronous command."""
    await _job_or_404(request, job_key)
    context = request.app.state.context
    async with context.db.transaction() as conn:
        # "applied" puts the job on the application board; clearing it takes it off.
        await applications.set_user_status(
            conn, job_key, body.user_status, via="job_action",
            policy=applications.policy_from_settings(context.settings))
    return {"jobId": job_key, "userStatus": body.user_status}


class CancelRequested(CamelModel):
    job_id: str
    workflow_id: str
    cancellation_requested: bool = True


@router.post("/v1/jobs/{job_key}/actions/cancel", status_code=202, response_model=CancelRequested,
             responses={**noop_responses(StageDispatch), **error_responses(401, 404, 503)})
async def cancel_job(request: Request, job_key: str = JOB_KEY):
    """Requests cancellation of this job's running preparation; idempotent."""
    detail = await _job_or_404(request, job_key)
    if not _active(detail):
        return _noop(job_key, "", "nothing_running")
    client = await request.app.state.context.require_runtime()
    handle = client.get_workflow_handle(prep_workflow_id(job_key))
    await handle.cancel()
    body = CancelRequested(job_id=job_key, workflow_id=handle.id)
    return JSONResponse(body.model_dump(by_alias=True), status_code=202)


class DiscoveryRunSummary(CamelModel):
    discover_workflow_id: str
    discover_run_id: str
    status: str
    families: list[str]
    progress_current: int
    progress_total: int
    progress: dict
    jobs_new: int
    jobs_observed: int
    error_code: str | None
    started_at: str
    finished_at: str | None


@router.get("/v1/discovery-runs", response_model=list[DiscoveryRunSummary],
            responses=error_responses(401, 422))
async def get_discovery_runs(
    request: Request, limit: int = Query(default=20, ge=1, le=200)
) -> list[DiscoveryRunSummary]:
    rows = await list_runs(request.app.state.context.db, limit=limit)
    return [
        DiscoveryRunSummary(
            **{key: row[key] for key in row if key not in ("families_json", "progress_json")},
            families=json.loads(row["families_json"]),
            progress=json.loads(row["progress_json"]),
        )
        for row in rows
    ]


__all__ = ["router", "STAGES"]
