"""Execution lineage, pipeline steps and the coverage checkpoint against the real stack
(Temporal dev server, worker, API) on the demo board: a first Discover links and plans
every observed job; a second one, after some stages failed, sweeps them in as
``existing_backlog``; coverage is ``ready`` by digest and downgraded when a membership row
is deleted behind its back."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import pytest_asyncio

from backend.projections.coverage import persist_stale_verdict, read_coverage
from backend.projections.pipeline_steps import list_steps, refresh_pipeline_steps
from backend.store import coverage, lineage
from backend.store.db import Database
from backend.supervision.supervisor import Supervisor
from backend.temporal.contracts import DiscoveryExecutionRef
from desktop.client import ApiClient
from tests.app_db import connect_db
from tests.integration.conftest import write_settings

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session"),
              pytest.mark.timeout(900)]

JOBS = 234
ALL_STAGES = ("enrich", "score", "tailor", "cover", "pdf")
EXTRA_BOARD = {"postings": [
    {"id": f"extra-{n}", "url": f"https://jobs.example.org/extra/{n}",
     "title": f"Platform Engineer {n}", "company": "Extra Co", "location": "Remote",
     "remote": "remote", "descriptionHtml": "<p>Python, Kubernetes and Terraform.</p>"}
    for n in (1, 2)
]}


def db_rows(app_dir: Path, sql: str, params=()) -> list[tuple]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute(sql, params).fetchall()


async def wait_until(predicate, *, timeout: float, what: str) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        if predicate():
            return
        await asyncio.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def run_finished(app_dir: Path, run_id: str) -> bool:
    rows = db_rows(app_dir, "SELECT status FROM discovery_runs WHERE discover_run_id = ?",
                   (run_id,))
    return bool(rows) and rows[0][0] != "running"


def preparations_settled(app_dir: Path, at_least: int) -> bool:
    started = db_rows(app_dir, "SELECT COUNT(DISTINCT run_id) FROM job_events"
                               " WHERE type = 'WorkflowStarted' AND workflow_id LIKE 'prep-%'")[0][0]
    closed = db_rows(app_dir, "SELECT COUNT(DISTINCT run_id) FROM job_events WHERE type IN"
                              " ('WorkflowCompleted', 'WorkflowFailed', 'WorkflowCanceled')"
                              " AND workflow_id LIKE 'prep-%'")[0][0]
    return started >= at_least and closed == started


async def discover(api: ApiClient, app_dir: Path, **extra) -> DiscoveryExecutionRef:
    accepted = await api.run_stage("discover", **extra)
    # Named running, the answer would be the previous execution, and every assertion
    # after it would read that run's lineage instead of this one's.
    assert accepted["alreadyRunning"] is False, "the previous Discover was still named running"
    run_id = accepted["firstExecutionRunId"]
    await wait_until(lambda: run_finished(app_dir, run_id), timeout=180, what="discover")
    return DiscoveryExecutionRef(tenant_id="local", discover_workflow_id=accepted["workflowId"],
                                 discover_run_id=run_id)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def stack(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("lineage-app")
    extra = app_dir / "extra-board.json"
    extra.write_text(json.dumps(EXTRA_BOARD), encoding="utf-8")
    write_settings(app_dir, sources=[
        {"kind": "demo_board", "id": "demo_board"},
        {"kind": "json_file", "id": "extra", "path": str(extra), "enabled": False},
    ])
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    api = ApiClient.from_runtime(supervisor.info)
    db = await Database.open(app_dir / "jobctrl.db")
    first = await discover(api, app_dir)
    # No profile: every child preparation settles quickly (Score waits for a profile).
    await wait_until(lambda: preparations_settled(app_dir, JOBS), timeout=600,
                     what="the first preparations")
    yield {"app_dir": app_dir, "api": api, "db": db, "first": first}
    await db.close()
    await api.close()
    await supervisor.stop()


def step_table(rows) -> dict[tuple[str, str], object]:
    return {(row.step_kind, row.item_key): row for row in rows}


async def test_first_discover_links_and_plans_every_observed_job(stack):
    db, ref = stack["db"], stack["first"]
    members = await lineage.read_members(db, ref)
    assert len(members) == JOBS
    assert {m.cohort for m in members.values()} == {"observed_this_run"}
    assert {m.plan_state for m in members.values()} == {"planned"}
    assert all(m.preparation_workflow_id == f"prep-{job_id}" for job_id, m in members.items())
    assert {m.required_steps for m in members.values()} == {ALL_STAGES}
    observed = {row[0] for row in db_rows(
        stack["app_dir"], "SELECT DISTINCT job_id FROM source_observations"
                          " WHERE discover_run_id = ?", (ref.discover_run_id,))}
    assert set(members) == observed


PASS_KINDS = ("enrichment_pass", "pdf_render")


def passes_settled(app_dir: Path, run_id: str) -> bool:
    """The enrichment_pass and pdf_render steps are completed by terminal reconciliation
    (the worker's reconciler) once every member settled Enrich / PDF."""
    return db_rows(app_dir, "SELECT COUNT(*) FROM pipeline_step_projections WHERE"
                   " discover_run_id = ? AND step_kind IN ('enrichment_pass', 'pdf_render')"
                   " AND status = 'succeeded'", (run_id,))[0][0] == 2


async def test_first_discover_step_rows_succeeded_with_counts(stack):
    db, ref = stack["db"], stack["first"]
    await wait_until(lambda: passes_settled(stack["app_dir"], ref.discover_run_id),
                     timeout=120, what="the enrichment and PDF passes")
    await refresh_pipeline_steps(db)
    steps = step_table(await list_steps(db, ref))
    assert {key: (row.status, row.attempt) for key, row in steps.items()} == {
        ("source_planning", "planning"): ("succeeded", 1),
        ("source_family", "family:demo_board"): ("succeeded", 1),
        ("preparation_fanout", "fanout:family:demo_board"): ("succeeded", 1),
        ("existing_backlog_sweep", "sweep"): ("succeeded", 1),
        ("preparation_fanout", "fanout:sweep"): ("succeeded", 1),
        ("enrichment_pass", "enrichment_pass"): ("succeeded", 1),
        ("pdf_render", "pdf_render"): ("succeeded", 1),
    }
    assert steps[("source_planning", "planning")].counts == {"familyCount": 1}
    enriched = steps[("enrichment_pass", "enrichment_pass")].counts
    assert enriched["targetCount"] == JOBS
    assert sum(value for key, value in enriched.items() if key != "targetCount") == JOBS
    assert steps[("pdf_render", "pdf_render")].counts["targetCount"] == JOBS
    assert steps[("source_family", "family:demo_board")].counts == {
        "newJobs": JOBS, "existingJobs": 0, "observedJobs": JOBS}
    assert steps[("preparation_fanout", "fanout:family:demo_board")].counts == {
        "targetCount": JOBS, "plannedCount": JOBS, "notEligibleCount": 0}
    assert steps[("existing_backlog_sweep", "sweep")].counts == {
        "eligibleCount": 0, "sweptCount": 0, "deferredCount": 0}
    assert steps[("preparation_fanout", "fanout:sweep")].counts["targetCount"] == 0
    for row in steps.values():
        assert row.queued_at and row.started_at and row.finished_at
        assert row.queued_at <= row.started_at <= row.finished_at
        assert row.duration_ms is not None and row.duration_ms >= 0
    # The events carry the exact execution identity and nothing unbounded.
    payloads = [json.loads(p) for (p,) in db_rows(
        stack["app_dir"], "SELECT payload_json FROM job_events WHERE type LIKE 'PipelineStep%'"
                          " AND run_id = ?", (ref.discover_run_id,))]
    assert len(payloads) == 7 * 3  # queued, started and a terminal fact per step
    allowed = {"occurredAt", "discoverWorkflowId", "discoverRunId", "stepKind", "itemKey",
               "attempt", "queuedAt", "startedAt", "counts", "durationMs", "errorCode",
               "retryable"}
    for payload in payloads:
        assert set(payload) <= allowed
        assert (payload["discoverWorkflowId"], payload["discoverRunId"]) == (
            "discover-local", ref.discover_run_id)


async def test_first_discover_coverage_is_ready_by_digest(stack):
    db, ref = stack["db"], stack["first"]
    read = await read_coverage(db, ref)
    assert (read.status, read.mode, read.decoder_version) == ("ready", "native", 3)
    assert read.expected_members == read.persisted_members == JOBS
    assert read.expected_steps == read.persisted_steps == 7
    member_keys = [f"{job}|{cohort}" for job, cohort in db_rows(
        stack["app_dir"], "SELECT job_id, cohort FROM discovery_execution_jobs"
                          " WHERE discover_run_id = ?", (ref.discover_run_id,))]
    step_keys = [f"{kind}|{item}" for kind, item in db_rows(
        stack["app_dir"], "SELECT step_kind, item_key FROM pipeline_step_projections"
                          " WHERE discover_run_id = ?", (ref.discover_run_id,))]
    assert read.digest == coverage.canonical_digest(member_keys, step_keys)


async def test_second_discover_sweeps_failed_backlog(stack):
    app_dir, db, api, first = stack["app_dir"], stack["db"], stack["api"], stack["first"]
    demo_jobs = sorted(await lineage.read_members(db, first))
    failed, skipped = demo_jobs[:5], demo_jobs[5:7]
    with connect_db(app_dir / "jobctrl.db") as conn:
        conn.executemany("UPDATE job_stage_states SET status = 'failed', error_code = 'x'"
                         " WHERE job_id = ? AND stage = 'enrich'", [(j,) for j in failed + skipped])
        conn.executemany("UPDATE jobs SET user_status = 'skipped' WHERE job_id = ?",
                         [(j,) for j in skipped])
    # Only the extra board is crawled: the failed demo jobs are not observed this time.
    second = await discover(api, app_dir, sourceIds=["extra"])
    members = await lineage.read_members(db, second)
    observed = {j for j, m in members.items() if m.cohort == "observed_this_run"}
    backlog = {j for j, m in members.items() if m.cohort == "existing_backlog"}
    assert len(observed) == 2 and not observed & set(demo_jobs)
    assert backlog == set(failed)
    assert not backlog & set(skipped)
    for job_id in failed:
        member = members[job_id]
        assert member.plan_state == "planned"
        assert member.preparation_workflow_id == f"prep-{job_id}"
        assert member.required_steps[0] == "enrich"
    await refresh_pipeline_steps(db)
    steps = step_table(await list_steps(db, second))
    passes = {key: steps.pop(key).status for key in list(steps) if key[0] in PASS_KINDS}
    assert set(passes) == {(kind, kind) for kind in PASS_KINDS}  # settle as members do
    assert set(passes.values()) <= {"running", "succeeded"}
    assert {key: row.status for key, row in steps.items()} == {
        ("source_planning", "planning"): "succeeded",
        ("source_family", "family:extra"): "succeeded",
        ("preparation_fanout", "fanout:family:extra"): "succeeded",
        ("existing_backlog_sweep", "sweep"): "succeeded",
        ("preparation_fanout", "fanout:sweep"): "succeeded",
    }
    assert steps[("existing_backlog_sweep", "sweep")].counts == {
        "eligibleCount": 5, "sweptCount": 5, "deferredCount": 0}
    assert steps[("preparation_fanout", "fanout:sweep")].counts == {
        "targetCount": 5, "plannedCount": 5, "notEligibleCount": 0}
    # The swept jobs were fanned out: each gets a second preparation run.
    await wait_until(lambda: all(db_rows(
        app_dir, "SELECT COUNT(DISTINCT run_id) FROM job_events WHERE type = 'WorkflowStarted'"
                 " AND workflow_id = ?", (f"prep-{job_id}",))[0][0] == 2 for job_id in failed),
        timeout=120, what="the swept preparations")
    assert (await read_coverage(db, second)).ready
    stack["second"] = second


async def test_coverage_is_downgraded_when_a_member_is_deleted_behind_its_back(stack):
    app_dir, db = stack["app_dir"], stack["db"]
    second = stack.get("second") or DiscoveryExecutionRef(
        tenant_id="local", discover_workflow_id="discover-local",
        discover_run_id=db_rows(app_dir, "SELECT discover_run_id FROM discovery_runs"
                                         " ORDER BY started_at DESC LIMIT 1")[0][0])
    before = await read_coverage(db, second)
    assert before.ready
    with connect_db(app_dir / "jobctrl.db") as conn:
        conn.execute("DELETE FROM discovery_execution_jobs WHERE discover_run_id = ?"
                     " AND cohort = 'existing_backlog' AND job_id = (SELECT MIN(job_id)"
                     " FROM discovery_execution_jobs WHERE discover_run_id = ?"
                     " AND cohort = 'existing_backlog')",
                     (second.discover_run_id, second.discover_run_id))
    after = await read_coverage(db, second)
    assert after.status == "recovering" and after.downgraded
    assert (after.expected_members, after.persisted_members) == (
        before.expected_members, before.expected_members - 1)
    # The read wrote nothing; the worker's repair pass persists the downgrade (this is its
    # step, run here at once; the worker's own pass may have got there first and gone on
    # to repair it, which a lost backlog row cannot make ready again).
    persisted = await persist_stale_verdict(db, second)
    assert persisted.status in ("recovering", "retrying")
    assert db_rows(app_dir, "SELECT status FROM discovery_execution_recoveries"
                            " WHERE discover_run_id = ?", (second.discover_run_id,))[0][0] \
        in ("recovering", "retrying")
    # The other execution's proof is untouched.
    assert (await read_coverage(db, stack["first"])).ready


async def test_rediscovering_jobs_that_need_nothing_plans_them_not_eligible(stack):
    app_dir, db, api = stack["app_dir"], stack["db"], stack["api"]
    third = await discover(api, app_dir)
    status = db_rows(app_dir, "SELECT status FROM discovery_runs WHERE discover_run_id = ?",
                     (third.discover_run_id,))[0][0]
    assert status == "completed"
    members = await lineage.read_members(db, third)
    assert len(members) == JOBS
    assert {m.cohort for m in members.values()} == {"observed_this_run"}
    reasons = {m.not_eligible_reason for m in members.values() if m.plan_state == "not_eligible"}
    assert reasons and reasons <= lineage.NOT_ELIGIBLE_REASONS
    assert "profile_missing" in reasons  # no profile: Score waits for one
    assert {m.plan_state for m in members.values()} <= {"planned", "not_eligible"}
    assert (await read_coverage(db, third)).ready
