"""Spend view: the plain helpers, then the view against the real services (today vs the
ceiling, 30 days, by model, editing the ceiling with inline validation, the banner)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from backend.config import AppPaths
from backend.store.spend import utc_day
from desktop.views.spend_view import WHAT_STOPS, SpendView, day_series, fill_tone, parse_ceiling
from tests.app_db import connect_db

ARTIFACTS = Path(__file__).resolve().parents[1] / "_artifacts"


@pytest.mark.desktop
def test_ceiling_input_is_checked_before_anything_is_sent():
    assert parse_ceiling("25") == (Decimal("25"), None)
    assert parse_ceiling(" $1,250.50 ") == (Decimal("1250.50"), None)
    assert parse_ceiling("0") == (Decimal("0"), None)
    for text, words in (("", "Enter an amount"), ("abc", "not an amount"),
                        ("-1", "cannot be negative"), ("100001", "largest ceiling"),
                        ("2.345", "two decimals"), ("nan", "cannot be negative")):
        value, problem = parse_ceiling(text)
        assert value is None and words in problem, (text, problem)


@pytest.mark.desktop
def test_thirty_days_oldest_first_and_the_bar_tone():
    series = day_series([{"day": "2026-03-30", "costUsd": 2.5}], "2026-03-31")
    assert len(series) == 30 and series[0][0] == "2026-03-02" and series[-1][0] == "2026-03-31"
    assert series[-2] == ("2026-03-30", 2.5) and series[-1] == ("2026-03-31", 0.0)
    assert fill_tone({"unlimited": True}) == "ok"
    assert fill_tone({"unlimited": False, "exhausted": False, "spentUsd": 9, "ceilingUsd": 10}) \
        == "busy"
    assert fill_tone({"unlimited": False, "exhausted": True, "spentUsd": 10,
                      "ceilingUsd": 10}) == "bad"


# -- against the live services ------------------------------------------------------------

def seed_ledger(app_dir: Path) -> None:
    """Model calls as the worker records them (an UPSERT per day, provider and model)."""
    now = datetime.now(UTC)
    rows = [(utc_day(now - timedelta(days=back)), "openai_compat", "gpt-4o-mini", 3, 9000, 1500,
             micro) for back, micro in ((12, 900_000), (6, 2_400_000), (2, 1_700_000),
                                        (1, 3_100_000))]
    rows += [(utc_day(now), "openai_compat", "gpt-4o-mini", 8, 24_000, 4_000, 2_250_000),
             (utc_day(now), "anthropic", "claude-haiku-4-5", 2, 5_000, 900, 950_000)]
    with connect_db(AppPaths(app_dir).database) as conn:
        conn.executemany(
            "INSERT INTO llm_spend (tenant_id, day, provider, model, calls, input_tokens,"
            " output_tokens, cost_micro_usd, updated_at) VALUES ('local', ?, ?, ?, ?, ?, ?, ?,"
            " '2026-01-01T00:00:00.000Z') ON CONFLICT (tenant_id, day, provider, model)"
            " DO UPDATE SET cost_micro_usd = excluded.cost_micro_usd", rows)


def save_ceiling(qtbot, view: SpendView, text: str) -> None:
    view.ceiling_edit.clear()
    qtbot.keyClicks(view.ceiling_edit, text)
    qtbot.mouseClick(view.save_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.ceiling_message.text().startswith("Saved"), timeout=15_000)


@pytest.mark.desktop
@pytest.mark.integration
def test_spend_shows_the_ledger_and_saves_the_ceiling(qtbot, live_controller):
    app_dir = Path(live_controller.info.app_dir)
    seed_ledger(app_dir)
    view = SpendView(live_controller)
    qtbot.addWidget(view)
    view.resize(1000, 600)
    with qtbot.waitSignal(view.refreshed, timeout=15_000):
        view.show()
    today = view.overview["today"]
    assert Decimal(str(today["spentUsd"])) >= Decimal("3.20")
    assert f"${Decimal(str(today['spentUsd'])):,.2f}" in view.spent_label.text()
    two_days_ago = utc_day(datetime.now(UTC) - timedelta(days=2))
    assert (two_days_ago, 1.7) in view.chart.series
    assert {"openai_compat/gpt-4o-mini", "anthropic/claude-haiku-4-5"} <= set(view.models.keys())
    assert not view.banner.isVisible()

    try:
        # Inline validation: nothing is sent for a bad amount.
        view.ceiling_edit.setFocus()
        view.ceiling_edit.clear()
        qtbot.keyClicks(view.ceiling_edit, "abc")
        assert "not an amount" in view.ceiling_message.text()
        assert not view.save_button.isEnabled()
        view.ceiling_edit.clear()
        qtbot.keyClicks(view.ceiling_edit, "-3")
        assert "negative" in view.ceiling_message.text()

        with qtbot.waitSignal(view.refreshed, timeout=15_000):
            save_ceiling(qtbot, view, "30.50")
        assert view.ceiling_message.text() == "Saved: $30.50 a day."
        qtbot.waitUntil(lambda: "of $30.50" in view.spent_label.text(), timeout=15_000)
        settings: list = []
        live_controller.call(lambda c: c.settings(), settings.append, settings.append)
        qtbot.waitUntil(lambda: bool(settings), timeout=10_000)
        assert settings[0]["dailyBudgetUsd"] == 30.5
        ARTIFACTS.mkdir(exist_ok=True)
        assert view.grab().save(str(ARTIFACTS / "spend-view.png"))

        # A ceiling below today's spend: the banner says what stops.
        save_ceiling(qtbot, view, "1")
        qtbot.waitUntil(lambda: view.banner.isVisible(), timeout=15_000)
        assert "used up" in view.banner.text() and WHAT_STOPS in view.banner.text()
        assert view.bar.tone == "bad"
        assert view.grab().save(str(ARTIFACTS / "spend-view-exhausted.png"))

        save_ceiling(qtbot, view, "0")
        qtbot.waitUntil(lambda: "no daily limit" in view.spent_label.text(), timeout=15_000)
        assert not view.banner.isVisible() and view.bar.fraction is None
    finally:
        done: list = []
        live_controller.call(lambda c: c.patch_settings(dailyBudgetUsd=25), done.append,
                             done.append)
        qtbot.waitUntil(lambda: bool(done), timeout=10_000)
