"""The window's first frame holds no view: each tab's view is built the first time it is
shown (or asked for), in place of a "Starting…" placeholder, and stays the same tab."""

from __future__ import annotations

import pytest

from desktop.shell import ShellController
from desktop.views.main_window import STARTING_TEXT, VIEW_TABS, MainWindow, ViewSlot

pytestmark = pytest.mark.desktop


def lazy_window(qtbot, app_dir) -> MainWindow:
    window = MainWindow(ShellController(app_dir), lazy_first_view=True)
    window.setMinimumSize(320, 240)
    qtbot.addWidget(window)
    return window


def test_the_first_frame_shows_every_tab_and_builds_no_view(qtbot, tmp_path):
    window = lazy_window(qtbot, tmp_path)
    with qtbot.waitSignal(window.first_frame_painted, timeout=10_000):
        window.show()
    assert window.views.built == {}
    assert [window.tabs.tabText(i) for i in range(window.tabs.count())] == [
        tab.title for tab in VIEW_TABS]
    current = window.tabs.currentWidget()
    assert isinstance(current, ViewSlot) and current.text() == STARTING_TEXT
    assert window.service_states == {} and window.status_line.plain_text() == "Starting…"
    assert not window.menu_actions.refresh.isEnabled()  # nothing fetched, nothing to refresh


def test_a_tab_is_built_when_first_shown_and_only_then(qtbot, tmp_path):
    window = lazy_window(qtbot, tmp_path)
    window.show()
    pipelines = window.build_current_view()
    assert list(window.views.built) == ["pipelines"]
    assert window.tabs.currentWidget() is pipelines

    runs_index = [tab.key for tab in VIEW_TABS].index("runs")
    window.tabs.setCurrentIndex(runs_index)  # what a click on the tab does
    assert set(window.views.built) == {"pipelines", "runs"}
    runs = window.views.built["runs"]
    assert window.tabs.currentWidget() is runs and window.tabs.indexOf(runs) == runs_index
    assert window.tabs.count() == len(VIEW_TABS)
    assert window.current_view_key == "runs"
    assert window.menu_actions.refresh.isEnabled()  # a live view is on screen now

    window.tabs.setCurrentIndex(runs_index - 1)
    window.tabs.setCurrentIndex(runs_index)
    assert window.views.built["runs"] is runs  # built once


def test_asking_for_a_hidden_view_builds_it_behind_the_current_tab(qtbot, tmp_path):
    window = lazy_window(qtbot, tmp_path)
    window.show()
    window.build_current_view()
    settings = window.views["settings"]  # e.g. a dropped résumé needs its importer
    assert window.current_view_key == "pipelines"
    assert window.tabs.indexOf(settings) == [tab.key for tab in VIEW_TABS].index("settings")
    assert "jobs" not in window.views.built


def test_the_remembered_tab_opens_but_is_built_only_after_the_first_frame(qtbot, tmp_path):
    first = lazy_window(qtbot, tmp_path)
    first.show()
    first.show_view("spend")
    first.save_state()
    second = lazy_window(qtbot, tmp_path)
    assert second.current_view_key == "spend" and second.views.built == {}
    second.show()
    assert second.build_current_view() is second.views.built["spend"]
    assert list(second.views.built) == ["spend"]
