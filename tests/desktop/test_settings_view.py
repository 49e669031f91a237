"""The Settings view driven as a user would, against the real services.

Edits are typed and clicked; what was saved is read back from the API. The live services
are shared by the desktop tests, so every test restores what it changed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from desktop.client import ApiRequestError
from desktop.tray import SpendTray
from desktop.views.partials.settings_form import field_messages
from desktop.views.settings_view import SettingsView, schedule_text

pytestmark = pytest.mark.desktop

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "_artifacts"


# -- Qt-free parts ---------------------------------------------------------------------------


def test_422_messages_are_split_per_field_even_when_a_reason_has_semicolons():
    error = ApiRequestError(422, "validation_error",
                            "Invalid settings: dailyBudgetUsd: Input should be a valid decimal; "
                            "discoverySchedule.cron: Value error, cron field '61x' is not "
                            "supported; use numbers, names like MON",
                            ["dailyBudgetUsd", "discoverySchedule.cron"])
    messages = field_messages(error)
    assert messages == {
        "dailyBudgetUsd": "Input should be a valid decimal",
        "discoverySchedule.cron": "Cron field '61x' is not supported; use numbers, names like MON",
    }


def test_schedule_text_never_makes_up_a_time():
    assert schedule_text(None, "not available") == "Next run: unknown (not available)"
    assert schedule_text({"enabled": False}, None) == "Scheduled discovery is off."
    assert schedule_text({"enabled": True, "state": "unknown", "reason": "temporal_unreachable",
                          "nextRunTimes": None}, None) == \
        "Next run: unknown (temporal unreachable)"
    shown = schedule_text({"enabled": True, "state": "active",
                           "nextRunTimes": ["2030-01-07T08:00:00Z"]}, None)
    assert shown.startswith("Next run: ") and shown.endswith("(your time)")


# -- live ------------------------------------------------------------------------------------


def api(qtbot, qloop, coroutine):
    """Await one API call on the qasync loop from the synchronous test body."""
    task = qloop.create_task(coroutine)
    qtbot.waitUntil(task.done, timeout=30_000)
    return task.result()


@pytest.fixture
def view(qtbot, live_controller):
    view = SettingsView(live_controller)
    qtbot.addWidget(view)
    view.resize(900, 1400)
    with qtbot.waitSignal(view.refreshed, timeout=30_000):
        view.show()
    return view


def replace_text(qtbot, edit, text: str) -> None:
    edit.selectAll()
    qtbot.keyClick(edit, Qt.Key.Key_Delete)
    qtbot.keyClicks(edit, text)


@pytest.mark.integration
def test_the_form_shows_the_saved_settings(view):
    assert view.budget.text() == "25"
    assert view.provider.currentData() == "offline"
    assert not view.model.isEnabled()  # offline needs no model
    assert view.sources.table.rowCount() >= 1
    assert view.sources.table.item(0, 1).text() == "Demo board"
    assert view.cron.text() == "0 8 * * 1-5" and not view.schedule_enabled.isChecked()
    assert view.next_run.text() == "Scheduled discovery is off."
    assert "never shown again" in view.api_key.placeholderText()
    assert not view.dirty


@pytest.mark.integration
def test_editing_the_budget_saves_it_and_the_tray_tooltip_follows(qtbot, qloop, view,
                                                                  live_controller):
    tray = SpendTray(live_controller)
    with qtbot.waitSignal(tray.status.changed, timeout=30_000):
        tray.status.refresh()
    assert " of $25.00 today" in tray.tooltip()
    try:
        replace_text(qtbot, view.budget, "40")
        assert view.dirty and view.status.text() == "Unsaved changes."
        with qtbot.waitSignal(view.saved, timeout=30_000):
            qtbot.mouseClick(view.save_button, Qt.MouseButton.LeftButton)
        assert view.status.text() == "Saved."
        saved = api(qtbot, qloop, live_controller.client.settings())
        assert saved["dailyBudgetUsd"] == 40
        qtbot.waitUntil(lambda: " of $40.00 today" in tray.tooltip(), timeout=30_000)
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shot = ARTIFACTS / "settings-view.png"
        assert view.grab().save(str(shot))  # docs/screenshots gets a copy by hand
    finally:
        api(qtbot, qloop, live_controller.client.patch_settings(dailyBudgetUsd=25))


@pytest.mark.integration
def test_an_invalid_cron_shows_inline_and_saves_nothing(qtbot, qloop, view, live_controller):
    before = api(qtbot, qloop, live_controller.client.settings())
    replace_text(qtbot, view.budget, "30")          # a valid edit in the same save
    replace_text(qtbot, view.cron, "61 * * * *")
    with qtbot.waitSignal(view.save_failed, timeout=30_000):
        qtbot.mouseClick(view.save_button, Qt.MouseButton.LeftButton)
    cron_error = view.errors["discoverySchedule.cron"]
    assert cron_error.isVisible()
    assert "61" in cron_error.text() or "cron" in cron_error.text().lower()
    assert not view.errors["dailyBudgetUsd"].isVisible()
    assert view.status.text() == "Nothing was saved: fix the highlighted fields."
    after = api(qtbot, qloop, live_controller.client.settings())
    assert after == before  # the budget was not saved either
    assert view.cron.text() == "61 * * * *"  # the user's typing is kept to fix it
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    view.grab().save(str(ARTIFACTS / "settings-view-invalid.png"))
    # Undo puts the saved values back and clears the messages.
    qtbot.mouseClick(view.revert_button, Qt.MouseButton.LeftButton)
    assert view.cron.text() == before["discoverySchedule"]["cron"]
    assert not cron_error.isVisible()


@pytest.mark.integration
def test_an_invalid_budget_and_an_invalid_source_are_refused_inline(qtbot, qloop, view,
                                                                    live_controller):
    before = api(qtbot, qloop, live_controller.client.settings())
    replace_text(qtbot, view.budget, "lots")
    view.sources.kind.setCurrentIndex(view.sources.kind.findData("greenhouse"))
    qtbot.keyClicks(view.sources.value, "not a token!")
    qtbot.mouseClick(view.sources.add_button, Qt.MouseButton.LeftButton)
    assert view.sources.table.rowCount() == len(before["sources"]) + 1
    with qtbot.waitSignal(view.save_failed, timeout=30_000):
        qtbot.mouseClick(view.save_button, Qt.MouseButton.LeftButton)
    assert view.errors["dailyBudgetUsd"].isVisible()
    assert view.errors["sources"].isVisible()
    assert api(qtbot, qloop, live_controller.client.settings()) == before
    qtbot.mouseClick(view.revert_button, Qt.MouseButton.LeftButton)
    assert view.sources.table.rowCount() == len(before["sources"])


@pytest.mark.integration
def test_adding_and_removing_a_source_round_trips(qtbot, qloop, view, live_controller):
    before = api(qtbot, qloop, live_controller.client.settings())
    try:
        view.sources.kind.setCurrentIndex(view.sources.kind.findData("lever"))
        qtbot.keyClicks(view.sources.value, "globex")
        qtbot.keyClick(view.sources.value, Qt.Key.Key_Return)
        # Untick the new source so no Discover in another test would try to fetch it.
        row = view.sources.table.rowCount() - 1
        view.sources.table.item(row, 0).setCheckState(Qt.CheckState.Unchecked)
        with qtbot.waitSignal(view.saved, timeout=30_000):
            qtbot.mouseClick(view.save_button, Qt.MouseButton.LeftButton)
        saved = api(qtbot, qloop, live_controller.client.settings())
        added = saved["sources"][-1]
        assert (added["kind"], added["id"], added["company"], added["enabled"]) == (
            "lever", "lever-globex", "globex", False)
        view.sources.table.selectRow(view.sources.table.rowCount() - 1)
        qtbot.mouseClick(view.sources.remove_button, Qt.MouseButton.LeftButton)
        with qtbot.waitSignal(view.saved, timeout=30_000):
            qtbot.mouseClick(view.save_button, Qt.MouseButton.LeftButton)
        assert api(qtbot, qloop, live_controller.client.settings())["sources"] == \
            before["sources"]
    finally:
        api(qtbot, qloop, live_controller.client.patch_settings(sources=before["sources"]))


@pytest.mark.integration
def test_test_connection_reports_offline_and_a_bad_endpoint(qtbot, view):
    with qtbot.waitSignal(view.llm_tested, timeout=30_000) as tested:
        qtbot.mouseClick(view.test_button, Qt.MouseButton.LeftButton)
    assert tested.args[0]["offline"] is True
    assert view.test_result.text().startswith("Offline scoring works")
    # An OpenAI-compatible model without a model name: told where, nothing saved.
    view.provider.setCurrentIndex(view.provider.findData("openai_compat"))
    replace_text(qtbot, view.base_url, "http://127.0.0.1:9/v1")
    with qtbot.waitSignal(view.llm_tested, timeout=30_000) as tested:
        qtbot.mouseClick(view.test_button, Qt.MouseButton.LeftButton)
    assert isinstance(tested.args[0], ApiRequestError)
    assert tested.args[0].code == "llm_not_configured"
    assert view.errors["llm.model"].isVisible()


@pytest.mark.integration
def test_the_profile_saves_on_its_own_and_refuses_a_bad_salary_floor(qtbot, qloop, view,
                                                                      live_controller):
    before = api(qtbot, qloop, live_controller.client.profile())["profile"]
    # The first save stores the shown profile (a fresh app folder has none stored yet);
    # saving again without an edit changes nothing.
    for _ in range(2):
        with qtbot.waitSignal(view.profile_saved, timeout=30_000) as answer:
            qtbot.mouseClick(view.save_profile_button, Qt.MouseButton.LeftButton)
    assert answer.args[0]["changed"] is False
    assert answer.args[0]["profile"] == before  # the form round-trips the profile exactly
    assert view.profile_status.text() == "Profile saved (nothing had changed)."
    replace_text(qtbot, view.profile_editor.salary_floor, "lots")
    with qtbot.waitSignal(view.profile_saved, timeout=30_000) as answer:
        qtbot.mouseClick(view.save_profile_button, Qt.MouseButton.LeftButton)
    assert isinstance(answer.args[0], ApiRequestError)
    assert view.profile_editor.errors["salaryFloor"].isVisible()
    assert api(qtbot, qloop, live_controller.client.profile())["profile"] == before


@pytest.mark.integration
def test_a_refetch_keeps_unsaved_edits(qtbot, view):
    replace_text(qtbot, view.budget, "33")
    with qtbot.waitSignal(view.refreshed, timeout=30_000):
        view.refresh()
    assert view.budget.text() == "33" and view.dirty
