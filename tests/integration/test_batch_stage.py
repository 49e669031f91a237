"""Selected Tailor / Cover batches and the stale-policy bulk actions, on the real Temporal
dev server with a real loopback OpenAI-compatible provider that counts its calls and how
many of them were in flight at once."""

from __future__ import annotations

import pytest
import pytest_asyncio

from backend.supervision.supervisor import Supervisor
from tests.api_http import api_http
from tests.app_db import connect_db
from tests.fakes.llm_servers import FakeLlmServer
from tests.integration.conftest import write_settings
from tests.integration.env_helpers import override_environ
from tests.integration.test_paid_pipeline import demo_subset, scripted_reply
from tests.integration.test_preparation import PROFILE, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

JOBS = 6
WORKERS = 2


def query(app_dir, sql: str, params=()) -> list[tuple]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute(sql, params).fetchall()


def completed_runs(app_dir, workflow_type: str) -> int:
    return query(app_dir, "SELECT COUNT(*) FROM job_events WHERE type = 'WorkflowCompleted'"
                 " AND json_extract(payload_json, '$.workflowType') = ?", (workflow_type,))[0][0]


async def wait_completed(app_dir, workflow_type: str, count: int, timeout: float = 180) -> None:
    async def enough() -> bool:
        return completed_runs(app_dir, workflow_type) >= count

    await wait_for(enough, timeout=timeout)


async def wait_quiet(app_dir, timeout: float = 60) -> None:
    """No stage queued or running and no workflow run open: nothing races the next step."""
    async def quiet() -> bool:
        busy = query(app_dir, "SELECT COUNT(*) FROM job_stage_states"
                     " WHERE status IN ('queued', 'running')")[0][0]
        open_runs = query(app_dir, "SELECT COUNT(*) FROM workflow_run_projections"
                          " WHERE status = 'running' AND workflow_type != 'DiscoverWorkflow'")
        return busy == 0 and open_runs[0][0] == 0

    await wait_for(quiet, timeout=timeout)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def prepared(tmp_path_factory):
    """Six demo jobs prepared end to end offline (no model calls), then the provider
    switched to the counting fake for what the tests start."""
    app_dir = tmp_path_factory.mktemp("batch-app")
    board = app_dir / "board.json"
    demo_subset(board, JOBS)
    fake = FakeLlmServer().start()
    fake.reply_with(scripted_reply)
    write_settings(app_dir, sources=[{"kind": "json_file", "id": "subset", "path": str(board)}],
                   dailyBudgetUsd=0)
    restore_environ = override_environ(JOBCTRL_SECRETS_BACKEND="file")
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    http = api_http(supervisor.info)
    try:
        assert (await http.put("/v1/profile", json=PROFILE)).status_code == 200
        assert (await http.post("/v1/pipeline/actions/run-stage",
                                json={"stage": "discover"})).status_code == 202
        await wait_completed(app_dir, "JobPreparationWorkflow", JOBS)
        await wait_quiet(app_dir)
        assert (await http.put("/v1/secrets/openai", json={"value": "sk-test"})).status_code == 204
        patched = await http.patch("/v1/settings", json={"llm": {
            "provider": "openai_compat", "baseUrl": fake.openai_base_url, "model": "gpt-4o",
            "apiKeySecret": "openai"}})
        assert patched.status_code == 200, patched.text
        jobs = (await http.get("/v1/jobs", params={"limit": 50})).json()["items"]
        yield {"app_dir": app_dir, "http": http, "fake": fake,
               "job_ids": sorted(job["jobId"] for job in jobs)}
    finally:
        await http.aclose()
        await supervisor.stop()
        fake.stop()
        restore_environ()


async def test_steps_enrichment_and_pdf_passes_settle_in_the_operations_snapshot(prepared):
    http = prepared["http"]

    async def settled() -> bool:
        summary = (await http.get("/v1/pipeline/operations")).json()["reconciliation"]
        return all(isinstance(summary[kind], list) and summary[kind][0]["status"] == "succeeded"
                   for kind in ("enrichment_pass", "pdf_render"))

    await wait_for(settled, timeout=90)  # the worker's reconciler settles them
    summary = (await http.get("/v1/pipeline/operations")).json()["reconciliation"]
    for kind in ("enrichment_pass", "pdf_render"):
        (step,) = summary[kind]
        assert step["itemKey"] == kind and step["attempt"] == 1
        assert step["counts"] == {"targetCount": JOBS, "succeededCount": JOBS}
        assert step["startedAt"] <= step["finishedAt"] and step["durationMs"] >= 0


async def test_bad_batch_requests_are_refused_and_start_nothing(prepared):
    http, job_ids = prepared["http"], prepared["job_ids"]
    cases = [
        ({"stage": "score", "jobKeys": job_ids}, "batch_stage_unsupported"),
        ({"stage": "tailor", "workers": 2}, "workers_without_jobs"),
        ({"stage": "tailor", "jobKeys": [*job_ids, "no-such-job"]}, "unknown_job"),
        ({"stage": "tailor", "jobKeys": job_ids, "workers": 0}, "validation_error"),
        ({"stage": "tailor", "jobKeys": job_ids, "workers": 17}, "validation_error"),
        ({"stage": "tailor", "jobKeys": []}, "validation_error"),
    ]
    for body, code in cases:
        answer = await http.post("/v1/pipeline/actions/run-stage", json=body)
        assert answer.status_code == 422, (body, answer.text)
        assert answer.json()["error"]["code"] == code
    assert query(prepared["app_dir"], "SELECT COUNT(*) FROM workflow_run_projections"
                 " WHERE workflow_type = 'BatchStageWorkflow'") == [(0,)]
    assert prepared["fake"].calls == 0


async def test_a_selected_tailor_batch_never_has_more_than_its_workers_in_flight(prepared):
    http, fake, app_dir, job_ids = (prepared[k] for k in ("http", "fake", "app_dir", "job_ids"))
    # Each call waits until WORKERS calls are in flight together: a batch that honours the
    # count reaches it in every wave; one that ignored it would push max_in_flight past it.
    fake.hold_until_in_flight(WORKERS)
    answer = await http.post("/v1/pipeline/actions/run-stage", json={
        "stage": "tailor", "jobKeys": job_ids, "workers": WORKERS})
    assert answer.status_code == 202, answer.text
    started = answer.json()
    assert started["workflowId"].startswith("batch-tailor-")
    assert started["workers"] == WORKERS and started["jobCount"] == JOBS
    run_id = started["firstExecutionRunId"]

    again = await http.post("/v1/pipeline/actions/run-stage", json={
        "stage": "tailor", "jobKeys": job_ids[::-1], "workers": WORKERS})
    assert again.status_code in (200, 202)  # attached, or nothing left once it finished
    await wait_completed(app_dir, "BatchStageWorkflow", 1)
    fake.hold_until_in_flight(0)

    assert fake.calls == 2 * JOBS  # one Tailor and one Cover call per job, nothing more
    assert fake.max_in_flight == WORKERS
    owners = query(app_dir, "SELECT stage, status, owner_run_id, COUNT(*) FROM job_stage_states"
                   " WHERE stage IN ('tailor', 'cover', 'pdf') GROUP BY 1, 2, 3 ORDER BY 1")
    assert owners == [("cover", "succeeded", run_id, JOBS), ("pdf", "succeeded", run_id, JOBS),
                      ("tailor", "succeeded", run_id, JOBS)]
    approved = query(app_dir, "SELECT COUNT(*) FROM job_events WHERE type = 'ResumeApproved'"
                     " AND json_extract(payload_json, '$.workflowId') = ?",
                     (started["workflowId"],))
    assert approved == [(JOBS,)]
    runs = (await http.get("/v1/workflow-runs",
                           params={"workflowType": "BatchStageWorkflow"})).json()
    assert [(item["runId"], item["status"]) for item in runs["items"]] == [(run_id, "completed")]


async def test_rescore_and_retailor_stale_touch_exactly_the_stale_work(prepared):
    http, fake, app_dir, job_ids = (prepared[k] for k in ("http", "fake", "app_dir", "job_ids"))
    await wait_quiet(app_dir)
    for action in ("rescore-stale", "retailor-stale"):
        idle = await http.post(f"/v1/pipeline/actions/{action}")
        assert idle.status_code == 200 and idle.json()["noopReason"] == "nothing_stale"

    changed = {**PROFILE, "targetTitles": ["Staff Backend Engineer", "Platform Engineer"]}
    assert (await http.put("/v1/profile", json=changed)).status_code == 200
    await wait_quiet(app_dir)
    calls, prepared_runs = fake.calls, completed_runs(app_dir, "JobPreparationWorkflow")

    rescored = await http.post("/v1/pipeline/actions/rescore-stale")
    assert rescored.status_code == 202, rescored.text
    assert rescored.json()["jobKeys"] == job_ids and rescored.json()["startedWorkflows"] == JOBS
    await wait_completed(app_dir, "JobPreparationWorkflow", prepared_runs + JOBS)
    await wait_quiet(app_dir)
    assert fake.calls == calls + JOBS  # one Score call each; Tailor / Cover were done
    revision = query(app_dir, "SELECT revision FROM candidate_profiles")[0][0]
    latest = query(app_dir, "SELECT DISTINCT profile_revision FROM job_scores s WHERE version ="
                   " (SELECT MAX(version) FROM job_scores x WHERE x.job_id = s.job_id)")
    assert latest == [(revision,)]
    assert (await http.post("/v1/pipeline/actions/rescore-stale")).status_code == 200

    retailored = await http.post("/v1/pipeline/actions/retailor-stale")
    assert retailored.status_code == 202, retailored.text
    assert retailored.json()["jobKeys"] == job_ids
    await wait_completed(app_dir, "JobPreparationWorkflow", prepared_runs + 2 * JOBS)
    await wait_quiet(app_dir)
    assert fake.calls == calls + JOBS + 2 * JOBS  # a new resume and letter each
    answer = await http.post("/v1/pipeline/actions/retailor-stale")
    assert answer.status_code == 200 and answer.json()["noopReason"] == "nothing_stale"
    pdfs = query(app_dir, "SELECT COUNT(DISTINCT job_id) FROM job_artifacts"
                 " WHERE kind = 'resume_pdf' AND generation >= 3")
    assert pdfs == [(JOBS,)]  # offline run, the batch, then re-tailor: a third generation
    assert retailored.json()["action"] == "retailor_stale"
