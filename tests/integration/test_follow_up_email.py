"""The follow-up email end to end on a real dev server, worker and API, with a real
loopback SMTP server: drafted from the profile, sent from the user's account, and sent at
most once when the worker is killed right after the SMTP server accepted the message."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_asyncio

from backend.supervision.supervisor import Supervisor
from tests.api_http import api_http
from tests.app_db import connect_db
from tests.fakes.smtp_server import FakeSmtpServer
from tests.integration.conftest import write_settings
from tests.integration.env_helpers import override_environ
from tests.integration.test_preparation import PROFILE, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]


def add_job(app_dir: Path, n: int, title: str) -> str:
    """A stored job, as Discover leaves it (straight into the app's database)."""
    key = f"job_{0xF0_0000 + n:024x}"
    with connect_db(app_dir / "jobctrl.db") as conn:
        conn.execute(
            "INSERT INTO jobs (job_id, tenant_id, canonical_url, url, title, company,"
            " description_html, first_source, first_seen_at, last_seen_at) VALUES (?, 'local',"
            " ?, ?, ?, 'Acme', '<p>Python backend role.</p>', 'demo_board',"
            " '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
            (key, f"https://acme.example/{n}", f"https://acme.example/{n}", title))
    return key


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def mail_env(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("follow-up-app")
    smtp = FakeSmtpServer(username="ada", password="mail-pass").start()
    write_settings(app_dir, sources=[], smtp={**smtp.smtp_settings(), "passwordSecret": "smtp"},
                   stageHeartbeatTimeoutS=5)
    restore_environ = override_environ(JOBCTRL_SECRETS_BACKEND="file", JOBCTRL_ENABLE_FAULTS="1")
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    http = api_http(supervisor.info)
    assert (await http.put("/v1/secrets/smtp", json={"value": "mail-pass"})).status_code == 204
    assert (await http.put("/v1/profile", json=PROFILE)).status_code == 200
    yield {"app_dir": app_dir, "http": http, "smtp": smtp, "supervisor": supervisor}
    await http.aclose()
    await supervisor.stop()
    smtp.stop()
    restore_environ()


async def applied_with_draft(env, n: int, title: str) -> tuple[str, dict]:
    http = env["http"]
    key = add_job(env["app_dir"], n, title)
    marked = await http.post(f"/v1/jobs/{key}/actions/mark", json={"userStatus": "applied"})
    assert marked.status_code == 200, marked.text
    draft = await http.get(f"/v1/applications/{key}/follow-up/email")
    assert draft.status_code == 200, draft.text
    return key, draft.json()


async def last_round(http, key: str) -> dict | None:
    emails = (await http.get(f"/v1/applications/{key}")).json()["emails"]
    return emails[-1] if emails else None


async def test_a_follow_up_email_is_sent_from_the_users_account_and_closes_the_follow_up(
        mail_env):
    http, smtp = mail_env["http"], mail_env["smtp"]
    key, draft = await applied_with_draft(mail_env, 1, "Backend Engineer")
    before = smtp.count
    sent = await http.post(f"/v1/applications/{key}/follow-up/email",
                           json={"recipient": "jobs@acme.example", "subject": draft["subject"],
                                 "body": draft["body"]})
    assert sent.status_code == 202, sent.text
    assert sent.json()["workflowId"] == f"follow-up-email-{key}-1"

    async def delivered() -> bool:
        latest = await last_round(http, key)
        return latest is not None and latest["status"] == "sent"

    await wait_for(delivered, timeout=120)
    assert smtp.count == before + 1
    message = smtp.received[-1]
    assert message.recipients == ["jobs@acme.example"]
    assert message.message["Subject"] == draft["subject"]
    assert message.message["Message-ID"].startswith(f"<follow-up-{key}-1@")
    assert "I recently applied for the Backend Engineer position" in \
        message.message.get_payload(decode=True).decode()
    detail = (await http.get(f"/v1/applications/{key}")).json()
    assert detail["followUp"]["status"] == "done"


async def test_a_worker_killed_after_the_smtp_send_never_sends_twice(mail_env):
    http, smtp, app_dir = mail_env["http"], mail_env["smtp"], mail_env["app_dir"]
    supervisor = mail_env["supervisor"]
    key, draft = await applied_with_draft(mail_env, 2, "Platform Engineer")
    before = smtp.count
    worker_pid = supervisor.service("worker").pid
    (app_dir / "faults").mkdir(exist_ok=True)
    (app_dir / "faults" / "follow-up-after-smtp-send").touch()
    sent = await http.post(f"/v1/applications/{key}/follow-up/email",
                           json={"recipient": "hiring@acme.example",
                                 "subject": draft["subject"], "body": draft["body"]})
    assert sent.status_code == 202, sent.text

    async def settled() -> bool:
        latest = await last_round(http, key)
        return latest is not None and latest["status"] == "failed"

    await wait_for(settled, timeout=180)
    assert supervisor.service("worker").pid != worker_pid, "the worker really died mid-send"
    latest = await last_round(http, key)
    # It went out before the worker died, but nobody recorded that: unknown, never resent.
    assert latest["errorCode"] == "submit_outcome_unknown"
    assert smtp.count == before + 1, "the retried attempt did not send again"
    assert smtp.received[-1].recipients == ["hiring@acme.example"]
    with connect_db(app_dir / "jobctrl.db") as conn:
        status = conn.execute("SELECT status FROM follow_up_emails WHERE job_id = ?",
                              (key,)).fetchall()
        sent_events = conn.execute("SELECT COUNT(*) FROM job_events WHERE job_id = ? AND type"
                                   " = 'FollowUpEmailSent'", (key,)).fetchone()[0]
    assert status == [("failed",)] and sent_events == 0
    detail = (await http.get(f"/v1/applications/{key}")).json()
    assert detail["followUp"]["status"] == "scheduled", "not marked done on a guess"
