"""Issue 20: an infrastructure fault never ends a job's preparation. A worker killed while
the spend preflight is in flight, or a preflight that hangs past every attempt, leaves no
job pending forever: the preflight is retried, and a preparation that did end for an
infrastructure reason is started again by the worker's own pass — exactly once, with the
operations snapshot saying so until it is. Real dev server, real worker kills (the fault
point exits the worker process), offline model."""

from __future__ import annotations

import pytest
import pytest_asyncio

from backend.supervision.supervisor import Supervisor
from tests.api_http import api_http
from tests.app_db import connect_db
from tests.integration.conftest import write_settings
from tests.integration.env_helpers import override_environ
from tests.integration.test_paid_pipeline import count_events, demo_subset, prep_terminals
from tests.integration.test_preparation import PROFILE, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session"),
              pytest.mark.timeout(400)]

JOBS = 2


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def app(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("interrupted-app")
    board = app_dir / "board.json"
    demo_subset(board, JOBS)
    write_settings(app_dir, sources=[{"kind": "json_file", "id": "subset", "path": str(board)}],
                   stageHeartbeatTimeoutS=5)
    restore = override_environ(JOBCTRL_ENABLE_FAULTS="1")
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    http = api_http(supervisor.info)
    try:
        assert (await http.put("/v1/profile", json=PROFILE)).status_code == 200
        await wait_for(lambda: continuation_done(app_dir), timeout=60)  # its preflight, too
        yield {"app_dir": app_dir, "http": http, "supervisor": supervisor}
    finally:
        await http.aclose()
        await supervisor.stop()
        restore()


async def continuation_done(app_dir) -> bool:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute(
            "SELECT COUNT(*) FROM job_events WHERE type = 'WorkflowCompleted'"
            " AND json_extract(payload_json, '$.workflowType') = 'PreparationContinuationWorkflow'"
        ).fetchone()[0] == 1


async def discoveries_closed(app_dir) -> bool:
    return count_events(app_dir, "DiscoveryRunStarted") == (
        count_events(app_dir, "DiscoveryRunCompleted") + count_events(app_dir, "DiscoveryRunFailed"))


def arm(app_dir, point: str) -> None:
    (app_dir / "faults").mkdir(exist_ok=True)
    (app_dir / "faults" / point).touch()


def disarm(app_dir, point: str) -> None:
    (app_dir / "faults" / point).unlink(missing_ok=True)


def pdfs_per_job(app_dir) -> dict[str, int]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return dict(conn.execute("SELECT job_id, COUNT(*) FROM job_events WHERE type = 'PdfRendered'"
                                 " GROUP BY job_id"))


def pending_stages(app_dir) -> int:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute("SELECT COUNT(*) FROM job_stage_states WHERE status IN"
                            " ('pending', 'queued', 'running')").fetchone()[0]


async def wait_for_pdfs(app_dir, jobs: int, timeout: float, *, closed_runs: int) -> None:
    """Until ``jobs`` jobs have their PDFs, nothing waits, and ``closed_runs`` preparation
    runs have recorded their outcome (a run records it a moment after its last stage)."""
    async def done() -> bool:
        return (len(pdfs_per_job(app_dir)) >= jobs and pending_stages(app_dir) == 0
                and len(prep_terminals(app_dir)) >= closed_runs)

    await wait_for(done, timeout=timeout)


async def test_a_worker_killed_mid_preflight_does_not_end_the_preparation(app):
    """The fault point exits the worker inside ``check_spend_budget`` (a local activity:
    the workflow task running it is lost with its worker, times out, and is retried on the
    restarted worker, which runs the preflight again)."""
    http, app_dir, supervisor = app["http"], app["app_dir"], app["supervisor"]
    worker_pid = supervisor.service("worker").pid
    arm(app_dir, "preflight-in-flight")
    assert (await http.post("/v1/pipeline/actions/run-stage", json={"stage": "discover"})
            ).status_code == 202
    await wait_for_pdfs(app_dir, JOBS, timeout=240, closed_runs=JOBS)
    assert supervisor.service("worker").pid != worker_pid, "the worker really died"
    assert not (app_dir / "faults" / "preflight-in-flight").exists()
    assert prep_terminals(app_dir) == [("WorkflowCompleted", None)] * JOBS
    assert count_events(app_dir, "PreparationInterruptedResumed") == 0, "retried, not resumed"
    assert set(pdfs_per_job(app_dir).values()) == {2}, "a résumé and a letter, once each"


@pytest.mark.timeout(900)
async def test_an_interrupted_preparation_is_resumed_once_and_shown_until_it_is(app):
    """Every preflight attempt hangs past its timeout (a wedged database writer), so the
    preparations of two newly found jobs end ``activity_timeout`` with their stages pending.
    The snapshot counts them; once the hang clears, the worker's pass starts each again
    exactly once."""
    http, app_dir = app["http"], app["app_dir"]
    first_jobs = set(pdfs_per_job(app_dir))
    # The first test's Discover records its outcome a moment after its preparations end;
    # a Discover asked before that names the running one and finds nothing new.
    await wait_for(lambda: discoveries_closed(app_dir), timeout=60)
    demo_subset(app_dir / "board.json", 2 * JOBS)  # the board now lists two more jobs
    arm(app_dir, "interrupted-resume-stall")  # hold the pass so the waiting state is seen
    arm(app_dir, "preflight-stall")
    assert (await http.post("/v1/pipeline/actions/run-stage", json={"stage": "discover"})
            ).status_code == 202

    async def both_interrupted() -> bool:
        return prep_terminals(app_dir)[JOBS:] == [("WorkflowFailed", "activity_timeout")] * JOBS

    try:
        await wait_for(both_interrupted, timeout=420)  # four stalled attempts each, busy box
        operations = (await http.get("/v1/pipeline/operations")).json()
        assert operations["interruptedPreparations"] == JOBS
        assert operations["execution"]["phase"] == "draining", "never shown as done"
    finally:
        disarm(app_dir, "preflight-stall")
        disarm(app_dir, "interrupted-resume-stall")
    await wait_for_pdfs(app_dir, 2 * JOBS, timeout=180, closed_runs=3 * JOBS)
    assert count_events(app_dir, "PreparationInterruptedResumed") == JOBS
    assert prep_terminals(app_dir)[2 * JOBS:] == [("WorkflowCompleted", None)] * JOBS
    pdfs = pdfs_per_job(app_dir)
    assert set(pdfs) - first_jobs and set(pdfs.values()) == {2}, "each job prepared once"
    operations = (await http.get("/v1/pipeline/operations")).json()
    assert operations["interruptedPreparations"] == 0
