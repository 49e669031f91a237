"""Authorized httpx clients of a test instance's API (``RuntimeInfo`` of a Supervisor).

httpx's default timeout is 5 s for each of connect, read, write and pool. On a loaded
2-core CI box a real request (a command that starts a workflow, a large read, the first
request after a restart) can take longer without anything being wrong: a test that means
"this answers" waits as long as a hang guard, not as long as a quiet machine needs.
"""

from __future__ import annotations

import httpx

from backend.config import RuntimeInfo

REQUEST_TIMEOUT = httpx.Timeout(60)


def auth_headers(info: RuntimeInfo) -> dict[str, str]:
    return {"Authorization": f"Bearer {info.api_token}"}


def api_http(info: RuntimeInfo) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=info.api_base_url, headers=auth_headers(info),
                             timeout=REQUEST_TIMEOUT)


def api_http_sync(info: RuntimeInfo) -> httpx.Client:
    return httpx.Client(base_url=info.api_base_url, headers=auth_headers(info),
                        timeout=REQUEST_TIMEOUT)
