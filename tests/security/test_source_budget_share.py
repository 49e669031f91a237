"""No single job board may use more than its share of a day's budget (
1,000 postings from one board made 2,972 model calls and took the day's budget). The
spend of each source's jobs is kept; once a source's share is used, a paid call for one
of its jobs is refused with the typed ``source_budget_share_reached`` before any call,
while another source's job is still admitted. The share is a setting, round-tripped and
validated by the settings API. Real SQLite file, real loopback model server."""

from __future__ import annotations

import json
import sqlite3
from decimal import Decimal

import pytest
from fastapi.testclient import TestClient
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from backend.api.app import create_app
from backend.config import TENANT_ID, AppPaths, AppSettings
from backend.domain.profile import CandidateProfile
from backend.llm.admission import SOURCE_SHARE_REACHED, Basis, admit_source_call
from backend.llm.metered import MeteredProvider
from backend.llm.openai_compat import OpenAiCompatProvider
from backend.llm.rates import load_rates
from backend.store import materials, stages
from backend.store.profile import save_profile
from backend.store.spend import record_source_spend, source_spent_in, utc_day
from backend.temporal.activities.preparation import PreparationActivities
from backend.temporal.contracts import RunRef, StageInput
from tests.fakes.llm_servers import FakeLlmServer

GPT4O = Basis("openai_compat", "gpt-4o")
CEILING = Decimal("1.00")
FLOOD, OTHER = "gh-flood", "lever-other"
TWO_BOARDS = [{"kind": "greenhouse", "id": FLOOD, "boardToken": "flood"},
              {"kind": "lever", "id": OTHER, "company": "other"}]


def budget(**settings) -> AppSettings:
    """Settings with two boards (a share leaves room for the others) and the $1 ceiling."""
    return AppSettings.model_validate({"sources": TWO_BOARDS, "dailyBudgetUsd": CEILING,
                                       **settings})


async def add_job(db, job_id: str, source: str) -> None:
    async with db.transaction() as conn:
        await conn.execute(
            "INSERT INTO jobs (job_id, tenant_id, canonical_url, url, title, company,"
            " first_source, first_seen_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (job_id, TENANT_ID, f"https://j.example/{job_id}", f"https://j.example/{job_id}",
             "Backend Engineer", "Harborlight", source, "2026-01-01T00:00:00.000Z",
             "2026-01-01T00:00:00.000Z"))


async def spend(db, source: str, usd: str) -> None:
    async with db.transaction() as conn:
        await record_source_spend(conn, day=utc_day(), source=source, cost=Decimal(usd))


async def admit(db, settings: AppSettings, source: str):
    async with db.transaction() as conn:
        return await admit_source_call(conn, settings, load_rates(), source=source, basis=GPT4O)


# --------------------------------------------------------------------------- admission


async def test_a_source_that_used_its_share_is_refused_while_another_is_admitted(db):
    settings = budget()  # default share: half the ceiling
    assert settings.max_source_share_of_daily_budget == 0.5
    assert (await admit(db, settings, FLOOD)).admitted

    await spend(db, FLOOD, "0.49")  # one more gpt-4o call (~$0.022) passes $0.50
    refused = await admit(db, settings, FLOOD)
    assert (refused.admitted, refused.reason) == (False, SOURCE_SHARE_REACHED)
    other = await admit(db, settings, OTHER)
    assert other.admitted and other.reason is None

    # Settable: the whole ceiling for one source is no limit per source; no ceiling, none.
    assert (await admit(db, budget(maxSourceShareOfDailyBudget=1), FLOOD)).admitted
    assert (await admit(db, budget(dailyBudgetUsd=0), FLOOD)).admitted
    assert (await admit(db, budget(maxSourceShareOfDailyBudget=0.4), OTHER)).admitted
    # With one enabled board there is no other to leave room for: the ceiling alone holds.
    alone = budget(sources=[TWO_BOARDS[0], {**TWO_BOARDS[1], "enabled": False}])
    assert (await admit(db, alone, FLOOD)).admitted


async def test_the_metered_provider_keeps_each_call_under_its_jobs_source(db):
    with FakeLlmServer() as fake:
        fake.reply_with('{"ok": true}')
        provider = MeteredProvider(OpenAiCompatProvider(
            base_url=fake.openai_base_url, model="gpt-4o", api_key="sk-test"), db, load_rates())
        provider.source = FLOOD
        await provider.complete(system="s", user="u")
        await provider.complete(system="s", user="u")
    async with db.transaction() as conn:
        spent = await source_spent_in(conn, utc_day(), FLOOD)
        assert spent > 0 and await source_spent_in(conn, utc_day(), OTHER) == 0
    with sqlite3.connect(db.path) as conn:
        ledger = conn.execute("SELECT SUM(cost_micro_usd) FROM llm_spend").fetchone()[0]
        by_source = conn.execute("SELECT calls, cost_micro_usd FROM llm_spend_by_source"
                                 " WHERE source = ?", (FLOOD,)).fetchone()
    assert by_source == (2, ledger), "every paid call of the job counted against its source"


# --------------------------------------------------------------------------- the stage


async def ready_for_score(db, job_id: str, source: str) -> None:
    await add_job(db, job_id, source)
    async with db.transaction() as conn:
        await stages.ensure_rows(conn, job_id)
        await conn.execute("UPDATE job_stage_states SET status = 'succeeded' WHERE job_id = ?"
                           " AND stage = 'enrich'", (job_id,))
        await materials.write_enrichment(conn, job_id, materials.EnrichmentRow(
            current_status="enriched", description_text="Build the backend. " * 60,
            description_html="<p>Build the backend.</p>", word_count=180, confidence="high",
            low_confidence_reason=None, origin="source", blocked_reason=None))


async def test_a_paid_stage_of_the_flooding_source_stops_typed_before_any_call(db, tmp_path):
    paths = AppPaths(tmp_path)
    async with db.transaction() as conn:
        await save_profile(conn, CandidateProfile(target_titles=["Backend Engineer"],
                                                  resume_text="Python, SQL, Temporal."))
    await ready_for_score(db, "job-flood", FLOOD)
    await ready_for_score(db, "job-other", OTHER)
    await spend(db, FLOOD, "0.50")  # the board's share of the $1 ceiling is used
    activities = PreparationActivities(db, paths)
    env = ActivityEnvironment()

    def score(job_id: str) -> StageInput:
        return StageInput(run=RunRef(workflow_id=f"prep-{job_id}", run_id=f"run-{job_id}",
                                     workflow_type="JobPreparationWorkflow"),
                          job_id=job_id, stage="score")

    with FakeLlmServer() as fake:
        fake.reply_with('{"score": 70}')
        paths.settings.write_text(json.dumps({
            "dailyBudgetUsd": 1, "sources": TWO_BOARDS,
            "llm": {"provider": "openai_compat", "model": "gpt-4o",
                                         "baseUrl": fake.openai_base_url}}), encoding="utf-8")
        with pytest.raises(ApplicationError) as refused:
            await env.run(activities.score_job, score("job-flood"))
        assert refused.value.type == SOURCE_SHARE_REACHED and refused.value.non_retryable
        assert fake.calls == 0, "no paid call past the source's share"

        try:  # the other board's job is admitted and calls the model
            await env.run(activities.score_job, score("job-other"))
        except ApplicationError as error:  # the canned answer may not be a whole score
            assert error.type != SOURCE_SHARE_REACHED
        assert fake.calls >= 1
    async with db.transaction() as conn:
        assert await source_spent_in(conn, utc_day(), OTHER) > 0


# --------------------------------------------------------------------------- the setting


@pytest.fixture
def client(tmp_path):
    app = create_app(AppPaths(tmp_path), api_token="t", temporal_address="127.0.0.1:1")
    with TestClient(app, base_url="http://127.0.0.1") as test_client:
        test_client.headers["Authorization"] = "Bearer t"
        yield test_client


def test_the_share_round_trips_through_the_settings_api(client):
    assert client.get("/v1/settings").json()["maxSourceShareOfDailyBudget"] == 0.5
    saved = client.patch("/v1/settings", json={"maxSourceShareOfDailyBudget": 0.25})
    assert saved.status_code == 200 and saved.json()["maxSourceShareOfDailyBudget"] == 0.25
    assert client.get("/v1/settings").json()["maxSourceShareOfDailyBudget"] == 0.25
    for bad in (0, -0.5, 1.5, "half", None, float("nan")):
        refused = client.patch("/v1/settings", content=json.dumps(
            {"maxSourceShareOfDailyBudget": bad}), headers={"Content-Type": "application/json"})
        assert refused.status_code == 422, bad
        error = refused.json()["error"]
        assert error["code"] == "validation_error" and "message" in error
    assert client.get("/v1/settings").json()["maxSourceShareOfDailyBudget"] == 0.25, (
        "a refused value saves nothing")
