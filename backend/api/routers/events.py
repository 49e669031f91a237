"""GET /v1/events/stream: the durable event log as Server-Sent Events."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Header, Query, Request
from sse_starlette import EventSourceResponse

from backend.api.errors import ApiError, error_responses
from backend.api.params import SQLITE_MAX_INT
from backend.api.security import require_token
from backend.api.sse import event_stream
from backend.store.events import latest_event_id

router = APIRouter(tags=["events"], dependencies=[Depends(require_token)])

KEEPALIVE_S = 15
SEND_TIMEOUT_S = 30  # a client that accepts nothing for this long is dropped


# Event ids are SQLite integers: at most 19 digits. Checking the length before int()
# also keeps a header of thousands of digits away from int()'s digit limit.
MAX_EVENT_ID_DIGITS = len(str(SQLITE_MAX_INT))
EVENT_ID_PATTERN = rf"^[0-9]{{0,{MAX_EVENT_ID_DIGITS}}}$"


def parse_last_event_id(raw: str | None) -> int | None:
    if raw is None or raw == "":
        return None
    if (not raw.isascii() or not raw.isdigit() or len(raw) > MAX_EVENT_ID_DIGITS
            or int(raw) > SQLITE_MAX_INT):
        raise ApiError(400, "invalid_last_event_id",
                       f"Last-Event-ID must be a non-negative integer up to {SQLITE_MAX_INT}.")
    return int(raw)


def _event_id_parameter(kind, alias: str):
    """Declared with its real shape; checked by :func:`parse_last_event_id` so a bad value
    is the typed 400 the desktop knows, not a generic validation error."""
    return kind(default=None, alias=alias, json_schema_extra={"pattern": EVENT_ID_PATTERN},
                description="The id of the last event received (digits only)")


@router.get(
    "/v1/events/stream",
    responses={200: {"content": {"text/event-stream": {}}}, **error_responses(400, 401, 403)},
)
async def stream_events(
    request: Request,
    last_event_id_header: str | None = _event_id_parameter(Header, "Last-Event-ID"),
    last_event_id_query: str | None = _event_id_parameter(Query, "lastEventId"),
) -> EventSourceResponse:
    """With neither header nor query the stream starts after the newest event; ``0``
    replays everything; the header wins over the query when both are given."""
    context = request.app.state.context
    requested = parse_last_event_id(last_event_id_header)
    if requested is None:
        requested = parse_last_event_id(last_event_id_query)
    newest = await latest_event_id(context.db)
    if requested is not None and requested > newest:
        raise ApiError(
            400, "last_event_id_out_of_range",
            f"Event {requested} does not exist (newest is {newest}); reconnect without an id.",
        )
    start_after = newest if requested is None else requested
    return EventSourceResponse(
        event_stream(context.db, context.tail, start_after, wait_timeout=KEEPALIVE_S),
        ping=context.sse_keepalive_s,
        send_timeout=SEND_TIMEOUT_S,
    )
