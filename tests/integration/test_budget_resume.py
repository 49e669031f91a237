"""Preparation halted by the daily ceiling resumes by itself once the budget has room:
a paid loopback provider (counting every call) and a ceiling that admits one job of four.

In order: halted jobs stay pending while there is no room or the budget is exhausted; at
the UTC day rollover (the pass's injected clock) each halted job is resumed once per
episode, even when it is halted again; raising the ceiling in Settings resumes them and
they finish, each paid call made exactly once; a repeated pass starts nothing."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
import pytest_asyncio

from backend.config import AppPaths, TemporalSettings
from backend.domain import events as ev
from backend.domain.clock import utc_now
from backend.store.db import Database
from backend.store.events import append_event
from backend.store.spend import utc_day
from backend.temporal.client import connect_temporal
from backend.temporal.contracts import prep_workflow_id
from backend.temporal.loops.budget_resume import halted_jobs, intent_dedupe_key, resume_budget_halted
from tests.app_db import connect_db
from tests.integration.test_paid_pipeline import paid_app, prep_terminals
from tests.integration.test_preparation import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

JOBS = 4
PER_CALL_USD = Decimal("0.022")  # gpt-4o: 4,000 in x $2.50/M + 1,200 out x $10/M
CALLS_PER_JOB = 3  # score, tailor, cover
# One job's three calls ($0.066) fit; a second job's would not ($0.132 > $0.10).
CEILING = 0.10


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def halted(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("budget-resume-app")
    async with paid_app(app_dir, JOBS, CEILING) as (supervisor, http, fake):
        db = await Database.open(AppPaths(app_dir).database)
        client = await connect_temporal(TemporalSettings(), supervisor.info.temporal_address,
                                        app_dir=supervisor.paths.app_dir)
        await http.post("/v1/pipeline/actions/run-stage", json={"stage": "discover"})
        await wait_for(_count_at_least(app_dir, JOBS), timeout=180)
        yield {"app_dir": app_dir, "http": http, "fake": fake, "db": db, "client": client,
               "paths": AppPaths(app_dir)}
        await db.close()


def _count_at_least(app_dir, count: int):
    async def enough() -> bool:
        return len(prep_terminals(app_dir)) >= count
    return enough


def rows(app_dir, sql: str, params: tuple = ()) -> list[tuple]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute(sql, params).fetchall()


def prep_starts(app_dir) -> list[str]:
    return [row[0] for row in rows(
        app_dir, "SELECT job_id FROM job_events WHERE type = 'WorkflowStarted'"
        " AND json_extract(payload_json, '$.workflowType') = 'JobPreparationWorkflow'"
        " ORDER BY id")]


def halted_job_ids(app_dir) -> list[str]:
    return sorted({row[0] for row in rows(
        app_dir, "SELECT job_id FROM job_events WHERE type = 'WorkflowFailed'"
        " AND json_extract(payload_json, '$.errorCode') = 'budget_exceeded'")})


def resume_intents(app_dir) -> list[tuple[str, str]]:
    return rows(app_dir, "SELECT job_id, json_extract(payload_json, '$.budgetEpisode')"
                         " FROM job_events WHERE type = 'PreparationBudgetResumed' ORDER BY id")


def gpt4o_ledger(app_dir) -> tuple[int, int]:
    return rows(app_dir, "SELECT SUM(calls), SUM(cost_micro_usd) FROM llm_spend"
                         " WHERE model = 'gpt-4o'")[0]


async def all_prep_runs_closed(app_dir, starts: int) -> None:
    """Wait for ``starts`` preparation runs to have started and every one to be closed
    (a run just dispatched records its start a moment later)."""
    async def closed() -> bool:
        return len(prep_starts(app_dir)) >= starts and len(prep_terminals(app_dir)) >= len(
            prep_starts(app_dir))
    await wait_for(closed, timeout=120)


async def run_pass(env, **kwargs):
    return await resume_budget_halted(env["db"], env["client"], env["paths"], **kwargs)


async def stage_statuses(http, job_id: str) -> set[str]:
    detail = (await http.get(f"/v1/jobs/{job_id}")).json()
    return {stage["status"] for stage in detail["stages"]}


async def test_halted_jobs_stay_pending_while_the_budget_has_no_room(halted):
    app_dir, http, fake = halted["app_dir"], halted["http"], halted["fake"]
    terminals = prep_terminals(app_dir)
    assert terminals.count(("WorkflowCompleted", None)) == 1
    assert terminals.count(("WorkflowFailed", "budget_exceeded")) == JOBS - 1
    assert fake.calls == CALLS_PER_JOB
    jobs = halted_job_ids(app_dir)
    assert len(jobs) == JOBS - 1
    for job_id in jobs:
        assert await stage_statuses(http, job_id) == {"pending"}
    starts = len(prep_starts(app_dir))
    # $0.066 of $0.10 spent: not exhausted, but no halted job's $0.066 fits what is left.
    report = await run_pass(halted)
    assert report.resumed == [] and report.waiting == {job: "no_room" for job in jobs}
    # The window is told: the jobs wait on the budget although it is not used up.
    operations = (await http.get("/v1/pipeline/operations")).json()
    assert operations["budget"]["exhausted"] is False
    assert operations["budgetHaltedPreparations"] == JOBS - 1
    # Lowering the ceiling below today's spend exhausts the budget: the pass stops.
    assert (await http.patch("/v1/settings", json={"dailyBudgetUsd": 0.05})).status_code == 200
    assert (await http.get("/v1/spend")).json()["today"]["exhausted"] is True
    report = await run_pass(halted)
    assert report.stopped_exhausted and report.resumed == []
    assert (await http.patch("/v1/settings", json={"dailyBudgetUsd": CEILING})).status_code == 200
    assert len(prep_starts(app_dir)) == starts, "no new workflow while there is no room"
    assert fake.calls == CALLS_PER_JOB, "no spend"
    assert resume_intents(app_dir) == []


async def test_the_day_rollover_resumes_each_halted_job_once_even_if_halted_again(halted):
    """The pass's clock says tomorrow (an empty ledger, the same $0.10 ceiling): one job
    fits per pass. Temporal's preflight still lives in today and refuses it, so each
    resumed job is halted again — and is not resumed again in tomorrow's episode."""
    app_dir, fake = halted["app_dir"], halted["fake"]
    jobs = halted_job_ids(app_dir)
    tomorrow = utc_now() + timedelta(days=1)
    episode = f"{utc_day(tomorrow)}:100000"
    starts = len(prep_starts(app_dir))
    resumed: list[str] = []
    for _ in range(len(jobs)):
        report = await run_pass(halted, now=tomorrow)
        assert report.episode == episode
        assert len(report.resumed) <= 1, "one $0.066 job fits the $0.10 ceiling per pass"
        resumed += report.resumed
        await all_prep_runs_closed(app_dir, starts + len(resumed))
    assert sorted(resumed) == jobs, "every halted job resumed exactly once"
    final = await run_pass(halted, now=tomorrow)
    assert final.resumed == []
    assert final.waiting == {job: "halted_again_this_episode" for job in jobs}
    assert len(prep_starts(app_dir)) == starts + len(jobs)
    assert sorted(resume_intents(app_dir)) == [(job, episode) for job in jobs]
    assert prep_terminals(app_dir)[-len(jobs):] == [("WorkflowFailed", "budget_exceeded")] * len(
        jobs)
    assert fake.calls == CALLS_PER_JOB, "the refused resumes paid nothing"
    # Today (the real clock) still has no room: the worker's own passes start nothing.
    assert (await run_pass(halted)).resumed == []


async def test_an_intent_whose_start_was_lost_is_delivered_once_by_the_next_pass(halted):
    """A worker killed between committing the intent and asking Temporal: the intent is
    there, no newer execution is. The next pass delivers it (once), and the pass after
    that sees the delivered run instead of starting another."""
    app_dir, db = halted["app_dir"], halted["db"]
    lost = (await halted_jobs(db))[0].job_id  # the first one a pass looks at
    later = utc_now() + timedelta(days=2)
    episode = f"{utc_day(later)}:100000"
    halted_run = rows(app_dir, "SELECT run_id FROM workflow_run_projections WHERE job_id = ?"
                               " ORDER BY started_at DESC LIMIT 1", (lost,))[0][0]
    async with db.transaction() as conn:  # exactly what the killed pass had committed
        await append_event(
            conn, ev.PreparationBudgetResumed(
                job_id=lost, workflow_id=prep_workflow_id(lost), halted_run_id=halted_run,
                budget_episode=episode, stages=["enrich", "score", "tailor", "cover", "pdf"]),
            job_id=lost, workflow_id=prep_workflow_id(lost),
            dedupe_key=intent_dedupe_key(lost, episode))
    starts = len(prep_starts(app_dir))
    report = await run_pass(halted, now=later)
    # Delivered; its $0.066 leaves no room for a second job in this pass.
    assert report.resumed == [lost]
    await all_prep_runs_closed(app_dir, starts + 1)
    assert prep_starts(app_dir)[-1] == lost
    again = await run_pass(halted, now=later)
    assert lost not in again.resumed
    assert again.waiting[lost] == "halted_again_this_episode"
    assert [job for job, ep in resume_intents(app_dir) if ep == episode].count(lost) == 1
    await all_prep_runs_closed(app_dir, starts + 1 + len(again.resumed))


async def test_raising_the_ceiling_resumes_them_and_each_paid_call_happens_once(halted):
    app_dir, http, fake = halted["app_dir"], halted["http"], halted["fake"]
    jobs = halted_job_ids(app_dir)
    starts = len(prep_starts(app_dir))
    patched = await http.patch("/v1/settings", json={"dailyBudgetUsd": 1})
    assert patched.status_code == 200
    # The settings save resumed them before answering (the worker's pass may race it:
    # one intent per job and episode either way).
    today = f"{utc_day()}:1000000"
    assert sorted(job for job, episode in resume_intents(app_dir) if episode == today) == jobs
    await all_prep_runs_closed(app_dir, starts + len(jobs))
    assert prep_terminals(app_dir)[-len(jobs):] == [("WorkflowCompleted", None)] * len(jobs)
    assert len(prep_starts(app_dir)) == starts + len(jobs)
    for job_id in jobs:
        assert await stage_statuses(http, job_id) == {"succeeded"}
    calls = CALLS_PER_JOB * JOBS
    assert fake.calls == calls, "each paid call exactly once"
    assert gpt4o_ledger(app_dir) == (calls, int(PER_CALL_USD * calls * 1_000_000))
    spend = (await http.get("/v1/spend")).json()["today"]
    assert Decimal(str(spend["spentUsd"])) == PER_CALL_USD * calls
    assert rows(app_dir, "SELECT COUNT(*), COUNT(DISTINCT job_id) FROM job_events"
                         " WHERE type = 'JobScored'") == [(JOBS, JOBS)]


async def test_a_repeated_pass_dispatches_nothing_new(halted):
    app_dir, http, fake = halted["app_dir"], halted["http"], halted["fake"]
    starts, intents, calls = len(prep_starts(app_dir)), resume_intents(app_dir), fake.calls
    report = await run_pass(halted)
    assert report.halted == 0 and report.resumed == []
    # Another ceiling change (a new episode) finds nothing halted either.
    assert (await http.patch("/v1/settings", json={"dailyBudgetUsd": 2})).status_code == 200
    assert (await run_pass(halted)).resumed == []
    assert len(prep_starts(app_dir)) == starts
    assert resume_intents(app_dir) == intents
    assert fake.calls == calls
