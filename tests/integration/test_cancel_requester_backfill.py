"""Who asked Temporal to cancel a run (the ``temporal`` CLI, the UI, another client) is
recorded by the worker's reconcile pass, never by ``GET /v1/workflow-runs/{runId}``.

A real Temporal dev server and no worker: two preparation runs are started and a client of
their own identity asks Temporal to cancel both, so each history holds the request while
the runs stay open. One is still running in the read model, the other already canceled
(its terminal recorded). The GETs write nothing (no commit at all, ``PRAGMA
data_version``); the reconcile pass then records each requester once as
``temporal_history`` evidence, and the next GET shows it."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
import pytest_asyncio
from fastapi.testclient import TestClient

import backend.projections  # noqa: F401 - registers the folds the writer runs
from backend.api.app import create_app
from backend.config import AppPaths, TemporalSettings
from backend.domain import events as ev
from backend.store.db import Database
from backend.store.events import append_event
from backend.temporal.client import connect_with_retry
from backend.temporal.loops.reconciler import reconcile_runs
from backend.temporal.loops.recovered_history import HistoryChecks
from tests.commit_watch import no_commits
from tests.integration.env_helpers import bare_dev_server

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session"),
              pytest.mark.timeout(300)]

PREP = "JobPreparationWorkflow"
NOBODY_POLLS = "no-worker-here"
TOKEN = "test-token"


@pytest_asyncio.fixture(loop_scope="session")
async def temporal(tmp_path):
    with bare_dev_server(tmp_path / "history.db") as address:
        yield address, await connect_with_retry(TemporalSettings(), address, timeout=60)


async def cancel_requested_run(client, db: Database) -> tuple[str, str]:
    """A preparation run no worker picks up, recorded as started, then asked to cancel."""
    workflow_id = f"prep-job_{uuid.uuid4().hex[:24]}"
    handle = await client.start_workflow(PREP, id=workflow_id, task_queue=NOBODY_POLLS)
    run_id = handle.result_run_id
    async with db.transaction() as conn:
        await append_event(conn, ev.WorkflowStarted(workflow_id=workflow_id, run_id=run_id,
                                                    workflow_type=PREP),
                           workflow_id=workflow_id, run_id=run_id)
    await handle.cancel()
    return workflow_id, run_id


def requester_facts(detail: dict) -> list[tuple[str, str]]:
    return [(entry["sourceBoundary"], entry["requester"]) for entry in detail["timeline"]
            if entry["type"] == "WorkflowCancellationRequested"]


async def test_the_reconcile_pass_records_the_requester_the_get_only_reads(temporal, tmp_path):
    address, client = temporal
    paths = AppPaths(tmp_path / "app")
    paths.database.parent.mkdir(parents=True)
    db = await Database.open(paths.database)
    try:
        _, running = await cancel_requested_run(client, db)
        canceled_id, canceled = await cancel_requested_run(client, db)
        async with db.transaction() as conn:  # this one already ended canceled
            await append_event(conn, ev.WorkflowCanceled(
                workflow_id=canceled_id, run_id=canceled, workflow_type=PREP),
                workflow_id=canceled_id, run_id=canceled)
        app = create_app(paths, api_token=TOKEN, temporal_address=address)
        with TestClient(app, base_url="http://127.0.0.1") as http:
            http.headers["Authorization"] = f"Bearer {TOKEN}"
            with no_commits(paths.database):
                for run_id in (running, canceled, running, canceled):
                    detail = http.get(f"/v1/workflow-runs/{run_id}").json()
                    assert requester_facts(detail) == [], "a GET never backfills"
                assert http.get(f"/v1/workflow-runs/{running}").json()[
                    "cancelRequested"] is False
            report = await reconcile_runs(db, client, older_than=timedelta(0),
                                          checks=HistoryChecks())
            assert sorted(report.backfilled_requesters) == sorted([running, canceled])
            for run_id in (running, canceled):
                detail = http.get(f"/v1/workflow-runs/{run_id}").json()
                assert requester_facts(detail) == [("temporal_history", client.identity)]
                assert detail["cancelRequested"] is True
            again = await reconcile_runs(db, client, older_than=timedelta(0),
                                         checks=HistoryChecks())
            assert again.backfilled_requesters == [], "recorded once"
            assert len(requester_facts(http.get(f"/v1/workflow-runs/{running}").json())) == 1
    finally:
        await db.close()
