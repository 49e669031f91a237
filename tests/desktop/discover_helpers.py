"""Discover runs with a controllable pace for the Pipelines and Runs view tests.

``extra_source`` adds a Greenhouse source served by a loopback fake board that answers
after ``delay`` seconds with an empty board: it paces the run without adding jobs whose
downstream work could keep a run draining for later tests. The source is added *turned
off*, so Discover runs of other tests (every enabled source) never crawl it; a test selects
it explicitly with ``sourceIds``.
Teardown cancels any run the test recorded, waits until it is closed (so no later test
finds a Discover still running) and restores the sources.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

import httpx

from tests.fakes.job_boards import JobBoards

CLOSE_TIMEOUT_S = 300.0  # a whole Discover on a machine that may be busy


def api(live_services) -> httpx.Client:
    info = live_services.info
    return httpx.Client(base_url=info.api_base_url, timeout=30,
                        headers={"Authorization": f"Bearer {info.api_token}"})


@contextmanager
def extra_source(live_services, source_id: str, delay: float):
    boards = JobBoards().start()
    boards.serve_json(JobBoards.GREENHOUSE_PATH, {"jobs": [], "meta": {"total": 0}})
    boards.slow(JobBoards.GREENHOUSE_PATH, delay)
    started_runs: list[str] = []
    with api(live_services) as http:
        original = http.get("/v1/settings").json()["sources"]
        source = {"kind": "greenhouse", "id": source_id, "boardToken": "acme",
                  "baseUrl": boards.base_url, "enabled": False}
        http.patch("/v1/settings", json={"sources": [*original, source]}).raise_for_status()
        try:
            yield started_runs
        finally:
            for run_id in started_runs:
                http.post(f"/v1/workflow-runs/{run_id}/actions/cancel", json={})
            for run_id in started_runs:
                wait_closed(http, run_id)
            http.patch("/v1/settings", json={"sources": original}).raise_for_status()
            boards.stop()


def wait_closed(http: httpx.Client, run_id: str) -> None:
    """Setup/teardown only (never an assertion about timing): poll until the run closed."""
    deadline = time.monotonic() + CLOSE_TIMEOUT_S
    while time.monotonic() < deadline:
        response = http.get(f"/v1/workflow-runs/{run_id}")
        if response.status_code == 200 and response.json()["status"] != "running":
            return
        time.sleep(0.25)
