"""POST /v1/pipeline/actions/run-stage: start a global stage run."""

from __future__ import annotations

import asyncio
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import ConfigDict, Field, model_validator
from temporalio.client import WorkflowContinuedAsNewError, WorkflowFailureError
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError

from backend.api.errors import ApiError, error_responses, noop_responses, rule_error
from backend.api.partial import REQUEST_CONFIG
from backend.api.security import require_token
from backend.config import PREP_TASK_QUEUE, TASK_QUEUE
from backend.domain.model import CamelModel
from backend.pipeline.batch import (
    MAX_BATCH_JOBS,
    MAX_WORKERS,
    batch_stages,
    batch_workflow_id,
)
from backend.store import discovery as discovery_runs
from backend.store.stages import runnable_jobs
from backend.store.staleness import (
    busy_jobs,
    existing_jobs,
    stale_material_jobs,
    stale_score_jobs,
)
from backend.temporal.batch_contracts import BatchInput
from backend.temporal.contracts import DiscoverInput
from backend.temporal.dispatch import stages_from, start_policy_rerun, start_preparation
from backend.temporal.start_contracts import DISCOVER_WORKFLOW_ID

router = APIRouter(tags=["pipeline"], dependencies=[Depends(require_token)])


# The body is a union on ``stage``, so the document says which stage takes which keys:
# discover takes sourceIds; tailor and cover take a selected batch (jobKeys, workers);
# enrich, score and pdf take nothing else. Keys a stage does not take are refused with the
# typed codes clients already know, before pydantic's generic "extra input" error.
BATCH_KEYS = ("jobKeys", "workers")


class NoBatchRun(CamelModel):
    """A stage that takes no selected batch."""

    model_config = REQUEST_CONFIG

    @model_validator(mode="before")
    @classmethod
    def _refuse_batch_keys(cls, data: object) -> object:
        if isinstance(data, dict) and any(key in data for key in BATCH_KEYS):
            raise rule_error("batch_stage_unsupported",
                             "A selected batch runs tailor or cover.", fields=["stage"])
        return data


class DiscoverRun(NoBatchRun):
    """Start DiscoverWorkflow."""

    stage: Literal["discover"]
    source_ids: list[str] | None = Field(
        default=None, min_length=1, description="Only these configured sources (default: all enabled)"
    )


class JobStageRun(NoBatchRun):
    """Start preparation from this stage on for every job whose stage is pending or failed."""

    stage: Literal["enrich", "score", "pdf"]


class BatchableStageRun(CamelModel):
    """Without ``jobKeys``: start preparation from this stage on for every job whose stage
    is pending or failed. With them: a selected batch, the stage and everything downstream
    for exactly these jobs, in waves of ``workers``."""

    model_config = ConfigDict(**REQUEST_CONFIG, json_schema_extra={
        "dependentRequired": {"workers": ["jobKeys"]}})

    stage: Literal["tailor", "cover"]
    job_keys: list[str] | None = Field(
        default=None, min_length=1, max_length=MAX_BATCH_JOBS,
        description="A selected batch: these stored jobs")
    workers: int | None = Field(
        default=None, ge=1, le=MAX_WORKERS,
        description="Jobs of the selected batch in flight at once; needs jobKeys (default: "
        "the worker's activity slots, at most 16)")

    @model_validator(mode="after")
    def _workers_need_jobs(self) -> BatchableStageRun:
        if self.workers is not None and self.job_keys is None:
            raise rule_error("workers_without_jobs",
                             "workers applies to a selected batch: send jobKeys too.",
                             fields=["jobKeys"])
        return self


RunStageRequest = Annotated[DiscoverRun | JobStageRun | BatchableStageRun,
                            Field(discriminator="stage")]


class RunStageAccepted(CamelModel):
    stage: str
    workflow_id: str | None = None
    run_id: str | None = Field(default=None, description="Compatibility handle: the workflow id")
    first_execution_run_id: str | None = Field(
        default=None, description="The exact Temporal execution id")
    already_running: bool = False
    started_workflows: int | None = Field(
        default=None, description="Per-job stages: preparation workflows started")
    noop_reason: str | None = None
    workers: int | None = Field(default=None, description="Selected batch: jobs in flight at once")
    job_count: int | None = Field(default=None, description="Selected batch: jobs it runs")
    busy_job_keys: list[str] | None = Field(
        default=None, description="Selected jobs left out because they are being prepared")


@router.post(
    "/v1/pipeline/actions/run-stage",
    status_code=202,
    response_model=RunStageAccepted,
    responses={**noop_responses(RunStageAccepted), **error_responses(400, 401, 403, 422, 503)},
)
async def run_stage(body: RunStageRequest, request: Request) -> RunStageAccepted:
    context = request.app.state.context
    if isinstance(body, BatchableStageRun) and body.job_keys is not None:
        return await _run_selected_batch(context, body)
    if isinstance(body, DiscoverRun) and body.source_ids is not None:
        known = {source.id for source in context.settings.sources}
        unknown = sorted(set(body.source_ids) - known)
        if unknown:
            raise ApiError(422, "unknown_source", f"Unknown source ids: {', '.join(unknown)}")
    client = await context.require_runtime()
    if not isinstance(body, DiscoverRun):
        return await _run_job_stage_everywhere(context, client, body.stage)
    run_id, already = await _start_discover(context, client, body.source_ids)
    return RunStageAccepted(
        stage=body.stage, workflow_id=DISCOVER_WORKFLOW_ID, run_id=DISCOVER_WORKFLOW_ID,
        first_execution_run_id=run_id, already_running=already,
    )


CLOSING_GRACE_S = 30.0


async def _start_discover(context, client, source_ids) -> tuple[str, bool]:
    """One Discover at a time: while one runs, report the execution that owns the
    deterministic id. A run that has already recorded its outcome but whose workflow has
    not closed yet (its last workflow task is still queued: seconds on a busy worker) is
    waited for, on Temporal's own close, so a Discover requested right after the previous
    one finished starts a new run instead of naming the old one."""
    while True:
        try:
            handle = await client.start_workflow(
                "DiscoverWorkflow", DiscoverInput(source_ids=source_ids),
                id=DISCOVER_WORKFLOW_ID, task_queue=TASK_QUEUE,
            )
            return handle.first_execution_run_id, False
        except WorkflowAlreadyStartedError as running:
            status = await discovery_runs.run_status(context.db, running.run_id)
            finishing = status is not None and status != "running"
            if not finishing or not await _closed_within(client, running.run_id, CLOSING_GRACE_S):
                return running.run_id, True


async def _closed_within(client, run_id: str, timeout: float) -> bool:
    """True once that Discover execution has closed (however it ended), False if it is
    still open after ``timeout``."""
    handle = client.get_workflow_handle(DISCOVER_WORKFLOW_ID, run_id=run_id)
    try:
        await asyncio.wait_for(handle.result(follow_runs=False), timeout)
    except (TimeoutError, RPCError):  # not closed yet, or Temporal cannot tell: still named
        return False
    except (WorkflowFailureError, WorkflowContinuedAsNewError):  # closed all the same
        return True
    return True


async def _run_job_stage_everywhere(context, client, stage: str):
    """Start preparation from ``stage`` for every job whose stage is runnable and that
    nobody is preparing right now. 200 with a reason when there is nothing to do."""
    job_ids = await runnable_jobs(context.db, stage)
    if not job_ids:
        body = RunStageAccepted(stage=stage, started_workflows=0, noop_reason="nothing_eligible")
        return JSONResponse(body.model_dump(by_alias=True), status_code=200)
    started = 0
    for job_id in job_ids:
        result = await start_preparation(
            client, job_id, stages=stages_from(stage),
            heartbeat_timeout_s=context.settings.stage_heartbeat_timeout_s)
        started += 0 if result.already_running else 1
    return RunStageAccepted(stage=stage, started_workflows=started)



# -- selected Tailor / Cover batches ---------------------------------------------------------


async def _run_selected_batch(context, body: BatchableStageRun):
    """Start ``BatchStageWorkflow`` for exactly the selected jobs. Unknown jobs are a 422
    that starts nothing; selected jobs that are being prepared right now are left out and
    named."""
    assert body.job_keys is not None  # the caller's condition
    job_ids = list(dict.fromkeys(body.job_keys))
    known = await existing_jobs(context.db, job_ids)
    unknown = [job for job in job_ids if job not in known]
    if unknown:
        raise ApiError(422, "unknown_job", f"Unknown job keys: {', '.join(unknown[:20])}",
                       fields=["jobKeys"])
    busy = await busy_jobs(context.db, job_ids)
    selected = [job for job in job_ids if job not in busy]
    if not selected:
        noop = RunStageAccepted(stage=body.stage, started_workflows=0,
                                noop_reason="nothing_eligible", busy_job_keys=sorted(busy))
        return JSONResponse(noop.model_dump(by_alias=True), status_code=200)
    client = await context.require_runtime()
    workers = body.workers or min(context.settings.worker_activity_slots, MAX_WORKERS)
    workflow_id = batch_workflow_id(body.stage, selected)
    already = False
    try:
        handle = await client.start_workflow(
            "BatchStageWorkflow",
            BatchInput(stages=batch_stages(body.stage), job_ids=selected, workers=workers,
                       heartbeat_timeout_s=context.settings.stage_heartbeat_timeout_s),
            id=workflow_id, task_queue=PREP_TASK_QUEUE)
        run_id = handle.first_execution_run_id
    except WorkflowAlreadyStartedError as running:
        run_id, already = running.run_id, True
    return RunStageAccepted(
        stage=body.stage, workflow_id=workflow_id, run_id=workflow_id,
        first_execution_run_id=run_id, already_running=already,
        started_workflows=0 if already else 1, workers=workers, job_count=len(selected),
        busy_job_keys=sorted(busy))


# -- stale-policy bulk actions --------------------------------------------------------------


class PolicyActionAccepted(CamelModel):
    action: Literal["rescore_stale", "retailor_stale"]
    stale_jobs: int = Field(description="Jobs stale under the current policy")
    started_workflows: int = Field(
        description="Preparation workflows the batch starts for them (a job whose "
        "preparation is already running by then keeps that run)")
    job_keys: list[str]
    noop_reason: str | None = None
    workflow_id: str | None = Field(
        default=None, description="The batch: PolicyRerunWorkflow, policy-rerun-{action}-{digest}")
    run_id: str | None = Field(default=None, description="Compatibility handle: the workflow id")
    first_execution_run_id: str | None = Field(
        default=None, description="The exact Temporal execution id of the batch")
    already_running: bool = Field(
        default=False, description="A batch of the same action and jobs was already running")
    job_count: int | None = Field(default=None, description="Jobs the batch prepares")


@router.post("/v1/pipeline/actions/rescore-stale", status_code=202, response_model=PolicyActionAccepted,
             responses={**noop_responses(PolicyActionAccepted), **error_responses(401, 403, 503)})
async def rescore_stale(request: Request):
    """Rescore every job whose score predates the saved profile (then Tailor / Cover / PDF
    run only where they are not yet done). 202 at once with the batch that starts the
    preparations; 200 with ``noopReason`` when nothing is stale."""
    context = request.app.state.context
    job_ids = await stale_score_jobs(context.db)
    return await _policy_rerun(context, "rescore_stale", job_ids)


@router.post("/v1/pipeline/actions/retailor-stale", status_code=202, response_model=PolicyActionAccepted,
             responses={**noop_responses(PolicyActionAccepted), **error_responses(401, 403, 503)})
async def retailor_stale(request: Request):
    """Re-tailor (resume, cover letter, PDFs) every job whose materials predate the saved
    profile, or whose Tailor was skipped below a fit threshold its score now meets."""
    context = request.app.state.context
    job_ids = await stale_material_jobs(context.db,
                                        min_fit_score=context.settings.min_fit_score)
    return await _policy_rerun(context, "retailor_stale", job_ids)


async def _policy_rerun(context, action: str, job_ids: list[str]):
    """One Temporal call, whatever the number of jobs: the batch workflow fans out."""
    if not job_ids:
        noop = PolicyActionAccepted(action=action, stale_jobs=0, started_workflows=0,
                                    job_keys=[], noop_reason="nothing_stale")
        return JSONResponse(noop.model_dump(by_alias=True), status_code=200)
    client = await context.require_runtime()
    batch = await start_policy_rerun(
        client, action, job_ids, heartbeat_timeout_s=context.settings.stage_heartbeat_timeout_s)
    return PolicyActionAccepted(
        action=action, stale_jobs=len(job_ids), started_workflows=len(job_ids),
        job_keys=job_ids, workflow_id=batch.workflow_id, run_id=batch.workflow_id,
        first_execution_run_id=batch.first_execution_run_id,
        already_running=batch.already_running, job_count=len(job_ids))
