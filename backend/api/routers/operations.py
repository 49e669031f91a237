"""GET /v1/pipeline/operations: the operations read model (no query parameters)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request

from backend.api.errors import error_responses
from backend.api.security import require_token
from backend.config import load_settings

router = APIRouter(tags=["operations"], dependencies=[Depends(require_token)])


@router.get("/v1/pipeline/operations", responses=error_responses(401))
async def pipeline_operations(request: Request) -> dict[str, Any]:
    context = request.app.state.context
    # Settings are re-read: the ceiling or slots may have changed since the API started.
    # Imported at the first request: the snapshot's readers (ETA, freshness) cost the API's start.
    from backend.operations.snapshot import read_operations_snapshot

    return await read_operations_snapshot(context.db, context.paths, load_settings(context.paths))
