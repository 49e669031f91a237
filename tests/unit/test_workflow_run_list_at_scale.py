"""The workflow-run read paths made cheap for bench/operations_scale.py keep their exact
answers: the list's page (chosen over index-served sort keys, then joined to its jobs)
is the documented order (key, NULL keys last, ties by run id) for every sort, direction
and filter; and the lost-rows check, which counts only the start events new since its
last watermark, equals a full distinct count through repeated and interleaved starts
and still catches deleted rows. Real SQLite files, the real app (Temporal unreachable)."""

from __future__ import annotations

import random
import sqlite3

import pytest
from fastapi.testclient import TestClient

from backend.api.app import create_app
from backend.config import AppPaths
from backend.domain import events as ev
from backend.projections import workflow_runs
from backend.store.db import migrate
from backend.store.events import append_event

TOKEN = "test-token"
TYPES = ("JobPreparationWorkflow", "DiscoverWorkflow", "ApplyWorkflow")
STATUSES = ("running", "completed", "failed", "canceled")
SORTS = {"startedAt": "started_at", "closedAt": "closed_at", "durationMs": "duration_ms",
         "workflowType": "workflow_type", "status": "status"}


def _iso(rng: random.Random) -> str | None:
    # Few distinct values: many ties, so the run-id tie-break is exercised.
    return None if rng.random() < 0.15 else f"2026-03-0{rng.randint(1, 4)}T10:00:00.000Z"


@pytest.fixture
def client(tmp_path):
    paths = AppPaths(tmp_path)
    migrate(paths.database)
    rng = random.Random(4)
    with sqlite3.connect(paths.database) as conn:
        conn.execute("INSERT INTO jobs (job_id, tenant_id, canonical_url, url, title, company,"
                     " first_source, first_seen_at, last_seen_at) VALUES ('job-1', 'local',"
                     " 'u', 'u', 'Engineer', 'Acme', 'demo', 'x', 'x')")
        for number in range(140):
            conn.execute(
                "INSERT INTO workflow_run_projections (tenant_id, run_id, workflow_id,"
                " workflow_type, status, job_id, started_at, closed_at, duration_ms,"
                " last_event_id) VALUES ('local', ?, ?, ?, ?, ?, ?, ?, ?, 1)",
                (f"r{rng.randint(0, 10**6):07d}-{number}", f"wf-{number}", rng.choice(TYPES),
                 rng.choice(STATUSES), "job-1" if number % 3 == 0 else None, _iso(rng),
                 _iso(rng), None if rng.random() < 0.2 else rng.choice((10, 20, 30))))
        # The projection is complete up to the log's end: no refold replaces these rows.
        conn.execute("INSERT INTO projection_watermarks VALUES ('workflow_runs:local', 0)")
    app = create_app(paths, api_token=TOKEN, temporal_address="127.0.0.1:1")
    with TestClient(app, base_url="http://127.0.0.1") as test_client:
        test_client.headers["Authorization"] = f"Bearer {TOKEN}"
        test_client.paths = paths
        yield test_client


def expected_order(paths: AppPaths, column: str, order: str, where: str, params: tuple
                   ) -> list[str]:
    """The documented order, computed in Python from every matching row."""
    with sqlite3.connect(paths.database) as conn:
        rows = conn.execute(f"SELECT run_id, {column} FROM workflow_run_projections"
                            f" WHERE tenant_id = 'local' {where}", params).fetchall()
    present = sorted((row for row in rows if row[1] is not None),
                     key=lambda row: (row[1], row[0]), reverse=order == "desc")
    missing = sorted((row for row in rows if row[1] is None), key=lambda row: row[0],
                     reverse=order == "desc")
    return [row[0] for row in present + missing]


@pytest.mark.parametrize("sort", list(SORTS))
@pytest.mark.parametrize("order", ["desc", "asc"])
def test_every_sort_pages_in_the_documented_order(client, sort, order):
    filters = [({}, "", ()), ({"status": "completed"}, "AND status = ?", ("completed",)),
               ({"workflowType": "DiscoverWorkflow"}, "AND workflow_type = ?",
                ("DiscoverWorkflow",)),
               ({"status": "failed", "workflowType": "JobPreparationWorkflow"},
                "AND status = ? AND workflow_type = ?", ("failed", "JobPreparationWorkflow"))]
    with sqlite3.connect(client.paths.database) as conn:
        jobs = dict(conn.execute("SELECT run_id, job_id FROM workflow_run_projections"))
    for query, where, params in filters:
        expected = expected_order(client.paths, SORTS[sort], order, where, params)
        assert len(expected) >= 5
        seen = []
        for offset in range(0, len(expected) + 7, 7):
            body = client.get("/v1/workflow-runs", params={
                **query, "sort": sort, "order": order, "limit": 7, "offset": offset}).json()
            assert body["total"] == len(expected)
            seen += [item["runId"] for item in body["items"]]
            for item in body["items"]:  # each page row still carries its own job
                assert item["relatedJob"] == (
                    {"jobKey": "job-1", "title": "Engineer", "company": "Acme"}
                    if jobs[item["runId"]] else None)
        assert seen == expected, (query, sort, order)


async def _append(db, event, run_id: str | None) -> None:
    async with db.transaction() as conn:
        await append_event(conn, event, workflow_id=getattr(event, "workflow_id", None),
                           run_id=run_id)


async def _full_count(db) -> int:
    watermark = await workflow_runs.read_watermark(db)
    row = await db.fetchone("SELECT COUNT(DISTINCT run_id) FROM job_events WHERE"
                            " type = 'WorkflowStarted' AND id <= ?", (watermark,))
    return int(row[0])


async def test_the_incremental_started_run_count_equals_a_full_count(db):
    rng = random.Random(9)
    runs = [f"run-{number}" for number in range(12)]
    for step in range(40):
        run_id = rng.choice(runs)  # repeated starts of one run count once
        kind = rng.choice((ev.WorkflowStarted, ev.WorkflowStarted, ev.WorkflowCompleted))
        await _append(db, kind(workflow_id=f"wf-{run_id}", run_id=run_id,
                               workflow_type="JobPreparationWorkflow"), run_id)
        if step % 3 == 0:
            await _append(db, ev.CandidateProfileUpdated(revision=step + 1), None)
        watermark = await workflow_runs.refresh_workflow_runs(db)
        assert await workflow_runs._started_runs(db, "local", watermark) == await _full_count(db)
    memo = workflow_runs._STARTED_RUNS[db]["local"]
    assert memo == (await workflow_runs.read_watermark(db), await _full_count(db))
    # Rows lost behind the builder's back are still found and rebuilt from the log.
    before = await db.fetchall("SELECT run_id, status FROM workflow_run_projections"
                               " ORDER BY run_id")
    async with db.transaction() as conn:
        await conn.execute("DELETE FROM workflow_run_projections WHERE run_id IN"
                           " (SELECT run_id FROM workflow_run_projections LIMIT 2)")
    await workflow_runs.refresh_workflow_runs(db)
    after = await db.fetchall("SELECT run_id, status FROM workflow_run_projections"
                              " ORDER BY run_id")
    assert [tuple(row) for row in after] == [tuple(row) for row in before]
