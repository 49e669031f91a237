"""The SMTP sender against a real loopback SMTP server: what arrives, login, and which
failures are safe to retry (nothing handed over) versus never (maybe delivered)."""

from __future__ import annotations

import pytest

from backend.apply.email_sender import Application, SmtpSendError, send_application
from backend.config import SmtpSettings
from backend.supervision.ports import free_port
from tests.fakes.smtp_server import FakeSmtpServer


@pytest.fixture
def smtp():
    server = FakeSmtpServer(username="ada", password="s3cret").start()
    yield server
    server.stop()


@pytest.fixture
def application(tmp_path) -> Application:
    resume, cover = tmp_path / "resume.pdf", tmp_path / "cover-letter.pdf"
    resume.write_bytes(b"%PDF-1.4 resume")
    cover.write_bytes(b"%PDF-1.4 cover")
    return Application(recipient="hr@acme.example", subject="Application: Engineer (Acme)",
                       body="Hello", attachments=[str(resume), str(cover)],
                       intent_key="apply-job_1-run_1")


def settings_for(server: FakeSmtpServer, **changes) -> SmtpSettings:
    return SmtpSettings.model_validate({**server.smtp_settings(), **changes})


def test_the_message_arrives_with_both_pdfs_and_a_traceable_id(smtp, application):
    message_id = send_application(settings_for(smtp), "s3cret", application)
    assert smtp.count == 1
    received = smtp.received[0]
    assert received.recipients == ["hr@acme.example"]
    assert received.mail_from == "ada@example.org"
    assert received.attachment_names == ["resume.pdf", "cover-letter.pdf"]
    assert received.message["Message-ID"] == message_id == "<apply-job_1-run_1@example.org>"


def test_a_wrong_password_is_an_authentication_failure_before_anything_is_sent(
        smtp, application):
    with pytest.raises(SmtpSendError) as failure:
        send_application(settings_for(smtp), "wrong", application)
    assert failure.value.code == "authentication" and not failure.value.maybe_delivered
    assert smtp.count == 0


def test_an_unreachable_server_is_safe_to_retry(application):
    settings = SmtpSettings(host="127.0.0.1", port=free_port(), security="none",
                            from_address="ada@example.org")
    with pytest.raises(SmtpSendError) as failure:
        send_application(settings, None, application, timeout=5)
    assert failure.value.code == "smtp_unavailable" and not failure.value.maybe_delivered


def test_an_unconfigured_account_sends_nothing(application):
    with pytest.raises(SmtpSendError) as failure:
        send_application(SmtpSettings(), None, application)
    assert failure.value.code == "smtp_not_configured"
