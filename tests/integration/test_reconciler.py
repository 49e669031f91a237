"""The reconciler against a real Temporal: a run terminated from outside gets its real
terminal event; a run whose history vanished gets the provisional reconciled_not_found
verdict and recovers when the history comes back, leaving the false verdict visible."""

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

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def stuck(tmp_path_factory):
    """Two preparations hanging in Score on a provider that answers after a minute."""
    app_dir = tmp_path_factory.mktemp("reconcile-app")
    demo_subset(app_dir / "board.json", 2)
    fake = FakeLlmServer().start()
    fake.delay(60)
    write_settings(app_dir, sources=[{"kind": "json_file", "id": "two",
                                      "path": str(app_dir / "board.json")}],
                   llm={"provider": "openai_compat", "baseUrl": fake.openai_base_url,
                        "model": "llama3"})
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    http = api_http(supervisor.info)
    await http.put("/v1/profile", json=PROFILE)
    await http.post("/v1/pipeline/actions/run-stage", json={"stage": "discover"})
    db = await Database.open(AppPaths(app_dir).database)

    async def both_scoring() -> bool:
        return fake.calls >= 2

    await wait_for(both_scoring, timeout=120)
    yield {"app_dir": app_dir, "supervisor": supervisor, "db": db, "http": http}
    await db.close()
    await http.aclose()
    await supervisor.stop()
    fake.stop()


def prep_runs(app_dir) -> list[tuple[str, str]]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute(
            "SELECT workflow_id, run_id FROM job_events WHERE type = 'WorkflowStarted'"
            " AND json_extract(payload_json, '$.workflowType') = 'JobPreparationWorkflow'"
            " ORDER BY id").fetchall()


def events_of(app_dir, run_id: str) -> list[str]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return [row[0] for row in conn.execute(
            "SELECT type FROM job_events WHERE run_id = ? ORDER BY id", (run_id,))]


def reconciled_verdicts(app_dir, run_id: str) -> list[str]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return [row[0] for row in conn.execute(
            "SELECT json_extract(payload_json, '$.verdict') FROM job_events"
            " WHERE run_id = ? AND type = 'WorkflowReconciled' ORDER BY id", (run_id,))]


def open_reservations(app_dir, run_id: str) -> int:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute("SELECT COUNT(*) FROM llm_spend_reservations WHERE run_id = ?"
                            " AND released_at IS NULL", (run_id,)).fetchone()[0]


async def client_for(stuck):
    # With retries, as the worker and the API connect: after a restart the port accepts
    # before the frontend is healthy ("Frontend is not healthy yet").
    return await connect_with_retry(TemporalSettings(), stuck["supervisor"].info.temporal_address,
                                    timeout=60)


async def test_a_run_terminated_outside_jobctrl_gets_its_real_outcome(stuck):
    workflow_id, run_id = prep_runs(stuck["app_dir"])[0]
    subprocess.run(
        [str(temporal_binary()), "workflow", "terminate",
         "--address", stuck["supervisor"].info.temporal_address,
         "--workflow-id", workflow_id, "--run-id", run_id, "--reason", "test"],
        check=True, capture_output=True)
    # The worker's own reconciler may get there first; either way the outcome is recorded
    # once. A probe Temporal does not answer in time is simply repeated on the next pass.
    client = await client_for(stuck)

    async def closed() -> bool:
        await reconcile_runs(stuck["db"], client, older_than=timedelta(0))
        return (await get_run(stuck["db"], run_id)).status != "running"

    await wait_for(closed, timeout=60)
    row = await get_run(stuck["db"], run_id)
    assert (row.status, row.error_code) == ("failed", "terminated")
    assert events_of(stuck["app_dir"], run_id).count("WorkflowFailed") == 1
    assert "StageCanceled" in events_of(stuck["app_dir"], run_id)  # Score released
    assert open_reservations(stuck["app_dir"], run_id) == 0  # its budget share too
    again = await reconcile_runs(stuck["db"], await client_for(stuck), older_than=timedelta(0))
    assert run_id not in again.closed
    assert events_of(stuck["app_dir"], run_id).count("WorkflowFailed") == 1


async def test_a_lost_history_is_provisional_and_recovers(stuck):
    _, run_id = prep_runs(stuck["app_dir"])[1]
    temporal = stuck["supervisor"].service("temporal")
    history = AppPaths(stuck["app_dir"]).temporal_history
    aside = history.parent / "aside"
    await temporal.stop()
    aside.mkdir()
    for part in history.parent.glob("history.db*"):
        part.rename(aside / part.name)
    await temporal.start()  # an empty history: the run is gone
    # The worker's own pass (every 15 s, once the run is 30 s old) may judge it first:
    # the verdict is asserted, not which pass gave it (a verdict is recorded only once).
    await reconcile_runs(stuck["db"], await client_for(stuck), older_than=timedelta(0))
    assert (await get_run(stuck["db"], run_id)).status == "reconciled_not_found"

    await temporal.stop()
    for part in history.parent.glob("history.db*"):
        part.unlink()
    for part in aside.iterdir():
        part.rename(history.parent / part.name)
    await temporal.start()
    await reconcile_runs(stuck["db"], await client_for(stuck), older_than=timedelta(0))
    assert (await get_run(stuck["db"], run_id)).status == "running"
    assert reconciled_verdicts(stuck["app_dir"], run_id) == [
        "reconciled_not_found", "recovered"]  # the false verdict stays visible, each once
