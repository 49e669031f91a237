"""GET /v1/spend over a real database file (FastAPI TestClient, no Temporal needed)."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, datetime, timedelta

import pytest
from fastapi.testclient import TestClient

from backend.api.app import create_app
from backend.config import AppPaths
from backend.store.db import migrate
from backend.store.spend import utc_day

TOKEN = "test-token"


def seed(paths: AppPaths, rows: list[tuple[str, str, str, int, int, int, int]]) -> None:
    migrate(paths.database)
    with sqlite3.connect(paths.database) as conn:
        conn.executemany(
            "INSERT INTO llm_spend (tenant_id, day, provider, model, calls, input_tokens,"
            " output_tokens, cost_micro_usd, updated_at) VALUES ('local', ?, ?, ?, ?, ?, ?, ?,"
            " '2026-01-01T00:00:00.000Z')", rows)


@pytest.fixture
def paths(tmp_path) -> AppPaths:
    return AppPaths(tmp_path)


def client_for(paths: AppPaths) -> TestClient:
    app = create_app(paths, api_token=TOKEN, temporal_address="127.0.0.1:1")
    client = TestClient(app, base_url="http://127.0.0.1")
    client.headers["Authorization"] = f"Bearer {TOKEN}"
    return client


def test_spend_overview(paths):
    now = datetime.now(UTC)
    today = utc_day(now)
    yesterday = utc_day(now - timedelta(days=1))
    long_ago = utc_day(now - timedelta(days=40))
    seed(paths, [
        (today, "openai_compat", "gpt-4o", 2, 3000, 400, 11_500_000),
        (today, "anthropic", "claude-sonnet-4-5", 1, 1000, 100, 4_500_000),
        (yesterday, "openai_compat", "gpt-4o", 5, 10, 10, 1_000_000),
        (long_ago, "openai_compat", "gpt-4o", 1, 1, 1, 9_000_000),
    ])
    paths.settings.write_text(json.dumps({"dailyBudgetUsd": 20}), encoding="utf-8")

    with client_for(paths) as client:
        body = client.get("/v1/spend").json()

    tomorrow = (now + timedelta(days=1)).strftime("%Y-%m-%d")
    assert body["today"] == {
        "day": today, "spentUsd": 16.0, "ceilingUsd": 20.0, "remainingUsd": 4.0,
        "unlimited": False, "exhausted": False, "resetsAt": f"{tomorrow}T00:00:00.000Z",
    }
    assert body["byDay"] == [
        {"day": today, "costUsd": 16.0, "calls": 3, "inputTokens": 4000, "outputTokens": 500},
        {"day": yesterday, "costUsd": 1.0, "calls": 5, "inputTokens": 10, "outputTokens": 10},
    ]
    assert body["byModel"] == [
        {"provider": "openai_compat", "model": "gpt-4o", "costUsd": 11.5, "calls": 2,
         "inputTokens": 3000, "outputTokens": 400},
        {"provider": "anthropic", "model": "claude-sonnet-4-5", "costUsd": 4.5, "calls": 1,
         "inputTokens": 1000, "outputTokens": 100},
    ]


def test_spend_reads_the_ceiling_from_disk_each_time(paths):
    seed(paths, [(utc_day(), "openai_compat", "gpt-4o", 1, 1, 1, 25_000_000)])
    with client_for(paths) as client:
        assert client.get("/v1/spend").json()["today"]["exhausted"] is True  # default $25
        paths.settings.write_text(json.dumps({"dailyBudgetUsd": 0}), encoding="utf-8")
        today = client.get("/v1/spend").json()["today"]
    assert today["unlimited"] is True and today["remainingUsd"] is None


def test_an_empty_ledger_is_empty_not_fabricated(paths):
    with client_for(paths) as client:
        body = client.get("/v1/spend").json()
    assert body["byDay"] == [] and body["byModel"] == []
    assert body["today"]["spentUsd"] == 0 and body["today"]["remainingUsd"] == 25.0
