"""``/v1/health`` without the token says only whether the service is up: no
pid, no Temporal address, no worker detail for another local user or a web page."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from backend.api.app import create_app
from backend.config import AppPaths

TOKEN = "test-token"
TEMPORAL = "127.0.0.1:1"


@pytest.fixture
def http(tmp_path):
    app = create_app(AppPaths(tmp_path), api_token=TOKEN, temporal_address=TEMPORAL)
    with TestClient(app, base_url="http://127.0.0.1") as client:
        yield client


def test_without_the_token_health_says_only_up_or_not(http):
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        response = http.get("/v1/health", headers=headers)
        assert response.status_code == 200
        assert response.json() == {"status": "degraded"}  # Temporal at port 1: not ready
        assert TEMPORAL not in response.text and "pid" not in response.text


def test_with_the_token_health_reports_each_part(http):
    body = http.get("/v1/health", headers={"Authorization": f"Bearer {TOKEN}"}).json()
    assert body["status"] == "degraded"
    assert body["api"]["pid"] > 0
    assert body["temporal"]["address"] == TEMPORAL
    assert body["temporal"]["reachable"] is False
    assert "ready" in body["worker"]
