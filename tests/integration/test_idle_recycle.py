"""An idle worker restarts itself to give memory back — never while a workflow is open —
with the dev server and the API restarted alongside it, and after the restart a new
Discover works through the new API (the probe workflow started before it is still there).
Real dev server, worker and API."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from temporalio.client import WorkflowExecutionStatus, WorkflowHandle

from backend.config import TemporalSettings
from backend.supervision.ports import free_port
from backend.supervision.supervisor import Supervisor
from backend.temporal.client import connect_with_retry
from tests.api_http import api_http
from tests.app_db import connect_db
from tests.integration.conftest import write_settings
from tests.integration.env_helpers import override_environ
from tests.integration.test_paid_pipeline import demo_subset
from tests.integration.test_preparation import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

JOBS = 3
NOBODY_POLLS = "idle-recycle-probe"  # a task queue no worker serves: the workflow stays open
QUIET_S = 8  # no recycle within 8 s of the worker being ready: time to open the probe


def jobs_stored(app_dir) -> int:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute("SELECT COUNT(*) FROM jobs").fetchone()[0]


async def open_probe(address: str) -> tuple[WorkflowHandle, float]:
    """A workflow nobody works on (open until terminated), and when it was open."""
    temporal = await connect_with_retry(TemporalSettings(), address, timeout=60)
    probe = await temporal.start_workflow("IdleRecycleProbe", id=f"probe-{uuid.uuid4().hex}",
                                          task_queue=NOBODY_POLLS)
    return probe, time.monotonic()


async def test_a_recycle_waits_for_open_work_and_a_discover_works_after_it(tmp_path):
    app_dir = tmp_path / "app"
    app_dir.mkdir()
    demo_subset(app_dir / "board.json", JOBS)
    write_settings(app_dir, sources=[{"kind": "json_file", "id": "subset",
                                      "path": str(app_dir / "board.json")}])
    # At any size, checked twice a second: recycling as eager as the quiet period allows.
    restore_environ = override_environ(JOBCTRL_RECYCLE_QUIET_S=str(QUIET_S),
                                       JOBCTRL_RECYCLE_GROWN_MIB="-1024",
                                       JOBCTRL_RECYCLE_TEMPORAL_GROWN_MIB="-1024",
                                       JOBCTRL_RECYCLE_API_GROWN_MIB="-1024",
                                       JOBCTRL_RECYCLE_CHECK_S="0.5")
    # The probe opens as soon as the dev server answers, while the worker (whose quiet clock
    # starts as it becomes ready) is still starting: not after the API too is ready, which on
    # a loaded box can leave too little of the quiet period.
    temporal_port = free_port()
    statuses, ready_at, opening = [], {}, []

    def on_status(status) -> None:
        statuses.append(status)
        if status.state == "ready":
            ready_at.setdefault(status.name, time.monotonic())
        if (status.name, status.state) == ("temporal", "ready") and not opening:
            opening.append(asyncio.ensure_future(open_probe(f"127.0.0.1:{temporal_port}")))

    supervisor = Supervisor(app_dir, temporal_port=temporal_port, temporal_ui=False,
                            on_status=on_status)
    try:
        await supervisor.start()
        worker, temporal_service = supervisor.service("worker"), supervisor.service("temporal")
        api_service = supervisor.service("api")
        first_pid, temporal_pid, api_pid = worker.pid, temporal_service.pid, api_service.pid
        probe, opened_at = await opening[0]
        assert opened_at - ready_at["worker"] < QUIET_S - 2, \
            "the probe opened too late to prove anything"
        # With the workflow open, past the quiet period: still the same worker.
        await asyncio.sleep(QUIET_S + 2)
        assert (worker.pid, worker.planned_restarts) == (first_pid, 0)

        # The next worker keeps running (recycling off), so what follows meets one worker.
        worker.spec.env["JOBCTRL_RECYCLE_QUIET_S"] = "0"
        seen = len(statuses)
        await probe.terminate("the test is done with it")

        async def recycled() -> bool:
            return worker.planned_restarts == 1
        await wait_for(recycled, timeout=60)
        assert worker.pid != first_pid
        # Forced here (any size): the dev server restarted with it, from its SQLite file,
        # and the API, on the same port (runtime.json names its new pid).
        assert temporal_service.planned_restarts == 1 and temporal_service.pid != temporal_pid
        assert api_service.planned_restarts == 1 and api_service.pid != api_pid
        assert supervisor.info.pids["api"] == api_service.pid
        after = [(s.name, s.state) for s in statuses[seen:]]
        assert after == [("worker", "recycling"), ("temporal", "recycling"), ("temporal", "ready"),
                         ("api", "recycling"), ("api", "ready"), ("worker", "ready")], \
            "a planned restart is not shown as a fault"
        assert (worker.restarts, temporal_service.restarts, api_service.restarts) == (0, 0, 0)
        # Its history survived the restart (the file keeps it): the probe is still known.
        assert (await probe.describe()).status == WorkflowExecutionStatus.TERMINATED

        async with api_http(supervisor.info) as http:
            async def healthy() -> bool:  # the API's Temporal client reconnects by itself
                return (await http.get("/v1/health")).json()["status"] == "ok"
            await wait_for(healthy, timeout=30)
            started = await http.post("/v1/pipeline/actions/run-stage", json={"stage": "discover"})
            assert started.status_code == 202, started.text

            async def discovered() -> bool:
                return jobs_stored(app_dir) == JOBS
            await wait_for(discovered, timeout=90)
    finally:
        await supervisor.stop()
        restore_environ()
