"""LLM providers against a real loopback server: wire format, usage, typed errors, and
the key never leaking into errors or logs."""

from __future__ import annotations

import logging

import pytest

from backend.config import LlmSettings
from backend.llm.anthropic import AnthropicProvider, messages_url
from backend.llm.base import (
    ChatProvider,
    LlmAuthenticationError,
    LlmConfigurationError,
    LlmError,
    LlmResponseInvalidError,
    LlmUnavailableError,
)
from backend.llm.factory import provider_from_settings
from backend.llm.offline import OfflineProvider
from backend.llm.openai_compat import OpenAiCompatProvider, is_local_endpoint
from backend.supervision.ports import free_port
from backend.temporal.llm_access import llm_application_error, typed_failure
from tests.fakes.llm_servers import FakeLlmServer

KEY = "sk-test-SECRET-key-0123456789abcdef"
PROMPT = "PRIVATE-PROMPT-about-the-candidate"


@pytest.fixture
def llm_server():
    with FakeLlmServer() as server:
        yield server


class DictSecrets:
    def __init__(self, **values: str):
        self.values = values

    def get(self, name: str) -> str | None:
        return self.values.get(name)


def openai(server: FakeLlmServer, key: str | None = KEY, **kw) -> OpenAiCompatProvider:
    return OpenAiCompatProvider(base_url=server.openai_base_url, model="gpt-4o", api_key=key,
                                **kw)


def anthropic(server: FakeLlmServer, **kw) -> AnthropicProvider:
    return AnthropicProvider(model="claude-sonnet-4-5", api_key=KEY, base_url=server.url, **kw)


# --- wire format and usage -------------------------------------------------------------


async def test_openai_compat_sends_chat_completions_and_reads_usage(llm_server):
    llm_server.reply_with('{"score": 81}')
    llm_server.set_usage(1234, 56)
    provider = openai(llm_server)
    assert isinstance(provider, ChatProvider)

    completion = await provider.complete(system="sys", user="usr", max_tokens=300,
                                         json_mode=True)

    assert completion.text == '{"score": 81}'
    assert (completion.provider, completion.model) == ("openai_compat", "gpt-4o")
    assert (completion.input_tokens, completion.output_tokens) == (1234, 56)
    assert completion.usage_estimated is False and completion.cost_usd is None
    request = llm_server.last_request
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body == {
        "model": "gpt-4o",
        "messages": [{"role": "system", "content": "sys"}, {"role": "user", "content": "usr"}],
        "max_tokens": 300,
        "response_format": {"type": "json_object"},
    }
    assert llm_server.calls == 1 and llm_server.succeeded == 1


async def test_openai_compat_without_key_sends_no_authorization(llm_server):
    await openai(llm_server, key=None).complete(system="s", user="u")
    request = llm_server.last_request
    assert "authorization" not in request.headers
    assert "response_format" not in request.body


async def test_openai_compat_missing_usage_is_estimated_not_zero(llm_server):
    llm_server.set_usage(None)
    llm_server.reply_with("x" * 9)
    completion = await openai(llm_server).complete(system="a" * 10, user="b" * 7)
    assert completion.usage_estimated is True
    assert completion.input_tokens == 5  # ceil(17 / 4)
    assert completion.output_tokens == 3  # ceil(9 / 4)


async def test_anthropic_sends_messages_and_reads_usage(llm_server):
    llm_server.reply_with("Dear hiring manager")
    llm_server.set_usage(900, 321)

    completion = await anthropic(llm_server).complete(system="sys", user="usr", max_tokens=700)

    assert completion.text == "Dear hiring manager"
    assert (completion.provider, completion.model) == ("anthropic", "claude-sonnet-4-5")
    assert (completion.input_tokens, completion.output_tokens) == (900, 321)
    request = llm_server.last_request
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == KEY
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in request.headers
    assert request.body == {
        "model": "claude-sonnet-4-5", "max_tokens": 700, "system": "sys",
        "messages": [{"role": "user", "content": "usr"}],
    }


async def test_anthropic_json_mode_asks_for_json_in_the_system_prompt(llm_server):
    await anthropic(llm_server).complete(system="sys", user="usr", json_mode=True)
    system = llm_server.last_request.body["system"]
    assert system.startswith("sys") and "JSON" in system


def test_anthropic_url_defaults_and_tolerates_a_v1_suffix():
    assert messages_url(None) == "https://api.anthropic.com/v1/messages"
    assert messages_url("http://127.0.0.1:9/") == "http://127.0.0.1:9/v1/messages"
    assert messages_url("http://127.0.0.1:9/v1") == "http://127.0.0.1:9/v1/messages"


# --- typed errors ----------------------------------------------------------------------


@pytest.mark.parametrize("make", [openai, anthropic], ids=["openai_compat", "anthropic"])
async def test_401_is_a_non_retryable_authentication_error(llm_server, make):
    llm_server.require_key("another-key")
    with pytest.raises(LlmAuthenticationError) as caught:
        await make(llm_server).complete(system="s", user="u")
    error = caught.value
    assert (error.code, error.retryable, error.status) == ("authentication", False, 401)
    assert "authentication_error" in str(error)  # the bounded provider error type
    failure = llm_application_error(error)
    assert failure.type == "authentication" and failure.non_retryable is True


@pytest.mark.parametrize("make", [openai, anthropic], ids=["openai_compat", "anthropic"])
async def test_500_is_a_retryable_unavailable_error_and_recovers(llm_server, make):
    llm_server.fail_next(500, times=2)
    provider = make(llm_server)
    for _ in range(2):
        with pytest.raises(LlmUnavailableError) as caught:
            await provider.complete(system="s", user="u")
        assert (caught.value.code, caught.value.retryable) == ("provider_unavailable", True)
        assert llm_application_error(caught.value).non_retryable is False
    completion = await provider.complete(system="s", user="u")
    assert completion.text
    assert llm_server.calls == 3 and llm_server.succeeded == 1


@pytest.mark.parametrize(
    ("status", "error_type", "retryable"),
    [(429, LlmUnavailableError, True), (503, LlmUnavailableError, True),
     (403, LlmAuthenticationError, False), (400, LlmConfigurationError, False),
     (404, LlmConfigurationError, False), (422, LlmConfigurationError, False)],
)
async def test_status_mapping(llm_server, status, error_type, retryable):
    llm_server.fail_next(status)
    with pytest.raises(error_type) as caught:
        await openai(llm_server).complete(system="s", user="u")
    assert caught.value.retryable is retryable
    assert caught.value.status == status


@pytest.mark.parametrize(("header", "expected"), [("7", 7.0), ("86400", 600.0), ("soon", None)])
async def test_retry_after_is_passed_on_bounded(llm_server, header, expected):
    llm_server.fail_next(429, headers={"Retry-After": header})
    with pytest.raises(LlmUnavailableError) as caught:
        await openai(llm_server).complete(system="s", user="u")
    assert caught.value.retry_after_s == expected
    # Both ways an LlmError becomes a Temporal failure (the stage activities use
    # typed_failure) ask for the next attempt no sooner than the provider said.
    for failure in (llm_application_error(caught.value), typed_failure(caught.value)):
        delay = failure.next_retry_delay
        assert (delay.total_seconds() if delay else None) == expected


async def test_an_unparseable_body_is_a_retryable_invalid_response(llm_server):
    provider = openai(llm_server)
    original = llm_server._answer

    def broken(request):
        original(request)
        return 200, "<html>surprise</html>", {}

    llm_server._answer = broken
    with pytest.raises(LlmResponseInvalidError) as caught:
        await provider.complete(system="s", user="u")
    assert (caught.value.code, caught.value.retryable) == ("provider_response_invalid", True)
    assert "surprise" not in str(caught.value)


async def test_a_reply_without_choices_is_invalid(llm_server):
    original = llm_server._answer
    llm_server._answer = lambda request: (original(request), (200, {"choices": []}, {}))[1]
    with pytest.raises(LlmResponseInvalidError):
        await openai(llm_server).complete(system="s", user="u")


async def test_connection_refused_is_unavailable():
    provider = OpenAiCompatProvider(base_url=f"http://127.0.0.1:{free_port()}/v1", model="m",
                                    api_key=KEY)
    with pytest.raises(LlmUnavailableError) as caught:
        await provider.complete(system="s", user="u")
    assert caught.value.retryable is True


async def test_a_timeout_is_unavailable(llm_server):
    llm_server.delay(1.0)
    with pytest.raises(LlmUnavailableError) as caught:
        await openai(llm_server, timeout_s=0.2).complete(system="s", user="u")
    assert "timed out" in str(caught.value)


async def test_an_invalid_base_url_is_a_configuration_error():
    provider = OpenAiCompatProvider(base_url="ftp://example.invalid/v1", model="m")
    with pytest.raises(LlmConfigurationError):
        await provider.complete(system="s", user="u")


async def test_the_offline_provider_refuses_to_generate():
    provider = OfflineProvider()
    assert (provider.name, provider.model, provider.is_offline) == (
        "offline", "offline-heuristic", True)
    with pytest.raises(LlmConfigurationError):
        await provider.complete(system="s", user="u")


# --- the key, prompts and bodies never leak -------------------------------------------


async def test_key_prompt_and_body_never_in_errors_or_logs(llm_server, caplog):
    caplog.set_level(logging.DEBUG)
    errors: list[LlmError] = []
    secret_body = {"error": {"message": f"bad key {KEY} for prompt {PROMPT}",
                             "type": f"free text with {KEY}"}}
    for status in (401, 500, 400):
        for provider in (openai(llm_server), anthropic(llm_server)):
            llm_server.fail_next(status, body=secret_body)
            with pytest.raises(LlmError) as caught:
                await provider.complete(system=PROMPT, user=PROMPT)
            errors.append(caught.value)
    dead = OpenAiCompatProvider(base_url=f"http://127.0.0.1:{free_port()}/v1", model="m",
                                api_key=KEY)
    with pytest.raises(LlmError) as caught:
        await dead.complete(system=PROMPT, user=PROMPT)
    errors.append(caught.value)

    texts = [str(e) for e in errors] + [repr(e) for e in errors]
    texts += [str(llm_application_error(e)) for e in errors]
    texts += [repr(openai(llm_server)), repr(anthropic(llm_server))]
    texts.append(caplog.text)
    for text in texts:
        assert KEY not in text
        assert PROMPT not in text
        assert "free text" not in text
    # No chained httpx exception (which could carry the request) rides along.
    assert all(e.__cause__ is None and (e.__context__ is None or e.__suppress_context__)
               for e in errors)


# --- the factory -----------------------------------------------------------------------


def test_factory_defaults_to_offline():
    provider = provider_from_settings(LlmSettings(), DictSecrets())
    assert isinstance(provider, OfflineProvider)


def test_factory_builds_openai_compat_with_and_without_a_key(llm_server):
    keyless = provider_from_settings(
        LlmSettings(provider="openai_compat", base_url="http://localhost:11434/v1",
                    model="llama3.1"), DictSecrets())
    assert isinstance(keyless, OpenAiCompatProvider) and keyless.is_local
    keyed = provider_from_settings(
        LlmSettings(provider="openai_compat", base_url="https://api.openai.com/v1",
                    model="gpt-4o", api_key_secret="openai", timeout_s=5),
        DictSecrets(openai=KEY))
    assert keyed.model == "gpt-4o" and keyed.timeout_s == 5 and not keyed.is_local
    assert KEY not in repr(keyed)


def test_factory_builds_anthropic():
    provider = provider_from_settings(
        LlmSettings(provider="anthropic", model="claude-sonnet-4-5", api_key_secret="anth"),
        DictSecrets(anth=KEY))
    assert isinstance(provider, AnthropicProvider)
    assert provider.url == "https://api.anthropic.com/v1/messages"


@pytest.mark.parametrize(
    ("settings", "missing"),
    [
        (LlmSettings(provider="openai_compat", model="gpt-4o"), "llm.baseUrl"),
        (LlmSettings(provider="openai_compat", base_url="http://localhost:1/v1"), "llm.model"),
        (LlmSettings(provider="anthropic", api_key_secret="anth"), "llm.model"),
        (LlmSettings(provider="anthropic", model="claude-x"), "llm.apiKeySecret"),
        (LlmSettings(provider="anthropic", model="claude-x", api_key_secret="absent"),
         "llm.apiKeySecret"),
        (LlmSettings(provider="openai_compat", base_url="http://x/v1", model="m",
                     api_key_secret="absent"), "llm.apiKeySecret"),
    ],
)
def test_factory_names_the_missing_setting(settings, missing):
    with pytest.raises(LlmConfigurationError) as caught:
        provider_from_settings(settings, DictSecrets(anth=KEY))
    assert caught.value.setting == missing
    assert missing in str(caught.value)
    assert (caught.value.code, caught.value.retryable) == ("configuration", False)


@pytest.mark.parametrize(
    ("url", "local"),
    [("http://localhost:11434/v1", True), ("http://127.0.0.1:1234/v1", True),
     ("http://192.168.1.20:8000/v1", True), ("http://[::1]:8000/v1", True),
     ("http://ollama:11434/v1", True), ("http://gpu-box.local/v1", True),
     ("https://api.openai.com/v1", False), ("https://openrouter.ai/api/v1", False),
     ("http://8.8.8.8/v1", False)],
)
def test_local_endpoint_detection(url, local):
    assert is_local_endpoint(url) is local
