"""Desktop basics: the window remembers its size, position and last view (privately, on a
screen that is still there), and its menu bar carries the platform's shortcuts.

Offscreen Qt has one 800x600 screen, narrower than the window's minimum width (it is
laid out for 900x600): the windows here get a smaller minimum so that the geometries
below fit inside that screen.
"""

from __future__ import annotations

import json
import stat

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QKeySequence
from PySide6.QtWidgets import QApplication

from desktop.app import DesktopShell
from desktop.shell import ShellController
from desktop.views.main_window import MainWindow, about_text
from desktop.window_state import (
    WindowState,
    clamp_to_screens,
    read_window_state,
    state_path,
    write_window_state,
)

pytestmark = pytest.mark.desktop

LAPTOP = (0, 0, 1366, 736)          # x, y, width, height of a screen's free area
MONITOR = (1366, 0, 1920, 1050)     # a second screen to the right


# -- clamping (plain functions) ------------------------------------------------------------


def test_a_window_on_a_screen_that_is_gone_opens_on_the_primary_one():
    assert clamp_to_screens((2000, 200, 1200, 800), [LAPTOP]) == (166, 0, 1200, 736)


def test_a_window_on_the_second_screen_stays_there():
    assert clamp_to_screens((2000, 200, 1200, 800), [LAPTOP, MONITOR]) == (2000, 200, 1200, 800)


def test_a_window_half_off_its_screen_is_pulled_in_and_a_huge_one_shrinks():
    assert clamp_to_screens((-300, 500, 1000, 600), [LAPTOP]) == (0, 136, 1000, 600)
    assert clamp_to_screens((10, 10, 4000, 3000), [LAPTOP, MONITOR]) == (1366, 0, 1920, 1050)
    assert clamp_to_screens((10, 10, 640, 480), []) == (10, 10, 640, 480)  # nothing to go by


# -- the file ------------------------------------------------------------------------------


def test_the_state_file_is_private_and_round_trips(tmp_path):
    state = WindowState(12, 34, 700, 500, maximized=True, view="jobs")
    write_window_state(tmp_path, state)
    assert read_window_state(tmp_path) == state
    assert stat.S_IMODE(state_path(tmp_path).stat().st_mode) == 0o600
    assert not list(tmp_path.glob("*.tmp"))  # written atomically


@pytest.mark.parametrize("text", ["{not json", "[]", '{"version": 1, "x": "left"}',
                                  '{"version": 99, "x": 1, "y": 1, "width": 9, "height": 9}'])
def test_a_damaged_or_foreign_state_file_means_a_first_launch(tmp_path, text):
    state_path(tmp_path).write_text(text, encoding="utf-8")
    assert read_window_state(tmp_path) is None


# -- the window ----------------------------------------------------------------------------


def new_window(qtbot, app_dir) -> MainWindow:
    window = MainWindow(ShellController(app_dir))
    window.setMinimumSize(320, 240)
    qtbot.addWidget(window)
    return window


def test_size_position_and_last_view_come_back_after_a_restart(qtbot, tmp_path):
    first = new_window(qtbot, tmp_path)
    first.show()
    first.setGeometry(30, 40, 720, 520)
    first.show_view("jobs")
    qtbot.waitUntil(lambda: first.geometry().getRect() == (30, 40, 720, 520))
    first.close()  # without a tray this asks the app to quit; the state is saved first
    saved = json.loads(state_path(tmp_path).read_text(encoding="utf-8"))
    assert (saved["x"], saved["y"], saved["width"], saved["height"]) == (30, 40, 720, 520)
    assert saved["view"] == "jobs" and saved["maximized"] is False

    second = new_window(qtbot, tmp_path)
    assert second.tabs.currentWidget() is second.views["jobs"]
    second.show()
    qtbot.waitUntil(lambda: second.geometry().getRect() == (30, 40, 720, 520))


def test_a_maximized_window_comes_back_maximized_with_its_normal_size(qtbot, tmp_path):
    first = new_window(qtbot, tmp_path)
    first.show()
    first.setGeometry(20, 20, 700, 500)
    first.showMaximized()
    qtbot.waitUntil(first.isMaximized)
    first.save_state()
    state = read_window_state(tmp_path)
    assert state.maximized and (state.width, state.height) == (700, 500)
    second = new_window(qtbot, tmp_path)
    second.show()
    qtbot.waitUntil(second.isMaximized)
    second.showNormal()
    qtbot.waitUntil(lambda: (second.width(), second.height()) == (700, 500))


def test_a_saved_position_off_every_screen_is_clamped_on_restore(qtbot, tmp_path):
    write_window_state(tmp_path, WindowState(3000, -900, 700, 500, view="spend"))
    window = new_window(qtbot, tmp_path)
    window.show()
    free = QGuiApplication.primaryScreen().availableGeometry()
    qtbot.waitUntil(lambda: free.contains(window.geometry()))
    assert window.tabs.currentWidget() is window.views["spend"]


def test_moving_or_switching_tabs_is_saved_without_closing(qtbot, tmp_path):
    window = new_window(qtbot, tmp_path)
    window.show()
    window.show_view("runs")
    qtbot.waitUntil(lambda: (read_window_state(tmp_path) or WindowState(0, 0, 0, 0)).view
                    == "runs", timeout=5_000)
    window.move(50, 60)  # the frame's corner; the state keeps the inside's (as setGeometry)
    qtbot.waitUntil(lambda: read_window_state(tmp_path).rect == window.geometry().getRect()
                    and window.pos().x() == 50, timeout=5_000)


# -- the menu bar --------------------------------------------------------------------------


def keys(action) -> list[str]:
    return [key.toString(QKeySequence.SequenceFormat.PortableText) for key in action.shortcuts()]


def test_the_menus_carry_the_platforms_shortcuts(qtbot, tmp_path):
    actions = new_window(qtbot, tmp_path).menu_actions
    assert "F5" in keys(actions.refresh)
    assert "Ctrl+," in keys(actions.settings)
    assert "Ctrl+Q" in keys(actions.quit)
    assert "Ctrl+F" in keys(actions.find)
    for action, standard in ((actions.refresh, QKeySequence.StandardKey.Refresh),
                             (actions.settings, QKeySequence.StandardKey.Preferences),
                             (actions.quit, QKeySequence.StandardKey.Quit),
                             (actions.find, QKeySequence.StandardKey.Find)):
        assert all(key in action.shortcuts() for key in QKeySequence.keyBindings(standard))
    assert actions.settings.menuRole() == actions.settings.MenuRole.PreferencesRole
    assert actions.quit.menuRole() == actions.quit.MenuRole.QuitRole
    assert actions.about.menuRole() == actions.about.MenuRole.AboutRole
    assert "JobCtrl" in about_text(tmp_path) and str(tmp_path) in about_text(tmp_path)


def active_window(qtbot, tmp_path) -> MainWindow:
    window = new_window(qtbot, tmp_path)
    window.show()
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    return window


def test_find_settings_and_quit_shortcuts(qtbot, tmp_path):
    window = active_window(qtbot, tmp_path)
    search = window.views["jobs"].search
    search.setText("backend")
    qtbot.keyClick(window, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentWidget() is window.views["jobs"]
    qtbot.waitUntil(search.hasFocus)
    assert search.selectedText() == "backend"  # typing replaces the last search
    qtbot.keyClick(window, Qt.Key.Key_Comma, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentWidget() is window.views["settings"]
    with qtbot.waitSignal(window.quit_requested):
        qtbot.keyClick(window, Qt.Key.Key_Q, Qt.KeyboardModifier.ControlModifier)


def test_refresh_refetches_the_current_view_only(qtbot, tmp_path):
    window = active_window(qtbot, tmp_path)
    runs, jobs = window.show_view("runs"), window.views["jobs"]
    fetched: list[str] = []
    for key, view in window.views.items():
        if hasattr(view, "refresh_failed"):
            view.refresh_failed.connect(lambda _error, key=key: fetched.append(key))
    # No services run here: a refetch ends as "unavailable", which proves it was asked.
    with qtbot.waitSignal(runs.refresh_failed):
        qtbot.keyClick(window, Qt.Key.Key_F5)
    assert fetched == ["runs"]
    assert jobs.isHidden() or not jobs.isVisible()
    window.show_view("activity")  # the live list: nothing to fetch
    assert not window.menu_actions.refresh.isEnabled()
    window.show_view("runs")
    assert window.menu_actions.refresh.isEnabled()


def test_quit_from_the_menu_stops_the_app(qtbot, tmp_path):
    shell = DesktopShell(tmp_path)
    qtbot.addWidget(shell.window)
    assert not shell.quitting
    shell.window.menu_actions.quit.trigger()
    assert shell.quitting
