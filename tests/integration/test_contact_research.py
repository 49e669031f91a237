"""Supervised contact research against the real services: ContactResearchWorkflow on the
real Temporal dev server, a real loopback "public web" that counts every request, and a
real loopback OpenAI-compatible server that counts every paid call."""

from __future__ import annotations

import json
import threading
from collections import Counter
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import pytest_asyncio

from backend.supervision.supervisor import Supervisor
from tests.api_http import api_http
from tests.app_db import connect_db
from tests.fakes.llm_servers import FakeLlmServer
from tests.integration.conftest import write_settings
from tests.integration.test_preparation import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

FILLER = " ".join(
    "We build the booking, tracking and billing services that thousands of shippers use "
    "every day, and we keep them boring, observable and well documented." for _ in range(8))
POSTING_HTML = (
    f"<h2>Backend Engineer</h2><p>{FILLER}</p>"
    "<p>Questions? Contact Maria Lopez, Senior Technical Recruiter, at "
    "maria.lopez@harborlight.example.</p>"
    "<p>You will report to our hiring manager, Tom Becker.</p>")
PLAIN_HTML = f"<h2>Data Engineer</h2><p>{FILLER}</p><p>Apply through the careers site.</p>"
TEAM_PAGE = ("<html><body><h1>Our people</h1><p>Ana Silva - Talent Partner,"
             " ana.silva@harborlight.example</p></body></html>")
LIVE_POSTING_PAGE = ("<html><body><main><p>Engineering Manager: Priya Raman"
                     " (priya@harborlight.example)</p></main></body></html>")


class Replying(BaseHTTPRequestHandler):
    def reply(self, body: str, kind: str, status: int = 200) -> None:
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", f"{kind}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


class LoopbackWeb:
    """A threaded HTTP server on loopback for one handler class."""

    def _serve(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


class PublicWeb(LoopbackWeb):
    """A loopback stand-in for the public web: robots.txt allows all, a team page per
    company and a live posting page; counts every request by path."""

    def __init__(self) -> None:
        self.requests: Counter[str] = Counter()
        self._lock = threading.Lock()
        web = self

        class Handler(Replying):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                path = self.path.split("?", 1)[0]
                with web._lock:
                    web.requests[path] += 1
                if path == "/robots.txt":
                    body, status = "User-agent: *\nAllow: /\n", 200
                elif path.startswith("/team/"):
                    body, status = TEAM_PAGE, 200
                elif path.startswith("/jobs/"):
                    body, status = LIVE_POSTING_PAGE, 200
                else:
                    body, status = "not here", 404
                kind = "text/plain" if path == "/robots.txt" or status != 200 else "text/html"
                self.reply(body, kind, status)

        self._serve(Handler)

    def total(self) -> int:
        with self._lock:
            return sum(self.requests.values())


def board(web: PublicWeb) -> dict:
    common = {"location": "Rotterdam", "remote": "hybrid", "employmentType": "full_time",
              "postedAt": "2026-01-05", "tags": []}
    return {"postings": [
        {**common, "id": "hl-1", "url": f"{web.url}/jobs/backend", "title": "Backend Engineer",
         "company": "Harborlight", "descriptionHtml": POSTING_HTML},
        {**common, "id": "hl-2", "url": f"{web.url}/jobs/data", "title": "Data Engineer",
         "company": "Harborlight", "descriptionHtml": PLAIN_HTML},
    ]}


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def contacts_app(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("contacts-app")
    web = PublicWeb()
    fake = FakeLlmServer().start()
    fake.set_usage(4000, 1200)
    board_file = app_dir / "board.json"
    board_file.write_text(json.dumps(board(web)), encoding="utf-8")
    write_settings(app_dir, sources=[{"kind": "json_file", "id": "hl", "path": str(board_file)}])
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    http = api_http(supervisor.info)
    started = await http.post("/v1/pipeline/actions/run-stage", json={"stage": "discover"})
    assert started.status_code == 202
    await wait_for(lambda: _prep_settled(app_dir, 2), timeout=180)
    jobs = {j["title"]: j["jobId"] for j in (await http.get("/v1/jobs")).json()["items"]}
    yield {"app_dir": app_dir, "http": http, "web": web, "fake": fake, "jobs": jobs,
           "supervisor": supervisor}
    await http.aclose()
    await supervisor.stop()
    fake.stop()
    web.stop()


def _rows(app_dir, sql: str, params: tuple = ()) -> list:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute(sql, params).fetchall()


async def _prep_settled(app_dir, jobs: int) -> bool:
    finished = _rows(app_dir, "SELECT COUNT(*) FROM job_events WHERE type IN"
                              " ('WorkflowCompleted', 'WorkflowFailed') AND"
                              " json_extract(payload_json, '$.workflowType') ="
                              " 'JobPreparationWorkflow'")[0][0]
    return finished >= jobs


async def research(http, job_id: str) -> dict:
    """Start research and wait for its task to end; returns (accepted, contacts)."""
    accepted = await http.post(f"/v1/jobs/{job_id}/actions/research-contacts")
    assert accepted.status_code == 202, accepted.text
    body = accepted.json()
    state: dict = {}

    async def finished() -> bool:
        state["contacts"] = (await http.get(f"/v1/jobs/{job_id}/contacts")).json()
        task = next(t for t in state["contacts"]["tasks"] if t["taskId"] == body["taskId"])
        return task["status"] in ("completed", "failed", "canceled")

    await wait_for(finished, timeout=120)
    task = next(t for t in state["contacts"]["tasks"] if t["taskId"] == body["taskId"])
    return {"accepted": body, "task": task, "contacts": state["contacts"]}


async def test_nothing_runs_until_the_user_starts_it(contacts_app):
    http, app_dir = contacts_app["http"], contacts_app["app_dir"]
    runs = (await http.get("/v1/workflow-runs",
                           params={"workflowType": "ContactResearchWorkflow"})).json()
    assert runs["total"] == 0, "discovery and preparation never start contact research"
    assert _rows(app_dir, "SELECT COUNT(*) FROM contact_research_tasks")[0][0] == 0
    assert _rows(app_dir, "SELECT COUNT(*) FROM job_events WHERE type LIKE 'Contact%'")[0][0] == 0
    backend = contacts_app["jobs"]["Backend Engineer"]
    empty = (await http.get(f"/v1/jobs/{backend}/contacts")).json()
    assert empty == {"tasks": [], "candidates": []}


async def test_default_research_reads_only_the_stored_posting(contacts_app):
    http, web, fake, app_dir = (contacts_app["http"], contacts_app["web"], contacts_app["fake"],
                                contacts_app["app_dir"])
    backend = contacts_app["jobs"]["Backend Engineer"]
    web_before = web.total()
    done = await research(http, backend)
    accepted, task = done["accepted"], done["task"]
    assert accepted["workflowId"] == f"contacts-{backend}-1"
    assert accepted["firstExecutionRunId"] and accepted["alreadyRunning"] is False
    assert task["status"] == "completed" and task["failure"] is None
    assert task["startedAt"] and task["finishedAt"] and task["runId"] == accepted[
        "firstExecutionRunId"]
    assert task["sourceAttempts"] == [{
        "sourceId": "posting_text", "kind": "posting_text", "url": f"{web.url}/jobs/backend",
        "status": "used", "errorCode": None, "chars": task["sourceAttempts"][0]["chars"]}]
    assert web.total() == web_before, "no public source is fetched by default"
    assert fake.calls == 0  # the offline provider
    by_name = {c["name"]: c for c in done["contacts"]["candidates"]}
    assert set(by_name) == {"Maria Lopez", "Tom Becker"}
    maria = by_name["Maria Lopez"]
    assert maria["title"] == "Senior Technical Recruiter"
    assert maria["email"] == "maria.lopez@harborlight.example"
    assert maria["confidence"] == 0.9 and "Contact Maria Lopez" in maria["evidence"]
    assert by_name["Tom Becker"]["email"] is None  # unknown stays unknown
    # Canonical rows, projected into the read models.
    assert _rows(app_dir, "SELECT COUNT(*) FROM contact_candidates WHERE task_id = ?",
                 (accepted["taskId"],))[0][0] == 2
    assert _rows(app_dir, "SELECT COUNT(*) FROM contacts")[0][0] == 2
    assert ("email", "maria.lopez@harborlight.example") in _rows(
        app_dir, "SELECT attribute, value FROM contact_attributes")
    projected = _rows(app_dir, "SELECT status, candidate_count FROM"
                               " contact_research_task_projections WHERE task_id = ?",
                      (accepted["taskId"],))
    assert projected == [("completed", 2)]
    run = (await http.get("/v1/workflow-runs",
                          params={"workflowType": "ContactResearchWorkflow"})).json()
    assert run["total"] == 1 and run["items"][0]["status"] == "completed"


async def test_a_posting_without_contacts_finds_nobody(contacts_app):
    http = contacts_app["http"]
    done = await research(http, contacts_app["jobs"]["Data Engineer"])
    assert done["task"]["status"] == "completed" and done["task"]["candidateCount"] == 0
    assert done["contacts"]["candidates"] == []


async def test_unknown_or_malformed_job_keys_are_typed_errors(contacts_app):
    http, app_dir = contacts_app["http"], contacts_app["app_dir"]
    tasks_before = _rows(app_dir, "SELECT COUNT(*) FROM contact_research_tasks")[0][0]
    unknown = "job_" + "0" * 24
    for response in (await http.post(f"/v1/jobs/{unknown}/actions/research-contacts"),
                     await http.get(f"/v1/jobs/{unknown}/contacts")):
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "job_not_found"
    malformed = await http.post("/v1/jobs/not-a-job/actions/research-contacts")
    assert malformed.status_code == 422
    assert malformed.json()["error"]["code"] == "validation_error"
    assert _rows(app_dir, "SELECT COUNT(*) FROM contact_research_tasks")[0][0] == tasks_before


async def test_an_opted_in_source_is_fetched(contacts_app):
    http, web = contacts_app["http"], contacts_app["web"]
    backend = contacts_app["jobs"]["Backend Engineer"]
    patched = await http.patch("/v1/settings", json={"contactResearchSources": [
        {"id": "team", "kind": "web_page", "url": f"{web.url}/team/{{company}}"},
        {"id": "live", "kind": "posting_page"}]})
    assert patched.status_code == 200, patched.text
    done = await research(http, backend)
    assert done["accepted"]["workflowId"] == f"contacts-{backend}-2"
    attempts = {a["sourceId"]: a for a in done["task"]["sourceAttempts"]}
    assert attempts["team"]["status"] == "fetched"
    assert attempts["team"]["url"] == f"{web.url}/team/Harborlight"
    assert attempts["live"]["status"] == "fetched"
    assert web.requests["/team/Harborlight"] == 1 and web.requests["/jobs/backend"] == 1
    names = {c["name"] for c in done["contacts"]["candidates"]}
    assert {"Ana Silva", "Priya Raman", "Maria Lopez", "Tom Becker"} <= names
    ana = next(c for c in done["contacts"]["candidates"] if c["name"] == "Ana Silva")
    assert ana["sourceUrl"] == f"{web.url}/team/Harborlight"
    assert ana["email"] == "ana.silva@harborlight.example"
    reset = await http.patch("/v1/settings", json={"contactResearchSources": []})
    assert reset.status_code == 200


def model_reply(request) -> str:
    return json.dumps({"candidates": [
        {"name": "Maria Lopez", "title": "Senior Technical Recruiter",
         "email": "maria.lopez@harborlight.example", "sourceId": "posting_text",
         "evidence": "Contact Maria Lopez, Senior Technical Recruiter", "confidence": 0.95},
        {"name": "Invented Person", "email": "invented@harborlight.example",
         "sourceId": "posting_text", "evidence": "made up", "confidence": 0.9},
    ]})


async def test_paid_extraction_is_metered_then_the_ceiling_stops_it_at_preflight(contacts_app):
    http, fake, web, app_dir = (contacts_app["http"], contacts_app["fake"], contacts_app["web"],
                                contacts_app["app_dir"])
    backend = contacts_app["jobs"]["Backend Engineer"]
    fake.reply_with(model_reply)
    # One call costs $0.022 (gpt-4o, 4,000 in and 1,200 out): $0.03 admits one run only.
    patched = await http.patch("/v1/settings", json={
        "llm": {"provider": "openai_compat", "baseUrl": fake.openai_base_url, "model": "gpt-4o"},
        "dailyBudgetUsd": 0.03})
    assert patched.status_code == 200, patched.text
    paid = await research(http, backend)
    assert paid["task"]["status"] == "completed"
    assert paid["task"]["provider"] == "openai_compat" and paid["task"]["model"] == "gpt-4o"
    assert fake.calls == 1
    system = fake.last_request.body["messages"][0]["content"]
    assert "recruiters, hiring managers" in system
    spend = (await http.get("/v1/spend")).json()
    assert Decimal(str(spend["today"]["spentUsd"])) == Decimal("0.022")
    assert spend["byModel"][0]["model"] == "gpt-4o" and spend["byModel"][0]["calls"] == 1
    found = _rows(app_dir, "SELECT name FROM contact_candidates WHERE task_id = ?",
                  (paid["accepted"]["taskId"],))
    assert found == [("Maria Lopez",)], "a name in no source is never recorded"

    # The ledger now leaves less than one call's estimate: the next run fails at its
    # preflight, before any source or model is touched.
    web_before = web.total()
    refused = await research(http, backend)
    assert refused["task"]["status"] == "failed"
    assert refused["task"]["failure"] == {"code": "budget_exceeded"}
    assert fake.calls == 1, "zero paid calls after the ceiling"
    assert web.total() == web_before
    terminal = _rows(app_dir, "SELECT json_extract(payload_json, '$.errorCode') FROM job_events"
                              " WHERE type = 'WorkflowFailed' AND run_id = ?",
                     (refused["accepted"]["firstExecutionRunId"],))
    assert terminal == [("budget_exceeded",)]
