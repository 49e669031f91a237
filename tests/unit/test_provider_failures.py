"""Provider failure diagnostics: every failed LLM call through the metered provider is
recorded with bounded fields only, correlated with the exact activity (workflow id, run
id, activity id, attempt) that made it, and summarized per run as counts per provider
plus the latest safe diagnostic. Real loopback provider, real SQLite file."""

from __future__ import annotations

import sqlite3

import pytest
from temporalio.testing import ActivityEnvironment

from backend.llm.base import LlmError
from backend.llm.metered import MeteredProvider
from backend.llm.openai_compat import OpenAiCompatProvider
from backend.llm.rates import load_rates
from backend.store.provider_failures import (
    ProviderFailure,
    provider_failures_for_run,
    record_provider_failure,
)
from tests.fakes.llm_servers import FakeLlmServer

PROMPT = "PRIVATE-PROMPT-about-the-candidate"
SECRET_BODY = {"error": {"type": "rate_limit_exceeded",
                         "message": "PRIVATE provider text quoting sk-secret"}}


@pytest.fixture
def llm_server():
    with FakeLlmServer() as server:
        yield server


def metered(server: FakeLlmServer, db) -> MeteredProvider:
    inner = OpenAiCompatProvider(base_url=server.openai_base_url, model="gpt-4o",
                                 api_key="sk-secret")
    return MeteredProvider(inner, db, load_rates())


def dump(db) -> str:
    with sqlite3.connect(db.path) as conn:
        return "\n".join(conn.iterdump())


async def test_a_failed_call_inside_an_activity_is_recorded_with_its_exact_identity(
        llm_server, db):
    llm_server.fail_next(429, body=SECRET_BODY)
    provider = metered(llm_server, db)

    async def score_job() -> None:
        await provider.complete(system="assess how well", user=PROMPT)

    environment = ActivityEnvironment()
    info = environment.info
    with pytest.raises(LlmError) as raised:
        await environment.run(score_job)
    assert raised.value.code == "provider_unavailable"
    summary = await provider_failures_for_run(db, "local", info.workflow_id,
                                              info.workflow_run_id)
    assert summary["total"] == 1
    assert summary["byProvider"] == [{"provider": "openai_compat", "model": "gpt-4o",
                                      "count": 1, "codes": {"provider_unavailable": 1}}]
    latest = summary["latest"]
    assert {k: latest[k] for k in ("operation", "category", "code", "type", "httpStatus",
                                   "retryable", "attempt", "activityId", "workflowId",
                                   "runId")} == {
        "operation": info.activity_type, "category": "transient",
        "code": "provider_unavailable", "type": "rate_limit_exceeded", "httpStatus": 429,
        "retryable": True, "attempt": info.attempt, "activityId": info.activity_id,
        "workflowId": info.workflow_id, "runId": info.workflow_run_id}
    stored = dump(db)
    assert "PRIVATE" not in stored and "sk-secret" not in stored  # no prompt, body or key


async def test_counts_group_per_provider_and_code_for_the_exact_run_only(db):
    def failure(code: str, run_id: str = "run-a", **kw) -> ProviderFailure:
        return ProviderFailure(provider="anthropic", model="claude-sonnet-4-5",
                               operation="tailor_resume", code=code,
                               retryable=code == "provider_unavailable", workflow_id="prep-1",
                               run_id=run_id, **kw)

    async with db.transaction() as conn:
        for f in (failure("provider_unavailable", attempt=1),
                  failure("provider_unavailable", attempt=2),
                  failure("authentication", attempt=3, http_status=401),
                  failure("provider_unavailable", run_id="run-b")):
            await record_provider_failure(conn, "local", f)
    summary = await provider_failures_for_run(db, "local", "prep-1", "run-a")
    assert summary["total"] == 3
    assert summary["byProvider"] == [{"provider": "anthropic", "model": "claude-sonnet-4-5",
                                      "count": 3, "codes": {"authentication": 1,
                                                            "provider_unavailable": 2}}]
    assert (summary["latest"]["code"], summary["latest"]["category"],
            summary["latest"]["retryable"], summary["latest"]["attempt"]) == (
        "authentication", "authentication", False, 3)
    # Another workflow id with the same run id is not this run.
    assert await provider_failures_for_run(db, "local", "prep-2", "run-a") is None
    assert await provider_failures_for_run(db, "local", "prep-1", "run-none") is None


def test_unbounded_fields_are_clipped_before_storage():
    dirty = ProviderFailure(
        provider="openai compat: see https://x", model="gpt-4o\nPRIVATE",
        operation="Score Job!", code="some exception text", retryable=True,
        error_type="free text with spaces", http_status=9999,
        workflow_id="prep-1", run_id="run/1", activity_id="../../etc", attempt=-2,
    ).bounded()
    assert (dirty.provider, dirty.model, dirty.operation, dirty.code) == (
        "unknown", "unknown", "other", "llm_error")
    assert (dirty.error_type, dirty.http_status, dirty.attempt) == (None, None, None)


async def test_a_failed_call_outside_any_activity_has_no_run(llm_server, db):
    llm_server.fail_next(401)
    with pytest.raises(LlmError):
        await metered(llm_server, db).complete(system="s", user=PROMPT)
    with sqlite3.connect(db.path) as conn:
        rows = conn.execute("SELECT operation, category, run_id, workflow_id, http_status"
                            " FROM llm_provider_failures").fetchall()
    assert rows == [("outside_activity", "authentication", None, None, 401)]


async def test_a_successful_call_records_no_failure(llm_server, db):
    llm_server.reply_with('{"score": 80}')
    await metered(llm_server, db).complete(system="s", user=PROMPT)
    with sqlite3.connect(db.path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM llm_provider_failures").fetchone()[0] == 0
