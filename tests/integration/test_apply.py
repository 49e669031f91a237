"""Apply end to end on a real dev server, worker and API, with a real loopback SMTP server
and a real loopback page server: Apply Review approvals, browser-form packets, CAPTCHA
fail-closed, dry-run, an email send that survives a killed worker without a second send,
and the standing auto-apply loop (toggling, approvals re-read at claim, budget halt)."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import pytest_asyncio

from backend.store.spend import utc_day
from backend.supervision.supervisor import Supervisor
from desktop.client import ApiClient
from tests.api_http import api_http
from tests.app_db import connect_db
from tests.fakes.smtp_server import FakeSmtpServer
from tests.integration.conftest import write_settings
from tests.integration.env_helpers import override_environ
from tests.integration.test_preparation import PROFILE, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

FORM_PAGE = ("<!doctype html><html><body><h1>Apply</h1><form method='post'>"
             "<input name='name'><input type='file' name='resume'><button>Submit</button>"
             "</form></body></html>")
CAPTCHA_PAGE = ("<!doctype html><html><head><script src='https://www.google.com/recaptcha/"
                "api.js'></script></head><body><form><div class='g-recaptcha' data-sitekey="
                "'k'></div><button>Submit</button></form></body></html>")
LOOP_ID = "apply-auto-local"


class PageServer:
    """Application pages on loopback; counts GETs and POSTs (a POST would be a submit)."""

    def __init__(self):
        self.gets: Counter[str] = Counter()
        self.posts: Counter[str] = Counter()
        pages = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802
                pages.gets[self.path] += 1
                body = (CAPTCHA_PAGE if "captcha" in self.path else FORM_PAGE).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):  # noqa: N802
                pages.posts[self.path] += 1
                self.send_response(500)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()


def board(path, pages: PageServer) -> None:
    from backend.sources.board_file import demo_board_text

    postings = json.loads(demo_board_text())["postings"][:6]
    targets = [f"{pages.base}/apply/form-1", f"{pages.base}/apply/captcha",
               "mailto:kill@acme.example", "mailto:dry@acme.example",
               f"{pages.base}/apply/form-2", f"{pages.base}/apply/form-3"]
    for posting, target in zip(postings, targets, strict=True):
        if target.startswith("mailto:"):
            posting.pop("applyUrl", None)
            posting["descriptionHtml"] += (f'<p>Apply by email: <a href="{target}">'
                                           f"{target[7:]}</a></p>")
        else:
            posting["applyUrl"] = target
    path.write_text(json.dumps({"postings": postings}), encoding="utf-8")


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def apply_env(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("apply-app")
    pages = PageServer()
    smtp = FakeSmtpServer(username="ada", password="mail-pass").start()
    board(app_dir / "board.json", pages)
    write_settings(app_dir, sources=[{"kind": "json_file", "id": "apply-board",
                                      "path": str(app_dir / "board.json")}],
                   smtp={**smtp.smtp_settings(), "passwordSecret": "smtp"},
                   stageHeartbeatTimeoutS=5, localNetworkHosts=[pages.base.removeprefix("http://")])
    restore_environ = override_environ(JOBCTRL_SECRETS_BACKEND="file", JOBCTRL_ENABLE_FAULTS="1")
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    api = ApiClient.from_runtime(supervisor.info)
    http = api_http(supervisor.info)
    assert (await http.put("/v1/secrets/smtp", json={"value": "mail-pass"})).status_code == 204
    assert (await http.put("/v1/profile", json=PROFILE)).status_code == 200
    await api.run_stage("discover")

    async def all_prepared() -> bool:
        return (await api.apply_queue())["total"] == 6

    await wait_for(all_prepared, timeout=300)
    yield {"app_dir": app_dir, "api": api, "http": http, "smtp": smtp, "pages": pages,
           "supervisor": supervisor}
    await http.aclose()
    await api.close()
    await supervisor.stop()
    smtp.stop()
    pages.stop()
    restore_environ()


async def item_for(api: ApiClient, needle: str) -> dict:
    """The queue item whose target URL or recipient contains ``needle`` (any status)."""
    for status in ("awaiting_approval", "approved", "in_progress", "awaiting_manual_completion",
                   "applied", "rejected", "failed"):
        for item in (await api.apply_queue(status=status))["items"]:
            target = item["target"]
            if needle in (target["url"] or "") or needle in (target["recipient"] or ""):
                return item
    raise AssertionError(f"no queue item for {needle}")


async def wait_status(api: ApiClient, needle: str, status: str, timeout: float = 120) -> dict:
    async def reached() -> bool:
        return (await item_for(api, needle))["status"] == status

    await wait_for(reached, timeout=timeout)
    return await item_for(api, needle)


def db_rows(app_dir, sql: str, params=()) -> list:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute(sql, params).fetchall()


async def wait_run_closed(app_dir, run_id: str) -> None:
    async def closed() -> bool:
        return bool(db_rows(app_dir, "SELECT 1 FROM job_events WHERE run_id = ? AND type IN"
                                     " ('WorkflowCompleted', 'WorkflowFailed', 'WorkflowCanceled')",
                            (run_id,)))

    await wait_for(closed, timeout=60)


def loop_runs(app_dir) -> list[tuple[str, str]]:
    """(run id, status) of every standing-loop run, from its lifecycle events."""
    rows = db_rows(app_dir, "SELECT s.run_id, (SELECT t.type FROM job_events t WHERE"
                            " t.run_id = s.run_id AND t.type IN ('WorkflowCompleted',"
                            " 'WorkflowFailed', 'WorkflowCanceled') LIMIT 1) FROM job_events s"
                            " WHERE s.type = 'WorkflowStarted' AND s.workflow_id = ?"
                            " ORDER BY s.id", (LOOP_ID,))
    return [(run_id, terminal or "running") for run_id, terminal in rows]


def loop_started_count(app_dir) -> int:
    return db_rows(app_dir, "SELECT COUNT(*) FROM job_events WHERE type = 'WorkflowStarted'"
                            " AND workflow_id = ?", (LOOP_ID,))[0][0]


async def test_prepared_jobs_wait_for_approval_with_their_targets_and_packets(apply_env):
    api = apply_env["api"]
    queue = await api.apply_queue()
    assert queue["total"] == 6
    assert {item["status"] for item in queue["items"]} == {"awaiting_approval"}
    kinds = Counter(item["target"]["kind"] for item in queue["items"])
    assert kinds == {"browser_form": 4, "email": 2}
    email = await item_for(api, "kill@acme.example")
    packet = email["packet"]
    assert email["target"]["recipient"] == "kill@acme.example"
    assert os.path.isfile(packet["resumePdf"]) and os.path.isfile(packet["coverLetterPdf"])
    assert packet["answers"]["email"] == PROFILE["resume"]["basics"]["email"]
    assert email["approval"] is None and email["failure"] is None
    assert (await api.apply_queue(status="applied"))["total"] == 0


async def test_bad_commands_get_typed_errors_and_change_nothing(apply_env):
    http, api = apply_env["http"], apply_env["api"]
    email = await item_for(api, "kill@acme.example")
    key = email["jobKey"]
    wrong = await http.post(f"/v1/apply/{key}/approve", json={
        "recipient": "someone@else.example", "attachments": [
            email["packet"]["resumePdf"], email["packet"]["coverLetterPdf"]]})
    assert wrong.status_code == 422 and wrong.json()["error"]["code"] == "approval_mismatch"
    missing = await http.post(f"/v1/apply/{key}/approve", json={})
    assert missing.status_code == 422 and missing.json()["error"]["code"] == "approval_mismatch"
    assert (await item_for(api, "kill@acme.example"))["status"] == "awaiting_approval"
    unknown = await http.post(f"/v1/apply/job_{'0' * 24}/approve", json={})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "job_not_found"
    not_approved = await http.post(f"/v1/apply/{key}/start")
    assert not_approved.status_code == 409
    bad_status = await http.get("/v1/apply/queue", params={"status": "exploded"})
    assert bad_status.status_code == 422


async def test_a_browser_form_parks_a_packet_and_never_submits(apply_env):
    http, api, pages = apply_env["http"], apply_env["api"], apply_env["pages"]
    key = (await item_for(api, "/apply/form-1"))["jobKey"]
    approved = await api.apply_action(key, "approve")
    assert approved["status"] == "approved" and approved["approval"]["approvedAt"]
    started = await http.post(f"/v1/apply/{key}/start")
    assert started.status_code == 202 and started.json()["workflowId"] == f"apply-{key}"
    parked = await wait_status(api, "/apply/form-1", "awaiting_manual_completion")
    assert parked["packet"]["targetUrl"].endswith("/apply/form-1")
    assert pages.gets["/apply/form-1"] >= 1 and sum(pages.posts.values()) == 0
    again = await http.post(f"/v1/apply/{key}/start")
    assert again.status_code == 409
    done = await api.apply_action(key, "mark-applied")
    assert done["status"] == "applied"
    assert (await api.job(key))["userStatus"] == "applied"


async def test_a_captcha_page_fails_closed(apply_env):
    http, api, pages = apply_env["http"], apply_env["api"], apply_env["pages"]
    key = (await item_for(api, "/apply/captcha"))["jobKey"]
    await api.apply_action(key, "approve")
    assert (await http.post(f"/v1/apply/{key}/start")).status_code == 202
    failed = await wait_status(api, "/apply/captcha", "failed")
    assert failed["failure"]["code"] == "apply_challenge_detected"
    assert "CAPTCHA" in failed["failure"]["message"]
    assert failed["packet"] is not None  # what the user needs to apply by hand
    assert sum(pages.posts.values()) == 0


async def test_a_worker_killed_during_an_email_apply_never_sends_twice(apply_env):
    http, api, smtp = apply_env["http"], apply_env["api"], apply_env["smtp"]
    app_dir, supervisor = apply_env["app_dir"], apply_env["supervisor"]
    item = await item_for(api, "kill@acme.example")
    key, packet = item["jobKey"], item["packet"]
    approved = await api.apply_action(key, "approve", recipient="kill@acme.example",
                                      attachments=[packet["coverLetterPdf"], packet["resumePdf"]])
    assert approved["approval"]["recipient"] == "kill@acme.example"
    worker_pid = supervisor.service("worker").pid
    (app_dir / "faults").mkdir(exist_ok=True)
    (app_dir / "faults" / "apply-after-smtp-send").touch()
    first = await http.post(f"/v1/apply/{key}/start")
    assert first.status_code == 202
    failed = await wait_status(api, "kill@acme.example", "failed", timeout=180)
    assert supervisor.service("worker").pid != worker_pid, "the worker really died mid-send"
    assert failed["failure"]["code"] == "submit_outcome_unknown"
    assert smtp.count == 1, "the retried attempt did not send again"
    received = smtp.received[0]
    assert received.recipients == ["kill@acme.example"]
    assert sorted(received.attachment_names) == sorted(
        os.path.basename(p) for p in (packet["resumePdf"], packet["coverLetterPdf"]))
    # Approving and starting again still never sends: the intent is remembered.
    await wait_run_closed(app_dir, first.json()["firstExecutionRunId"])
    await api.apply_action(key, "approve", recipient="kill@acme.example",
                           attachments=[packet["resumePdf"], packet["coverLetterPdf"]])
    assert (await http.post(f"/v1/apply/{key}/start")).status_code == 202
    await wait_status(api, "kill@acme.example", "failed")
    await asyncio.sleep(1)
    assert smtp.count == 1
    assert (await api.apply_action(key, "mark-applied"))["status"] == "applied"
    # Marked applied in Apply Review, the job is on the application board at once.
    card = await api.application(key)
    assert (card["stage"], card["via"]) == ("applied", "apply_review")
    assert card["posting"]["title"] == item["title"]


async def test_dry_run_never_sends(apply_env):
    http, api, smtp, app_dir = (apply_env["http"], apply_env["api"], apply_env["smtp"],
                                apply_env["app_dir"])
    await api.patch_settings(applyDryRun=True)
    try:
        item = await item_for(api, "dry@acme.example")
        key, packet = item["jobKey"], item["packet"]
        await api.apply_action(key, "approve", recipient="dry@acme.example",
                               attachments=[packet["resumePdf"], packet["coverLetterPdf"]])
        sent_before = smtp.count
        assert (await http.post(f"/v1/apply/{key}/start")).status_code == 202
        await wait_status(api, "dry@acme.example", "awaiting_manual_completion")
        assert smtp.count == sent_before
        ready = db_rows(app_dir, "SELECT json_extract(payload_json, '$.dryRun') FROM job_events"
                                 " WHERE type = 'ApplyPacketReady' AND job_id = ?", (key,))
        assert ready == [(1,)]
        assert db_rows(app_dir, "SELECT COUNT(*) FROM apply_submit_intents WHERE job_id = ?",
                       (key,)) == [(0,)]
    finally:
        await api.patch_settings(applyDryRun=False)


async def test_toggling_auto_apply_keeps_exactly_one_loop(apply_env):
    api, app_dir = apply_env["api"], apply_env["app_dir"]
    for enabled in (True, False, True, False, True, True, False, True):
        await api.patch_settings(autoApply=enabled)
        running = [run for run, status in loop_runs(app_dir) if status == "running"]
        assert len(running) <= 1, running

    async def loop_running() -> bool:
        return (await api.apply_loop())["state"] == "running"

    await wait_for(loop_running, timeout=60)
    # A loop canceled by an "off" just before the last "on" may still be winding down;
    # its successor starts only after it closed. Watch several reconcile passes: never two.
    for _ in range(10):
        running = [run for run, status in loop_runs(app_dir) if status == "running"]
        assert len(running) <= 1, running
        await asyncio.sleep(0.5)
    await wait_for(loop_running, timeout=60)
    loop = await api.apply_loop()
    assert loop["enabled"] is True and loop["workflowId"] == LOOP_ID and loop["runId"]
    statuses = loop_runs(app_dir)
    assert [status for _, status in statuses].count("running") == 1, statuses
    assert len(statuses) <= 5, "at most one start per switch-on (5 of them) plus none extra"
    # The loop is a normal run, listed (and cancelable) among the runs.
    runs = await api.workflow_runs(status="running")
    names = [r["displayName"] for r in runs["items"] if r["workflowId"] == LOOP_ID]
    assert names == ["Standing apply loop"]

    await api.patch_settings(autoApply=False)

    async def loop_stopped() -> bool:
        return (await api.apply_loop())["state"] == "stopped"

    await wait_for(loop_stopped, timeout=60)
    final = loop_runs(app_dir)
    assert all(status != "running" for _, status in final), final
    assert {status for _, status in final} == {"WorkflowCanceled"}, "switching off cancels"


async def test_the_loop_rereads_the_approval_setting_at_claim(apply_env):
    api, app_dir = apply_env["api"], apply_env["app_dir"]
    approved_key = (await item_for(api, "/apply/form-3"))["jobKey"]
    waiting_key = (await item_for(api, "/apply/form-2"))["jobKey"]
    await api.apply_action(approved_key, "approve")
    await api.patch_settings(autoApply=True)
    try:
        await wait_status(api, "/apply/form-3", "awaiting_manual_completion")
        # Claimed in the same poll that saw form-2 unapproved: form-2 was left alone.
        assert (await item_for(api, "/apply/form-2"))["status"] == "awaiting_approval"
        assert db_rows(app_dir, "SELECT COUNT(*) FROM job_events WHERE type = 'ApplyStarted'"
                                " AND job_id = ?", (waiting_key,)) == [(0,)]
        await api.patch_settings(applyApprovalRequired=False)  # mid-loop, no restart
        parked = await wait_status(api, "/apply/form-2", "awaiting_manual_completion")
        assert parked["approval"] is None
        assert len({run for run, _ in loop_runs(app_dir)}) >= 1
    finally:
        await api.patch_settings(applyApprovalRequired=True, autoApply=False)


async def test_a_depleted_budget_halts_the_loop_until_the_ceiling_is_raised(apply_env):
    api, app_dir = apply_env["api"], apply_env["app_dir"]

    async def loop_state_is(state: str):
        async def check() -> bool:
            return (await api.apply_loop())["state"] == state
        return check

    await wait_for(await loop_state_is("stopped"), timeout=60)
    await api.patch_settings(dailyBudgetUsd=1)
    with connect_db(app_dir / "jobctrl.db") as conn:  # today's ledger at the ceiling
        conn.execute("INSERT INTO llm_spend (tenant_id, day, provider, model, calls,"
                     " input_tokens, output_tokens, cost_micro_usd, updated_at) VALUES"
                     " ('local', ?, 'openai_compat', 'gpt-4o', 40, 1, 1, 1000000, 'now')",
                     (utc_day(),))
    ledger = db_rows(app_dir, "SELECT SUM(cost_micro_usd), SUM(calls) FROM llm_spend")
    starts, apply_events = loop_started_count(app_dir), db_rows(
        app_dir, "SELECT COUNT(*) FROM job_events WHERE type = 'ApplyStarted'")
    await api.patch_settings(autoApply=True)
    await wait_for(await loop_state_is("budget_halted"), timeout=60)
    halted = await api.apply_loop()
    assert halted["reason"] == "budget_exceeded"
    assert db_rows(app_dir, "SELECT json_extract(payload_json, '$.errorCode') FROM job_events"
                            " WHERE type = 'WorkflowFailed' AND run_id = ?",
                   (halted["runId"],)) == [("budget_exceeded",)]
    await asyncio.sleep(6)  # several reconcile passes: none may restart it
    assert loop_started_count(app_dir) == starts + 1
    assert (await api.apply_loop())["state"] == "budget_halted"
    assert db_rows(app_dir, "SELECT COUNT(*) FROM job_events WHERE type = 'ApplyStarted'") \
        == apply_events, "no apply work after the halt"
    assert db_rows(app_dir, "SELECT SUM(cost_micro_usd), SUM(calls) FROM llm_spend") == ledger
    await api.patch_settings(dailyBudgetUsd=5)  # raising the ceiling restarts it
    await wait_for(await loop_state_is("running"), timeout=60)
    assert (await api.apply_loop())["runId"] != halted["runId"]
    await api.patch_settings(autoApply=False)
    await wait_for(await loop_state_is("stopped"), timeout=60)
