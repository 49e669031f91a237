"""Bulk policy actions answer at once and fan out durably: "Rescore stale" over 150+ stale
jobs is one Temporal call in the request (202 with the batch's identity); the
``PolicyRerunWorkflow`` batch then starts every job's ``prep-{jobId}`` preparation, each
exactly once. A lowered fit threshold hands its jobs to the same kind of batch."""

from __future__ import annotations

import time
from collections import Counter

import pytest
import pytest_asyncio
from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowExecutionStatus

from backend.pipeline.policy_rerun import policy_rerun_workflow_id
from backend.supervision.supervisor import Supervisor
from backend.temporal.client import connect_temporal
from backend.temporal.policy_contracts import PolicyRerunResult
from tests.api_http import api_http
from tests.app_db import connect_db
from tests.integration.conftest import write_settings
from tests.integration.test_batch_stage import wait_quiet
from tests.integration.test_paid_pipeline import demo_subset
from tests.integration.test_preparation import PROFILE, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session"),
              pytest.mark.timeout(1500)]  # preparing 150 jobs twice on two shared cores

POSTINGS = 160  # 157 distinct jobs (a few demo postings share a URL)
JOBS = 150  # at least this many stale jobs: one start per job in the request took seconds


def query(app_dir, sql: str, params=()) -> list[tuple]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute(sql, params).fetchall()


def prep_events_after(app_dir, kind: str, after_id: int) -> Counter:
    rows = query(app_dir, "SELECT job_id FROM job_events WHERE id > ? AND type = ?"
                 " AND json_extract(payload_json, '$.workflowType') = 'JobPreparationWorkflow'",
                 (after_id, kind))
    return Counter(row[0] for row in rows)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def stale(tmp_path_factory):
    """157 demo jobs prepared offline under a fit threshold of 100 (so Tailor is skipped
    and the set-up stays quick), then a changed profile saved: every score is stale."""
    app_dir = tmp_path_factory.mktemp("policy-rerun-app")
    board = app_dir / "board.json"
    demo_subset(board, POSTINGS)
    write_settings(app_dir, sources=[{"kind": "json_file", "id": "subset", "path": str(board)}],
                   minFitScore=100)
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    http = api_http(supervisor.info)
    client = await connect_temporal(supervisor.settings.temporal,
                                    supervisor.info.temporal_address,
                                    app_dir=supervisor.paths.app_dir)
    try:
        assert (await http.put("/v1/profile", json=PROFILE)).status_code == 200
        assert (await http.post("/v1/pipeline/actions/run-stage",
                                json={"stage": "discover"})).status_code == 202

        async def all_scored() -> bool:
            return query(app_dir, "SELECT COUNT(DISTINCT job_id) FROM job_scores")[0][0] >= JOBS

        await wait_for(all_scored, timeout=1200)
        await wait_quiet(app_dir, timeout=300)
        changed = {**PROFILE, "targetTitles": ["Staff Backend Engineer", "Platform Engineer"]}
        assert (await http.put("/v1/profile", json=changed)).status_code == 200
        await wait_quiet(app_dir, timeout=300)
        yield {"app_dir": app_dir, "http": http, "client": client}
    finally:
        await http.aclose()
        await supervisor.stop()


async def test_rescore_stale_answers_with_the_batch_then_prepares_every_job_once(stale):
    http, client, app_dir = stale["http"], stale["client"], stale["app_dir"]
    job_ids = [row[0] for row in query(app_dir, "SELECT job_id FROM jobs ORDER BY job_id")]
    assert len(job_ids) >= JOBS
    baseline = query(app_dir, "SELECT MAX(id) FROM job_events")[0][0]

    response = await http.post("/v1/pipeline/actions/rescore-stale")
    answered_at = time.time()
    assert response.status_code == 202, response.text
    body = response.json()
    count = len(job_ids)
    assert body["staleJobs"] == count and body["jobKeys"] == job_ids
    assert body["startedWorkflows"] == count and body["jobCount"] == count
    assert body["workflowId"].startswith("policy-rerun-rescore-stale-")
    assert body["alreadyRunning"] is False
    # The batch exists the moment the request has answered, under the exact execution.
    batch = client.get_workflow_handle(body["workflowId"], result_type=PolicyRerunResult)
    described = await batch.describe()
    assert described.run_id == body["firstExecutionRunId"]
    assert described.workflow_type == "PolicyRerunWorkflow"

    # The same request while the batch runs attaches to it (or, once it closed and the
    # preparations own the jobs, finds nothing stale); it never starts a second fan-out.
    again = await http.post("/v1/pipeline/actions/rescore-stale")
    assert again.status_code in (200, 202), again.text
    if again.status_code == 202:
        assert again.json()["workflowId"] == body["workflowId"]

    result = await batch.result()
    assert sorted(result.started_job_ids) == job_ids and result.already_running_job_ids == []
    assert (await batch.describe()).status == WorkflowExecutionStatus.COMPLETED
    # The preparations were started by the batch, after the request had answered.
    history = await batch.fetch_history()
    starts = [event.event_time.ToDatetime().timestamp() for event in history.events
              if event.event_type
              == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED]
    assert len(starts) == count
    assert max(starts) > answered_at, "every preparation was started before the answer"

    async def all_rescored() -> bool:
        return len(prep_events_after(app_dir, "WorkflowCompleted", baseline)) >= count

    await wait_for(all_rescored, timeout=600)
    await wait_quiet(app_dir, timeout=300)
    assert prep_events_after(app_dir, "WorkflowStarted", baseline) == Counter(
        {job: 1 for job in job_ids}), "every stale job re-prepared exactly once"
    scored = Counter(row[0] for row in query(
        app_dir, "SELECT job_id FROM job_events WHERE id > ? AND type = 'JobScored'", (baseline,)))
    assert scored == Counter({job: 1 for job in job_ids})
    nothing = await http.post("/v1/pipeline/actions/rescore-stale")
    assert nothing.status_code == 200 and nothing.json()["noopReason"] == "nothing_stale"


async def test_a_lowered_threshold_hands_its_jobs_to_one_batch(stale):
    http, client, app_dir = stale["http"], stale["client"], stale["app_dir"]
    cleared = [row[0] for row in query(
        app_dir, "SELECT job_id FROM job_stage_states WHERE stage = 'tailor'"
        " AND status = 'skipped' AND blocked_reason = 'below_min_fit_score'")]
    assert cleared
    patched = await http.patch("/v1/settings", json={"minFitScore": 0})
    assert patched.status_code == 200
    batch = client.get_workflow_handle(
        policy_rerun_workflow_id("threshold_cleared", cleared), result_type=PolicyRerunResult)
    result = await batch.result()
    assert sorted(result.started_job_ids) == sorted(cleared)
