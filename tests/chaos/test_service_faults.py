"""The services around the worker failing, on the offline model: Temporal unreachable
when a command would dispatch, the API killed with live SSE clients, and the API killed
between committing a settings change and dispatching the work it implies."""

from __future__ import annotations

import asyncio
import contextlib
import json

import pytest
import pytest_asyncio

from backend.config import AppPaths
from backend.sources.board_file import demo_board_text
from backend.store.db import Database
from desktop.client import ApiClient
from tests.chaos.invariants import (
    assert_invariants,
    count_events,
    last_event_id,
    rows,
    until,
    wait_quiet,
)
from tests.chaos.stack import chaos_app, discover_and_settle
from tests.integration.test_preparation import PROFILE

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session"),
              pytest.mark.timeout(600)]

THRESHOLD = 50
# Six demo postings the test profile scores below the threshold (23-30) and one above it.
POSTINGS = [0, 1, 2, 3, 4, 5, 24]


def demo_postings(indices: list[int]) -> list[dict]:
    every = json.loads(demo_board_text())["postings"]
    return [every[index] for index in indices]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def app(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("chaos-services")
    async with chaos_app(app_dir, postings=demo_postings(POSTINGS), paid=False,
                         minFitScore=THRESHOLD) as running:
        await discover_and_settle(running)
        yield running


def snapshot(app) -> dict:
    """Everything a refused command must leave as it was."""
    return {"events": last_event_id(app.app_dir),
            "stages": app.rows("SELECT * FROM job_stage_states ORDER BY job_id, stage"),
            "outbox": app.rows("SELECT * FROM profile_outbox ORDER BY revision"),
            "settings": (app.app_dir / "settings.json").read_text(encoding="utf-8")}


async def test_r09_temporal_unreachable_refuses_dispatch_and_touches_nothing(app):
    """With Temporal stopped, every command that would start work answers the typed 503
    and changes nothing; a profile save (durable locally) is kept in its outbox and
    delivered exactly once when Temporal is back."""
    job_id = app.job_ids()[0]
    temporal = app.supervisor.service("temporal")
    await temporal.stop()
    try:
        changed = {**PROFILE, "targetTitles": ["Staff Backend Engineer", "Platform Engineer"]}
        saved = (await app.http.put("/v1/profile", json=changed)).json()
        revision = saved["revision"]
        assert saved["changed"] is True
        # Its drain records the dispatch intent, then finds Temporal away and keeps the row.
        await until(lambda: app.rows("SELECT status FROM profile_outbox WHERE revision = ?",
                                     (revision,)) == [("intended",)],
                    timeout=30, what="the outbox to record its intent")
        before = snapshot(app)
        commands = [("POST", "/v1/pipeline/actions/run-stage", {"stage": "discover"}),
                    ("POST", f"/v1/jobs/{job_id}/actions/rescore", None),
                    ("POST", f"/v1/jobs/{job_id}/actions/render-pdf", None),
                    ("POST", "/v1/pipeline/actions/rescore-stale", None)]  # now stale: all
        for method, path, body in commands:
            answer = await app.http.request(method, path, json=body)
            assert answer.status_code == 503, (path, answer.text)
            assert answer.json()["error"]["code"] == "worker_runtime_unavailable"
        assert snapshot(app) == before, "a refused command changed something"
    finally:
        await temporal.start()

    def delivered():
        found = app.rows("SELECT status FROM profile_outbox WHERE revision = ?", (revision,))
        return found == [("finished",)]

    await until(delivered, timeout=120, what="the outbox to deliver the saved revision")
    workflow_id = f"profile-continuation-{revision}"
    assert app.rows("SELECT COUNT(*) FROM job_events WHERE type = 'WorkflowStarted'"
                    " AND workflow_id = ?", (workflow_id,)) == [(1,)]
    await wait_quiet(app.app_dir, client=app.client, after=before["events"])
    await assert_invariants(app.app_dir, client=app.client, http=app.http,
                            after=before["events"])


async def collect(api: ApiClient, since: int, into: list, states: list) -> None:
    stream = api.events(since, on_state=states.append)
    async with contextlib.aclosing(stream):
        async for event in stream:
            into.append(event)


async def test_r10_api_killed_with_live_sse_clients_who_miss_and_repeat_nothing(app):
    since = last_event_id(app.app_dir)
    clients = [ApiClient.from_runtime(app.supervisor.info) for _ in range(3)]
    received: list[list] = [[] for _ in clients]
    states: list[list] = [[] for _ in clients]
    tasks = [asyncio.create_task(collect(api, since, got, seen))
             for api, got, seen in zip(clients, received, states, strict=True)]
    try:
        await until(lambda: all("live" in seen for seen in states), timeout=30,
                    what="every SSE client to be live")
        for job_id in app.job_ids():
            answer = await app.http.post(f"/v1/jobs/{job_id}/actions/rescore")
            assert answer.status_code == 202, answer.text
        await until(lambda: all(got for got in received), timeout=60,
                    what="every client to receive the first events")
        await app.sigkill("api")  # the stream is cut mid-run; the work goes on
        await wait_quiet(app.app_dir, client=app.client, after=since)
        newest = last_event_id(app.app_dir)
        await until(lambda: all(got and got[-1].id >= newest for got in received), timeout=60,
                    what="every client to catch up after the restart")
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for api in clients:
            await api.close()
    stored = rows(app.app_dir, "SELECT id, type FROM job_events WHERE id > ? AND id <= ?"
                               " ORDER BY id", (since, newest))
    for got, seen in zip(received, states, strict=True):
        assert "reconnecting" in seen, "the client really lost its stream"
        assert [(event.id, event.type) for event in got if event.id <= newest] == stored
    assert count_events(app.app_dir, "JobScored", after=since) == len(app.job_ids())
    await assert_invariants(app.app_dir, client=app.client, http=app.http, after=since)


def below_threshold(app) -> dict[str, int]:
    """Jobs whose Tailor was skipped below the threshold -> their latest score."""
    return dict(app.rows(
        "SELECT s.job_id, sc.score FROM job_stage_states s JOIN job_scores sc"
        " ON sc.job_id = s.job_id AND sc.version = (SELECT MAX(version) FROM job_scores x"
        " WHERE x.job_id = s.job_id) WHERE s.stage = 'tailor' AND s.status = 'skipped'"
        " AND s.blocked_reason = 'below_min_fit_score'"))


def prep_starts(app, job_id: str, after: int) -> int:
    return app.rows("SELECT COUNT(*) FROM job_events WHERE type = 'WorkflowStarted'"
                    " AND workflow_id = ? AND id > ?", (f"prep-{job_id}", after))[0][0]


async def test_r07_api_killed_between_a_settings_commit_and_its_dispatch(app):
    """A lowered threshold is saved, then the API dies before it starts the preparations
    the change implies. The saved setting holds, and the worker's pass prepares exactly the
    jobs the new threshold clears, once each (a second pass starts nothing)."""
    skipped = below_threshold(app)
    lowered = max(skipped.values())
    cleared = sorted(job for job, score in skipped.items() if score >= lowered)
    assert cleared, "the board has jobs the lowered threshold clears"
    after, pid, restarts = last_event_id(app.app_dir), app.pid("api"), app.supervisor.service(
        "api").restarts
    app.arm("settings-after-commit")
    with contextlib.suppress(Exception):  # the API dies before answering
        await app.http.patch("/v1/settings", json={"minFitScore": lowered})
    await app.restarted("api", pid, restarts)
    assert not app.armed("settings-after-commit")
    assert (await app.http.get("/v1/settings")).json()["minFitScore"] == lowered

    def all_prepared() -> bool:
        done = app.rows("SELECT COUNT(*) FROM job_stage_states WHERE stage = 'pdf'"
                        f" AND status = 'succeeded' AND job_id IN ({','.join('?' * len(cleared))})",
                        tuple(cleared))
        return done[0][0] == len(cleared)

    await until(all_prepared, timeout=120, what="the cleared jobs to be prepared")
    await wait_quiet(app.app_dir, client=app.client, after=after)
    assert {job: prep_starts(app, job, after) for job in cleared} == {job: 1 for job in cleared}
    assert count_events(app.app_dir, "ResumeApproved", after=after) == len(cleared)
    from backend.temporal.loops.threshold_backstop import dispatch_threshold_cleared

    db = await Database.open(AppPaths(app.app_dir).database, run_migrations=False)
    try:
        again = await dispatch_threshold_cleared(db, app.client, AppPaths(app.app_dir))
    finally:
        await db.close()
    assert again is None, "a second pass found nothing left to dispatch"
    await assert_invariants(app.app_dir, client=app.client, http=app.http, after=after)
