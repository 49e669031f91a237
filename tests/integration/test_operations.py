"""GET /v1/pipeline/operations observed through a real run: nothing selected on a fresh
install, then one Discover execution through its phases to completion."""

from __future__ import annotations

import asyncio

import pytest
import pytest_asyncio
from pydantic.alias_generators import to_camel

from backend.operations.stage_counts import COUNT_FIELDS
from backend.supervision.supervisor import Supervisor
from tests.api_http import api_http
from tests.integration.conftest import write_settings
from tests.integration.test_preparation import PROFILE, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

TWELVE = {"eligible", "waiting", "processing", "succeeded", "skipped", "blocked", "failed",
          "exhausted", "canceled", "needsVerification", "stale", "unknown"}


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def ops(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("ops-app")
    write_settings(app_dir)
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    http = api_http(supervisor.info)
    yield {"http": http, "supervisor": supervisor}
    await http.aclose()
    await supervisor.stop()


async def snapshot(http) -> dict:
    response = await http.get("/v1/pipeline/operations")
    assert response.status_code == 200, response.text
    return response.json()


async def test_count_blocks_have_the_twelve_fields():
    assert {to_camel(name) for name in COUNT_FIELDS} == TWELVE


async def test_a_fresh_install_selects_nothing_but_reports_backlog_and_capacity(ops):
    http = ops["http"]

    async def idle_and_fresh() -> bool:
        body = await snapshot(http)
        return body["freshness"]["state"] == "fresh" and body["capacity"]["activeSlots"] == 0

    await wait_for(idle_and_fresh, timeout=60)
    body = await snapshot(http)
    assert body["etaEstimatorVersion"] == "pipeline-eta-v1"
    assert body["execution"] is None
    assert body["sourceFamilies"] is None and body["reconciliation"] is None
    assert body["projectionCoverage"] is None  # proven idle: fresh telemetry, no active slot
    assert set(body["scopes"]) == {"global_outside_execution"}
    for block in body["scopes"]["global_outside_execution"].values():
        assert set(block) == TWELVE and block["eligible"] == 0
    assert body["activeStageCounts"] is not None
    assert body["overallEta"]["reason"] == "no_work"


async def test_a_discover_execution_is_observed_through_its_phases(ops):
    http = ops["http"]
    await http.put("/v1/profile", json=PROFILE)
    accepted = (await http.post("/v1/pipeline/actions/run-stage",
                                json={"stage": "discover"})).json()
    run_id = accepted["firstExecutionRunId"]
    phases: list[str] = []

    async def completed() -> bool:
        body = await snapshot(http)
        execution = body["execution"]
        if execution and execution["discoverRunId"] == run_id:
            if not phases or phases[-1] != execution["phase"]:
                phases.append(execution["phase"])
            return execution["phase"] == "completed"
        return False

    await wait_for(completed, timeout=600)
    assert phases[-1] == "completed"
    assert set(phases) <= {"discovering", "draining", "completed"}
    body = await snapshot(http)
    current = body["scopes"]["current_execution"]
    assert current["pdf"]["succeeded"] == 234 and current["pdf"]["eligible"] == 234
    assert current["enrich"]["waiting"] == current["enrich"]["processing"] == 0
    assert body["scopes"]["execution_sweep"]["orchestration"] == "not_separate"
    assert body["scopes"]["global_outside_execution"]["score"]["eligible"] == 0
    assert body["execution"]["workflowStatus"] == "completed"
    assert body["projectionCoverage"]["status"] == "ready"
    families = body["sourceFamilies"]
    assert (families["planned"], families["succeeded"], families["remaining"]) == (1, 1, 0)
    assert families["progressCurrent"] == families["progressTotal"]
    assert body["overallEta"]["state"] in ("unavailable", "available")


async def test_a_stopped_worker_makes_runtime_facts_unknown_not_zero(ops):
    worker = ops["supervisor"].service("worker")
    await worker.stop()
    try:
        body = await snapshot(ops["http"])
        assert body["freshness"]["state"] != "fresh"
        assert body["activeStageCounts"] is None
        assert body["activeItemsTotal"] is None
        assert body["capacity"]["activeSlots"] is None
    finally:
        await worker.start()
        await asyncio.sleep(0)
