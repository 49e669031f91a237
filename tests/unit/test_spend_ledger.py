"""The llm_spend ledger, the daily budget status, MeteredProvider and the preflight
activity, on a real SQLite file and a real loopback LLM server."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from temporalio.exceptions import ApplicationError

from backend.config import AppPaths, AppSettings
from backend.llm.admission import release
from backend.llm.anthropic import AnthropicProvider
from backend.llm.base import LlmUnavailableError
from backend.llm.budget import (
    BudgetExceededError,
    ensure_budget_available,
    read_spend_budget_status,
)
from backend.llm.metered import MeteredProvider
from backend.llm.openai_compat import OpenAiCompatProvider
from backend.llm.rates import load_rates
from backend.store.spend import (
    from_micro_usd,
    ledger_by_day,
    ledger_by_model,
    record_spend,
    spent_on,
    to_micro_usd,
    utc_day,
)
from backend.temporal.activities.spend import PreflightInput, SpendActivities
from tests.fakes.llm_servers import FakeLlmServer

NOON = datetime(2026, 3, 14, 12, 0, tzinfo=UTC)


@pytest.fixture
def llm_server():
    with FakeLlmServer() as server:
        yield server




async def add(db, day, provider, model, cost, tokens=(10, 5)):
    async with db.transaction() as conn:
        await record_spend(conn, day=day, provider=provider, model=model,
                           input_tokens=tokens[0], output_tokens=tokens[1], cost=Decimal(cost))


def settings(budget) -> AppSettings:
    return AppSettings(daily_budget_usd=Decimal(str(budget)))


# --- micro-dollars ---------------------------------------------------------------------


def test_micro_dollar_rounding_is_half_up():
    assert to_micro_usd(Decimal("0.0000005")) == 1
    assert to_micro_usd(Decimal("0.00000049")) == 0
    assert to_micro_usd(Decimal("1.2345675")) == 1_234_568
    assert from_micro_usd(1_234_568) == Decimal("1.234568")
    assert utc_day(datetime(2026, 3, 14, 23, 30, tzinfo=UTC)) == "2026-03-14"


# --- the ledger ------------------------------------------------------------------------


async def test_upsert_accumulates_per_day_provider_and_model(db):
    await add(db, "2026-03-14", "openai_compat", "gpt-4o", "0.10", (100, 10))
    await add(db, "2026-03-14", "openai_compat", "gpt-4o", "0.25", (200, 20))
    await add(db, "2026-03-14", "anthropic", "claude-sonnet-4-5", "1.00", (1000, 100))
    await add(db, "2026-03-13", "openai_compat", "gpt-4o", "2.00", (5, 5))
    await add(db, "2026-02-01", "openai_compat", "gpt-4o", "9.00")  # outside 30 days

    rows = await db.fetchall("SELECT COUNT(*) FROM llm_spend")
    assert rows[0][0] == 4
    assert await spent_on(db, "2026-03-14") == Decimal("1.35")
    assert await spent_on(db, "2026-03-12") == Decimal(0)

    by_model = await ledger_by_model(db, "2026-03-14")
    assert [(m.provider, m.model, m.cost_usd, m.calls, m.input_tokens, m.output_tokens)
            for m in by_model] == [
        ("anthropic", "claude-sonnet-4-5", Decimal("1"), 1, 1000, 100),
        ("openai_compat", "gpt-4o", Decimal("0.35"), 2, 300, 30),
    ]

    by_day = await ledger_by_day(db, 30, today="2026-03-14")
    assert [(d.day, d.cost_usd, d.calls, d.input_tokens, d.output_tokens) for d in by_day] == [
        ("2026-03-14", Decimal("1.35"), 3, 1300, 130),
        ("2026-03-13", Decimal("2"), 1, 5, 5),
    ]


async def test_a_rolled_back_transaction_records_nothing(db):
    with pytest.raises(RuntimeError):
        async with db.transaction() as conn:
            await record_spend(conn, day="2026-03-14", provider="p", model="m",
                               input_tokens=1, output_tokens=1, cost=Decimal("1"))
            raise RuntimeError("caller failed")
    assert await spent_on(db, "2026-03-14") == Decimal(0)


# --- the budget ------------------------------------------------------------------------


async def test_zero_means_unlimited(db):
    await add(db, "2026-03-14", "openai_compat", "gpt-4o", "500")
    status = await read_spend_budget_status(db, settings(0), now=NOON)
    assert status.unlimited is True and status.exhausted is False
    assert status.remaining_usd is None
    assert status.spent_usd == Decimal(500)
    body = status.model_dump(mode="json", by_alias=True)
    assert body == {"day": "2026-03-14", "spentUsd": 500.0, "ceilingUsd": 0.0,
                    "remainingUsd": None, "unlimited": True, "exhausted": False,
                    "resetsAt": "2026-03-15T00:00:00.000Z"}
    assert (await ensure_budget_available(db, settings(0), now=NOON)).unlimited


async def test_remaining_below_the_ceiling(db):
    await add(db, "2026-03-14", "openai_compat", "gpt-4o", "7.25")
    await add(db, "2026-03-13", "openai_compat", "gpt-4o", "100")  # yesterday does not count
    status = await read_spend_budget_status(db, settings(10), now=NOON)
    assert (status.spent_usd, status.ceiling_usd, status.remaining_usd) == (
        Decimal("7.25"), Decimal(10), Decimal("2.75"))
    assert status.exhausted is False and status.unlimited is False


async def test_exhausted_at_exactly_the_ceiling(db):
    await add(db, "2026-03-14", "openai_compat", "gpt-4o", "24.999999")
    assert not (await read_spend_budget_status(db, settings(25), now=NOON)).exhausted
    await add(db, "2026-03-14", "openai_compat", "gpt-4o", "0.000001")
    status = await read_spend_budget_status(db, settings(25), now=NOON)
    assert status.spent_usd == Decimal(25)
    assert status.exhausted is True and status.remaining_usd == Decimal(0)
    with pytest.raises(BudgetExceededError) as caught:
        await ensure_budget_available(db, settings(25), now=NOON)
    assert (caught.value.code, caught.value.retryable) == ("budget_exceeded", False)


async def test_over_the_ceiling_remaining_is_zero_and_the_next_day_resets(db):
    await add(db, "2026-03-14", "openai_compat", "gpt-4o", "30")
    status = await read_spend_budget_status(db, settings(25), now=NOON)
    assert status.exhausted and status.remaining_usd == Decimal(0)
    tomorrow = datetime(2026, 3, 15, 0, 0, 1, tzinfo=UTC)
    fresh = await read_spend_budget_status(db, settings(25), now=tomorrow)
    assert fresh.day == "2026-03-15" and not fresh.exhausted and fresh.spent_usd == 0


async def test_default_ceiling_is_25(db):
    status = await read_spend_budget_status(db, AppSettings(), now=NOON)
    assert status.ceiling_usd == Decimal(25) and status.remaining_usd == Decimal(25)


# --- MeteredProvider -------------------------------------------------------------------


async def test_metered_provider_records_each_calls_cost(db, llm_server):
    llm_server.set_usage(1_000_000, 100_000)
    inner = OpenAiCompatProvider(base_url=llm_server.openai_base_url, model="gpt-4o",
                                 api_key="k")
    metered = MeteredProvider(inner, db, load_rates())
    assert (metered.name, metered.model, metered.is_offline) == (
        "openai_compat", "gpt-4o", False)

    first = await metered.complete(system="s", user="u")
    second = await metered.complete(system="s", user="u", json_mode=True)

    assert first.cost_usd == Decimal("3.5") == second.cost_usd  # 2.50 + 0.1 x 10.00
    assert metered.calls == 2 and llm_server.calls == 2
    today = utc_day()
    assert await spent_on(db, today) == Decimal(7)
    [row] = await ledger_by_model(db, today)
    assert (row.provider, row.model, row.calls, row.input_tokens, row.output_tokens) == (
        "openai_compat", "gpt-4o", 2, 2_000_000, 200_000)


async def test_metered_spend_survives_a_failing_caller(db, llm_server):
    metered = MeteredProvider(
        AnthropicProvider(model="claude-haiku", api_key="k", base_url=llm_server.url),
        db, load_rates())
    with pytest.raises(RuntimeError):
        await metered.complete(system="s", user="u")
        raise RuntimeError("the stage failed after the paid call")
    assert await spent_on(db, utc_day()) == Decimal("0.00105")  # 100 x 3 + 50 x 15, per M


async def test_metered_failed_calls_record_nothing(db, llm_server):
    llm_server.fail_next(500)
    metered = MeteredProvider(
        OpenAiCompatProvider(base_url=llm_server.openai_base_url, model="gpt-4o"),
        db, load_rates())
    with pytest.raises(LlmUnavailableError):
        await metered.complete(system="s", user="u")
    assert metered.calls == 0 and metered.failures == 1
    assert await spent_on(db, utc_day()) == Decimal(0)


async def test_metered_local_models_cost_nothing_but_are_counted(db, llm_server):
    # The fake listens on 127.0.0.1: a local server, so llama is free.
    metered = MeteredProvider(
        OpenAiCompatProvider(base_url=llm_server.openai_base_url, model="llama3.1:8b"),
        db, load_rates())
    completion = await metered.complete(system="s", user="u")
    assert completion.cost_usd == Decimal(0)
    [row] = await ledger_by_model(db, utc_day())
    assert (row.model, row.calls, row.cost_usd) == ("llama3.1:8b", 1, Decimal(0))


# --- the preflight activity ------------------------------------------------------------


def preflight(run: str, paid_calls: int = 0) -> PreflightInput:
    return PreflightInput(workflow_id=f"prep-{run}", run_id=run, paid_calls=paid_calls)


async def test_check_spend_budget_activity(db, tmp_path):
    paths = AppPaths(tmp_path)
    activities = SpendActivities(db, paths)
    status = await activities.check_spend_budget(preflight("r1"))
    assert status.ceiling_usd == Decimal(25) and not status.exhausted

    paths.settings.write_text(json.dumps({"dailyBudgetUsd": 1}), encoding="utf-8")
    await add(db, utc_day(), "openai_compat", "gpt-4o", "1")
    with pytest.raises(ApplicationError) as caught:
        await activities.check_spend_budget(preflight("r2"))
    assert caught.value.type == "budget_exceeded"
    assert caught.value.non_retryable is True
    assert caught.value.message == "daily spend ceiling: ceiling_reached"
    assert caught.value.details[0]["exhausted"] is True

    paths.settings.write_text(json.dumps({"dailyBudgetUsd": 0}), encoding="utf-8")
    assert (await activities.check_spend_budget(preflight("r3"))).unlimited


async def test_admission_reserves_estimated_cost_so_concurrent_runs_cannot_overrun(db, tmp_path):
    """gpt-4o typical call: 4,000 x $2.50/M + 1,200 x $10/M = $0.022; three calls $0.066."""
    paths = AppPaths(tmp_path)
    activities = SpendActivities(db, paths)

    def configure(budget: str) -> None:
        paths.settings.write_text(json.dumps({
            "dailyBudgetUsd": float(budget),
            "llm": {"provider": "openai_compat", "baseUrl": "http://127.0.0.1:9/v1",
                    "model": "gpt-4o"}}), encoding="utf-8")

    configure("0.05")
    with pytest.raises(ApplicationError) as too_big:
        await activities.check_spend_budget(preflight("a", paid_calls=3))
    assert too_big.value.message.endswith("estimate_exceeds_remaining")

    configure("0.10")
    await activities.check_spend_budget(preflight("b", paid_calls=3))  # reserves $0.066
    with pytest.raises(ApplicationError):
        await activities.check_spend_budget(preflight("c", paid_calls=3))
    # The same run asking again (a replayed preflight) is still admitted.
    await activities.check_spend_budget(preflight("b", paid_calls=3))
    async with db.transaction() as conn:
        await release(conn, "b")
    await activities.check_spend_budget(preflight("c", paid_calls=3))
    # Nothing to pay for: nothing reserved, always admitted below the ceiling.
    await activities.check_spend_budget(preflight("d", paid_calls=0))


async def test_budget_status_round_trips_through_the_temporal_converter(db):
    from temporalio.contrib.pydantic import pydantic_data_converter

    from backend.llm.budget import BudgetStatus

    await add(db, "2026-03-14", "openai_compat", "gpt-4o", "7.25")
    status = await read_spend_budget_status(db, settings(10), now=NOON)
    converter = pydantic_data_converter.payload_converter
    [back] = converter.from_payloads(converter.to_payloads([status]), [BudgetStatus])
    assert back == status
