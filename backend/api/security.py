"""Loopback-only hardening: refuse foreign Host headers (DNS rebinding) and require the
per-launch bearer token on every route but health (which, without it, says only whether
the service is up)."""

from __future__ import annotations

import secrets

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.types import ASGIApp, Receive, Scope, Send

from backend.api.errors import ApiError, error_response

ALLOWED_HOSTS = frozenset({"127.0.0.1", "localhost"})


def host_name(host_header: str) -> str:
    if host_header.startswith("["):
        return host_header.split("]", 1)[0] + "]"
    return host_header.rsplit(":", 1)[0] if ":" in host_header else host_header


class LoopbackHostMiddleware:
    """Pure ASGI so it also guards streaming responses."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            host = headers.get(b"host", b"").decode("latin-1").lower()
            if host_name(host) not in ALLOWED_HOSTS:
                response = error_response(
                    403, "foreign_host", "This API only answers requests addressed to 127.0.0.1."
                )
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


_bearer = HTTPBearer(auto_error=False, description="The per-launch token from runtime.json")


def token_valid(request: Request, credentials: HTTPAuthorizationCredentials | None) -> bool:
    expected: str = request.app.state.context.api_token
    supplied = credentials.credentials if credentials else ""
    return bool(supplied) and secrets.compare_digest(supplied.encode(), expected.encode())


async def has_token(request: Request) -> bool:
    """For the one route that also answers without the token (health), with less. It reads
    the header itself: a security dependency would make the OpenAPI document say the route
    needs the token, which it does not."""
    scheme, _, supplied = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not supplied.strip():
        return False
    return token_valid(request, HTTPAuthorizationCredentials(scheme=scheme,
                                                             credentials=supplied.strip()))


async def require_token(
    request: Request, credentials: HTTPAuthorizationCredentials | None = Depends(_bearer)
) -> None:
    if not token_valid(request, credentials):
        raise ApiError(
            401, "unauthorized", "A valid bearer token is required.",
            headers={"WWW-Authenticate": "Bearer"},
        )
