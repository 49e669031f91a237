"""The Settings view driven as a user would, against the real services.

Edits are typed and clicked; what was saved is read back from the API. The live services
are shared by the desktop tests, so every test restores what it changed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTime
from PySide6.QtWidgets import QPushButton

from desktop.client import ApiRequestError
from desktop.presenters.schedule import EVERY_DAY, SchedulePick, cron_from_pick, pick_from_cron
from desktop.tray import SpendTray
from desktop.views.partials import profile_import
from desktop.views.partials.settings_form import field_messages
from desktop.views.settings_view import SettingsView, budget_field_text, schedule_text

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


def test_the_budget_field_shows_the_saved_ceiling_to_the_last_digit():
    """Rounded to cents, a 0.132 ceiling would be saved back as 0.13 with any other edit."""
    assert [budget_field_text(value) for value in (25, 25.0, "12.50", 0.132, None)] == \
        ["25", "25", "12.5", "0.132", ""]


# -- live ------------------------------------------------------------------------------------


def api(qtbot, qloop, coroutine):
    """Await one API call on the qasync loop from the synchronous test body."""
    task = qloop.create_task(coroutine)
    qtbot.waitUntil(task.done, timeout=30_000)
    return task.result()


@pytest.fixture
def profile_view(qtbot, live_controller):
    """The Settings view as it opens: on "Your profile"."""
    view = SettingsView(live_controller)
    qtbot.addWidget(view)
    view.resize(900, 1400)
    with qtbot.waitSignal(view.refreshed, timeout=30_000):
        view.show()
    return view


@pytest.fixture
def view(profile_view):
    """The Settings view on its App settings page."""
    profile_view.show_page("settings")
    return profile_view


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
    assert view.schedule.cron() == "0 8 * * 1-5" and not view.schedule_enabled.isChecked()
    assert view.schedule.pick() == pick_from_cron("0 8 * * 1-5")  # in this machine's zone
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
def test_a_picked_schedule_is_saved_as_its_utc_cron(qtbot, qloop, view, live_controller):
    before = api(qtbot, qloop, live_controller.client.settings())
    try:
        picker = view.schedule
        picker.days_choice.setCurrentIndex(picker.days_choice.findData("every_day"))
        picker.time.setTime(QTime(7, 30))
        assert view.dirty
        assert picker.summary.text().startswith("Every day at 07:30, your time")
        with qtbot.waitSignal(view.saved, timeout=30_000):
            qtbot.mouseClick(view.save_button, Qt.MouseButton.LeftButton)
        saved = api(qtbot, qloop, live_controller.client.settings())["discoverySchedule"]
        assert saved["cron"] == cron_from_pick(SchedulePick(EVERY_DAY, 7, 30))  # this zone, now
        assert picker.pick() == SchedulePick(EVERY_DAY, 7, 30)  # read back as picked
    finally:
        api(qtbot, qloop, live_controller.client.patch_settings(
            discoverySchedule=before["discoverySchedule"]))


@pytest.mark.integration
def test_a_custom_cron_is_shown_in_local_time_and_kept(qtbot, qloop, view, live_controller):
    before = api(qtbot, qloop, live_controller.client.settings())
    try:
        api(qtbot, qloop, live_controller.client.patch_settings(
            discoverySchedule={"cron": "0 8,18 * * *"}))
        with qtbot.waitSignal(view.refreshed, timeout=30_000):
            view.refresh()
        picker = view.schedule
        assert picker.days_choice.currentData() == "custom"
        assert picker.summary.text().startswith("Custom schedule: next runs ")
        replace_text(qtbot, view.budget, "26")  # another edit, saved with it
        with qtbot.waitSignal(view.saved, timeout=30_000):
            qtbot.mouseClick(view.save_button, Qt.MouseButton.LeftButton)
        saved = api(qtbot, qloop, live_controller.client.settings())
        assert saved["discoverySchedule"]["cron"] == "0 8,18 * * *"  # never silently changed
        assert saved["dailyBudgetUsd"] == 26
    finally:
        api(qtbot, qloop, live_controller.client.patch_settings(
            discoverySchedule=before["discoverySchedule"], dailyBudgetUsd=25))


@pytest.mark.integration
def test_an_invalid_budget_and_an_invalid_source_are_refused_inline(qtbot, qloop, view,
                                                                    live_controller):
    before = api(qtbot, qloop, live_controller.client.settings())
    replace_text(qtbot, view.budget, "lots")
    view.sources.kind.setCurrentIndex(view.sources.kind.findData("feed"))
    qtbot.keyClicks(view.sources.value, "not a feed address")
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
        assert view.sources.kind.currentData() == "link"  # pasting a link is the default
        qtbot.keyClicks(view.sources.value, "https://jobs.lever.co/globex/0f1e2d3c/apply")
        qtbot.keyClick(view.sources.value, Qt.Key.Key_Return)
        assert view.sources.feedback.text() == "Added globex (Lever). Save settings to keep it."
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


def save_profile(qtbot, page):
    with qtbot.waitSignal(page.saved, timeout=30_000) as answer:
        qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
    return answer.args[0]


@pytest.mark.integration
def test_the_profile_has_its_own_page_and_one_save(profile_view):
    page = profile_view.profile_page
    assert profile_view.pages.currentWidget() is page  # the profile first
    saves = [b.text() for b in page.findChildren(QPushButton) if b.text().startswith("Save")]
    assert saves == ["Save profile"]
    assert not profile_view.save_button.isVisible()  # the settings' Save is on the other page
    profile_view.show_page("settings")
    assert profile_view.save_button.isVisible() and not page.save_button.isVisible()


@pytest.mark.integration
def test_the_profile_round_trips_and_refuses_a_bad_salary_floor(qtbot, qloop, profile_view,
                                                                live_controller):
    page = profile_view.profile_page
    before = api(qtbot, qloop, live_controller.client.profile())["profile"]
    # The shared services may have taken another test's profile save after the view read
    # it; the view refetches on CandidateProfileUpdated, so wait until it shows the stored one.
    def facts(profile: dict) -> tuple:  # what tells one stored profile from another
        name = ((profile.get("resume") or {}).get("basics") or {}).get("name")
        return (name, *(profile.get(key) or None for key in (
            "targetTitles", "locations", "salaryFloor", "workAuthorization")))

    def shows_stored() -> bool:
        return facts(profile_view.profile_editor.loaded()) == facts(before)

    qtbot.waitUntil(shows_stored, timeout=30_000)
    # The first save stores the shown profile (a fresh app folder has none stored yet);
    # saving again without an edit changes nothing.
    save_profile(qtbot, page)
    answer = save_profile(qtbot, page)
    assert answer["changed"] is False
    assert answer["profile"] == before  # the form round-trips the profile exactly
    assert page.status.text() == "Profile saved (nothing had changed)."
    replace_text(qtbot, profile_view.profile_editor.input("salaryFloor"), "lots")
    assert isinstance(save_profile(qtbot, page), ApiRequestError)
    assert profile_view.profile_editor.preferences.errors["salaryFloor"].isVisible()
    assert page.status.text().startswith("The profile was not saved: fix the marked fields.")
    assert api(qtbot, qloop, live_controller.client.profile())["profile"] == before
    qtbot.mouseClick(page.discard_button, Qt.MouseButton.LeftButton)
    floor = before.get("salaryFloor")
    assert profile_view.profile_editor.input("salaryFloor").text() == ("" if floor is None
                                                                     else str(floor))


RESUME_TEXT = """Grace Example
Compiler Engineer
grace@example.org

EXPERIENCE
Staff Engineer, Initech — 2019 – present
- Led the compiler team
- Cut build times by 40%

SKILLS
Rust, LLVM, Python
"""


@pytest.mark.integration
def test_an_imported_resume_is_a_draft_until_saved(qtbot, qloop, profile_view, live_controller,
                                                   tmp_path, monkeypatch):
    page = profile_view.profile_page
    before = api(qtbot, qloop, live_controller.client.profile())
    resume = tmp_path / "grace.txt"
    resume.write_text(RESUME_TEXT, encoding="utf-8")
    monkeypatch.setattr(profile_import, "choose_resume_file", lambda parent: resume)
    with qtbot.waitSignal(page.draft_opened, timeout=30_000):
        qtbot.mouseClick(page.import_button, Qt.MouseButton.LeftButton)
    assert page.draft_banner.isVisible()
    assert page.draft_banner.message.text().startswith("<b>Imported from grace.txt — check each "
                                                       "section, then Save.")
    assert profile_view.profile_editor.input("resume.basics.name").text() == "Grace Example"
    assert api(qtbot, qloop, live_controller.client.profile()) == before  # nothing saved
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    profile_view.grab().save(str(ARTIFACTS / "profile-draft.png"))
    qtbot.mouseClick(page.discard_button, Qt.MouseButton.LeftButton)
    assert profile_view.profile_editor.profile() == before["profile"]
    assert not page.draft_banner.isVisible()


@pytest.mark.integration
def test_a_refused_file_says_why_and_changes_nothing(qtbot, qloop, profile_view, live_controller,
                                                     tmp_path, monkeypatch):
    page = profile_view.profile_page
    shown = profile_view.profile_editor.profile()
    picture = tmp_path / "photo.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(64))
    monkeypatch.setattr(profile_import, "choose_resume_file", lambda parent: picture)
    qtbot.mouseClick(page.import_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: page.status.text().startswith("Could not import photo.png:"),
                    timeout=30_000)
    assert page.status.text().endswith("Nothing was changed.")
    assert not page.draft_banner.isVisible()
    assert profile_view.profile_editor.profile() == shown


@pytest.mark.integration
def test_the_sample_profile_is_marked_and_exports_as_json_resume(qtbot, qloop, profile_view,
                                                                 live_controller, tmp_path,
                                                                 monkeypatch):
    page = profile_view.profile_page
    before = api(qtbot, qloop, live_controller.client.profile())["profile"]
    try:
        with qtbot.waitSignal(page.draft_opened, timeout=30_000):
            page.importer.import_sample("settings")
        assert "Sample profile loaded — not yours" in page.draft_banner.message.text()
        answer = save_profile(qtbot, page)
        assert answer["profile"]["sample"] is True
        assert page.sample_banner.isVisible()
        assert "Sample profile — not yours" in page.sample_text.text()

        target = tmp_path / "sample.json"
        monkeypatch.setattr(profile_import, "choose_export_path", lambda parent, name: target)
        with qtbot.waitSignal(page.exported, timeout=30_000) as exported:
            qtbot.mouseClick(page.export_button, Qt.MouseButton.LeftButton)
        assert exported.args[0] == target
        document = json.loads(target.read_text(encoding="utf-8"))
        assert document["basics"]["name"] == answer["profile"]["resume"]["basics"]["name"]
        assert "sample" not in document and "targetTitles" not in document
    finally:
        api(qtbot, qloop, live_controller.client.put_profile(before))


@pytest.mark.integration
def test_a_refetch_keeps_unsaved_edits(qtbot, view):
    replace_text(qtbot, view.budget, "33")
    with qtbot.waitSignal(view.refreshed, timeout=30_000):
        view.refresh()
    assert view.budget.text() == "33" and view.dirty
