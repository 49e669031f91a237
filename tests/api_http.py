"""Authorized httpx clients of a test instance's API (``RuntimeInfo`` of a Supervisor).

httpx's default timeout is 5 s for each of connect, read, write and pool. On a loaded
2-core CI box a real request (a command that starts a workflow, a large read, the first
request after a restart) can take longer without anything being wrong: a test that means
"this answers" waits as long as a hang guard, not as long as a quiet machine needs.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from backend.config import AppPaths, RuntimeInfo

if TYPE_CHECKING:
    from fastapi.testclient import TestClient

REQUEST_TIMEOUT = httpx.Timeout(60)


def auth_headers(info: RuntimeInfo) -> dict[str, str]:
    return {"Authorization": f"Bearer {info.api_token}"}


def api_http(info: RuntimeInfo) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=info.api_base_url, headers=auth_headers(info),
                             timeout=REQUEST_TIMEOUT)


def api_http_sync(info: RuntimeInfo) -> httpx.Client:
    return httpx.Client(base_url=info.api_base_url, headers=auth_headers(info),
                        timeout=REQUEST_TIMEOUT)


TEST_TOKEN = "test-token"


@contextlib.contextmanager
def in_process_api(app_dir: Path) -> Iterator[TestClient]:
    """The API app over ``app_dir`` in this process (no services, Temporal unreachable),
    with the bearer token already set: for routes that answer without the worker."""
    from fastapi.testclient import TestClient

    from backend.api.app import create_app

    app = create_app(AppPaths(app_dir), api_token=TEST_TOKEN, temporal_address="127.0.0.1:1")
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as client:
        client.headers["Authorization"] = f"Bearer {TEST_TOKEN}"
        yield client
