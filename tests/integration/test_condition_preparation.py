"""Condition-driven preparation on the real dev server: profile saves through the outbox
(one continuation per genuine change, none for a no-op or style-only save, coalescing of
never-started revisions, recovery of a crash between commit and start) and a resolved
Enrich condition that resumes exactly the jobs carrying it."""

from __future__ import annotations

import json

import pytest
import pytest_asyncio
from temporalio.service import RPCError, RPCStatusCode

from backend.domain.ids import job_id_for_url
from backend.pipeline.access_grants import host_of
from backend.sources.board_file import demo_board_text
from backend.supervision.supervisor import Supervisor
from backend.temporal.client import connect_temporal
from tests.api_http import api_http
from tests.app_db import connect_db
from tests.fakes.posting_pages import PostingPagesServer
from tests.integration.conftest import write_settings
from tests.integration.env_helpers import override_environ
from tests.integration.test_preparation import PROFILE, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

CONTINUATION = "PreparationContinuationWorkflow"
DISALLOW_JOBS = "User-agent: *\nDisallow: /jobs/\n"


def page_posting(key: str, url: str, title: str) -> dict:
    return {"id": key, "url": url, "title": title, "company": "Harborlight Logistics",
            "location": "Rotterdam, Netherlands", "remote": "hybrid"}


def query(app_dir, sql: str, params=()) -> list[tuple]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute(sql, params).fetchall()


def stage_status(app_dir, job_id: str, stage: str) -> tuple[str, str | None]:
    return query(app_dir, "SELECT status, blocked_reason FROM job_stage_states"
                          " WHERE job_id = ? AND stage = ?", (job_id, stage))[0]


def workflow_events(app_dir, kind: str, workflow_id: str) -> list[tuple]:
    return query(app_dir, "SELECT id, run_id FROM job_events WHERE type = ? AND workflow_id = ?"
                          " ORDER BY id", (kind, workflow_id))


def continuations_started(app_dir) -> list[str]:
    return [row[0] for row in query(
        app_dir, "SELECT workflow_id FROM job_events WHERE type = 'WorkflowStarted'"
                 " AND json_extract(payload_json, '$.workflowType') = ? ORDER BY id",
        (CONTINUATION,))]


def outbox(app_dir) -> dict[int, tuple]:
    rows = query(app_dir, "SELECT revision, status, run_id, coalesced_into, outbox_id"
                          " FROM profile_outbox")
    return {row[0]: row[1:] for row in rows}


async def wait_closed(app_dir, workflow_id: str, timeout: float = 120) -> None:
    async def closed() -> bool:
        return bool(workflow_events(app_dir, "WorkflowCompleted", workflow_id))

    await wait_for(closed, timeout=timeout)


async def wait_outbox(app_dir, revision: int, status: str, timeout: float = 120) -> None:
    async def reached() -> bool:
        row = outbox(app_dir).get(revision)
        return row is not None and row[0] == status

    await wait_for(reached, timeout=timeout)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def world(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("conditions-app")
    site_a = PostingPagesServer(robots_body=DISALLOW_JOBS).start()
    site_b = PostingPagesServer(robots_body=DISALLOW_JOBS).start()
    demo = json.loads(demo_board_text())["postings"][:3]
    blocked = {"a1": site_a.url("/jobs/backend-engineer"),
               "a2": site_a.url("/jobs/data-engineer-jsonld"),
               "b1": site_b.url("/jobs/backend-engineer")}
    board = app_dir / "board.json"
    board.write_text(json.dumps({"postings": demo + [
        page_posting(key, url, f"Role {key}") for key, url in blocked.items()]}), encoding="utf-8")
    write_settings(app_dir, sources=[{"kind": "json_file", "id": "mixed", "path": str(board)}],
                   localNetworkHosts=[site_a.host, site_b.host])
    restore_environ = override_environ(JOBCTRL_ENABLE_FAULTS="1")
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    http = api_http(supervisor.info)
    client = await connect_temporal(supervisor.settings.temporal, supervisor.info.temporal_address,
                                    app_dir=supervisor.paths.app_dir)
    # Discover with no profile yet: demo jobs wait on the profile, page jobs on robots.txt.
    assert (await http.post("/v1/pipeline/actions/run-stage",
                            json={"stage": "discover"})).status_code == 202

    async def all_prepared() -> bool:
        rows = query(app_dir, "SELECT COUNT(*) FROM job_events WHERE type IN"
                              " ('WorkflowCompleted', 'WorkflowFailed')"
                              " AND json_extract(payload_json, '$.workflowType')"
                              " = 'JobPreparationWorkflow'")
        return rows[0][0] >= 6

    await wait_for(all_prepared, timeout=180)
    yield {"app_dir": app_dir, "http": http, "client": client, "supervisor": supervisor,
           "demo": [job_id_for_url(p["url"]) for p in demo],
           "blocked": {key: job_id_for_url(url) for key, url in blocked.items()},
           "site_a": site_a, "site_b": site_b}
    await http.aclose()
    await supervisor.stop()
    site_a.stop()
    site_b.stop()
    restore_environ()


async def test_discover_left_the_conditions_the_continuations_resolve(world):
    app_dir = world["app_dir"]
    for job_id in world["demo"]:
        assert stage_status(app_dir, job_id, "score") == ("blocked", "profile_missing")
    for job_id in world["blocked"].values():
        assert stage_status(app_dir, job_id, "enrich") == ("blocked", "ENRICH_ROBOTS_DISALLOWED")
    assert continuations_started(app_dir) == []


def themed(theme: str, *, headline: str | None = None, spaced_skills: bool = False) -> dict:
    """The test profile with a JSON Resume ``meta`` theme (presentation only) and,
    optionally, another headline or its skills typed with stray spaces."""
    resume = {**PROFILE["resume"], "meta": {"theme": theme}}
    if headline:
        resume["basics"] = {**resume["basics"], "label": headline}
    if spaced_skills:
        resume["skills"] = [{**group, "keywords": [f" {k} " for k in group["keywords"]]}
                            for group in resume["skills"]]
    return {**PROFILE, "resume": resume}


async def test_a_real_change_starts_exactly_one_continuation(world):
    http, app_dir = world["http"], world["app_dir"]
    profile = themed("classic")
    response = await http.put("/v1/profile", json=profile)
    assert response.json()["revision"] == 1 and response.json()["changed"] is True
    await wait_closed(app_dir, "profile-continuation-1")
    assert continuations_started(app_dir) == ["profile-continuation-1"]
    for job_id in world["demo"]:
        for stage in ("score", "tailor", "cover"):
            assert stage_status(app_dir, job_id, stage)[0] in ("succeeded", "skipped"), stage
        assert stage_status(app_dir, job_id, "score")[0] == "succeeded"
    # Jobs blocked by Enrich are not this condition's jobs.
    for job_id in world["blocked"].values():
        assert stage_status(app_dir, job_id, "enrich")[0] == "blocked"
    await wait_outbox(app_dir, 1, "finished")


async def test_a_no_op_or_style_only_save_starts_nothing(world):
    http, app_dir = world["http"], world["app_dir"]
    same = themed("classic", spaced_skills=True)
    response = (await http.put("/v1/profile", json=same)).json()
    assert (response["revision"], response["changed"]) == (1, False)
    styled = themed("elegant")
    response = (await http.put("/v1/profile", json=styled)).json()
    assert (response["revision"], response["changed"]) == (2, True)
    # No outbox row, so nothing can ever be dispatched for either save.
    assert sorted(outbox(app_dir)) == [1]
    assert query(app_dir, "SELECT COUNT(*) FROM job_events"
                          " WHERE type = 'ProfileContinuationIntended'")[0][0] == 1


async def test_quick_changes_coalesce_only_revisions_that_never_started(world):
    http, app_dir, supervisor = world["http"], world["app_dir"], world["supervisor"]
    worker = supervisor.service("worker")
    await worker.stop()  # revision 3's continuation is accepted by Temporal but cannot run
    try:
        await http.put("/v1/profile", json=themed("elegant", headline="Revision three"))
        await wait_outbox(app_dir, 3, "started")  # intended, then started: it may run
        await http.put("/v1/profile", json=themed("elegant", headline="Revision four"))
        await http.put("/v1/profile", json=themed("elegant", headline="Revision five"))
        rows = outbox(app_dir)
        assert rows[4][0] == "pending" and rows[5][0] == "pending"
    finally:
        await worker.start()
    await wait_outbox(app_dir, 5, "finished")
    rows = outbox(app_dir)
    assert rows[3][0] == "finished"
    assert rows[4][0] == "coalesced" and rows[4][2] == rows[5][3]  # folded into revision 5
    assert continuations_started(app_dir)[1:] == ["profile-continuation-3",
                                                  "profile-continuation-5"]
    with pytest.raises(RPCError) as missing:
        await world["client"].get_workflow_handle("profile-continuation-4").describe()
    assert missing.value.status == RPCStatusCode.NOT_FOUND
    # The older intended execution was awaited before the newer one started.
    closed_3 = workflow_events(app_dir, "WorkflowCompleted", "profile-continuation-3")[0][0]
    started_5 = workflow_events(app_dir, "WorkflowStarted", "profile-continuation-5")[0][0]
    assert closed_3 < started_5


@pytest.mark.parametrize("fault, revision", [
    ("profile-outbox-after-commit", 6),   # committed, no intent yet
    ("profile-outbox-before-start", 7),   # intent committed, Temporal never asked
])
async def test_a_crash_between_commit_and_start_is_recovered_at_startup(world, fault, revision):
    http, app_dir, supervisor = world["http"], world["app_dir"], world["supervisor"]
    api = supervisor.service("api")
    pid, restarts = api.pid, api.restarts
    (app_dir / "faults").mkdir(exist_ok=True)
    (app_dir / "faults" / fault).touch()
    response = await http.put("/v1/profile", json=themed("elegant", headline=f"Revision {revision}"))
    assert response.json()["revision"] == revision  # answered, then the API died

    async def restarted() -> bool:
        return api.restarts > restarts

    await wait_for(restarted, timeout=60)
    assert api.pid != pid and not (app_dir / "faults" / fault).exists()
    await wait_outbox(app_dir, revision, "finished")
    workflow_id = f"profile-continuation-{revision}"
    assert continuations_started(app_dir).count(workflow_id) == 1
    assert len(workflow_events(app_dir, "ProfileContinuationIntended", workflow_id)) == 1
    assert outbox(app_dir)[revision][1] == workflow_events(
        app_dir, "WorkflowStarted", workflow_id)[0][1]


async def test_a_resolved_enrich_condition_resumes_exactly_its_jobs_once(world):
    http, app_dir = world["http"], world["app_dir"]
    blocked = world["blocked"]
    host_a = host_of(world["site_a"].url("/"))
    discover_runs = query(app_dir, "SELECT COUNT(*) FROM job_events"
                                   " WHERE type = 'DiscoveryRunStarted'")[0][0]
    bad = await http.post("/v1/pipeline/conditions/enrich/resolve",
                          json={"code": "ENRICH_SOMETHING", "host": host_a})
    assert bad.status_code == 422
    bad = await http.post("/v1/pipeline/conditions/enrich/resolve",
                          json={"code": "ENRICH_ROBOTS_DISALLOWED", "host": "not a host/"})
    assert bad.status_code == 422
    assert query(app_dir, "SELECT COUNT(*) FROM enrich_access_grants")[0][0] == 0

    response = await http.post("/v1/pipeline/conditions/enrich/resolve",
                               json={"code": "ENRICH_ROBOTS_DISALLOWED", "host": host_a})
    assert response.status_code == 202
    body = response.json()
    assert body["jobCount"] == 2 and body["alreadyRunning"] is False
    workflow_id = body["workflowId"]
    assert workflow_id.startswith("enrich-condition-enrich-robots-disallowed-127.0.0.1-")
    await wait_closed(app_dir, workflow_id)
    for key in ("a1", "a2"):
        for stage in ("enrich", "score", "tailor", "cover", "pdf"):  # PDFs too: ready to apply
            assert stage_status(app_dir, blocked[key], stage)[0] == "succeeded", (key, stage)
    assert world["site_a"].count("/jobs/backend-engineer") == 1
    # The other host keeps its block, and its page was never requested.
    assert stage_status(app_dir, blocked["b1"], "enrich") == ("blocked", "ENRICH_ROBOTS_DISALLOWED")
    assert world["site_b"].count("/jobs/backend-engineer") == 0
    # Discover did not run again; one continuation run did all of it.
    assert query(app_dir, "SELECT COUNT(*) FROM job_events"
                          " WHERE type = 'DiscoveryRunStarted'")[0][0] == discover_runs
    assert continuations_started(app_dir).count(workflow_id) == 1

    again = await http.post("/v1/pipeline/conditions/enrich/resolve",
                            json={"code": "ENRICH_ROBOTS_DISALLOWED", "host": host_a})
    assert again.status_code == 200
    assert again.json()["noopReason"] == "no_blocked_jobs" and again.json()["jobCount"] == 0
    assert continuations_started(app_dir).count(workflow_id) == 1
