"""POST /v1/sources/resolve: a pasted careers-page or job-board link -> the source family
and the settings entry that reads it (nothing is saved; PATCH /v1/settings with
``{"link": ...}`` saves one). A link no family reads is a typed 422 ``source_unrecognized``;
the other refusals name what is missing (``source_link_invalid``, ``source_link_incomplete``,
``source_link_board_hidden``)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Request
from pydantic import Field

from backend.api.errors import ApiError, error_responses
from backend.api.security import require_token
from backend.domain.model import CamelModel
from backend.sources.link import MAX_LINK_LENGTH, SourceLinkError, resolve_source_link

router = APIRouter(tags=["sources"], dependencies=[Depends(require_token)])


class ResolveRequest(CamelModel):
    link: str = Field(min_length=1, max_length=MAX_LINK_LENGTH)


class ResolvedSource(CamelModel):
    kind: str
    family: str  # what the user calls it: "Greenhouse", "Workday"
    source: dict[str, Any]  # the settings entry, with an id unique among the saved sources


@router.post("/v1/sources/resolve", response_model=ResolvedSource,
             responses=error_responses(401, 422))
async def resolve_source(request: Request, body: ResolveRequest) -> ResolvedSource:
    try:
        resolved = resolve_source_link(body.link)
    except SourceLinkError as error:
        raise ApiError(422, error.code, error.message, fields=["link"]) from None
    taken = {source.id for source in request.app.state.context.settings.sources}
    family = getattr(resolved, "family", None)
    return ResolvedSource(kind=family.kind if family else resolved.kind,
                          family=family.name if family else resolved.name,
                          source=resolved.source(taken))
