"""Supervised contact research for one job: start it (only ever on the user's request)
and read its tasks and candidates from the contact projections."""

from __future__ import annotations

import logging

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from temporalio.exceptions import WorkflowAlreadyStartedError

from backend.api.errors import ApiError, error_responses
from backend.api.routers.jobs import JOB_KEY
from backend.api.security import require_token
from backend.config import PREP_TASK_QUEUE
from backend.domain.model import CamelModel
from backend.projections.contacts import job_contacts
from backend.store import contacts as store
from backend.store.jobs import job_exists
from backend.temporal.start_contracts import CONTACT_RESEARCH_WORKFLOW_TYPE as WORKFLOW_TYPE
from backend.temporal.start_contracts import ContactResearchInput

log = logging.getLogger(__name__)

router = APIRouter(tags=["contacts"], dependencies=[Depends(require_token)])


class ResearchAccepted(CamelModel):
    job_id: str
    task_id: str
    workflow_id: str
    first_execution_run_id: str
    already_running: bool


async def _job_exists(request: Request, job_key: str) -> None:
    if not await job_exists(request.app.state.context.db, job_key):
        raise ApiError(404, "job_not_found", f"No job {job_key}.")


@router.post("/v1/jobs/{job_key}/actions/research-contacts", response_model=ResearchAccepted,
             status_code=202, responses=error_responses(401, 404, 422, 503))
async def research_contacts(request: Request, job_key: str = JOB_KEY) -> JSONResponse:
    """Start ContactResearchWorkflow for this job (or name the one already running)."""
    context = request.app.state.context
    await _job_exists(request, job_key)
    client = await context.require_runtime()  # 503 before anything durable
    async with context.db.transaction() as conn:
        task, _ = await store.request_task(conn, job_key)
    try:
        handle = await client.start_workflow(
            WORKFLOW_TYPE, ContactResearchInput(job_id=job_key, task_id=task.task_id),
            id=task.workflow_id, task_queue=PREP_TASK_QUEUE)
        run_id, already = handle.first_execution_run_id, False
    except WorkflowAlreadyStartedError as running:
        run_id, already = running.run_id, True
    except Exception as error:  # noqa: BLE001 - Temporal went away after the readiness check
        log.warning("contact research start failed: %s", type(error).__name__)
        await _start_failed(context, task)
        raise ApiError(503, "worker_runtime_unavailable",
                       "Temporal did not accept the research run; nothing is running.") from None
    body = ResearchAccepted(job_id=job_key, task_id=task.task_id, workflow_id=task.workflow_id,
                            first_execution_run_id=run_id, already_running=already)
    return JSONResponse(body.model_dump(by_alias=True), status_code=202)


async def _start_failed(context, task: store.TaskRow) -> None:
    """A queued task whose workflow never started is closed, so it is not shown running."""
    async with context.db.transaction() as conn:
        current = await store.read_task(conn, task.task_id)
        if current is not None and current.run_id is None:
            await store.finish_task(conn, current, run_id="", outcome="failed",
                                    error_code="workflow_start_failed")


@router.get("/v1/jobs/{job_key}/contacts", responses=error_responses(401, 404, 422))
async def get_contacts(request: Request, job_key: str = JOB_KEY) -> dict:
    """``{"tasks": [...], "candidates": [...]}`` from the contact projections."""
    await _job_exists(request, job_key)
    db = request.app.state.context.db
    return await job_contacts(db, job_key)
