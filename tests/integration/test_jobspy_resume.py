"""A broad-board (jobspy) crawl survives its worker being killed mid-family: the real
supervisor restarts the worker, Temporal retries the family activity once its heartbeat
stops, and the new attempt resumes only the unfinished search units.

The fake scraper (tests/fakes/jobspy_scraper.py, loaded through JOBCTRL_JOBSPY_SCRAPER)
ends the worker process with ``os._exit(137)`` when asked for a third unit, once."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
import pytest_asyncio

from tests.app_db import connect_db
from tests.fakes import jobspy_scraper as fake
from tests.integration.conftest import write_settings
from tests.integration.jobspy_helpers import jobspy_supervisor

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

QUERIES = ["python developer", "data engineer"]
LOCATIONS = ["Berlin", "Remote"]
BOARDS = ["indeed"]
EXPECTED = fake.expected(QUERIES, LOCATIONS, BOARDS)
HEARTBEAT_TIMEOUT_S = 5


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def crashing(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("jobspy-app")
    marker = app_dir / "worker-crashed.marker"
    control = app_dir / "jobspy-control.json"
    control.write_text(json.dumps({"crash_after_units": 2, "marker": str(marker)}),
                       encoding="utf-8")
    write_settings(
        app_dir,
        sources=[{"kind": "jobspy", "id": "broad", "queries": QUERIES, "locations": LOCATIONS,
                  "boards": BOARDS, "resultsPerUnit": 10}],
        stageHeartbeatTimeoutS=HEARTBEAT_TIMEOUT_S,
    )
    async with jobspy_supervisor(app_dir, scraper="scrape", control=control) as (
            supervisor, http):
        yield {"app_dir": app_dir, "http": http, "marker": marker, "supervisor": supervisor}


async def finished_run(http: httpx.AsyncClient, run_id: str, timeout: float) -> dict:
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        runs = (await http.get("/v1/discovery-runs")).json()
        mine = [run for run in runs if run["discoverRunId"] == run_id]
        if mine and mine[0]["status"] != "running":
            return mine[0]
        await asyncio.sleep(0.5)
    raise AssertionError("the discovery run did not finish in time")


def db_rows(app_dir: Path, sql: str, params=()) -> list[tuple]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute(sql, params).fetchall()


async def test_a_killed_worker_resumes_only_unfinished_search_units(crashing):
    http, app_dir = crashing["http"], crashing["app_dir"]
    started = await http.post("/v1/pipeline/actions/run-stage", json={"stage": "discover"})
    assert started.status_code == 202, started.text
    run_id = started.json()["firstExecutionRunId"]

    # Worker death, heartbeat timeout, retry backoff and a worker restart: well under 2 min.
    run = await finished_run(http, run_id, timeout=150)
    assert crashing["marker"].exists(), "the fake never killed the worker"
    assert crashing["supervisor"].service("worker").restarts >= 1
    assert run["status"] == "completed", run

    family = run["progress"]["families"]["broad"]
    assert family["status"] == "succeeded"
    assert family["recoveredUnits"] >= 1
    assert family["completedUnits"] == family["totalUnits"] == EXPECTED["units"] == 4
    assert family["failedUnits"] == 0
    assert family["newJobs"] == EXPECTED["accepted"] and family["existingJobs"] == 0
    assert family["filteredJobs"] == EXPECTED["filtered"]
    assert run["progressCurrent"] == run["progressTotal"]
    assert set(family) >= {"newJobs", "existingJobs", "filteredJobs", "recoveredUnits",
                           "completedUnits", "totalUnits"}
    assert not any(isinstance(value, str) and "example.com" in value
                   for value in family.values()), "no raw provider output in progress"

    jobs = (await http.get("/v1/jobs", params={"limit": 500})).json()
    assert jobs["total"] == EXPECTED["accepted"]  # no duplicates, filtered rows left out
    assert len({item["jobId"] for item in jobs["items"]}) == EXPECTED["accepted"]

    discovered = db_rows(app_dir, "SELECT job_id, COUNT(*) FROM job_events"
                                  " WHERE type = 'JobDiscovered' GROUP BY job_id")
    assert len(discovered) == EXPECTED["accepted"]
    assert {count for _, count in discovered} == {1}

    units = db_rows(app_dir, "SELECT status, owner_attempt, attempts, recoveries"
                             " FROM search_units WHERE discover_run_id = ? ORDER BY rowid",
                    (run_id,))
    assert [status for status, *_ in units] == ["done"] * 4
    # Units 1-2 committed by the first attempt and never redone; 3 was reclaimed.
    assert [owner for _, owner, *_ in units][:2] == [1, 1]
    assert all(owner >= 2 for _, owner, *_ in units[2:])
    assert units[2][2] >= 2 and units[2][3] >= 1
