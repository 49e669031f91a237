"""Selected batches and contact research halted by the daily ceiling resume by themselves
once the budget has room, exactly once: the real app on the real Temporal dev server, a
paid loopback provider that counts every call (gpt-4o: $0.022 a call) and three prepared
demo jobs.

In order: a Tailor batch refused at its preflight waits while there is no room, is
resumed once per budget episode (even when refused again), and runs once the ceiling is
raised; a batch whose later items were refused mid-run (the model changed to a pricier
one with no room for it) resumes exactly the refused items, each from the stage it was
refused at; contact research refused at its preflight resumes as a new task, and a resume
whose start was lost is delivered once. Every paid call is made once and is on the
ledger, and the ledger never passes the ceiling."""

from __future__ import annotations

import json
from datetime import timedelta
from decimal import Decimal

import pytest
import pytest_asyncio

from backend.config import AppPaths, TemporalSettings, load_settings
from backend.domain import events as ev
from backend.domain.clock import utc_now
from backend.llm.budget import budget_status
from backend.pipeline.batch import batch_workflow_id
from backend.store import contacts as contact_store
from backend.store.db import Database
from backend.store.events import append_event
from backend.store.spend import utc_day
from backend.temporal.client import connect_temporal
from backend.temporal.loops.budget_resume import budget_episode, resume_budget_halted
from backend.temporal.loops.halted_work import batch_lineage
from tests.app_db import connect_db
from tests.integration.test_paid_pipeline import paid_app, prep_terminals, scripted_reply
from tests.integration.test_preparation import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session"),
              pytest.mark.timeout(900)]

JOBS = 3
PER_CALL_USD = Decimal("0.022")  # gpt-4o: 4,000 in x $2.50/M + 1,200 out x $10/M
PRICEY_PER_CALL_USD = Decimal("0.14")  # the override below: 4,000 x $20/M + 1,200 x $50/M
PRICEY_RATES = {"version": 1, "families": [
    {"family": "pricey", "match": ["pricey"], "input": "20", "output": "50"}]}


def reply(request) -> str:
    """The preparation replies, and no contact for contact research (the demo postings
    name nobody, so any name would be refused as invented)."""
    if "recruiters, hiring managers" in request.body["messages"][0]["content"]:
        return json.dumps({"candidates": []})
    return scripted_reply(request)


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def env(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("budget-resume-batches")
    (app_dir / "llm_rates.json").write_text(json.dumps(PRICEY_RATES), encoding="utf-8")
    async with paid_app(app_dir, JOBS, 1.0) as (supervisor, http, fake):
        fake.reply_with(reply)
        db = await Database.open(AppPaths(app_dir).database)
        client = await connect_temporal(TemporalSettings(), supervisor.info.temporal_address,
                                        app_dir=supervisor.paths.app_dir)
        assert (await http.post("/v1/pipeline/actions/run-stage",
                                json={"stage": "discover"})).status_code == 202

        async def prepared() -> bool:
            return prep_terminals(app_dir).count(("WorkflowCompleted", None)) >= JOBS

        await wait_for(prepared, timeout=240)
        jobs = (await http.get("/v1/jobs", params={"limit": 50})).json()["items"]
        assert fake.calls == 3 * JOBS
        yield {"app_dir": app_dir, "http": http, "fake": fake, "db": db, "client": client,
               "paths": AppPaths(app_dir), "jobs": sorted(job["jobId"] for job in jobs)}
        await db.close()


def rows(app_dir, sql: str, params: tuple = ()) -> list[tuple]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute(sql, params).fetchall()


def batch_runs(app_dir, lineage: str) -> list[tuple[str, str, str | None]]:
    """(workflow id, outcome, error code) of every run of a batch lineage, in start order;
    outcome ``running`` while a run has not ended."""
    started = rows(app_dir, "SELECT workflow_id, run_id FROM job_events WHERE"
                            " type = 'WorkflowStarted' AND json_extract(payload_json,"
                            " '$.workflowType') = 'BatchStageWorkflow' ORDER BY id")
    runs = []
    for workflow_id, run_id in started:
        if batch_lineage(workflow_id) != lineage:
            continue
        ended = rows(app_dir, "SELECT type, json_extract(payload_json, '$.errorCode')"
                              " FROM job_events WHERE run_id = ? AND type IN"
                              " ('WorkflowCompleted', 'WorkflowFailed', 'WorkflowCanceled')",
                     (run_id,))
        outcome, code = ended[0] if ended else ("running", None)
        runs.append((workflow_id, outcome, code))
    return runs


async def wait_runs(app_dir, lineage: str, count: int) -> list:
    """Wait until the lineage has ``count`` runs, every one of them ended."""
    async def ended() -> bool:
        runs = batch_runs(app_dir, lineage)
        return len(runs) >= count and all(run[1] != "running" for run in runs)
    await wait_for(ended, timeout=180)
    return batch_runs(app_dir, lineage)


def ledger(app_dir) -> tuple[int, Decimal]:
    calls, micro = rows(app_dir, "SELECT SUM(calls), SUM(cost_micro_usd) FROM llm_spend")[0]
    return int(calls or 0), Decimal(micro or 0) / 1_000_000


def intents(app_dir, kind: str) -> list[tuple]:
    return rows(app_dir, "SELECT payload_json FROM job_events WHERE type = ? ORDER BY id",
                (kind,))


def stage_rows(app_dir, job_id: str) -> dict[str, tuple[str, str | None]]:
    return {stage: (status, code) for stage, status, code in rows(
        app_dir, "SELECT stage, status, error_code FROM job_stage_states WHERE job_id = ?",
        (job_id,))}


async def set_ceiling(http, usd: Decimal) -> None:
    patched = await http.patch("/v1/settings", json={"dailyBudgetUsd": float(usd)})
    assert patched.status_code == 200, patched.text


async def set_model(http, fake, model: str) -> None:
    patched = await http.patch("/v1/settings", json={"llm": {
        "provider": "openai_compat", "baseUrl": fake.openai_base_url, "model": model,
        "apiKeySecret": "openai"}})
    assert patched.status_code == 200, patched.text


async def spent_today(http) -> Decimal:
    return Decimal(str((await http.get("/v1/spend")).json()["today"]["spentUsd"]))


async def run_pass(env, **kwargs):
    return await resume_budget_halted(env["db"], env["client"], env["paths"], **kwargs)


def generated(app_dir, kind: str, workflow_id: str) -> list[str]:
    """Jobs that got a résumé / letter from runs of this workflow id."""
    return sorted(row[0] for row in rows(
        app_dir, "SELECT job_id FROM job_events WHERE type = ? AND workflow_id = ?",
        (kind, workflow_id)))


async def test_a_batch_refused_at_its_preflight_resumes_once_when_the_budget_has_room(env):
    app_dir, http, fake, jobs = env["app_dir"], env["http"], env["fake"], env["jobs"]
    calls = fake.calls
    # Room for two calls; the batch (Tailor and Cover for three jobs) needs six.
    await set_ceiling(http, await spent_today(http) + Decimal("0.05"))
    started = await http.post("/v1/pipeline/actions/run-stage",
                              json={"stage": "tailor", "jobKeys": jobs, "workers": 2})
    assert started.status_code == 202, started.text
    batch = started.json()["workflowId"]
    assert batch == batch_workflow_id("tailor", jobs)
    assert await wait_runs(app_dir, batch, 1) == [(batch, "WorkflowFailed", "budget_exceeded")]

    report = await run_pass(env)
    assert report.resumed == [] and report.waiting == {batch: "no_room"}

    # The pass's clock says tomorrow (an empty ledger): the batch is resumed, once. The
    # resumed run's preflight lives in today and refuses it again: it is not resumed
    # again in tomorrow's episode.
    tomorrow = utc_now() + timedelta(days=1)
    report = await run_pass(env, now=tomorrow)
    assert report.resumed == [batch]
    runs = await wait_runs(app_dir, batch, 2)
    assert runs[1][0].startswith(f"{batch}-resume-") and runs[1][1:] == (
        "WorkflowFailed", "budget_exceeded")
    again = await run_pass(env, now=tomorrow)
    assert again.resumed == [] and again.waiting == {batch: "halted_again_this_episode"}
    assert len(batch_runs(app_dir, batch)) == 2
    assert fake.calls == calls, "the refused runs paid nothing"

    # Raising the ceiling (a new episode) resumes it in the settings save, and it runs.
    await set_ceiling(http, Decimal("1.5"))
    runs = await wait_runs(app_dir, batch, 3)
    assert runs[2][1:] == ("WorkflowCompleted", None)
    resumed_id = runs[2][0]
    assert generated(app_dir, "ResumeApproved", resumed_id) == jobs
    assert generated(app_dir, "CoverLetterGenerated", resumed_id) == jobs
    assert fake.calls == calls + 2 * JOBS, "Tailor and Cover once per job"
    assert ledger(app_dir)[0] == fake.succeeded == fake.calls
    episodes = [json.loads(row[0])["budgetEpisode"] for row in intents(
        app_dir, "BatchBudgetResumed")]
    assert episodes == [report.episode, f"{utc_day()}:1500000"]

    final = await run_pass(env)
    assert batch not in final.resumed and batch not in final.waiting
    assert len(batch_runs(app_dir, batch)) == 3 and fake.calls == calls + 2 * JOBS


async def test_items_refused_mid_run_resume_from_the_stage_they_were_refused_at(env):
    """Workers = 1: the first job's Tailor call is in flight when the model changes to a
    pricier one ($0.14 a call); every later stage must be admitted again under it, and
    the ceiling has no room for that: the second and third jobs are refused at Tailor,
    the first at Cover. The batch completes; the refused items wait, then resume (two
    batches of their own) when the ceiling is raised."""
    app_dir, http, fake, jobs = env["app_dir"], env["http"], env["fake"], env["jobs"]
    first, rest = jobs[0], jobs[1:]
    calls = fake.calls
    ceiling = await spent_today(http) + 2 * JOBS * PER_CALL_USD + Decimal("0.005")
    await set_ceiling(http, ceiling)
    fake.delay(5.0)
    started = await http.post("/v1/pipeline/actions/run-stage",
                              json={"stage": "tailor", "jobKeys": jobs, "workers": 1})
    assert started.status_code == 202, started.text
    batch = started.json()["workflowId"]
    runs_before = len(batch_runs(app_dir, batch))

    async def first_call_in_flight() -> bool:
        return fake.in_flight >= 1

    await wait_for(first_call_in_flight, timeout=60)
    await set_model(http, fake, "pricey-1")
    runs = await wait_runs(app_dir, batch, runs_before + 1)
    fake.delay(0)
    assert runs[-1][1:] == ("WorkflowCompleted", None)
    assert fake.calls == calls + 1, "only the call admitted before the change"
    assert stage_rows(app_dir, first)["cover"] == ("failed", "budget_exceeded")
    for job in rest:
        assert stage_rows(app_dir, job)["tailor"] == ("failed", "budget_exceeded")
    assert await spent_today(http) <= ceiling

    cover_batch = batch_workflow_id("cover", [first])
    tailor_batch = batch_workflow_id("tailor", rest)
    report = await run_pass(env)
    assert report.resumed == []
    assert report.waiting == {cover_batch: "no_room", tailor_batch: "no_room"}

    raised = await spent_today(http) + Decimal("1")
    await set_ceiling(http, raised)
    cover_runs = await wait_runs(app_dir, cover_batch, 1)
    tailor_runs = await wait_runs(app_dir, tailor_batch, 1)
    assert cover_runs[0][1:] == tailor_runs[0][1:] == ("WorkflowCompleted", None)
    assert generated(app_dir, "CoverLetterGenerated", cover_runs[0][0]) == [first]
    assert generated(app_dir, "ResumeApproved", cover_runs[0][0]) == []
    assert generated(app_dir, "ResumeApproved", tailor_runs[0][0]) == sorted(rest)
    assert generated(app_dir, "CoverLetterGenerated", tailor_runs[0][0]) == sorted(rest)
    for job in jobs:
        assert {status for status, _ in stage_rows(app_dir, job).values()} == {"succeeded"}
    # One Cover for the first job, Tailor and Cover for the others: each once.
    assert fake.calls == calls + 1 + 1 + 2 * len(rest)
    assert ledger(app_dir)[0] == fake.succeeded == fake.calls
    assert await spent_today(http) <= raised
    again = await run_pass(env)
    assert again.resumed == [] and not {cover_batch, tailor_batch} & set(again.waiting)
    await set_model(http, fake, "gpt-4o")


def tasks(app_dir, job_id: str) -> list[tuple[int, str, str | None]]:
    return rows(app_dir, "SELECT seq, status, failure_code FROM contact_research_tasks"
                         " WHERE job_id = ? ORDER BY seq", (job_id,))


async def research_refused(app_dir, http, job_id: str) -> None:
    accepted = await http.post(f"/v1/jobs/{job_id}/actions/research-contacts")
    assert accepted.status_code == 202, accepted.text

    async def refused() -> bool:
        return tasks(app_dir, job_id)[-1][1:] == ("failed", "budget_exceeded")
    await wait_for(refused, timeout=60)


async def test_contact_research_refused_by_the_ceiling_resumes_as_a_new_task_once(env):
    app_dir, http, fake, job = env["app_dir"], env["http"], env["fake"], env["jobs"][0]
    subject = f"contacts-{job}"
    await set_ceiling(http, await spent_today(http) + Decimal("0.01"))  # less than a call
    calls = fake.calls
    await research_refused(app_dir, http, job)
    report = await run_pass(env)
    assert report.waiting == {subject: "no_room"} and report.resumed == []

    await set_ceiling(http, await spent_today(http) + Decimal("1"))

    async def researched() -> bool:
        return tasks(app_dir, job)[-1] == (2, "completed", None)
    await wait_for(researched, timeout=60)
    assert fake.calls == calls + 1, "one extraction call"
    assert ledger(app_dir)[0] == fake.succeeded == fake.calls
    [intent] = [json.loads(row[0]) for row in intents(app_dir, "ContactResearchBudgetResumed")]
    assert (intent["taskId"], intent["haltedTaskId"]) == (
        contact_store.research_task_id(job, 2), contact_store.research_task_id(job, 1))
    again = await run_pass(env)
    assert subject not in again.resumed and subject not in again.waiting
    assert len(tasks(app_dir, job)) == 2


async def test_a_contact_research_resume_whose_start_was_lost_is_delivered_once(env):
    """A worker killed between committing the intent (with its new task) and asking
    Temporal: the next pass starts that task, without requesting another, and the pass
    after that sees it halted again in the same episode."""
    app_dir, http, fake, db, job = (env["app_dir"], env["http"], env["fake"], env["db"],
                                    env["jobs"][1])
    subject = f"contacts-{job}"
    await set_ceiling(http, await spent_today(http) + Decimal("0.01"))
    calls = fake.calls
    await research_refused(app_dir, http, job)
    later = utc_now() + timedelta(days=2)
    ceiling = Decimal(load_settings(env["paths"]).daily_budget_usd)
    episode = budget_episode(budget_status(Decimal(0), ceiling, later))
    async with db.transaction() as conn:  # exactly what the killed pass had committed
        task, created = await contact_store.request_task(conn, job)
        assert created
        await append_event(conn, ev.ContactResearchBudgetResumed(
            job_id=job, task_id=task.task_id, workflow_id=task.workflow_id,
            halted_task_id=contact_store.research_task_id(job, 1), halted_run_id="lost",
            budget_episode=episode), job_id=job, workflow_id=task.workflow_id,
            dedupe_key=f"ContactResearchBudgetResumed:{job}:{episode}")
    report = await run_pass(env, now=later)
    assert report.episode == episode and report.resumed == [subject]

    async def halted_again() -> bool:  # today's preflight still has no room
        return tasks(app_dir, job)[-1] == (2, "failed", "budget_exceeded")
    await wait_for(halted_again, timeout=60)
    again = await run_pass(env, now=later)
    assert again.resumed == [] and again.waiting[subject] == "halted_again_this_episode"
    assert len(tasks(app_dir, job)) == 2, "the lost start was delivered, not requested anew"
    assert fake.calls == calls
