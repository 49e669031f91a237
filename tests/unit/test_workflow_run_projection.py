"""workflow_run_projections: the pure fold rules, the watermark-driven builder and its
rebuild, plus the workflow-run and debug-activity routes over a real database file
(FastAPI TestClient; Temporal is deliberately unreachable)."""

from __future__ import annotations

import sqlite3

import pytest
from fastapi.testclient import TestClient

from backend.api.app import create_app
from backend.config import AppPaths
from backend.domain import events as ev
from backend.projections.workflow_runs import (
    WorkflowRunRow,
    fold_workflow_event,
    read_watermark,
    rebuild_workflow_runs,
    refresh_workflow_runs,
)
from backend.store.db import Database
from backend.store.events import StoredEvent, append_event

TOKEN = "test-token"
WF, RUN, PREP = "prep-job_aaaaaaaaaaaaaaaaaaaaaaaa", "run-1", "JobPreparationWorkflow"
IDS = {"workflow_id": WF, "run_id": RUN, "workflow_type": PREP}


def stored(event: ev.DomainEvent, event_id: int) -> StoredEvent:
    return StoredEvent(id=event_id, type=event.event_type, job_id=None, workflow_id=WF,
                       run_id=RUN, payload_json=event.payload_json(),
                       created_at=event.occurred_at)


def fold_all(*events: StoredEvent, row: WorkflowRunRow | None = None) -> WorkflowRunRow | None:
    for event in events:
        row = fold_workflow_event(row, event)
    return row


STARTED = stored(ev.WorkflowStarted(**IDS, occurred_at="2026-03-01T10:00:00.000Z",
                                    input_summary={"jobId": "job_aaaaaaaaaaaaaaaaaaaaaaaa",
                                                   "stages": ["score"]}), 1)
COMPLETED = stored(ev.WorkflowCompleted(**IDS, occurred_at="2026-03-01T10:00:02.500Z"), 5)
FAILED = stored(ev.WorkflowFailed(**IDS, error_code="provider_unavailable",
                                  occurred_at="2026-03-01T10:00:09.000Z"), 6)
CANCELED = stored(ev.WorkflowCanceled(**IDS, occurred_at="2026-03-01T10:00:01.000Z"), 7)


def cancel_requested(event_id: int, at: str, boundary: str = "request_intent") -> StoredEvent:
    return stored(ev.WorkflowCancellationRequested(
        **IDS, requester="local_operator", source_boundary=boundary, requested_at=at), event_id)


# --- fold rules --------------------------------------------------------------------------


def test_started_creates_a_running_row_with_the_related_job():
    row = fold_all(STARTED)
    assert row.status == "running" and row.started_at == "2026-03-01T10:00:00.000Z"
    assert row.job_id == "job_aaaaaaaaaaaaaaaaaaaaaaaa" and row.workflow_type == PREP
    assert row.input_summary["stages"] == ["score"] and row.last_event_id == 1
    assert row.closed_at is None and row.duration_ms is None


def test_first_terminal_event_wins():
    row = fold_all(STARTED, COMPLETED, FAILED, CANCELED)
    assert row.status == "completed" and row.error_code is None
    assert row.closed_at == "2026-03-01T10:00:02.500Z" and row.duration_ms == 2500
    assert row.last_event_id == 5, "ignored terminal events are not folded"
    failed = fold_all(STARTED, FAILED, COMPLETED)
    assert failed.status == "failed" and failed.error_code == "provider_unavailable"


def test_a_late_started_event_cannot_reopen_a_terminal_run():
    # Terminal first (events folded out of order), then the start: the start fills its
    # facts in but the run stays terminal.
    row = fold_all(COMPLETED, STARTED)
    assert row.status == "completed" and row.started_at == "2026-03-01T10:00:00.000Z"
    assert row.duration_ms == 2500 and row.job_id == "job_aaaaaaaaaaaaaaaaaaaaaaaa"
    # A repeated start (a retried activity) after the terminal changes nothing.
    again = stored(ev.WorkflowStarted(**IDS, occurred_at="2026-03-01T11:00:00.000Z"), 9)
    assert fold_all(STARTED, CANCELED, again) == fold_all(STARTED, CANCELED)


def test_cancellation_requested_only_stamps_the_request_time():
    row = fold_all(STARTED, cancel_requested(2, "2026-03-01T10:00:00.700Z"))
    assert row.status == "running" and row.cancel_requested_at == "2026-03-01T10:00:00.700Z"
    # The earliest request stands; a later fact (e.g. the Temporal-history backfill) and a
    # replay of the same fact change nothing.
    later = cancel_requested(3, "2026-03-01T10:00:00.900Z", "temporal_history")
    assert fold_all(later, cancel_requested(2, "2026-03-01T10:00:00.700Z"), row=row) == row
    # A request observed after the terminal stamps the time and keeps the terminal status.
    done = fold_all(STARTED, COMPLETED, cancel_requested(8, "2026-03-01T10:00:02.000Z"))
    assert done.status == "completed" and done.cancel_requested_at == "2026-03-01T10:00:02.000Z"
    assert fold_all(STARTED, cancel_requested(2, "2026-03-01T10:00:00.700Z"), CANCELED
                    ).status == "canceled"


def test_other_events_and_other_runs_leave_the_row_alone():
    row = fold_all(STARTED)
    stage = stored(ev.StageStarted(job_id="job_aaaaaaaaaaaaaaaaaaaaaaaa", stage="score",
                                   attempt=1, workflow_id=WF, run_id=RUN), 2)
    assert fold_workflow_event(row, stage) == row
    assert fold_workflow_event(None, stage) is None
    other = StoredEvent(3, "WorkflowCompleted", None, WF, "run-2",
                        ev.WorkflowCompleted(workflow_id=WF, run_id="run-2",
                                             workflow_type=PREP).payload_json(), "x")
    assert fold_workflow_event(row, other) == row


# --- the builder -------------------------------------------------------------------------




async def append(db: Database, event: ev.DomainEvent, dedupe: str | None = None,
                 job_id: str | None = None) -> int | None:
    async with db.transaction() as conn:
        return await append_event(conn, event, workflow_id=getattr(event, "workflow_id", None),
                                  run_id=getattr(event, "run_id", None), job_id=job_id,
                                  dedupe_key=dedupe)


async def rows(db: Database) -> dict[str, tuple]:
    records = await db.fetchall(
        "SELECT run_id, status, error_code, cancel_requested_at, last_event_id"
        " FROM workflow_run_projections ORDER BY run_id")
    return {record[0]: tuple(record[1:]) for record in records}


def run_ids(n: int) -> list[dict]:
    return [{"workflow_id": f"prep-job_{i:024x}", "run_id": f"r{i:03d}", "workflow_type": PREP}
            for i in range(n)]


async def test_refresh_is_idempotent_by_watermark(db):
    runs = run_ids(7)
    for ids in runs:
        await append(db, ev.WorkflowStarted(**ids), dedupe=f"WorkflowStarted:{ids['run_id']}")
    await append(db, ev.CandidateProfileUpdated(revision=1))  # not a workflow event
    await append(db, ev.WorkflowCompleted(**runs[0]))
    await append(db, ev.WorkflowFailed(**runs[1], error_code="budget_exceeded"))

    watermark = await refresh_workflow_runs(db, page_size=3)  # several bounded pages
    newest = (await db.fetchone("SELECT MAX(id) FROM job_events"))[0]
    assert watermark == newest == await read_watermark(db)
    first = await rows(db)
    assert len(first) == 7
    assert first["r000"][0] == "completed" and first["r001"][:2] == ("failed", "budget_exceeded")
    assert {first[f"r{i:03d}"][0] for i in range(2, 7)} == {"running"}

    # Nothing new: nothing changes, the watermark stays.
    assert await refresh_workflow_runs(db) == watermark
    assert await rows(db) == first

    # A late terminal event for r000 and a new one for r002: only r002 moves.
    await append(db, ev.WorkflowFailed(**runs[0], error_code="late"))
    await append(db, ev.WorkflowCanceled(**runs[2]))
    await refresh_workflow_runs(db)
    after = await rows(db)
    assert after["r000"] == first["r000"] and after["r002"][0] == "canceled"

    # Folding the whole log again from scratch lands on the same rows.
    await rebuild_workflow_runs(db)
    assert await rows(db) == after


async def test_a_watermark_beyond_non_workflow_events_advances(db):
    await append(db, ev.CandidateProfileUpdated(revision=1))
    await append(db, ev.CandidateProfileUpdated(revision=2))
    assert await refresh_workflow_runs(db) == 2 and await rows(db) == {}


async def test_rows_deleted_behind_the_builders_back_are_rebuilt(db):
    runs = run_ids(4)
    for ids in runs:
        await append(db, ev.WorkflowStarted(**ids), dedupe=f"WorkflowStarted:{ids['run_id']}")
    await append(db, ev.WorkflowCompleted(**runs[3]))
    await refresh_workflow_runs(db)
    before = await rows(db)
    async with db.transaction() as conn:
        await conn.execute("DELETE FROM workflow_run_projections WHERE run_id IN ('r001', 'r003')")
    assert len(await rows(db)) == 2
    await refresh_workflow_runs(db)  # nothing new in the log, but rows are missing
    assert await rows(db) == before
    async with db.transaction() as conn:  # the whole table gone
        await conn.execute("DELETE FROM workflow_run_projections")
    await refresh_workflow_runs(db)
    assert await rows(db) == before


async def test_two_builders_folding_at_once_fold_each_event_once(db, tmp_path):
    for ids in run_ids(30):
        await append(db, ev.WorkflowStarted(**ids))
        await append(db, ev.WorkflowCompleted(**ids))
    other = await Database.open(tmp_path / "jobctrl.db", run_migrations=False)
    try:
        import asyncio

        await asyncio.gather(refresh_workflow_runs(db, page_size=4),
                             refresh_workflow_runs(other, page_size=5))
    finally:
        await other.close()
    folded = await rows(db)
    assert len(folded) == 30 and {value[0] for value in folded.values()} == {"completed"}


# --- the routes (no Temporal, no worker) -------------------------------------------------

JOB = "job_" + "b" * 24
DISCOVER = {"workflow_id": "discover-local", "run_id": "d-run", "workflow_type": "DiscoverWorkflow"}
APPLY = {"workflow_id": "apply-auto-local", "run_id": "a-run",
         "workflow_type": "ApplyAutoWorkflow"}
PREP_OK = {"workflow_id": f"prep-{JOB}", "run_id": "p-ok", "workflow_type": PREP}
PREP_FAILED = {"workflow_id": f"prep-{JOB}", "run_id": "p-failed", "workflow_type": PREP}
PREP_RUNNING = {"workflow_id": "prep-job_" + "c" * 24, "run_id": "p-running",
                "workflow_type": PREP}


def seed_routes(paths: AppPaths) -> None:
    from backend.store.db import migrate

    migrate(paths.database)
    with sqlite3.connect(paths.database) as conn:
        conn.execute(
            "INSERT INTO jobs (job_id, tenant_id, canonical_url, url, title, company,"
            " first_source, first_seen_at, last_seen_at) VALUES (?, 'local', ?, ?, ?, ?,"
            " 'demo', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')",
            (JOB, "https://x.test/1", "https://x.test/1", "Backend Engineer", "Acme"))
        conn.execute(
            "INSERT INTO job_stage_states (tenant_id, job_id, stage, status, error_code,"
            " updated_at) VALUES ('local', ?, 'tailor', 'exhausted', 'provider_unavailable',"
            " '2026-01-01T00:00:00.000Z')", (JOB,))

        def add(event: ev.DomainEvent, job_id: str | None = None) -> None:
            conn.execute(
                "INSERT INTO job_events (tenant_id, type, job_id, workflow_id, run_id,"
                " payload_json, created_at) VALUES ('local', ?, ?, ?, ?, ?, ?)",
                (event.event_type, job_id, getattr(event, "workflow_id", None),
                 getattr(event, "run_id", None), event.payload_json(), event.occurred_at))

        add(ev.WorkflowStarted(**DISCOVER, occurred_at="2026-03-01T09:00:00.000Z",
                               input_summary={"families": ["demo_board"]}))
        add(ev.WorkflowStarted(**PREP_OK, occurred_at="2026-03-01T09:00:01.000Z",
                               input_summary={"jobId": JOB}), JOB)
        add(ev.StageStarted(job_id=JOB, stage="score", attempt=1,
                            workflow_id=PREP_OK["workflow_id"], run_id="p-ok",
                            occurred_at="2026-03-01T09:00:01.500Z"), JOB)
        add(ev.WorkflowCompleted(**PREP_OK, occurred_at="2026-03-01T09:00:04.000Z"), JOB)
        add(ev.WorkflowCompleted(**DISCOVER, occurred_at="2026-03-01T09:00:10.000Z"))
        add(ev.WorkflowStarted(**PREP_FAILED, occurred_at="2026-03-02T09:00:00.000Z",
                               input_summary={"jobId": JOB}), JOB)
        add(ev.StageFailed(job_id=JOB, stage="tailor", error_code="provider_unavailable",
                           retryable=True, workflow_id=PREP_FAILED["workflow_id"],
                           run_id="p-failed", occurred_at="2026-03-02T09:00:01.000Z"), JOB)
        add(ev.WorkflowFailed(**PREP_FAILED, error_code="provider_unavailable",
                              occurred_at="2026-03-02T09:00:02.000Z"), JOB)
        add(ev.WorkflowStarted(**PREP_RUNNING, occurred_at="2026-03-03T09:00:00.000Z",
                               input_summary={"jobId": "job_" + "c" * 24}))
        add(ev.WorkflowStarted(**APPLY, occurred_at="2026-03-04T09:00:00.000Z"))


@pytest.fixture
def client(tmp_path):
    paths = AppPaths(tmp_path)
    seed_routes(paths)
    app = create_app(paths, api_token=TOKEN, temporal_address="127.0.0.1:1")
    with TestClient(app, base_url="http://127.0.0.1") as test_client:
        test_client.headers["Authorization"] = f"Bearer {TOKEN}"
        test_client.paths = paths
        yield test_client


def count(paths: AppPaths, sql: str) -> int:
    with sqlite3.connect(paths.database) as conn:
        return conn.execute(sql).fetchone()[0]


def test_list_filters_sorts_and_names_runs(client):
    page = client.get("/v1/workflow-runs").json()
    assert page["total"] == 5 and page["limit"] == 50 and page["offset"] == 0
    assert [i["runId"] for i in page["items"]] == ["a-run", "p-running", "p-failed", "p-ok",
                                                   "d-run"]
    names = {i["runId"]: i["displayName"] for i in page["items"]}
    assert names == {"a-run": "Standing apply loop", "p-running": "Job preparation",
                     "p-failed": "Job preparation", "d-run": "Discover run",
                     "p-ok": "Job preparation"}
    ok = next(i for i in page["items"] if i["runId"] == "p-ok")
    assert ok == {"workflowId": f"prep-{JOB}", "runId": "p-ok", "workflowType": PREP,
                  "displayName": "Job preparation", "status": "completed",
                  "startedAt": "2026-03-01T09:00:01.000Z", "closedAt": "2026-03-01T09:00:04.000Z",
                  "durationMs": 3000, "errorCode": None, "cancelRequested": False,
                  "relatedJob": {"jobKey": JOB, "title": "Backend Engineer", "company": "Acme"}}
    running = next(i for i in page["items"] if i["runId"] == "p-running")
    assert running["relatedJob"] is None, "the named job is not in the jobs table"

    prep = client.get("/v1/workflow-runs", params={"workflowType": PREP, "limit": 1,
                                                   "offset": 1, "sort": "startedAt",
                                                   "order": "asc"}).json()
    assert prep["total"] == 3 and [i["runId"] for i in prep["items"]] == ["p-failed"]
    failed = client.get("/v1/workflow-runs", params={"status": "failed"}).json()
    assert failed["total"] == 1 and failed["items"][0]["errorCode"] == "provider_unavailable"
    window = client.get("/v1/workflow-runs", params={
        "startedSince": "2026-03-01T09:00:01Z", "startedBefore": "2026-03-03T09:00:00+00:00"}
    ).json()
    assert {i["runId"] for i in window["items"]} == {"p-ok", "p-failed"}
    by_duration = client.get("/v1/workflow-runs", params={"sort": "durationMs"}).json()
    assert [i["runId"] for i in by_duration["items"]][:3] == ["d-run", "p-ok", "p-failed"]

    for bad in ({"startedSince": "yesterday"}, {"startedBefore": "2026-13-01"},
                {"limit": 0}, {"limit": 201}, {"status": "paused"}, {"sort": "name"}):
        response = client.get("/v1/workflow-runs", params=bad)
        assert response.status_code == 422, bad
        assert response.json()["error"]["code"] == "validation_error"


def test_detail_has_an_ordered_timeline_and_diagnostics(client):
    detail = client.get("/v1/workflow-runs/p-failed").json()
    assert detail["status"] == "failed" and detail["relatedJob"]["jobKey"] == JOB
    assert [e["type"] for e in detail["timeline"]] == ["WorkflowStarted", "StageFailed",
                                                      "WorkflowFailed"]
    ids = [e["eventId"] for e in detail["timeline"]]
    assert ids == sorted(ids)
    assert detail["timeline"][1]["stage"] == "tailor"
    assert detail["timeline"][1]["errorCode"] == "provider_unavailable"
    assert detail["failureDiagnostics"] == {"errorCode": "provider_unavailable",
                                            "automaticRetryable": False,
                                            "manualRecoveryAvailable": True,
                                            "providerFailures": None}
    assert detail["technical"] == {"workflowId": f"prep-{JOB}", "runId": "p-failed",
                                   "rawErrorCode": "provider_unavailable"}
    ok = client.get("/v1/workflow-runs/p-ok").json()
    assert ok["failureDiagnostics"]["manualRecoveryAvailable"] is False
    # A running run with no reachable Temporal: no backfill, no error.
    running = client.get("/v1/workflow-runs/p-running")
    assert running.status_code == 200 and running.json()["status"] == "running"
    missing = client.get("/v1/workflow-runs/no-such-run")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "workflow_run_not_found"


def test_cancel_of_a_terminal_or_unknown_run_writes_nothing(client):
    before = count(client.paths, "SELECT COUNT(*) FROM job_events")
    done = client.post("/v1/workflow-runs/p-ok/actions/cancel", json={"reason": "stop"})
    assert done.status_code == 200
    assert done.json() == {"workflowId": f"prep-{JOB}", "runId": "p-ok", "status": "completed",
                           "alreadyTerminal": True}
    unknown = client.post("/v1/workflow-runs/nope/actions/cancel")
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == \
        "workflow_run_not_found"
    # No worker heartbeat: 503 before anything durable is touched.
    unavailable = client.post("/v1/workflow-runs/p-running/actions/cancel")
    assert unavailable.status_code == 503
    assert unavailable.json()["error"]["code"] == "worker_runtime_unavailable"
    bad = client.post("/v1/workflow-runs/p-running/actions/cancel", json={"why": "x"})
    assert bad.status_code == 422
    assert count(client.paths, "SELECT COUNT(*) FROM job_events") == before


def test_debug_activity_search_and_detail(client):
    page = client.get("/v1/debug/activity").json()
    assert len(page["items"]) == 10 and page["nextBeforeId"] is None
    assert [i["eventId"] for i in page["items"]] == sorted(
        (i["eventId"] for i in page["items"]), reverse=True)
    by_workflow = client.get("/v1/debug/activity", params={"q": f"prep-{JOB}"}).json()
    assert {i["runId"] for i in by_workflow["items"]} == {"p-ok", "p-failed"}
    assert all(i["workflowId"] == f"prep-{JOB}" for i in by_workflow["items"])
    first = client.get("/v1/debug/activity", params={"limit": 4}).json()
    assert len(first["items"]) == 4 and first["nextBeforeId"] == first["items"][-1]["eventId"]
    second = client.get("/v1/debug/activity",
                        params={"limit": 4, "beforeId": first["nextBeforeId"]}).json()
    assert max(i["eventId"] for i in second["items"]) < first["nextBeforeId"]
    stage = client.get("/v1/debug/activity", params={"type": "StageFailed"}).json()["items"]
    assert len(stage) == 1 and stage[0]["jobId"] == JOB
    assert client.get("/v1/debug/activity", params={"jobId": JOB}).json()["items"]
    assert client.get("/v1/debug/activity", params={"q": "100%_"}).json()["items"] == []

    detail = client.get(f"/v1/debug/activity/{stage[0]['eventId']}").json()
    assert detail["payload"]["errorCode"] == "provider_unavailable"
    assert detail["relatedJob"] == {"jobKey": JOB}
    assert detail["relatedRun"] == {"workflowId": f"prep-{JOB}", "runId": "p-failed"}
    discover = client.get("/v1/debug/activity", params={"workflowId": "discover-local"}).json()
    assert len(discover["items"]) == 2
    assert client.get("/v1/debug/activity/999999").json()["error"]["code"] == \
        "activity_event_not_found"


def test_the_routes_need_the_token(client):
    for method, path in (("GET", "/v1/workflow-runs"), ("GET", "/v1/workflow-runs/p-ok"),
                         ("POST", "/v1/workflow-runs/p-running/actions/cancel"),
                         ("GET", "/v1/debug/activity"), ("GET", "/v1/debug/activity/1")):
        response = client.request(method, path, headers={"Authorization": "Bearer wrong"})
        assert response.status_code == 401, path
