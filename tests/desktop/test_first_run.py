"""The first minutes of a new user, against real services on a fresh app folder: the
Pipelines view asks for the candidate profile (Discover alone only finds postings), its
button opens Settings at the profile, and the notice goes once a profile is saved; the
Sources box shows no empty progress bar before any run.

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
from desktop.views.pipelines_view import PROFILE_NOTICE_TITLE

pytestmark = [pytest.mark.desktop, pytest.mark.integration]

ARTIFACTS = Path(__file__).resolve().parents[1] / "_artifacts"
PROFILE = {"name": "Ada Lovelace", "skills": ["Python", "SQL"],
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
        # A fresh folder: no profile, so the notice is there, next to Discover.
        assert pipelines.profile_notice.isVisible()
        assert pipelines.discover_box.isAncestorOf(pipelines.profile_notice)
        assert PROFILE_NOTICE_TITLE in pipelines.profile_notice_text.text()
        assert PROFILE_NOTICE_TITLE.startswith("Add your profile so JobCtrl can score")
        # No run yet: the text says so, and no empty bar pretends to measure something.
        assert pipelines.family_text.text() == "No Discover run yet."
        assert not pipelines.family_bar.isVisible()
        _grab(window, "first-run-pipelines.png")

        # The button opens Settings with "Your profile" in view and the cursor in Name.
        window.activateWindow()
        qtbot.mouseClick(pipelines.profile_button, Qt.MouseButton.LeftButton)
        assert window.tabs.currentWidget() is settings
        assert _inside_viewport(settings.scroll, settings.profile_box)
        assert settings.scroll.verticalScrollBar().value() > 0  # it scrolled down to it
        qtbot.waitUntil(settings.profile_editor.inputs["name"].hasFocus, timeout=5_000)
        _grab(window, "first-run-settings-profile.png")

        # Saved through the API while Pipelines is on screen: the profile event reaches
        # the view over the stream and it drops the notice (its idle poll is 60 s away).
        window.show_view("pipelines")
        qtbot.waitUntil(lambda: not (pipelines.stale or pipelines.refreshing),
                        timeout=30_000)
        events: list[str] = []
        controller.event_received.connect(lambda event: events.append(event.type))
        _put_profile(qtbot, controller)
        qtbot.waitUntil(lambda: pipelines.profile_saved is True, timeout=30_000)
        assert not pipelines.profile_notice.isVisible()
        assert "CandidateProfileUpdated" in events
    finally:
        with qtbot.waitSignal(controller.stopped, timeout=60_000):
            controller.shutdown()


def _grab(window: MainWindow, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    QApplication.processEvents()  # settle pending layout requests before the picture
    assert window.grab().save(str(ARTIFACTS / name))
