"""A line break or NUL in a posting's title or company (untrusted text) used to make the
application e-mail fail to build after the submit intent was saved: the job showed
"outcome unknown" although nothing was sent. Header values are made
single-line before anything is recorded, and a message that cannot be built is a plain
failure (nothing sent), never an unknown outcome."""

from __future__ import annotations

import json

import pytest
from temporalio.testing import ActivityEnvironment

from backend.apply.email_sender import (
    Application,
    SmtpSendError,
    application_subject,
    header_text,
    send_application,
)
from backend.config import AppPaths, SmtpSettings
from backend.projections.apply_runs import read_state
from backend.secrets.store import SecretStore
from backend.store import apply as store
from backend.temporal.activities.apply import ApplyActivities, ExecuteInput
from backend.temporal.contracts import RunRef
from tests.fakes.smtp_server import FakeSmtpServer
from tests.unit.test_apply_store import add_prepared_job, claim

RECIPIENT = "hr@acme.example"
EMAIL_HTML = f'<p>Apply by email: <a href="mailto:{RECIPIENT}">{RECIPIENT}</a></p>'


@pytest.fixture
def smtp():
    server = FakeSmtpServer(username="ada", password="mail-pass").start()
    yield server
    server.stop()


def test_header_text_is_one_line_without_control_characters():
    assert header_text("Engineer\r\nBcc: evil@example.com") == "Engineer Bcc: evil@example.com"
    assert header_text("A\x00B\tC\x1b\x7f\x85D\u2028E\u2029F") == "A B C D E F"
    assert header_text("  Zoë   Łukasz 株式会社 🚀 ") == "Zoë Łukasz 株式会社 🚀"
    assert header_text(None) == ""
    assert application_subject("Dev\nOps", "Acme\x00 Inc") == "Application: Dev Ops (Acme Inc)"


def test_an_application_is_built_with_single_line_headers():
    app = Application(recipient=" hr@acme.example\r\n", subject="A\r\nB\x00C", body="Hi\nthere",
                      attachments=[], intent_key="k")
    assert (app.recipient, app.subject, app.body) == ("hr@acme.example", "A B C", "Hi\nthere")


def test_a_message_that_cannot_be_built_is_a_failure_before_anything_is_sent(smtp):
    settings = SmtpSettings.model_validate(smtp.smtp_settings())
    app = Application(recipient=RECIPIENT, subject="s", body="b",
                      attachments=["/nonexistent/resume.pdf"], intent_key="k")
    with pytest.raises(SmtpSendError) as failure:
        send_application(settings, "mail-pass", app)
    assert failure.value.code == "message_invalid" and not failure.value.maybe_delivered
    assert smtp.count == 0


async def test_a_subject_with_line_breaks_and_nul_is_sent_clean_and_the_job_is_applied(
        db, tmp_path, smtp, monkeypatch):
    monkeypatch.setenv("JOBCTRL_SECRETS_BACKEND", "file")
    paths = AppPaths(tmp_path / "app")
    paths.app_dir.mkdir(parents=True)
    paths.settings.write_text(json.dumps({"smtp": {**smtp.smtp_settings(),
                                                   "passwordSecret": "smtp"}}), encoding="utf-8")
    SecretStore(paths).set("smtp", "mail-pass")
    job_id = await add_prepared_job(db, tmp_path, 1, apply_url=None, html=EMAIL_HTML)
    async with db.transaction() as conn:
        await conn.execute("UPDATE jobs SET title = ?, company = ? WHERE job_id = ?",
                           ("Engineer\r\nBcc: evil@example.com", "Acme\x00 Corp\n", job_id))
        attachments = [str(tmp_path / "1-resume.pdf"), str(tmp_path / "1-cover.pdf")]
        await store.approve(conn, job_id, recipient=RECIPIENT, attachments=attachments)
    assert await claim(db, "run-1") == [job_id]

    run = RunRef(workflow_id="apply-auto-local", run_id="run-1", workflow_type="ApplyWorkflow")
    outcome = await ActivityEnvironment().run(ApplyActivities(db, paths).execute_apply,
                                              ExecuteInput(run=run, job_id=job_id))

    assert outcome.status == "applied", outcome
    assert smtp.count == 1
    received = smtp.received[0]
    assert received.recipients == [RECIPIENT]
    assert received.message["Subject"] == ("Application: Engineer Bcc: evil@example.com"
                                           " (Acme Corp)")
    assert received.message["Bcc"] is None
    async with db.transaction() as conn:
        intent = await store.read_intent(conn, job_id)
        state = await read_state(conn, job_id)
    assert intent.status == "sent"
    assert state.status == "applied"
