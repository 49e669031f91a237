"""``failureDiagnostics.providerFailures`` on the real services: a loopback OpenAI-compatible
provider answers 500 twice (Temporal retries the Score activity, the run completes) and
then 401 (the run fails fast). The run detail reports bounded per-provider code counts and
the latest safe diagnostic correlated with the exact activity attempt, never a message,
prompt or body; a run without provider failures reports null."""

from __future__ import annotations

import json

import pytest
import pytest_asyncio

from backend.supervision.supervisor import Supervisor
from tests.api_http import api_http
from tests.app_db import connect_db
from tests.fakes.llm_servers import FakeLlmServer
from tests.integration.conftest import write_settings
from tests.integration.test_paid_pipeline import demo_subset, scripted_reply, wait_terminals
from tests.integration.test_preparation import PROFILE

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

SECRET_BODY = {"error": {"type": "server_error",
                         "message": "PRIVATE upstream text quoting the prompt"}}


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def provider_stack(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("provider-failures-app")
    demo_subset(app_dir / "board.json", 1)
    fake = FakeLlmServer().start()
    fake.reply_with(scripted_reply)
    write_settings(app_dir, sources=[{"kind": "json_file", "id": "one",
                                      "path": str(app_dir / "board.json")}],
                   llm={"provider": "openai_compat", "baseUrl": fake.openai_base_url,
                        "model": "llama3"})
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    http = api_http(supervisor.info)
    assert (await http.put("/v1/profile", json=PROFILE)).status_code == 200
    assert (await http.post("/v1/pipeline/actions/run-stage",
                            json={"stage": "discover"})).status_code == 202
    await wait_terminals(app_dir, 1)
    try:
        yield {"app_dir": app_dir, "http": http, "fake": fake}
    finally:
        await http.aclose()
        await supervisor.stop()
        fake.stop()


def last_prep_run(app_dir) -> str:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute(
            "SELECT run_id FROM job_events WHERE type IN ('WorkflowCompleted', 'WorkflowFailed')"
            " AND json_extract(payload_json, '$.workflowType') = 'JobPreparationWorkflow'"
            " ORDER BY id DESC LIMIT 1").fetchone()[0]


async def only_job(http) -> str:
    return (await http.get("/v1/jobs", params={"limit": 1})).json()["items"][0]["jobId"]


async def test_a_clean_run_has_no_provider_failures(provider_stack):
    http, app_dir = provider_stack["http"], provider_stack["app_dir"]
    detail = (await http.get(f"/v1/workflow-runs/{last_prep_run(app_dir)}")).json()
    assert detail["status"] == "completed"
    assert detail["failureDiagnostics"]["providerFailures"] is None


async def test_retried_500s_are_counted_for_the_exact_run(provider_stack):
    http, app_dir, fake = (provider_stack["http"], provider_stack["app_dir"],
                           provider_stack["fake"])
    first = last_prep_run(app_dir)
    fake.fail_next(500, times=2, body=SECRET_BODY)
    assert (await http.post(f"/v1/jobs/{await only_job(http)}/actions/rescore")).status_code \
        == 202
    final = await wait_terminals(app_dir, 2)
    assert final[-1] == ("WorkflowCompleted", None)
    run_id = last_prep_run(app_dir)
    assert run_id != first
    detail = (await http.get(f"/v1/workflow-runs/{run_id}")).json()
    failures = detail["failureDiagnostics"]["providerFailures"]
    assert failures["total"] == 2
    assert failures["byProvider"] == [{"provider": "openai_compat", "model": "llama3",
                                       "count": 2, "codes": {"provider_unavailable": 2}}]
    latest = failures["latest"]
    assert (latest["operation"], latest["category"], latest["code"], latest["type"],
            latest["httpStatus"], latest["retryable"]) == (
        "score_job", "transient", "provider_unavailable", "server_error", 500, True)
    # Temporal's attempts: the first two failed, the third succeeded.
    assert latest["attempt"] == 2
    assert (latest["workflowId"], latest["runId"]) == (detail["workflowId"], run_id)
    assert latest["activityId"]
    assert "PRIVATE" not in json.dumps(detail) and "prompt" not in json.dumps(failures)
    # The earlier clean run does not borrow them.
    clean = (await http.get(f"/v1/workflow-runs/{first}")).json()
    assert clean["failureDiagnostics"]["providerFailures"] is None


async def test_a_401_fails_fast_with_one_non_retryable_failure(provider_stack):
    http, app_dir, fake = (provider_stack["http"], provider_stack["app_dir"],
                           provider_stack["fake"])
    fake.require_key("a-key-we-do-not-have")
    try:
        assert (await http.post(
            f"/v1/jobs/{await only_job(http)}/actions/rescore")).status_code == 202
        final = await wait_terminals(app_dir, 3)
    finally:
        fake.require_key(None)
    assert final[-1] == ("WorkflowFailed", "authentication")
    detail = (await http.get(f"/v1/workflow-runs/{last_prep_run(app_dir)}")).json()
    failures = detail["failureDiagnostics"]["providerFailures"]
    assert failures["total"] == 1
    assert failures["byProvider"][0]["codes"] == {"authentication": 1}
    assert (failures["latest"]["category"], failures["latest"]["retryable"],
            failures["latest"]["httpStatus"], failures["latest"]["attempt"]) == (
        "authentication", False, 401, 1)
