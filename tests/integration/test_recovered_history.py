"""``recovered_temporal_history`` on the real services: a preparation hangs in Score, the
worker is stopped, the run is canceled with the ``temporal`` CLI, then the dev server
loses its history (the file moved away): the reconciler records the provisional
``reconciled_not_found``. When the history comes back, the exact run is found again: the
marked ``recovered`` verdict restores it and the CLI requester from its history is
restored as ``recovered_temporal_history`` evidence, once, never as a fresh
``temporal_history`` read or a JobCtrl request. With the worker back, the real outcome
(canceled) replaces the verdict while the false terminal stays in the timeline."""

from __future__ import annotations

import subprocess
from datetime import timedelta

import pytest
import pytest_asyncio

from backend.config import AppPaths, TemporalSettings
from backend.projections.workflow_runs import get_run
from backend.store.db import Database
from backend.supervision.embedded_temporal import temporal_binary
from backend.supervision.supervisor import Supervisor
from backend.temporal.client import connect_with_retry
from backend.temporal.loops.reconciler import reconcile_runs
from tests.api_http import api_http
from tests.app_db import connect_db
from tests.fakes.llm_servers import FakeLlmServer
from tests.integration.conftest import write_settings
from tests.integration.test_paid_pipeline import demo_subset
from tests.integration.test_preparation import PROFILE, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session"),
              pytest.mark.timeout(600)]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def hanging(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("recovered-history-app")
    demo_subset(app_dir / "board.json", 1)
    fake = FakeLlmServer().start()
    fake.delay(120)
    write_settings(app_dir, sources=[{"kind": "json_file", "id": "one",
                                      "path": str(app_dir / "board.json")}],
                   llm={"provider": "openai_compat", "baseUrl": fake.openai_base_url,
                        "model": "llama3"},
                   stageHeartbeatTimeoutS=5)
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    http = api_http(supervisor.info)
    await http.put("/v1/profile", json=PROFILE)
    await http.post("/v1/pipeline/actions/run-stage", json={"stage": "discover"})
    db = await Database.open(AppPaths(app_dir).database)

    async def scoring() -> bool:
        return fake.calls >= 1

    await wait_for(scoring, timeout=120)
    try:
        yield {"app_dir": app_dir, "supervisor": supervisor, "db": db, "http": http}
    finally:
        await db.close()
        await http.aclose()
        await supervisor.stop()
        fake.stop()


def prep_run(app_dir) -> tuple[str, str]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute(
            "SELECT workflow_id, run_id FROM job_events WHERE type = 'WorkflowStarted'"
            " AND json_extract(payload_json, '$.workflowType') = 'JobPreparationWorkflow'"
            " ORDER BY id LIMIT 1").fetchone()


def cancel_facts(app_dir, run_id: str) -> list[tuple[str, str]]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute(
            "SELECT json_extract(payload_json, '$.sourceBoundary'),"
            " json_extract(payload_json, '$.requester') FROM job_events"
            " WHERE type = 'WorkflowCancellationRequested' AND run_id = ? ORDER BY id",
            (run_id,)).fetchall()


async def client_for(hanging):
    # With retries, as the worker and the API connect: after a restart the port accepts
    # before the frontend is healthy ("Frontend is not healthy yet").
    return await connect_with_retry(TemporalSettings(), hanging["supervisor"].info.temporal_address,
                                    timeout=60)


async def move_history(hanging, *, away: bool) -> None:
    temporal = hanging["supervisor"].service("temporal")
    history = AppPaths(hanging["app_dir"]).temporal_history
    aside = history.parent / "aside"
    await temporal.stop()
    if away:
        aside.mkdir()
        for part in history.parent.glob("history.db*"):
            part.rename(aside / part.name)
    else:
        for part in history.parent.glob("history.db*"):
            part.unlink()
        for part in aside.iterdir():
            part.rename(history.parent / part.name)
    await temporal.start()


async def test_a_recovered_run_restores_its_cli_requester_as_recovered_evidence(hanging):
    app_dir, db, http = hanging["app_dir"], hanging["db"], hanging["http"]
    workflow_id, run_id = prep_run(app_dir)
    worker = hanging["supervisor"].service("worker")
    await worker.stop()  # nobody acts on the cancel, and no reconciler but ours runs
    subprocess.run(
        [str(temporal_binary()), "workflow", "cancel",
         "--address", hanging["supervisor"].info.temporal_address,
         "--workflow-id", workflow_id, "--run-id", run_id],
        check=True, capture_output=True)

    await move_history(hanging, away=True)
    report = await reconcile_runs(db, await client_for(hanging), older_than=timedelta(0))
    assert run_id in report.not_found
    assert (await get_run(db, run_id)).status == "reconciled_not_found"
    assert cancel_facts(app_dir, run_id) == []  # nothing could be read while it was lost

    await move_history(hanging, away=False)
    report = await reconcile_runs(db, await client_for(hanging), older_than=timedelta(0))
    assert run_id in report.recovered and run_id in report.restored_requesters
    facts = cancel_facts(app_dir, run_id)
    assert [boundary for boundary, _ in facts] == ["recovered_temporal_history"]
    assert facts[0][1] and facts[0][1] != "local_operator"  # the CLI's identity
    again = await reconcile_runs(db, await client_for(hanging), older_than=timedelta(0))
    assert run_id not in again.restored_requesters

    detail = (await http.get(f"/v1/workflow-runs/{run_id}")).json()
    assert detail["status"] == "running" and detail["cancelRequested"] is True
    requests = [e for e in detail["timeline"] if e["type"] == "WorkflowCancellationRequested"]
    # The API's live history backfill does not add a second, "fresh" requester fact.
    assert [e["sourceBoundary"] for e in requests] == ["recovered_temporal_history"]
    assert cancel_facts(app_dir, run_id) == facts

    await worker.start()  # the workflow sees the cancel and closes for real

    async def closed() -> bool:
        row = await get_run(db, run_id)
        return row is not None and row.status == "canceled"

    await wait_for(closed, timeout=240)
    timeline = (await http.get(f"/v1/workflow-runs/{run_id}")).json()["timeline"]
    verdicts = [e for e in timeline if e["type"] == "WorkflowReconciled"]
    assert len(verdicts) == 2  # the false terminal stays visible in the audit history
    assert [e["type"] for e in timeline].count("WorkflowCanceled") == 1
    assert [e["sourceBoundary"] for e in timeline
            if e["type"] == "WorkflowCancellationRequested"] == ["recovered_temporal_history"]
