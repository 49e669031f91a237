"""Read routes over canonical rows: jobs and discovery runs (filters arrive later)."""

from __future__ import annotations

import json

from fastapi import APIRouter, Depends, Query, Request

from backend.api.errors import error_responses
from backend.api.security import require_token
from backend.domain.model import CamelModel
from backend.store.discovery import list_runs
from backend.store.jobs import list_jobs

router = APIRouter(tags=["jobs"], dependencies=[Depends(require_token)])


class JobSummary(CamelModel):
    job_id: str
    url: str
    apply_url: str | None
    title: str
    company: str
    location: str | None
    remote: str | None
    salary_min: int | None
    salary_max: int | None
    salary_currency: str | None
    salary_period: str | None
    employment_type: str | None
    posted_at: str | None
    first_source: str
    first_seen_at: str
    last_seen_at: str


class JobPage(CamelModel):
    total: int
    limit: int
    offset: int
    items: list[JobSummary]


@router.get("/v1/jobs", response_model=JobPage, responses=error_responses(401, 422))
async def get_jobs(
    request: Request,
    limit: int = Query(default=50, ge=1, le=500),
    offset: int = Query(default=0, ge=0, le=10_000_000),
) -> JobPage:
    total, rows = await list_jobs(request.app.state.context.db, limit=limit, offset=offset)
    return JobPage(total=total, limit=limit, offset=offset,
                   items=[JobSummary.model_validate(row) for row in rows])


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


@router.get(
    "/v1/discovery-runs",
    response_model=list[DiscoveryRunSummary],
    responses=error_responses(401, 422),
)
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
