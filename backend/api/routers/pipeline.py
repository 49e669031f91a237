"""POST /v1/pipeline/actions/run-stage: start a global stage run."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends, Request
from pydantic import ConfigDict, Field
from temporalio.exceptions import WorkflowAlreadyStartedError

from backend.api.errors import ApiError, error_responses
from backend.api.security import require_token
from backend.config import TASK_QUEUE
from backend.domain.model import CamelModel
from backend.temporal.contracts import DiscoverInput
from backend.temporal.workflows.discover import DISCOVER_WORKFLOW_ID

router = APIRouter(tags=["pipeline"], dependencies=[Depends(require_token)])


class RunStageRequest(CamelModel):
    model_config = ConfigDict(extra="forbid")

    stage: Literal["discover"] = Field(description="The stage to run; more stages follow.")
    source_ids: list[str] | None = Field(
        default=None, min_length=1, description="Only these configured sources (default: all enabled)"
    )


class RunStageAccepted(CamelModel):
    stage: str
    workflow_id: str
    run_id: str = Field(description="Compatibility handle: the workflow id")
    first_execution_run_id: str = Field(description="The exact Temporal execution id")
    already_running: bool


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
    try:
        handle = await client.start_workflow(
            "DiscoverWorkflow",
            DiscoverInput(source_ids=body.source_ids),
            id=DISCOVER_WORKFLOW_ID,
            task_queue=TASK_QUEUE,
        )
        run_id, already = handle.first_execution_run_id, False
    except WorkflowAlreadyStartedError as running:
        # One Discover at a time: report the execution that owns the deterministic id.
        run_id, already = running.run_id, True
    return RunStageAccepted(
        stage=body.stage, workflow_id=DISCOVER_WORKFLOW_ID, run_id=DISCOVER_WORKFLOW_ID,
        first_execution_run_id=run_id, already_running=already,
    )
