"""Discover runs with a controllable pace for the Pipelines and Runs view tests.

``extra_source`` adds a Greenhouse source served by a loopback fake board that answers
after ``delay`` seconds with an empty board: it paces the run without adding jobs whose
downstream work could keep a run draining for later tests. The source is added *turned
off*, so Discover runs of other tests (every enabled source) never crawl it; a test selects
it explicitly with ``sourceIds``.
Teardown cancels any run the test recorded, waits until it is closed (so no later test
finds a Discover still running) and restores the sources.

``start_own_discover`` starts a Discover of the test's own, ``wait_idle`` waits for the
work earlier tests left running: setup only, never an assertion about timing.
"""

from __future__ import annotations

import time
from contextlib import contextmanager

import httpx

from tests.api_http import api_http_sync
from tests.fakes.job_boards import JobBoards

CLOSE_TIMEOUT_S = 300.0  # a whole Discover on a machine that may be busy
IDLE_TIMEOUT_S = 600.0  # the demo board's 234 preparations (every stage) on a busy machine
# Runs that end by themselves; the standing apply loop (ApplyWorkflow) runs on until
# switched off and holds no Discover back.
DRAINING_TYPES = ("DiscoverWorkflow", "JobPreparationWorkflow", "BatchStageWorkflow",
                  "PolicyRerunWorkflow", "PreparationContinuationWorkflow")


def api(live_services) -> httpx.Client:
    return api_http_sync(live_services.info)


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


def wait_idle(live_services) -> None:
    """Until no Discover, preparation or batch of an earlier test is running. The shared
    app keeps preparing after a test ends (test_jobs_view's Discover fans out 234 jobs
    through every stage, minutes on a busy 2-core machine), and while the last run's
    jobs drain the Discover button stays disabled (the recovery gate): a test that
    clicks it must not race that drain against its own short wait. (A Discover started
    through the API needs no such wait: the gate is the view's.)"""
    deadline = time.monotonic() + IDLE_TIMEOUT_S
    running: list[str] = []
    with api(live_services) as http:
        while time.monotonic() < deadline:
            page = http.get("/v1/workflow-runs", params={"status": "running", "limit": 200}).json()
            running = [item["workflowType"] for item in page["items"]
                       if item["workflowType"] in DRAINING_TYPES]
            if not running and page["total"] <= len(page["items"]):
                return
            time.sleep(0.5)
    raise AssertionError(f"setup: earlier tests' work never finished: {running}")


def start_own_discover(http: httpx.Client, **body) -> dict:
    """Start a Discover (``body``: e.g. ``sourceIds``) and return its answer. One Discover
    runs at a time: while another test's run still holds the deterministic id the answer
    names that run (``alreadyRunning``), so wait for it to close and ask again."""
    deadline = time.monotonic() + CLOSE_TIMEOUT_S
    while True:
        # The API may wait up to 30 s for a finishing run to close before it answers.
        answer = http.post("/v1/pipeline/actions/run-stage", json={"stage": "discover", **body},
                           timeout=90)
        answer.raise_for_status()
        accepted = answer.json()
        if not accepted["alreadyRunning"]:
            return accepted
        if time.monotonic() > deadline:
            raise AssertionError("setup: another Discover run never finished")
        wait_closed(http, accepted["firstExecutionRunId"])
