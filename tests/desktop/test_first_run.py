"""The first minutes of a new user, against real services on a fresh app folder: the
Pipelines view's first-run panel asks for the candidate profile (Discover alone only finds
postings) three ways — import a résumé, try the sample, type it in; "Type it in myself"
opens Settings at the profile; the sample opens as a draft, and once saved the panel
becomes a "sample profile" marker; a real profile makes it go. The Sources box shows no
empty progress bar before any run.

A dedicated Supervisor (through the window's own ShellController) on a new app folder:
the session's ``live_services`` may already hold a profile saved by other tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from desktop.shell import ShellController
from desktop.views.main_window import MainWindow
from desktop.views.partials.profile_prompt import PROFILE_NOTICE_TITLE

pytestmark = [pytest.mark.desktop, pytest.mark.integration]

ARTIFACTS = Path(__file__).resolve().parents[1] / "_artifacts"
PROFILE = {"resume": {"basics": {"name": "Ada Lovelace"},
                      "skills": [{"name": "Backend", "keywords": ["Python", "SQL"]}]},
           "targetTitles": ["Backend Engineer"]}


def _inside_viewport(scroll, widget) -> bool:
    viewport = scroll.viewport()
    top_left = widget.mapTo(viewport, widget.rect().topLeft())
    return viewport.rect().contains(top_left)


def _put_profile(qtbot, controller: ShellController) -> None:
    answers: list = []
    controller.call(lambda client: client.put_profile(PROFILE), answers.append, answers.append,
                    name="test-profile-save")
    qtbot.waitUntil(lambda: bool(answers), timeout=30_000)
    assert isinstance(answers[0], dict) and answers[0]["revision"] >= 1, answers[0]


def test_a_first_run_asks_for_the_profile_until_one_is_saved(qtbot, qloop, tmp_path):
    app_dir = tmp_path / "app"
    app_dir.mkdir()
    controller = ShellController(app_dir, temporal_ui=False)
    window = MainWindow(controller)
    qtbot.addWidget(window)
    window.resize(1240, 860)
    window.show()
    pipelines = window.views["pipelines"]
    settings = window.views["settings"]
    try:
        controller.start()
        qtbot.waitUntil(lambda: pipelines.profile_saved is False, timeout=120_000)
        # A fresh folder: no profile, so the first-run panel is there, next to Discover.
        prompt = pipelines.profile_notice
        assert prompt.isVisible()
        assert pipelines.discover_box.isAncestorOf(prompt)
        assert PROFILE_NOTICE_TITLE in prompt.text.text()
        assert PROFILE_NOTICE_TITLE.startswith("Add your profile so JobCtrl can score")
        assert all(button.isVisible() for button in
                   (prompt.import_button, prompt.sample_button, prompt.type_button))
        # No run yet: the text says so, and no bar pretends to measure something (it is
        # busy only while the worker's first report has not proven it idle).
        assert pipelines.details.family_text.text() == "No Discover run yet."
        assert pipelines.summary.state in ("idle", "checking")
        assert pipelines.headline.bar_fraction is None
        assert pipelines.headline.bar.isVisible() is (pipelines.summary.state == "checking")
        _grab(window, "first-run-pipelines.png")

        # "Type it in myself" opens Settings on Your profile, the cursor in Name.
        window.activateWindow()
        qtbot.mouseClick(prompt.type_button, Qt.MouseButton.LeftButton)
        assert window.tabs.currentWidget() is settings
        assert settings.pages.currentWidget() is settings.profile_page
        name_input = settings.profile_editor.input("resume.basics.name")
        qtbot.waitUntil(name_input.hasFocus, timeout=5_000)
        _grab(window, "first-run-settings-profile.png")

        # "Try it with a sample profile": a draft to review in Settings; saved, the panel
        # turns into the sample marker.
        window.show_view("pipelines")
        page = settings.profile_page
        with qtbot.waitSignal(page.draft_opened, timeout=30_000):
            qtbot.mouseClick(prompt.sample_button, Qt.MouseButton.LeftButton)
        assert window.tabs.currentWidget() is settings
        assert page.draft_banner.isVisible()
        assert name_input.text()  # the sample's name
        _grab(window, "first-run-sample-draft.png")
        with qtbot.waitSignal(page.saved, timeout=30_000) as saved:
            qtbot.mouseClick(page.save_button, Qt.MouseButton.LeftButton)
        assert saved.args[0]["profile"]["sample"] is True
        window.show_view("pipelines")
        qtbot.waitUntil(lambda: prompt.state == "sample", timeout=30_000)
        assert prompt.isVisible() and not prompt.sample_button.isVisible()
        assert prompt.text.text().startswith("<b>Using the sample profile (")

        # Saved through the API while Pipelines is on screen: the profile event reaches
        # the view over the stream and it drops the notice (its idle poll is 60 s away).
        window.show_view("pipelines")
        qtbot.waitUntil(lambda: not (pipelines.stale or pipelines.refreshing),
                        timeout=30_000)
        events: list[str] = []
        controller.event_received.connect(lambda event: events.append(event.type))
        _put_profile(qtbot, controller)
        qtbot.waitUntil(lambda: prompt.state == "real", timeout=30_000)
        assert not prompt.isVisible()
        assert "CandidateProfileUpdated" in events
    finally:
        with qtbot.waitSignal(controller.stopped, timeout=60_000):
            controller.shutdown()


def _grab(window: MainWindow, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    QApplication.processEvents()  # settle pending layout requests before the picture
    assert window.grab().save(str(ARTIFACTS / name))
