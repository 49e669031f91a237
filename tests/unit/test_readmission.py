"""A run keeps the provider and model it was admitted under: a stage about to call another
one (the settings switched from the free offline model to a paid one mid-run) is admitted
again under it first, and refused when that call does not fit the ceiling."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from backend.config import AppPaths, AppSettings
from backend.llm.admission import (
    Basis,
    needs_readmission,
    readmit_call,
    refusal,
    release,
)
from backend.llm.budget import budget_status
from backend.llm.rates import load_rates
from backend.store.spend import utc_day
from backend.store.spend_reservations import Reservation, open_reserved, read_reservation
from backend.temporal.activities.spend import PreflightInput, SpendActivities

GPT4O = Basis("openai_compat", "gpt-4o")
OFFLINE = Basis("offline", "offline-heuristic", offline=True)
PER_CALL = Decimal("0.022")  # gpt-4o: 4,000 in x $2.50/M + 1,200 out x $10/M


def reservation(provider: str | None, model: str | None) -> Reservation:
    return Reservation("r", Decimal(0), provider, model, False)


def test_only_a_paid_call_under_another_basis_needs_readmission():
    assert not needs_readmission(reservation("offline", "offline-heuristic"), OFFLINE)
    assert needs_readmission(reservation("offline", "offline-heuristic"), GPT4O)
    assert not needs_readmission(reservation("openai_compat", "gpt-4o"), GPT4O)
    assert needs_readmission(reservation("openai_compat", "gpt-4o-mini"), GPT4O)
    assert needs_readmission(reservation(None, None), GPT4O), "unknown basis: admit again"
    assert needs_readmission(None, GPT4O)
    assert not needs_readmission(None, OFFLINE), "offline calls cost nothing"


def test_refusal_is_the_preflight_arithmetic():
    from datetime import UTC, datetime

    now = datetime(2026, 3, 14, 12, tzinfo=UTC)
    status = budget_status(Decimal("0.20"), Decimal("0.25"), now)
    assert refusal(status, reserved=Decimal("0.02"), estimate=Decimal("0.03")) is None
    assert refusal(status, reserved=Decimal("0.03"), estimate=Decimal("0.03")) == (
        "estimate_exceeds_remaining")
    assert refusal(budget_status(Decimal("0.25"), Decimal("0.25"), now), reserved=Decimal(0),
                   estimate=Decimal(0)) == "ceiling_reached"
    assert refusal(budget_status(Decimal(9), Decimal(0), now), reserved=Decimal(9),
                   estimate=Decimal(9)) is None, "0 is unlimited"


async def test_a_run_admitted_offline_is_readmitted_per_paid_call_until_the_ceiling(db, tmp_path):
    paths = AppPaths(tmp_path)
    # Admitted while the offline model was configured: nothing reserved, basis offline.
    await SpendActivities(db, paths).check_spend_budget(
        PreflightInput(workflow_id="prep-j1", run_id="r1", paid_calls=3))
    async with db.transaction() as conn:
        admitted = await read_reservation(conn, "r1")
    assert (admitted.provider, admitted.model, admitted.reserved) == (
        "offline", "offline-heuristic", Decimal(0))

    # The user switches to a paid model with a $0.05 ceiling while the run is going.
    settings = AppSettings(daily_budget_usd=Decimal("0.05"))
    rates = load_rates(paths)

    async def readmit(stage: str, basis: Basis = GPT4O):
        async with db.transaction() as conn:
            return await readmit_call(conn, settings, rates, run_id="r1", workflow_id="prep-j1",
                                      job_id="j1", stage=stage, basis=basis)

    score = await readmit("score")
    assert score.admitted and score.reserved == PER_CALL
    again = await readmit("score")  # a retried attempt of the same stage: no second hold
    assert again.admitted and again.reserved == PER_CALL
    assert (await readmit("tailor")).admitted
    cover = await readmit("cover")
    assert not cover.admitted and cover.reason == "estimate_exceeds_remaining"
    assert (await readmit("pdf", OFFLINE)).admitted, "an offline call needs no money"
    async with db.transaction() as conn:
        assert await open_reserved(conn, utc_day()) == 2 * PER_CALL
        await release(conn, "r1")  # the run ended: its re-admissions go with it
        assert await open_reserved(conn, utc_day()) == 0


async def test_a_run_admitted_under_the_paid_model_is_not_charged_twice(db, tmp_path):
    paths = AppPaths(tmp_path)
    paths.settings.write_text(json.dumps({
        "dailyBudgetUsd": 0.05, "llm": {"provider": "openai_compat", "model": "gpt-4o",
                                        "baseUrl": "http://127.0.0.1:9/v1"}}), encoding="utf-8")
    await SpendActivities(db, paths).check_spend_budget(
        PreflightInput(workflow_id="prep-j2", run_id="r2", paid_calls=2))
    settings = AppSettings(daily_budget_usd=Decimal("0.05"))
    async with db.transaction() as conn:
        assert (await read_reservation(conn, "r2")).reserved == 2 * PER_CALL
        covered = await readmit_call(conn, settings, load_rates(paths), run_id="r2",
                                     workflow_id="prep-j2", job_id="j2", stage="score",
                                     basis=GPT4O)
        assert covered.admitted and covered.reserved == 0
        assert await open_reserved(conn, utc_day()) == 2 * PER_CALL


async def test_contact_research_admitted_offline_makes_no_paid_call_that_does_not_fit(
        db, tmp_path):
    """Contact research admitted while the offline model was configured: after a switch to
    a paid model whose one call does not fit, the extraction stops typed, before any call."""
    from temporalio.exceptions import ApplicationError
    from temporalio.testing import ActivityEnvironment

    from backend.store import contacts as store
    from backend.temporal.activities.contacts import ContactActivities, ContactTaskInput
    from backend.temporal.contracts import RunRef
    from tests.fakes.llm_servers import FakeLlmServer
    from tests.unit.test_contacts_store import JOB, add_job

    paths = AppPaths(tmp_path)
    await add_job(db)
    async with db.transaction() as conn:
        task, _ = await store.request_task(conn, JOB)
        await store.mark_started(conn, task, run_id="run-c")
    await SpendActivities(db, paths).check_spend_budget(
        PreflightInput(workflow_id=f"contacts-{JOB}-1", run_id="run-c", paid_calls=1))
    with FakeLlmServer() as fake:
        paths.settings.write_text(json.dumps({
            "dailyBudgetUsd": 0.01, "llm": {"provider": "openai_compat", "model": "gpt-4o",
                                            "baseUrl": fake.openai_base_url}}), encoding="utf-8")
        research = ContactTaskInput(
            run=RunRef(workflow_id=f"contacts-{JOB}-1", run_id="run-c",
                       workflow_type="ContactResearchWorkflow"),
            job_id=JOB, task_id=task.task_id)
        activities = ContactActivities(db, paths)
        with pytest.raises(ApplicationError) as refused:
            await ActivityEnvironment().run(activities.research_contact_candidates, research)
        assert refused.value.type == "budget_exceeded" and refused.value.non_retryable
        assert fake.calls == 0, "no paid call outside the ceiling"
