"""GET /v1/health: API health apart from worker readiness and Temporal reachability.

Without the bearer token it says only whether the service is up (``status``): the pid,
the Temporal address and the worker's detail are for the token holder (another
local user, or a web page, learnt where Temporal listens from it)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends, Request
from pydantic import ConfigDict

from backend.api.security import has_token
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


class PublicHealth(CamelModel):
    """What anyone who can reach the port learns: up and ready, or not."""

    model_config = ConfigDict(extra="forbid")  # a full answer never passes for this one
    status: Literal["ok", "degraded"]


class Health(CamelModel):
    status: Literal["ok", "degraded"]
    api: ApiHealth
    worker: WorkerReadiness
    temporal: TemporalHealth


@router.get("/v1/health", response_model=Health | PublicHealth, response_model_by_alias=True)
async def health(request: Request, authorized: bool = Depends(has_token)) -> Health | PublicHealth:
    import os

    context = request.app.state.context
    worker = await context.worker_readiness()
    reachable = await context.temporal_reachable()
    status = "ok" if worker.ready and reachable else "degraded"
    if not authorized:
        return PublicHealth(status=status)
    return Health(
        status=status,
        api=ApiHealth(pid=os.getpid()),
        worker=worker,
        temporal=TemporalHealth(
            reachable=reachable,
            address=context.temporal_address,
            namespace=context.settings.temporal.namespace,
            embedded=not context.settings.temporal.external,
        ),
    )
