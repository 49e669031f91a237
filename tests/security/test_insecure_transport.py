"""An SMTP password over a connection with no TLS, or a model API key over http:// to
another machine, is refused unless the user confirmed it in plain words: by the settings
API (typed error, nothing saved) and again at use, by the sender and the model client, so
a settings file edited by hand cannot skip it. Loopback is exempt."""

from __future__ import annotations

import json

import pytest

from backend.apply.email_sender import Application, SmtpSendError, send_application
from backend.config import AppPaths, LlmSettings, SmtpSettings, load_settings
from backend.domain.transport import api_key_in_clear, is_loopback_host, smtp_password_in_clear
from backend.llm.base import InsecureTransportNotConfirmed
from backend.llm.factory import provider_from_settings
from tests.api_http import in_process_api
from tests.fakes.smtp_server import FakeSmtpServer

CODE = "insecure_transport_not_confirmed"
SMTP_NONE = {"host": "mail.example.com", "port": 25, "security": "none", "username": "ada",
             "passwordSecret": "smtp", "fromAddress": "ada@example.com"}
LLM_HTTP = {"provider": "openai_compat", "baseUrl": "http://models.example.com/v1",
            "model": "m", "apiKeySecret": "llm-key"}


@pytest.fixture
def api(tmp_path):
    with in_process_api(tmp_path) as client:
        yield client


def test_only_loopback_is_exempt():
    for host in ("127.0.0.1", "127.8.9.1", "::1", "[::1]", "localhost", "LOCALHOST."):
        assert is_loopback_host(host), host
    for host in ("192.168.1.10", "10.0.0.1", "example.com", "localhost.example.com", "", None):
        assert not is_loopback_host(host), host
    assert not api_key_in_clear(base_url="http://localhost:11434/v1", has_key=True)
    assert not api_key_in_clear(base_url="http://[::1]:8080/v1", has_key=True)
    assert not api_key_in_clear(base_url="https://api.example.com/v1", has_key=True)
    assert not api_key_in_clear(base_url="http://models.example.com/v1", has_key=False)
    assert api_key_in_clear(base_url="http://192.168.1.10:11434/v1", has_key=True)
    assert api_key_in_clear(base_url="HTTP://models.example.com", has_key=True)
    assert not smtp_password_in_clear(host="127.0.0.1", security="none", username="ada")
    assert not smtp_password_in_clear(host="mail.example.com", security="starttls",
                                      username="ada")
    assert not smtp_password_in_clear(host="mail.example.com", security="none", username=None)
    assert smtp_password_in_clear(host="mail.example.com", security="none", username="ada")


@pytest.mark.parametrize(("section", "body", "field"), [
    ("smtp", SMTP_NONE, "smtp.security"), ("llm", LLM_HTTP, "llm.baseUrl")])
def test_the_settings_api_refuses_without_confirmation_and_accepts_with_it(api, section, body,
                                                                           field):
    before = api.get("/v1/settings").json()
    refused = api.patch("/v1/settings", json={"dailyBudgetUsd": 3, section: body})
    assert refused.status_code == 422, refused.text
    error = refused.json()["error"]
    assert error["code"] == CODE
    assert field in error["fields"] and f"{section}.insecureTransportConfirmed" in error["fields"]
    assert "unencrypted" in error["message"]
    assert api.get("/v1/settings").json() == before  # nothing changed

    accepted = api.patch("/v1/settings", json={
        section: {**body, "insecureTransportConfirmed": True}})
    assert accepted.status_code == 200, accepted.text
    assert accepted.json()[section]["insecureTransportConfirmed"] is True

    # Another save that leaves the same server alone keeps the confirmation...
    again = api.patch("/v1/settings", json={"dailyBudgetUsd": 4})
    assert again.status_code == 200 and again.json()[section]["insecureTransportConfirmed"]
    # ...but a different server must be confirmed again.
    # (``smtp`` is replaced as a whole by a patch, ``llm`` merged key by key.)
    moved = ({**body, "host": "other.example.com"} if section == "smtp"
             else {"baseUrl": "http://other.example.com/v1"})
    assert api.patch("/v1/settings", json={section: moved}).json()["error"]["code"] == CODE
    # A safe transport clears the stored confirmation.
    safe = ({**body, "security": "starttls"} if section == "smtp"
            else {"baseUrl": "https://models.example.com/v1"})
    cleared = api.patch("/v1/settings", json={section: safe})
    assert cleared.status_code == 200
    assert cleared.json()[section]["insecureTransportConfirmed"] is False


def test_loopback_needs_no_confirmation(api):
    response = api.patch("/v1/settings", json={
        "llm": {**LLM_HTTP, "baseUrl": "http://127.0.0.1:11434/v1"},
        "smtp": {**SMTP_NONE, "host": "localhost"}})
    assert response.status_code == 200, response.text


def test_the_connection_test_refuses_an_unconfirmed_http_key_too(api, monkeypatch):
    monkeypatch.setenv("JOBCTRL_SECRETS_BACKEND", "file")
    assert api.put("/v1/secrets/llm-key", json={"value": "sk-secret"}).status_code == 204
    response = api.post("/v1/settings/llm/test", json={"llm": LLM_HTTP})
    assert response.status_code == 422 and response.json()["error"]["code"] == CODE


# -- at use: settings written by hand -------------------------------------------------------


def _hand_written(tmp_path, **settings) -> AppPaths:
    paths = AppPaths(tmp_path)
    paths.settings.write_text(json.dumps(settings), encoding="utf-8")
    return paths


@pytest.fixture
def mail_server():
    """The loopback SMTP stand-in, addressed as ``0.0.0.0``: Linux connects that to this
    machine, while the rule (rightly cautious) does not count it as loopback, so the
    password would count as leaving the machine."""
    server = FakeSmtpServer(username="ada", password="mail-pass").start()
    yield server
    server.stop()


def test_the_sender_refuses_stored_settings_without_the_confirmation(tmp_path, mail_server):
    unconfirmed = {**mail_server.smtp_settings(), "host": "0.0.0.0", "passwordSecret": "smtp"}
    smtp = load_settings(_hand_written(tmp_path, smtp=unconfirmed)).smtp
    app = Application(recipient="hr@acme.example", subject="s", body="b", attachments=[],
                      intent_key="k")
    with pytest.raises(SmtpSendError) as refused:
        send_application(smtp, "mail-pass", app)
    assert refused.value.code == CODE and not refused.value.maybe_delivered
    assert mail_server.count == 0  # nothing sent

    confirmed = SmtpSettings.model_validate({**unconfirmed, "insecureTransportConfirmed": True})
    send_application(confirmed, "mail-pass", app)
    assert mail_server.count == 1


class _Secrets:
    def get(self, name: str) -> str | None:
        return "sk-secret"


def test_the_model_client_refuses_stored_settings_without_the_confirmation(tmp_path):
    llm = load_settings(_hand_written(tmp_path, llm=LLM_HTTP)).llm
    with pytest.raises(InsecureTransportNotConfirmed) as refused:
        provider_from_settings(llm, _Secrets())
    assert refused.value.code == CODE and not refused.value.retryable
    assert "sk-secret" not in str(refused.value)

    confirmed = LlmSettings.model_validate({**LLM_HTTP, "insecureTransportConfirmed": True})
    assert provider_from_settings(confirmed, _Secrets()).model == "m"
    local = LlmSettings.model_validate({**LLM_HTTP, "baseUrl": "http://localhost:11434/v1"})
    assert provider_from_settings(local, _Secrets()).model == "m"
