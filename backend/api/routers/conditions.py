"""POST /v1/pipeline/conditions/enrich/resolve: the user's own action that resolves a
typed Enrich block, and the continuation it dispatches.

The user action: "I allow JobCtrl to fetch posting pages on this host for me" after Enrich
reported ``ENRICH_ROBOTS_DISALLOWED`` there (robots.txt refuses our crawler user agent).
The grant is stored; Enrich then fetches that host's pages as a user-requested page, and
exactly the jobs carrying that block on that host continue through Enrich → Score →
Tailor → Cover under one stable workflow id. Discover is not rerun; other hosts' robots
blocks and ordinary pending Enrich rows are not touched.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse
from pydantic import ConfigDict, Field, field_validator

from backend.api.errors import error_responses, noop_responses
from backend.api.security import require_token
from backend.domain.model import CamelModel
from backend.store.condition_jobs import jobs_blocked_by, record_condition_resolved
from backend.temporal.activities.continuation import ContinuationInput
from backend.temporal.continuations import condition_workflow_id, start_or_attach

router = APIRouter(tags=["pipeline"], dependencies=[Depends(require_token)])


class ResolveEnrichCondition(CamelModel):
    model_config = ConfigDict(extra="forbid")

    code: Literal["ENRICH_ROBOTS_DISALLOWED"] = Field(
        description="The typed Enrich block the user resolved")
    host: str = Field(min_length=1, max_length=300,
                      description="host[:port] (or a posting URL) the user allows JobCtrl to fetch")

    @field_validator("host")
    @classmethod
    def _host(cls, value: str) -> str:
        # Imported at first use: the grants module brings httpx, which the API's start
        # does not otherwise need.
        from backend.pipeline.access_grants import normalize_host

        return normalize_host(value)


class ResolveAccepted(CamelModel):
    code: str
    host: str
    job_count: int
    workflow_id: str | None = None
    first_execution_run_id: str | None = None
    already_running: bool = False
    noop_reason: str | None = None


@router.post(
    "/v1/pipeline/conditions/enrich/resolve",
    status_code=202,
    response_model=ResolveAccepted,
    responses={**noop_responses(ResolveAccepted), **error_responses(401, 422, 503)},
)
async def resolve_enrich_condition(body: ResolveEnrichCondition, request: Request):
    context = request.app.state.context
    client = await context.require_runtime()  # 503 before anything durable
    job_ids = await jobs_blocked_by(context.db, body.code, body.host)
    workflow_id = condition_workflow_id(body.code, body.host)
    if not job_ids:
        # Nothing carries this block on that host: no grant, no run.
        accepted = ResolveAccepted(code=body.code, host=body.host, job_count=0,
                                   noop_reason="no_blocked_jobs")
        return JSONResponse(accepted.model_dump(by_alias=True), status_code=200)
    await record_condition_resolved(context.db, code=body.code, host=body.host,
                                    workflow_id=workflow_id, job_count=len(job_ids))
    input = ContinuationInput(trigger="enrich_condition", condition_code=body.code,
                              host=body.host,
                              heartbeat_timeout_s=context.settings.stage_heartbeat_timeout_s)
    # A concurrent resolve attaches to the running execution; a later episode may reuse
    # the id once the earlier run closed.
    _, dispatched = await start_or_attach(client, workflow_id, input, reuse_closed=True)
    return ResolveAccepted(code=body.code, host=body.host, job_count=len(job_ids),
                           workflow_id=workflow_id,
                           first_execution_run_id=dispatched.run_id,
                           already_running=dispatched.attached)
