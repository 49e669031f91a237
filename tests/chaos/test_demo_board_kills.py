"""Issue 20's fault run, ten times over: Discover on the whole demo board with a saved
profile and, while its preparations fan out, the API, the worker and the Temporal dev
server each SIGKILLed by pid (the supervisor restarts each). Every time, every job reaches
its PDFs, nothing runs twice, and an SSE client that stays connected (reconnecting with
Last-Event-ID after the API's death) reads every stored event once, in order."""

from __future__ import annotations

import asyncio
import contextlib
import json

import pytest

from backend.sources.board_file import demo_board_text
from desktop.client import ApiClient
from tests.chaos.invariants import assert_invariants, last_event_id, rows, until, wait_quiet
from tests.chaos.stack import chaos_app, outbox_settled
from tests.chaos.test_service_faults import collect

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session"),
              pytest.mark.timeout(1200), pytest.mark.chaos_full]

ROUNDS = 10
# Kill the first service once this many jobs have started preparing (the fan-out is on),
# and each next one once this many more have.
STARTED_BEFORE_EACH_KILL = 30


def demo_postings() -> list[dict]:
    return json.loads(demo_board_text())["postings"]


def distinct_jobs(app_dir) -> int:
    return rows(app_dir, "SELECT COUNT(*) FROM jobs")[0][0]


def preparations_started(app_dir, after: int) -> int:
    return rows(app_dir, "SELECT COUNT(*) FROM job_events WHERE type = 'WorkflowStarted'"
                         " AND workflow_id LIKE 'prep-%' AND id > ?", (after,))[0][0]


def jobs_with_pdfs(app_dir) -> int:
    return rows(app_dir, "SELECT COUNT(*) FROM job_stage_states WHERE stage = 'pdf'"
                         " AND status = 'succeeded'")[0][0]


@pytest.mark.parametrize("round_number", range(1, ROUNDS + 1))
async def test_r27_every_service_killed_during_the_demo_fan_out_loses_no_job(
        tmp_path, round_number):
    async with chaos_app(tmp_path, postings=demo_postings(), paid=False) as app:
        await outbox_settled(app)
        since = last_event_id(app.app_dir)
        api = ApiClient.from_runtime(app.supervisor.info)
        received, states = [], []
        reader = asyncio.create_task(collect(api, since, received, states))
        try:
            await until(lambda: "live" in states, timeout=30, what="the SSE client to be live")
            answer = await app.http.post("/v1/pipeline/actions/run-stage",
                                         json={"stage": "discover"})
            assert answer.status_code == 202, answer.text
            for turn, service in enumerate(("api", "worker", "temporal"), start=1):
                await until(lambda turn=turn: preparations_started(app.app_dir, since)
                            >= turn * STARTED_BEFORE_EACH_KILL,
                            timeout=300, what=f"{turn * STARTED_BEFORE_EACH_KILL} preparations")
                await app.sigkill(service)
            await wait_quiet(app.app_dir, client=app.client, after=since, timeout=600)
            newest = last_event_id(app.app_dir)
            await until(lambda: received and received[-1].id >= newest, timeout=60,
                        what="the SSE client to catch up")
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
            await api.close()
        jobs = distinct_jobs(app.app_dir)
        assert jobs == 234, jobs
        assert jobs_with_pdfs(app.app_dir) == jobs, f"round {round_number}: jobs without PDFs"
        stored = rows(app.app_dir, "SELECT id FROM job_events WHERE id > ? AND id <= ?"
                                   " ORDER BY id", (since, newest))
        assert "reconnecting" in states, "the client really lost its stream"
        assert [event.id for event in received if event.id <= newest] == [i for (i,) in stored]
        await assert_invariants(app.app_dir, client=app.client, http=app.http, after=since)
