"""Workflow runs and debug activity against the real stack (Temporal dev server, worker,
API): the list after a demo Discover, filters and pagination with exact totals, a run's
ordered timeline, cancellation from the API (idempotent, never overwriting a terminal
result) and from the ``temporal`` CLI (the requester backfilled from Temporal history by
the worker's reconcile pass)."""

from __future__ import annotations

import asyncio
import sys
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
import pytest_asyncio

import backend.projections  # noqa: F401 - registers the folds the writer runs
from backend.domain import events as ev
from backend.domain.clock import parse_iso, to_iso
from backend.store.db import Database
from backend.store.events import append_event
from backend.supervision.supervisor import Supervisor
from tests.api_http import api_http
from tests.app_db import connect_db
from tests.fakes.llm_servers import FakeLlmServer
from tests.integration.conftest import write_settings
from tests.integration.test_paid_pipeline import scripted_reply
from tests.integration.test_preparation import PROFILE, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session"),
              pytest.mark.timeout(900)]

JOBS = 234
PREP = "JobPreparationWorkflow"
CONTINUATIONS = 1  # saving the first profile starts profile-continuation-1 (before Discover)
TEMPORAL_CLI = Path(sys.executable).with_name("temporal")


def db_rows(app_dir: Path, sql: str, params=()) -> list[tuple]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute(sql, params).fetchall()


def terminal_count(app_dir: Path) -> int:
    return db_rows(app_dir, "SELECT COUNT(*) FROM job_events WHERE type IN"
                            " ('WorkflowCompleted', 'WorkflowFailed', 'WorkflowCanceled')")[0][0]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def stack(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("runs-app")
    write_settings(app_dir, stageHeartbeatTimeoutS=5)
    fake = FakeLlmServer().start()
    fake.reply_with(scripted_reply)
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    http = api_http(supervisor.info)
    assert (await http.put("/v1/profile", json=PROFILE)).status_code == 200

    async def continuation_closed() -> bool:  # the first profile resumes preparation
        return terminal_count(app_dir) >= CONTINUATIONS

    await wait_for(continuation_closed, timeout=120)
    started = await http.post("/v1/pipeline/actions/run-stage", json={"stage": "discover"})
    assert started.status_code == 202, started.text

    async def all_closed() -> bool:
        return terminal_count(app_dir) >= JOBS + 1 + CONTINUATIONS

    await wait_for(all_closed, timeout=800)
    yield {"app_dir": app_dir, "http": http, "fake": fake, "supervisor": supervisor,
           "discover_run_id": started.json()["firstExecutionRunId"]}
    await http.aclose()
    await supervisor.stop()
    fake.stop()


async def all_runs(http, **params) -> list[dict]:
    items, offset = [], 0
    while True:
        page = (await http.get("/v1/workflow-runs",
                               params={**params, "limit": 200, "offset": offset})).json()
        items += page["items"]
        offset += 200
        if offset >= page["total"]:
            assert len(items) == page["total"]
            return items


async def test_the_list_holds_the_discover_run_and_every_preparation(stack):
    http, discover_run = stack["http"], stack["discover_run_id"]
    everything = (await http.get("/v1/workflow-runs", params={"limit": 1})).json()
    assert everything["total"] == JOBS + 1 + CONTINUATIONS and len(everything["items"]) == 1

    discover = (await http.get("/v1/workflow-runs",
                               params={"workflowType": "DiscoverWorkflow"})).json()
    assert discover["total"] == 1
    run = discover["items"][0]
    assert run["runId"] == discover_run and run["workflowId"] == "discover-local"
    assert run["displayName"] == "Discover run" and run["status"] == "completed"
    assert run["relatedJob"] is None and run["durationMs"] >= 0

    prep_pages = []
    for offset in (0, 100, 200):
        page = (await http.get("/v1/workflow-runs", params={
            "workflowType": PREP, "limit": 100, "offset": offset, "sort": "startedAt",
            "order": "asc"})).json()
        assert page["total"] == JOBS and page["offset"] == offset
        prep_pages.append(page["items"])
    assert [len(items) for items in prep_pages] == [100, 100, JOBS - 200]
    preps = [item for items in prep_pages for item in items]
    assert len({item["runId"] for item in preps}) == JOBS
    starts = [item["startedAt"] for item in preps]
    assert starts == sorted(starts)
    for item in preps:
        assert item["displayName"] == "Job preparation" and item["status"] == "completed"
        assert item["relatedJob"]["jobKey"] == item["workflowId"].removeprefix("prep-")
        assert item["relatedJob"]["title"] and item["relatedJob"]["company"]

    by_status = {status: (await http.get("/v1/workflow-runs", params={"status": status})
                          ).json()["total"]
                 for status in ("running", "completed", "failed", "canceled")}
    assert by_status == {"running": 0, "completed": JOBS + 1 + CONTINUATIONS, "failed": 0, "canceled": 0}
    none = (await http.get("/v1/workflow-runs", params={"workflowType": "NoSuchWorkflow"})).json()
    assert none == {"total": 0, "limit": 50, "offset": 0, "items": []}

    # Date windows: inclusive since, exclusive before, totals over the whole window.
    discover_start = run["startedAt"]
    assert (await http.get("/v1/workflow-runs", params={"startedBefore": discover_start})
            ).json()["total"] == CONTINUATIONS
    assert (await http.get("/v1/workflow-runs", params={"startedSince": discover_start})
            ).json()["total"] == JOBS + 1
    just_after = to_iso(parse_iso(discover_start) + timedelta(milliseconds=1))
    only = (await http.get("/v1/workflow-runs", params={
        "startedSince": discover_start, "startedBefore": just_after})).json()
    assert only["total"] == 1 and only["items"][0]["runId"] == discover_run
    middle = starts[JOBS // 2]
    expected = sum(1 for start in starts if start >= middle)
    window = await all_runs(http, workflowType=PREP, startedSince=middle)
    assert len(window) == expected and all(item["startedAt"] >= middle for item in window)
    before = (await http.get("/v1/workflow-runs", params={
        "workflowType": PREP, "startedBefore": middle, "limit": 7})).json()
    assert before["total"] == JOBS - expected and len(before["items"]) == 7
    bad = await http.get("/v1/workflow-runs", params={"startedSince": "not-a-date"})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "validation_error"


async def test_a_preparation_run_has_an_ordered_timeline_and_its_job(stack):
    http = stack["http"]
    item = (await http.get("/v1/workflow-runs", params={"workflowType": PREP, "limit": 1})
            ).json()["items"][0]
    detail = (await http.get(f"/v1/workflow-runs/{item['runId']}")).json()
    assert detail["relatedJob"] == item["relatedJob"] is not None
    timeline = detail["timeline"]
    ids = [entry["eventId"] for entry in timeline]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    types = [entry["type"] for entry in timeline]
    assert types[0] == "WorkflowStarted" and types[-1] == "WorkflowCompleted"
    stages = [entry["stage"] for entry in timeline if entry["type"] == "StageCompleted"]
    assert stages == ["enrich", "score", "tailor", "cover", "pdf"]
    db_ids = [row[0] for row in db_rows(stack["app_dir"],
                                        "SELECT id FROM job_events WHERE run_id = ? ORDER BY id",
                                        (item["runId"],))]
    assert ids == db_ids
    assert detail["failureDiagnostics"] == {"errorCode": None, "automaticRetryable": False,
                                            "manualRecoveryAvailable": False,
                                            "providerFailures": None}
    assert detail["technical"] == {"workflowId": item["workflowId"], "runId": item["runId"],
                                   "rawErrorCode": None}
    assert detail["cancelRequested"] is False


async def wait_history_requester(app_dir: Path, run_id: str) -> None:
    """The worker's reconcile pass (every 15 s) records the Temporal-side requester; a
    GET only reads it."""
    async def recorded() -> bool:
        return any(fact[0] == "temporal_history" for fact in cancel_facts(app_dir, run_id))

    await wait_for(recorded, timeout=90)


def cancel_facts(app_dir: Path, run_id: str) -> list[tuple]:
    return db_rows(
        app_dir,
        "SELECT json_extract(payload_json, '$.sourceBoundary'),"
        " json_extract(payload_json, '$.requester'), json_extract(payload_json, '$.reason')"
        " FROM job_events WHERE type = 'WorkflowCancellationRequested' AND run_id = ?"
        " ORDER BY id", (run_id,))


async def slow_rescore(stack, job_index: int) -> dict:
    """A preparation run that is sure to be in progress: its Score call waits on a slow
    loopback provider."""
    http, fake = stack["http"], stack["fake"]
    patched = await http.patch("/v1/settings", json={"llm": {
        "provider": "openai_compat", "baseUrl": fake.openai_base_url, "model": "gpt-4o"}})
    assert patched.status_code == 200, patched.text
    fake.delay(5)
    job = (await http.get("/v1/jobs", params={"sort": "title", "limit": 1,
                                              "offset": job_index})).json()["items"][0]["jobId"]
    calls = fake.calls
    started = await http.post(f"/v1/jobs/{job}/actions/rescore")
    assert started.status_code == 202, started.text
    body = started.json()

    async def scoring() -> bool:
        return fake.calls > calls

    await wait_for(scoring, timeout=60)
    return body


async def wait_status(http, run_id: str, status: str) -> dict:
    async def reached() -> bool:
        return (await http.get(f"/v1/workflow-runs/{run_id}")).json()["status"] == status

    await wait_for(reached, timeout=60)
    return (await http.get(f"/v1/workflow-runs/{run_id}")).json()


async def test_cancel_from_the_api_is_idempotent_and_never_overwrites_the_result(stack):
    http, app_dir = stack["http"], stack["app_dir"]
    started = await slow_rescore(stack, 0)
    run_id, workflow_id = started["firstExecutionRunId"], started["workflowId"]
    running = (await http.get(f"/v1/workflow-runs/{run_id}")).json()
    assert running["status"] == "running" and running["cancelRequested"] is False

    url = f"/v1/workflow-runs/{run_id}/actions/cancel"
    first, repeat = await asyncio.gather(http.post(url, json={"reason": "changed my mind"}),
                                         http.post(url, json={"reason": "changed my mind"}))
    accepted = {"workflowId": workflow_id, "runId": run_id, "cancellationRequested": True}
    assert (first.status_code, first.json()) == (202, accepted)
    assert (repeat.status_code, repeat.json()) == (202, accepted)
    intents = [fact for fact in cancel_facts(app_dir, run_id) if fact[0] == "request_intent"]
    assert intents == [("request_intent", "local_operator", "changed my mind")]

    await wait_status(http, run_id, "canceled")
    await wait_history_requester(app_dir, run_id)
    canceled = (await http.get(f"/v1/workflow-runs/{run_id}")).json()
    assert canceled["cancelRequested"] is True and canceled["closedAt"]
    timeline = canceled["timeline"]
    assert "WorkflowCanceled" in [entry["type"] for entry in timeline]
    intent = next(e for e in timeline if e["sourceBoundary"] == "request_intent")
    assert intent["requester"] == "local_operator" and intent["reason"] == "changed my mind"
    # The authoritative requester from Temporal's history is a separate fact: the API's
    # own client identity, never presented as the JobCtrl request.
    history = [e for e in timeline if e["sourceBoundary"] == "temporal_history"]
    assert len(history) == 1 and history[0]["requester"] not in ("", "local_operator")

    after = await http.post(url)
    assert after.status_code == 200
    assert after.json() == {"workflowId": workflow_id, "runId": run_id, "status": "canceled",
                            "alreadyTerminal": True}
    await http.get(f"/v1/workflow-runs/{run_id}")
    assert len([f for f in cancel_facts(app_dir, run_id) if f[0] == "request_intent"]) == 1
    assert len([f for f in cancel_facts(app_dir, run_id) if f[0] == "temporal_history"]) == 1
    terminals = db_rows(app_dir, "SELECT type FROM job_events WHERE run_id = ? AND type IN"
                                 " ('WorkflowCompleted', 'WorkflowFailed', 'WorkflowCanceled')",
                        (run_id,))
    assert terminals == [("WorkflowCanceled",)]

    # A terminal run of the earlier Discover stays what it was.
    discover = stack["discover_run_id"]
    done = await http.post(f"/v1/workflow-runs/{discover}/actions/cancel")
    assert done.status_code == 200 and done.json()["status"] == "completed"


async def test_a_cancel_from_the_temporal_cli_is_backfilled_from_history(stack):
    http, app_dir, supervisor = stack["http"], stack["app_dir"], stack["supervisor"]
    started = await slow_rescore(stack, 1)
    run_id, workflow_id = started["firstExecutionRunId"], started["workflowId"]
    process = await asyncio.create_subprocess_exec(
        str(TEMPORAL_CLI), "workflow", "cancel", "--address", supervisor.info.temporal_address,
        "--namespace", supervisor.info.temporal_namespace, "--workflow-id", workflow_id,
        "--run-id", run_id,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await process.communicate()
    assert process.returncode == 0, (out, err)

    await wait_history_requester(app_dir, run_id)
    detail = (await http.get(f"/v1/workflow-runs/{run_id}")).json()
    facts = [e for e in detail["timeline"] if e["type"] == "WorkflowCancellationRequested"]
    assert [e["sourceBoundary"] for e in facts] == ["temporal_history"]
    assert facts[0]["requester"].startswith("temporal-cli"), facts[0]
    assert facts[0]["requestedAt"]
    assert detail["cancelRequested"] is True

    canceled = await wait_status(http, run_id, "canceled")
    boundaries = [e["sourceBoundary"] for e in canceled["timeline"]
                  if e["type"] == "WorkflowCancellationRequested"]
    assert boundaries == ["temporal_history"], "backfilled once, no JobCtrl request invented"
    assert [f[0] for f in cancel_facts(app_dir, run_id)] == ["temporal_history"]

    # Review activity for that workflow: q=<workflowId> returns that run's events.
    page = (await http.get("/v1/debug/activity", params={"q": workflow_id, "limit": 500})).json()
    assert page["items"] and all(item["workflowId"] == workflow_id for item in page["items"])
    run_events = {row[0] for row in db_rows(app_dir, "SELECT id FROM job_events WHERE run_id = ?",
                                            (run_id,))}
    assert run_events <= {item["eventId"] for item in page["items"]}
    one = next(item for item in page["items"] if item["runId"] == run_id)
    detail_event = (await http.get(f"/v1/debug/activity/{one['eventId']}")).json()
    assert detail_event["eventId"] == one["eventId"] and detail_event["payload"]
    assert detail_event["relatedRun"] == {"workflowId": workflow_id, "runId": run_id}
    assert detail_event["relatedJob"] == {"jobKey": workflow_id.removeprefix("prep-")}


async def test_a_run_temporal_does_not_know_is_not_found(stack):
    http, app_dir = stack["http"], stack["app_dir"]
    ghost = str(uuid.uuid4())
    event = ev.WorkflowStarted(workflow_id="prep-ghost", run_id=ghost, workflow_type=PREP)
    db = await Database.open(app_dir / "jobctrl.db", run_migrations=False)
    try:  # through the one writer, which folds the run list in the same transaction
        async with db.transaction() as conn:
            await append_event(conn, event, workflow_id="prep-ghost", run_id=ghost)
    finally:
        await db.close()
    assert (await http.get(f"/v1/workflow-runs/{ghost}")).json()["status"] == "running"
    missing = await http.post(f"/v1/workflow-runs/{ghost}/actions/cancel")
    assert missing.status_code == 404, missing.text
    assert missing.json()["error"]["code"] == "workflow_run_not_found"
    assert cancel_facts(app_dir, ghost) == []
    unknown = await http.post(f"/v1/workflow-runs/{uuid.uuid4()}/actions/cancel")
    assert unknown.status_code == 404
