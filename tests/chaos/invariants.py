"""The invariants every chaos scenario asserts after its fault (docs/reliability.md).

Read straight from the app's SQLite file (the stored truth), from Temporal (the live
truth) and from the API (what a view shows):

- every running row names its owner, and that owner is an open run;
- nothing is lost (once quiet, no stage or run is left running), done twice (one result
  event per run, job and stage; one row per result version) or paid twice (the spend
  ledger holds exactly the calls the provider answered);
- accepted work is reused (scenario-specific: see ``result_versions``);
- live and stored state agree (Temporal's status of every run = its stored outcome; the
  API's job stages = the stage rows);
- retries end in ``exhausted``: a stage that gave up after retryable failures is
  exhausted, only a non-retryable failure is ``failed``.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from pathlib import Path

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError

from tests.app_db import connect_db

ACTIVE = ("queued", "running")
TERMINALS = ("WorkflowCompleted", "WorkflowFailed", "WorkflowCanceled")
# The result events of the preparation stages (PdfRendered once per kind).
RESULT_EVENTS = ("JobEnriched", "JobScored", "ResumeApproved", "CoverLetterGenerated",
                 "PdfRendered")
LIVE_STATUS = {
    WorkflowExecutionStatus.RUNNING: "running",
    WorkflowExecutionStatus.COMPLETED: "WorkflowCompleted",
    WorkflowExecutionStatus.CONTINUED_AS_NEW: "WorkflowCompleted",
    WorkflowExecutionStatus.FAILED: "WorkflowFailed",
    WorkflowExecutionStatus.TERMINATED: "WorkflowFailed",
    WorkflowExecutionStatus.TIMED_OUT: "WorkflowFailed",
    WorkflowExecutionStatus.CANCELED: "WorkflowCanceled",
}


def rows(app_dir: Path, sql: str, params: tuple = ()) -> list[tuple]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute(sql, params).fetchall()


def last_event_id(app_dir: Path) -> int:
    return rows(app_dir, "SELECT COALESCE(MAX(id), 0) FROM job_events")[0][0]


def count_events(app_dir: Path, kind: str, *, after: int = 0) -> int:
    return rows(app_dir, "SELECT COUNT(*) FROM job_events WHERE type = ? AND id > ?",
                (kind, after))[0][0]


async def until(predicate: Callable, *, timeout: float, what: str, every: float = 0.25):
    """Poll ``predicate`` (sync or async) until it returns something truthy; return it."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = predicate()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")
        await asyncio.sleep(every)


# --- runs ----------------------------------------------------------------------------------


def stored_runs(app_dir: Path, *, after: int = 0) -> dict[str, tuple[str, str, str]]:
    """run_id -> (workflow_id, workflow_type, stored outcome: ``running`` or the terminal
    event type) of every run started after event ``after``."""
    started = rows(app_dir, "SELECT run_id, workflow_id, json_extract(payload_json,"
                            " '$.workflowType') FROM job_events WHERE type = 'WorkflowStarted'"
                            " AND id > ?", (after,))
    ends = dict(rows(app_dir, "SELECT run_id, type FROM job_events WHERE type IN"
                              f" ({', '.join('?' * len(TERMINALS))})", TERMINALS))
    return {run_id: (workflow_id, kind, ends.get(run_id, "running"))
            for run_id, workflow_id, kind in started}


def open_runs(app_dir: Path, *, after: int = 0) -> list[str]:
    return [run for run, (_, _, outcome) in stored_runs(app_dir, after=after).items()
            if outcome == "running"]


def terminal_counts(app_dir: Path) -> list[tuple[str, int]]:
    """Runs with more than one terminal event (must be none)."""
    return rows(app_dir, "SELECT run_id, COUNT(*) FROM job_events WHERE type IN"
                         f" ({', '.join('?' * len(TERMINALS))}) GROUP BY run_id"
                         " HAVING COUNT(*) > 1", TERMINALS)


# --- the invariants ------------------------------------------------------------------------


def assert_running_rows_have_owners(app_dir: Path) -> None:
    """Every queued / running stage names the run that owns it, and that run is open."""
    active = rows(app_dir, "SELECT job_id, stage, status, owner_run_id FROM job_stage_states"
                           f" WHERE status IN {ACTIVE}")
    runs = stored_runs(app_dir)
    for job_id, stage, status, owner in active:
        assert owner, f"{job_id} {stage} is {status} with no owner"
        assert owner in runs, f"{job_id} {stage} is owned by {owner}, a run never started"
        # A run the reconciler has closed must not still hold a stage.
        assert runs[owner][2] == "running", (
            f"{job_id} {stage} is {status}, owned by {owner} which ended {runs[owner][2]}")


def assert_nothing_running(app_dir: Path, *, after: int = 0) -> None:
    """Nothing lost in limbo: no stage queued or running, no run left open."""
    active = rows(app_dir, "SELECT job_id, stage, status FROM job_stage_states"
                           f" WHERE status IN {ACTIVE}")
    assert active == [], f"stages still active: {active}"
    assert open_runs(app_dir, after=after) == [], "runs still open"


def assert_done_once(app_dir: Path) -> None:
    """One result event per run, job and stage (per PDF kind); one terminal per run; one
    score / material / artifact row per result version."""
    repeated = rows(app_dir, "SELECT type, run_id, job_id, json_extract(payload_json, '$.kind'),"
                             " COUNT(*) FROM job_events"
                             f" WHERE type IN ({', '.join('?' * len(RESULT_EVENTS))})"
                             " GROUP BY 1, 2, 3, 4 HAVING COUNT(*) > 1", RESULT_EVENTS)
    assert repeated == [], f"results recorded twice: {repeated}"
    assert terminal_counts(app_dir) == [], "a run recorded two outcomes"
    for table, version in (("job_scores", "version"), ("job_materials", "kind, generation"),
                           ("job_artifacts", "kind, generation")):
        twice = rows(app_dir, f"SELECT job_id, {version}, COUNT(*) FROM {table}"
                              f" GROUP BY job_id, {version} HAVING COUNT(*) > 1")
        assert twice == [], f"{table}: one version written twice: {twice}"


def ledger_calls(app_dir: Path) -> int:
    return rows(app_dir, "SELECT COALESCE(SUM(calls), 0) FROM llm_spend")[0][0]


def assert_paid_once(app_dir: Path, fake) -> None:
    """The spend ledger holds exactly the calls the provider answered (it bills those)."""
    assert ledger_calls(app_dir) == fake.succeeded, (
        f"ledger {ledger_calls(app_dir)} calls, provider answered {fake.succeeded}")
    open_reservations = rows(app_dir, "SELECT r.run_id FROM llm_spend_reservations r"
                                      " WHERE r.released_at IS NULL")
    still_open = set(open_runs(app_dir))
    leaked = [run for (run,) in open_reservations if run not in still_open]
    assert leaked == [], f"budget reservations of closed runs never released: {leaked}"


def assert_retries_end_exhausted(app_dir: Path) -> None:
    """A stage that gave up on retryable failures is ``exhausted``; ``failed`` is only ever a
    non-retryable failure; a terminal stage row and its terminal event agree."""
    gave_up = rows(app_dir, "SELECT job_id, stage, status, error_code, retryable FROM"
                            " job_stage_states WHERE status IN ('failed', 'exhausted')")
    for job_id, stage, status, code, retryable in gave_up:
        assert code, f"{job_id} {stage} {status} without an error code"
        expected = "exhausted" if retryable else "failed"
        assert status == expected, f"{job_id} {stage}: {status} with retryable={retryable}"


def result_versions(app_dir: Path) -> dict[tuple[str, str], int]:
    """(job, stage) -> result version: what a reused result leaves unchanged."""
    return {(job, stage): version for job, stage, version in rows(
        app_dir, "SELECT job_id, stage, result_version FROM job_stage_states")}


async def assert_live_matches_stored(app_dir: Path, client: Client, *, after: int = 0,
                                     timeout: float = 60) -> None:
    """Temporal's status of every run started after ``after`` equals its stored outcome.
    A run records its outcome a moment before Temporal closes it: they agree *eventually*."""
    async def disagreements() -> list:
        found = []
        for run_id, (workflow_id, _, stored) in stored_runs(app_dir, after=after).items():
            try:
                described = await client.get_workflow_handle(workflow_id, run_id=run_id).describe()
            except RPCError as error:
                found.append((run_id, stored, f"not in Temporal: {error.status}"))
                continue
            live = LIVE_STATUS[described.status]
            if live != stored:
                found.append((run_id, stored, live))
        return found

    last: list = []

    async def agree() -> bool:
        nonlocal last
        last = await disagreements()
        return not last

    try:
        await until(agree, timeout=timeout, what="Temporal and the stored runs to agree", every=1)
    except AssertionError:
        raise AssertionError(f"live and stored runs disagree: {last}") from None


async def assert_api_matches_rows(app_dir: Path, http, job_ids: list[str]) -> None:
    """What the API shows for each job's stages is what the stage rows hold."""
    for job_id in job_ids:
        detail = (await http.get(f"/v1/jobs/{job_id}")).json()
        shown = {stage["stage"]: stage["status"] for stage in detail["stages"]}
        stored = dict(rows(app_dir, "SELECT stage, status FROM job_stage_states WHERE job_id = ?",
                           (job_id,)))
        assert shown == stored, (job_id, shown, stored)


async def assert_invariants(app_dir: Path, *, client: Client, http=None, fake=None,
                            after: int = 0, settled: bool = True) -> None:
    """All the common invariants, once the scenario's work has settled (``settled``) or
    while it still runs (ownership and no double work only)."""
    assert_running_rows_have_owners(app_dir)
    assert_done_once(app_dir)
    assert_retries_end_exhausted(app_dir)
    if not settled:
        return
    assert_nothing_running(app_dir, after=after)
    if fake is not None:
        assert_paid_once(app_dir, fake)
    await assert_live_matches_stored(app_dir, client, after=after)
    if http is not None:
        job_ids = [job for (job,) in rows(app_dir, "SELECT job_id FROM jobs ORDER BY job_id")]
        await assert_api_matches_rows(app_dir, http, job_ids)


async def wait_quiet(app_dir: Path, *, client: Client, timeout: float = 180,
                     after: int = 0) -> None:
    """Until no stage is queued or running, every run started after ``after`` has its
    outcome stored, and Temporal runs nothing (a child just started has not stored its
    start yet, but Temporal lists it), twice in a row a moment apart."""
    async def quiet() -> bool:
        active = rows(app_dir, f"SELECT COUNT(*) FROM job_stage_states WHERE status IN {ACTIVE}")
        if active[0][0] or open_runs(app_dir, after=after):
            return False
        return (await client.count_workflows("ExecutionStatus = 'Running'")).count == 0

    async def quiet_twice() -> bool:
        if not await quiet():
            return False
        await asyncio.sleep(0.5)
        return await quiet()

    await until(quiet_twice, timeout=timeout, what="the app to settle", every=0.5)
