"""GET /v1/health: API health apart from worker readiness and Temporal reachability."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request

from backend.domain.model import CamelModel
from backend.process.readiness import WorkerReadiness

router = APIRouter(tags=["health"])


class ApiHealth(CamelModel):
    status: Literal["ok"] = "ok"
    pid: int


class TemporalHealth(CamelModel):
    reachable: bool
    address: str
    namespace: str
    embedded: bool


class Health(CamelModel):
    status: Literal["ok", "degraded"]
    api: ApiHealth
    worker: WorkerReadiness
    temporal: TemporalHealth


@router.get("/v1/health", response_model=Health, response_model_by_alias=True)
async def health(request: Request) -> Health:
    import os

    context = request.app.state.context
    worker = await context.worker_readiness()
    reachable = await context.temporal_reachable()
    return Health(
        status="ok" if worker.ready and reachable else "degraded",
        api=ApiHealth(pid=os.getpid()),
        worker=worker,
        temporal=TemporalHealth(
            reachable=reachable,
            address=context.temporal_address,
            namespace=context.settings.temporal.namespace,
            embedded=not context.settings.temporal.external,
        ),
    )
