"""POST /v1/pipeline/actions/run-stage: start a global stage run."""

from __future__ import annotations

import asyncio
from typing import Literal

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import ConfigDict, Field
from temporalio.exceptions import WorkflowAlreadyStartedError

from backend.api.errors import ApiError, error_responses
from backend.api.security import require_token
from backend.config import TASK_QUEUE
from backend.domain.model import CamelModel
from backend.store.stages import runnable_jobs
from backend.temporal.contracts import DiscoverInput
from backend.temporal.dispatch import stages_from, start_preparation
from backend.temporal.workflows.discover import DISCOVER_WORKFLOW_ID

router = APIRouter(tags=["pipeline"], dependencies=[Depends(require_token)])


class RunStageRequest(CamelModel):
    model_config = ConfigDict(extra="forbid")

    stage: Literal["discover", "enrich", "score", "tailor", "cover", "pdf"] = Field(
        description="discover starts DiscoverWorkflow; a per-job stage starts preparation "
        "(from that stage on) for every job whose stage is pending or failed"
    )
    source_ids: list[str] | None = Field(
        default=None, min_length=1, description="Only these configured sources (default: all enabled)"
    )


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


@router.post(
    "/v1/pipeline/actions/run-stage",
    status_code=202,
    response_model=RunStageAccepted,
    responses=error_responses(400, 401, 403, 422, 503),
)
async def run_stage(body: RunStageRequest, request: Request) -> RunStageAccepted:
    context = request.app.state.context
    if body.source_ids is not None:
        known = {source.id for source in context.settings.sources}
        unknown = sorted(set(body.source_ids) - known)
        if unknown:
            raise ApiError(422, "unknown_source", f"Unknown source ids: {', '.join(unknown)}")
    client = await context.require_runtime()
    if body.stage != "discover":
        return await _run_job_stage_everywhere(context, client, body.stage)
    run_id, already = await _start_discover(context, client, body.source_ids)
    return RunStageAccepted(
        stage=body.stage, workflow_id=DISCOVER_WORKFLOW_ID, run_id=DISCOVER_WORKFLOW_ID,
        first_execution_run_id=run_id, already_running=already,
    )


CLOSING_GRACE_S = 10.0


async def _start_discover(context, client, source_ids) -> tuple[str, bool]:
    """One Discover at a time: while one runs, report the execution that owns the
    deterministic id. A run that has already recorded its outcome but whose workflow has
    not closed yet (its last step is returning) is waited for, so a Discover requested
    right after the previous one finished starts a new run instead of naming the old one."""
    deadline = asyncio.get_running_loop().time() + CLOSING_GRACE_S
    while True:
        try:
            handle = await client.start_workflow(
                "DiscoverWorkflow", DiscoverInput(source_ids=source_ids),
                id=DISCOVER_WORKFLOW_ID, task_queue=TASK_QUEUE,
            )
            return handle.first_execution_run_id, False
        except WorkflowAlreadyStartedError as running:
            row = await context.db.fetchone(
                "SELECT status FROM discovery_runs WHERE discover_run_id = ?", (running.run_id,))
            finishing = row is not None and row[0] != "running"
            if not finishing or asyncio.get_running_loop().time() > deadline:
                return running.run_id, True
            await asyncio.sleep(0.1)


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
