"""A Discover run on the bundled demo board, watched over SSE, replayed by Last-Event-ID."""

from __future__ import annotations

import asyncio

import pytest

from tests.app_db import connect_db
from tests.integration.events_helpers import collect_until, start_and_watch

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

DEMO_DISTINCT_JOBS = 234  # 240 postings, 6 of them the same posting behind tracking junk


async def start_discover_and_watch(api, **extra):
    """Subscribe first (no Last-Event-ID: only what happens from now on), then start."""
    accepted, events = await start_and_watch(api, lambda: api.run_stage("discover", **extra))
    assert accepted["alreadyRunning"] is False, "the previous Discover was still named running"
    return accepted, events


async def test_first_discover_streams_every_job_once(api):
    accepted, events = await start_discover_and_watch(api)
    assert accepted["workflowId"] == "discover-local"
    assert accepted["alreadyRunning"] is False
    run_id = accepted["firstExecutionRunId"]
    types = [event.type for event in events]
    assert types[0] == "WorkflowStarted" and types[1] == "DiscoveryRunStarted"
    assert events[1].payload["discoverRunId"] == run_id
    assert events[1].payload["progressTotal"] == 3  # one family + enrichment + preparation
    discovered = [event for event in events if event.type == "JobDiscovered"]
    assert len(discovered) == DEMO_DISTINCT_JOBS
    assert len({event.payload["jobId"] for event in discovered}) == DEMO_DISTINCT_JOBS
    completed, workflow_completed = events[-2:]
    assert workflow_completed.type == "WorkflowCompleted"
    assert completed.type == "DiscoveryRunCompleted"
    assert completed.payload["status"] == "completed"
    assert completed.payload["jobsNew"] == DEMO_DISTINCT_JOBS
    ids = [event.id for event in events]
    assert ids == sorted(ids) and len(ids) == len(set(ids))

    page = await api.jobs(limit=500)
    assert page["total"] == DEMO_DISTINCT_JOBS
    runs = await api.discovery_runs()
    assert runs[0]["discoverRunId"] == run_id
    assert runs[0]["status"] == "completed"
    assert runs[0]["progressCurrent"] == runs[0]["progressTotal"] == 3


async def test_second_discover_finds_no_new_jobs(api):
    before = (await api.jobs())["total"]
    accepted, events = await start_discover_and_watch(api)
    assert [e for e in events if e.type == "JobDiscovered"] == []
    assert events[-2].payload["jobsNew"] == 0
    assert events[-2].payload["jobsObserved"] == DEMO_DISTINCT_JOBS
    assert (await api.jobs())["total"] == before


def stored_events(app_dir, after: int = 0) -> list[tuple[int, str]]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute(
            "SELECT id, type FROM job_events WHERE id > ? ORDER BY id", (after,)
        ).fetchall()


async def wait_for_run(api, run_id: str, timeout: float = 60) -> dict:
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        for run in await api.discovery_runs():
            if run["discoverRunId"] == run_id and run["status"] != "running":
                return run
        await asyncio.sleep(0.2)
    raise AssertionError(f"run {run_id} did not finish")


async def test_replay_from_zero_and_from_a_cut_point(api, session_app_dir):
    stored = stored_events(session_app_dir)
    newest = stored[-1][0]
    replayed = await collect_until(api, lambda e: e.id == newest, last_event_id=0)
    assert [(e.id, e.type) for e in replayed] == stored
    cut = stored[len(stored) // 2][0]
    resumed = await collect_until(api, lambda e: e.id == newest, last_event_id=cut)
    assert [(e.id, e.type) for e in resumed] == [row for row in stored if row[0] > cut]


async def test_reconnect_gets_exactly_the_events_missed_while_away(api, session_app_dir):
    away_from = stored_events(session_app_dir)[-1][0]
    accepted = await api.run_stage("discover")
    assert accepted["alreadyRunning"] is False, "the previous Discover was still named running"
    await wait_for_run(api, accepted["firstExecutionRunId"])
    missed = stored_events(session_app_dir, after=away_from)
    assert missed, "the run wrote events while the client was away"
    resumed = await collect_until(api, lambda e: e.id == missed[-1][0], last_event_id=away_from)
    assert [(e.id, e.type) for e in resumed] == missed


async def test_stream_without_last_event_id_starts_after_the_newest_event(api, session_app_dir):
    newest = stored_events(session_app_dir)[-1][0]
    accepted, events = await start_discover_and_watch(api)
    assert all(event.id > newest for event in events)
    # Preparation of earlier jobs may interleave; this run's first fact is its start.
    own = [e for e in events if e.payload.get("runId") == accepted["firstExecutionRunId"]
           or e.payload.get("discoverRunId") == accepted["firstExecutionRunId"]]
    assert own[0].type == "WorkflowStarted"


async def test_a_malformed_source_fails_only_its_family(api):
    accepted, events = await start_discover_and_watch(api, sourceIds=["demo_board", "broken"])
    completed = events[-2]
    assert completed.type == "DiscoveryRunCompleted"
    assert completed.payload["status"] == "completed_with_issues"
    assert completed.payload["familiesSucceeded"] == ["demo_board"]
    assert completed.payload["familiesFailed"] == [
        {"family": "broken", "errorCode": "source_payload_invalid"}
    ]
    run = (await api.discovery_runs())[0]
    assert run["progress"]["families"]["broken"] == {
        "status": "failed", "errorCode": "source_payload_invalid"
    }
    assert run["progressCurrent"] == run["progressTotal"] == 4


async def test_a_run_whose_only_family_is_malformed_fails_with_the_source_code(api):
    accepted, events = await start_discover_and_watch(api, sourceIds=["broken"])
    failed, workflow_failed = events[-2:]
    assert failed.type == "DiscoveryRunFailed"
    assert failed.payload["errorCode"] == "source_payload_invalid"
    assert workflow_failed.type == "WorkflowFailed"
    assert workflow_failed.payload["errorCode"] == "source_payload_invalid"
