"""POST /v1/settings/llm/test against a real API and a real loopback LLM server.

One instance of its own (the test edits the budget and writes spend), the FakeLlmServer
standing in for an OpenAI-compatible or Anthropic endpoint."""

from __future__ import annotations

import pytest
import pytest_asyncio

from backend.supervision.supervisor import Supervisor
from desktop.client import ApiClient, ApiRequestError
from tests.fakes.llm_servers import FakeLlmServer
from tests.integration.conftest import write_settings

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

KEY = "sk-check-7f3a9c1e5b"
SECRET = "llmcheck"


@pytest.fixture(scope="module")
def fake_llm():
    with FakeLlmServer() as server:
        yield server


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def instance(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("llm-check")
    write_settings(app_dir, sources=[{"kind": "demo_board", "id": "demo_board"}])
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    client = ApiClient.from_runtime(supervisor.info)
    await client.put_secret(SECRET, KEY)
    yield supervisor, client
    await client.close()
    await supervisor.stop()


@pytest.fixture
def fake(fake_llm):
    fake_llm.reset()
    return fake_llm


def openai(fake: FakeLlmServer, **extra) -> dict:
    return {"provider": "openai_compat", "baseUrl": fake.openai_base_url, "model": "gpt-4o",
            "apiKeySecret": SECRET, **extra}


async def refused(call) -> ApiRequestError:
    with pytest.raises(ApiRequestError) as caught:
        await call
    return caught.value


def api_logs(supervisor: Supervisor) -> str:
    files = sorted(supervisor.paths.logs.glob("api*.log*"))
    assert files, "the API writes a log file"
    return "\n".join(path.read_text(encoding="utf-8", errors="replace") for path in files)


async def test_offline_answers_without_a_call_and_costs_nothing(instance, fake):
    _supervisor, client = instance
    result = await client.test_llm()  # the saved settings: offline
    assert result["ok"] is True and result["offline"] is True
    assert result["provider"] == "offline" and result["costUsd"] == 0
    assert result["latencyMs"] is None
    assert fake.calls == 0


async def test_a_working_key_makes_one_tiny_call_and_meters_it(instance, fake):
    supervisor, client = instance
    fake.require_key(KEY)
    before = (await client.spend())["today"]["spentUsd"]
    result = await client.test_llm(openai(fake))
    assert result["ok"] is True and result["offline"] is False
    assert result["model"] == "gpt-4o" and result["provider"] == "openai_compat"
    assert fake.calls == 1
    request = fake.last_request
    assert request.body["max_tokens"] <= 5
    assert request.headers["authorization"] == f"Bearer {KEY}"  # the stored key was used
    # The test call was paid for: the ledger says so, by exactly the reported cost.
    after = (await client.spend())["today"]["spentUsd"]
    assert result["costUsd"] > 0
    assert after == pytest.approx(before + result["costUsd"])
    # Nothing was saved: the settings still say offline.
    assert (await client.settings())["llm"]["provider"] == "offline"
    # The key is never returned nor logged.
    assert KEY not in str(result)
    logs = api_logs(supervisor)
    assert "llm test: openai_compat/gpt-4o answered" in logs
    assert KEY not in logs


async def test_a_wrong_key_is_a_typed_authentication_failure(instance, fake):
    supervisor, client = instance
    fake.require_key("sk-some-other-key")
    error = await refused(client.test_llm(openai(fake)))
    assert (error.status, error.code) == (502, "llm_authentication_failed")
    assert error.fields == ["llm.apiKeySecret"]
    assert KEY not in error.message and KEY not in api_logs(supervisor)


async def test_an_anthropic_key_goes_in_the_x_api_key_header(instance, fake):
    _supervisor, client = instance
    fake.require_key(KEY)
    result = await client.test_llm({"provider": "anthropic", "baseUrl": fake.anthropic_base_url,
                                    "model": "claude-3-5-haiku", "apiKeySecret": SECRET})
    assert result["provider"] == "anthropic" and fake.calls == 1
    assert fake.last_request.headers["x-api-key"] == KEY


async def test_an_unreachable_endpoint_is_typed(instance, fake):
    _supervisor, client = instance
    closed = FakeLlmServer()
    url = closed.openai_base_url
    closed.stop()  # bound, never served, now closed: nothing listens there
    error = await refused(client.test_llm(openai(fake, baseUrl=url)))
    assert (error.status, error.code) == (502, "llm_unreachable")
    assert error.fields == ["llm.baseUrl"]


async def test_a_slow_endpoint_is_a_typed_timeout(instance, fake):
    _supervisor, client = instance
    fake.delay(4)
    error = await refused(client.test_llm(openai(fake), timeout_s=0.5))
    assert (error.status, error.code) == (504, "llm_timeout")


async def test_a_provider_outage_and_a_wrong_model_are_told_apart(instance, fake):
    _supervisor, client = instance
    fake.fail_next(503)
    outage = await refused(client.test_llm(openai(fake)))
    assert (outage.status, outage.code) == (502, "llm_provider_unavailable")
    fake.fail_next(404)
    wrong = await refused(client.test_llm(openai(fake)))
    assert (wrong.status, wrong.code) == (502, "llm_request_rejected")
    assert wrong.fields == ["llm.baseUrl", "llm.model"]


async def test_missing_or_invalid_settings_are_422_with_fields_and_change_nothing(instance, fake):
    _supervisor, client = instance
    missing = await refused(client.test_llm({"provider": "openai_compat",
                                             "baseUrl": fake.openai_base_url}))
    assert (missing.status, missing.code, missing.fields) == (
        422, "llm_not_configured", ["llm.model"])
    unknown_secret = await refused(client.test_llm(openai(fake, apiKeySecret="nosuchkey")))
    assert (unknown_secret.code, unknown_secret.fields) == (
        "llm_not_configured", ["llm.apiKeySecret"])
    invalid = await refused(client.test_llm({"provider": "psychic"}))
    assert (invalid.status, invalid.code, invalid.fields) == (
        422, "validation_error", ["llm.provider"])
    bad_timeout = await refused(client.test_llm(timeout_s=0))
    assert (bad_timeout.status, bad_timeout.code) == (422, "validation_error")
    assert fake.calls == 0
    assert (await client.settings())["llm"]["provider"] == "offline"


async def test_an_exhausted_budget_refuses_a_paid_test_call(instance, fake):
    _supervisor, client = instance
    await client.test_llm(openai(fake))  # make sure today has some spend
    spent = (await client.spend())["today"]["spentUsd"]
    await client.patch_settings(dailyBudgetUsd=spent)
    try:
        calls = fake.calls
        error = await refused(client.test_llm(openai(fake)))
        assert (error.status, error.code) == (409, "budget_exceeded")
        assert fake.calls == calls  # refused before any paid work
        assert (await client.test_llm())["offline"] is True  # offline still answers
    finally:
        await client.patch_settings(dailyBudgetUsd=25)
