"""Contact research runs that end outside their happy path, against the real services
(Temporal dev server, worker, API): a run terminated from outside JobCtrl has its task
closed by the reconciler exactly once, and a run canceled through
``POST /v1/workflow-runs/{runId}/actions/cancel`` ends with the task ``canceled`` and the
run ``WorkflowCanceled``. In both, the research is held mid-flight by an opted-in public
source on a loopback server that answers only when the test opens its gate; the activity
left running afterwards never adds candidates to the closed task."""

from __future__ import annotations

import json
import threading
from datetime import timedelta

import pytest
import pytest_asyncio

from backend.config import AppPaths, TemporalSettings
from backend.store.db import Database
from backend.supervision.supervisor import Supervisor
from backend.temporal.client import connect_temporal
from backend.temporal.loops.reconciler import reconcile_runs
from tests.api_http import api_http
from tests.app_db import connect_db
from tests.integration.conftest import write_settings
from tests.integration.test_contact_research import (
    FILLER,
    POSTING_HTML,
    LoopbackWeb,
    Replying,
)
from tests.integration.test_preparation import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

TEAM_PAGE = "<html><body><p>Ana Silva - Talent Partner, ana.silva@q.example</p></body></html>"
PLATFORM_HTML = (f"<h2>Platform Engineer</h2><p>{FILLER}</p>"
                 "<p>Questions? Contact Jonas Weber, Engineering Manager, at"
                 " jonas.weber@harborlight.example.</p>")


class GatedWeb(LoopbackWeb):
    """A loopback public web whose ``/slow/`` pages wait until the gate opens; robots.txt
    and the postings' own pages answer at once."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self._lock = threading.Lock()
        self.waiting = 0  # /slow/ requests received so far
        web = self

        class Handler(Replying):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                path = self.path.split("?", 1)[0]
                if path.startswith("/slow/"):
                    with web._lock:
                        web.waiting += 1
                    web.gate.wait(timeout=120)  # bounded: never hangs the test process
                    self.reply(TEAM_PAGE, "text/html")
                elif path == "/robots.txt":
                    self.reply("User-agent: *\nAllow: /\n", "text/plain")
                else:
                    self.reply(f"<html><body><p>{path}</p></body></html>", "text/html")

        self._serve(Handler)  # ThreadingHTTPServer's request threads are daemons

    def held(self) -> int:
        with self._lock:
            return self.waiting

    def stop(self) -> None:
        self.gate.set()
        super().stop()


def board(web: GatedWeb) -> dict:
    common = {"location": "Rotterdam", "remote": "hybrid", "employmentType": "full_time",
              "postedAt": "2026-01-05", "tags": [], "company": "Harborlight"}
    return {"postings": [
        {**common, "id": "hl-1", "url": f"{web.url}/jobs/backend", "title": "Backend Engineer",
         "descriptionHtml": POSTING_HTML},
        {**common, "id": "hl-2", "url": f"{web.url}/jobs/platform",
         "title": "Platform Engineer", "descriptionHtml": PLATFORM_HTML},
    ]}


def rows(app_dir, sql: str, params: tuple = ()) -> list:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute(sql, params).fetchall()


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def gated(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("contacts-lifecycle")
    web = GatedWeb()
    board_file = app_dir / "board.json"
    board_file.write_text(json.dumps(board(web)), encoding="utf-8")
    write_settings(app_dir, sources=[{"kind": "json_file", "id": "hl", "path": str(board_file)}],
                   contactResearchSources=[{"id": "team", "kind": "web_page",
                                            "url": f"{web.url}/slow/{{company}}"}])
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    http = api_http(supervisor.info)
    started = await http.post("/v1/pipeline/actions/run-stage", json={"stage": "discover"})
    assert started.status_code == 202, started.text

    async def prepared() -> bool:
        return rows(app_dir, "SELECT COUNT(*) FROM job_events WHERE type IN"
                             " ('WorkflowCompleted', 'WorkflowFailed') AND"
                             " json_extract(payload_json, '$.workflowType') ="
                             " 'JobPreparationWorkflow'")[0][0] >= 2

    await wait_for(prepared, timeout=180)
    jobs = {j["title"]: j["jobId"] for j in (await http.get("/v1/jobs")).json()["items"]}
    db = await Database.open(AppPaths(app_dir).database)
    yield {"app_dir": app_dir, "http": http, "web": web, "jobs": jobs, "db": db,
           "supervisor": supervisor}
    web.gate.set()
    await db.close()
    await http.aclose()
    await supervisor.stop()
    web.stop()


async def start_held_research(gated, job_id: str) -> dict:
    """Start research with the gate shut and wait until it is held at the slow source."""
    web, http = gated["web"], gated["http"]
    web.gate.clear()
    before = web.held()
    accepted = await http.post(f"/v1/jobs/{job_id}/actions/research-contacts")
    assert accepted.status_code == 202, accepted.text

    async def held() -> bool:
        return web.held() > before

    await wait_for(held, timeout=60)
    return accepted.json()


async def task_view(http, job_id: str, task_id: str) -> dict:
    contacts = (await http.get(f"/v1/jobs/{job_id}/contacts")).json()
    return next(t for t in contacts["tasks"] if t["taskId"] == task_id)


async def the_late_activity_gave_up(gated, task_id: str, status: str) -> None:
    """Open the gate and wait until the research activity still running for the closed
    task has reached its commit and kept nothing (the worker logs that)."""
    gated["web"].gate.set()
    log_file = AppPaths(gated["app_dir"]).logs / "worker.log"
    line = f"contact research task {task_id} closed ({status}) during extraction"

    async def logged() -> bool:
        return line in log_file.read_text(encoding="utf-8", errors="replace")

    await wait_for(logged, timeout=120)


def events_of(app_dir, run_id: str) -> list[str]:
    return [r[0] for r in rows(app_dir, "SELECT type FROM job_events WHERE run_id = ?"
                                        " ORDER BY id", (run_id,))]


async def test_a_run_terminated_outside_jobctrl_closes_its_task_once(gated):
    http, app_dir, db = gated["http"], gated["app_dir"], gated["db"]
    job_id = gated["jobs"]["Backend Engineer"]
    accepted = await start_held_research(gated, job_id)
    task_id, run_id = accepted["taskId"], accepted["firstExecutionRunId"]
    assert (await task_view(http, job_id, task_id))["status"] == "running"

    client = await connect_temporal(TemporalSettings(), gated["supervisor"].info.temporal_address)
    await client.get_workflow_handle(accepted["workflowId"], run_id=run_id).terminate(
        reason="terminated from outside JobCtrl by the test")
    # The worker's own reconciler may get there first; either way it is recorded once.
    # (A run is probed from the second after its start: the cutoff has whole seconds.)

    async def reconciled() -> bool:
        await reconcile_runs(db, client, older_than=timedelta(0))
        return rows(app_dir, "SELECT status FROM contact_research_tasks WHERE task_id = ?",
                    (task_id,)) != [("running",)]

    await wait_for(reconciled, timeout=60)

    # The canonical row and the projection the reconciler refreshed (read before any API
    # read could refresh it) both show the task closed with the bounded code.
    assert rows(app_dir, "SELECT status, failure_code FROM contact_research_tasks"
                         " WHERE task_id = ?", (task_id,)) == [("failed", "terminated")]
    assert rows(app_dir, "SELECT status, failure_code FROM contact_research_task_projections"
                         " WHERE task_id = ?", (task_id,)) == [("failed", "terminated")]
    task = await task_view(http, job_id, task_id)
    assert task["status"] == "failed" and task["failure"] == {"code": "terminated"}
    assert task["finishedAt"] and task["runId"] == run_id
    run = (await http.get(f"/v1/workflow-runs/{run_id}")).json()
    assert (run["status"], run["errorCode"]) == ("failed", "terminated")
    timeline = events_of(app_dir, run_id)
    assert timeline.count("ContactResearchFailed") == 1 and timeline.count("WorkflowFailed") == 1

    again = await reconcile_runs(db, client, older_than=timedelta(0))
    assert run_id not in again.closed
    assert events_of(app_dir, run_id).count("ContactResearchFailed") == 1

    await the_late_activity_gave_up(gated, task_id, "failed")
    assert rows(app_dir, "SELECT COUNT(*) FROM contact_candidates WHERE task_id = ?",
                (task_id,)) == [(0,)]
    assert rows(app_dir, "SELECT status FROM contact_research_tasks WHERE task_id = ?",
                (task_id,)) == [("failed",)]
    assert events_of(app_dir, run_id).count("ContactResearchFailed") == 1


async def test_cancel_through_the_api_ends_canceled(gated):
    http, app_dir = gated["http"], gated["app_dir"]
    job_id = gated["jobs"]["Platform Engineer"]
    accepted = await start_held_research(gated, job_id)
    task_id, run_id = accepted["taskId"], accepted["firstExecutionRunId"]

    canceled = await http.post(f"/v1/workflow-runs/{run_id}/actions/cancel",
                               json={"reason": "changed my mind"})
    assert canceled.status_code == 202, canceled.text
    assert canceled.json() == {"workflowId": accepted["workflowId"], "runId": run_id,
                               "cancellationRequested": True}

    async def task_closed() -> bool:
        return (await task_view(http, job_id, task_id))["status"] != "running"

    await wait_for(task_closed, timeout=60)
    task = await task_view(http, job_id, task_id)
    assert task["status"] == "canceled" and task["failure"] == {"code": "canceled"}
    assert task["finishedAt"] and task["candidateCount"] is None
    run = (await http.get(f"/v1/workflow-runs/{run_id}")).json()
    assert run["status"] == "canceled" and run["cancelRequested"] is True
    timeline = [entry["type"] for entry in run["timeline"]]
    assert timeline.count("WorkflowCanceled") == 1
    assert "WorkflowFailed" not in timeline and "WorkflowCompleted" not in timeline
    assert rows(app_dir, "SELECT status, failure_code FROM contact_research_tasks"
                         " WHERE task_id = ?", (task_id,)) == [("canceled", "canceled")]
    assert events_of(app_dir, run_id).count("ContactResearchFailed") == 1

    # The extraction still running when the run closed finishes without adding anything;
    # the job is free for a new research run, which the open gate lets complete.
    await the_late_activity_gave_up(gated, task_id, "canceled")
    assert rows(app_dir, "SELECT COUNT(*) FROM contact_candidates WHERE task_id = ?",
                (task_id,)) == [(0,)]
    assert (await task_view(http, job_id, task_id))["status"] == "canceled"
    again = await http.post(f"/v1/jobs/{job_id}/actions/research-contacts")
    assert again.status_code == 202 and again.json()["taskId"] != task_id
    second = again.json()["taskId"]

    async def second_done() -> bool:
        return (await task_view(http, job_id, second))["status"] == "completed"

    await wait_for(second_done, timeout=120)
    contacts = (await http.get(f"/v1/jobs/{job_id}/contacts")).json()
    assert {c["taskId"] for c in contacts["candidates"]} == {second}
    assert {"Jonas Weber", "Ana Silva"} <= {c["name"] for c in contacts["candidates"]}
