"""Every service SIGKILLed in turn, in two orders, while preparations are in flight (their
posting pages answer slowly): the supervisor restarts each, the work resumes, and every
job ends prepared exactly once, with the live and stored state agreeing."""

from __future__ import annotations

import json

import pytest
import pytest_asyncio

from backend.domain.ids import job_id_for_url
from tests.chaos.invariants import assert_invariants, count_events, last_event_id, until, wait_quiet
from tests.chaos.stack import chaos_app, outbox_settled
from tests.chaos.test_worker_kills import page_posting
from tests.fakes.posting_pages import PostingPagesServer

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session"),
              pytest.mark.timeout(900), pytest.mark.chaos_full]

JOBS = 3


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def world(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("chaos-restarts")
    pages = PostingPagesServer(slow_seconds=4).start()
    async with chaos_app(app_dir, postings=[], paid=False, localNetworkHosts=[pages.host]) as app:
        await outbox_settled(app)  # the profile save's continuation has closed
        yield {"app": app, "pages": pages}
    pages.stop()


def slow_postings(pages, batch: str) -> list[dict]:
    """Postings whose pages take seconds each (distinct URLs: distinct jobs)."""
    return [page_posting(f"{batch}-{n}", pages.url(f"/slow?posting={batch}-{n}"),
                         f"Backend Engineer {batch}{n}") for n in range(JOBS)]


@pytest.mark.parametrize("order", [("temporal", "worker", "api"), ("api", "worker", "temporal")])
async def test_r21_services_killed_in_turn_mid_run_lose_and_repeat_nothing(world, order):
    app, pages = world["app"], world["pages"]
    batch = "".join(name[0] for name in order)
    postings = slow_postings(pages, batch)
    (app.app_dir / "board.json").write_text(json.dumps({"postings": postings}), encoding="utf-8")
    after, fetched = last_event_id(app.app_dir), pages.count("/slow")
    answer = await app.http.post("/v1/pipeline/actions/run-stage", json={"stage": "discover"})
    assert answer.status_code == 202, answer.text
    await until(lambda: pages.count("/slow") > fetched, timeout=120,
                what="the first page fetch of the new jobs")
    for service in order:
        await app.sigkill(service)
    await wait_quiet(app.app_dir, client=app.client, after=after, timeout=300)
    jobs = [job_id_for_url(posting["url"]) for posting in postings]
    for job_id in jobs:
        stages = dict(app.rows("SELECT stage, status FROM job_stage_states WHERE job_id = ?",
                               (job_id,)))
        assert set(stages.values()) == {"succeeded"}, (job_id, stages)
    assert count_events(app.app_dir, "JobEnriched", after=after) == JOBS
    assert count_events(app.app_dir, "JobDiscovered", after=after) == JOBS
    runs = app.rows("SELECT json_extract(payload_json, '$.workflowType'), COUNT(*) FROM"
                    " job_events WHERE type = 'WorkflowCompleted' AND id > ? GROUP BY 1",
                    (after,))
    assert dict(runs) == {"DiscoverWorkflow": 1, "JobPreparationWorkflow": JOBS}
    await assert_invariants(app.app_dir, client=app.client, http=app.http, after=after)
