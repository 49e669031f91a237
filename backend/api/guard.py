"""The outermost ASGI layer of the API: a request id on every response, bounded bodies,
bounded JSON nesting, and the error envelope for what nothing else caught.

Pure ASGI (no ``BaseHTTPMiddleware``) so streaming responses pass through untouched. The
body is read here, in full and bounded, before any route or pydantic sees it: a size or
depth limit then answers before anything is parsed, and the route reads the same bytes.
"""

from __future__ import annotations

import logging
import re
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from backend.api.errors import error_response

log = logging.getLogger(__name__)

REQUEST_ID_HEADER = b"x-request-id"
MAX_BODY_BYTES = 2 * 1024 * 1024
# The résumé upload allows 5 MB files; its multipart envelope needs a little more.
ROUTE_BODY_LIMITS = {"/v1/profile/import": 6 * 1024 * 1024}
MAX_JSON_DEPTH = 64

_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_A_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")


class BodyTooLarge(Exception):
    """The body grew past its limit while it was being read."""


def json_depth_exceeds(body: bytes, limit: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``body`` nests arrays/objects deeper than ``limit``, without parsing it
    (a recursive parser is exactly what a deep document attacks). Strings are blanked
    first so brackets inside them do not count; what is left is only brackets."""
    brackets = _JSON_STRING.sub(b'""', body).translate(None, delete=_NOT_A_BRACKET)
    depth = 0
    for byte in brackets:
        depth += 1 if byte in b"[{" else -1
        if depth > limit:
            return True
    return False


def declare_guard_responses(document: dict) -> dict:
    """What this layer (and FastAPI's body decoding) answers on every route that takes a
    body, declared on each such operation so the OpenAPI document is the truth:
    400 ``malformed_json``, 413 ``payload_too_large`` and, for JSON, 422 ``json_too_deep``."""
    error_body = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}}
    guard_statuses = {"400": "The body could not be decoded (malformed_json)",
                      "413": "The body is over its size limit (payload_too_large)",
                      "422": "Validation failed, or the JSON nests too deep (json_too_deep)"}
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict) or "requestBody" not in operation:
                continue
            responses = operation.setdefault("responses", {})
            for status, description in guard_statuses.items():
                responses.setdefault(status, {"description": description, "content": error_body})
    return document


def body_limit(path: str) -> int:
    return ROUTE_BODY_LIMITS.get(path, MAX_BODY_BYTES)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers") or []:
        if key == name:
            return value.decode("latin-1")
    return None


def _declared_length(scope: Scope) -> int | None:
    raw = _header(scope, b"content-length")
    return int(raw) if raw is not None and raw.isascii() and raw.isdigit() else None


def _is_json(scope: Scope) -> bool:
    content_type = (_header(scope, b"content-type") or "").split(";", 1)[0].strip().lower()
    return content_type == "application/json" or content_type.endswith("+json")


async def _read_body(receive: Receive, limit: int) -> tuple[bytes, list[Message]]:
    """The whole body, or :class:`BodyTooLarge` as soon as it passes ``limit`` (a client
    that lies in Content-Length or streams chunks is stopped at the limit, not after)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), [message]  # the client left: let the app see it
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), []


def _replay(body: bytes, pending: list[Message], receive: Receive) -> Receive:
    """A ``receive`` that hands the app the buffered body once, then the real channel
    (SSE streams listen on it for the client's disconnect)."""
    queue: list[Message] = [{"type": "http.request", "body": body, "more_body": False}, *pending]

    async def replayed() -> Message:
        return queue.pop(0) if queue else await receive()

    return replayed


class RequestGuardMiddleware:
    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id
        started = False

        async def send_with_id(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = [*message.get("headers", []), (REQUEST_ID_HEADER, request_id.encode())]
                message = {**message, "headers": headers}
            await send(message)

        try:
            rejection = await self._guard_body(scope, receive)
            if isinstance(rejection, tuple):
                await self.app(scope, _replay(*rejection, receive), send_with_id)
            else:
                await rejection(scope, receive, send_with_id)
        except Exception:
            # One line that names the request: the client got the same id in the body.
            log.exception("request %s %s %s failed", request_id, scope.get("method"),
                          scope.get("path"))
            if started:
                raise  # the status is already on the wire; the server closes the stream
            response = error_response(500, "internal_error",
                                      "Something went wrong on our side; nothing more is known.",
                                      request_id=request_id)
            await response(scope, receive, send_with_id)

    async def _guard_body(self, scope: Scope, receive: Receive):
        """``(body, pending messages)`` to run the app with, or the error response."""
        limit = body_limit(scope.get("path", ""))
        declared = _declared_length(scope)
        if declared is not None and declared > limit:
            return _too_large(limit)
        try:
            body, pending = await _read_body(receive, limit)
        except BodyTooLarge:
            return _too_large(limit)
        if body and _is_json(scope) and json_depth_exceeds(body):
            return error_response(422, "json_too_deep",
                                  f"The JSON body nests deeper than {MAX_JSON_DEPTH} levels.")
        return body, pending


def _too_large(limit: int):
    return error_response(413, "payload_too_large",
                          f"The request body is larger than {limit // (1024 * 1024)} MB.")
