"""Light and dark appearance: the tone tables, the switch (palette roles and the colours
widgets were styled with), and following the system's colour scheme.

Offscreen, Qt's platform theme reports no colour scheme and cannot draw a dark palette, so
these tests exercise the fallback the generic X11 theme needs too: Fusion's dark palette
installed by the app. The system's announcement is Qt's own ``colorSchemeChanged`` signal.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QLabel

from desktop import theme
from desktop.presenters.window_status import NOT_RUNNING
from desktop.shell import ShellController
from desktop.theme import COLORS, DARK, LIGHT, contrast_ratio, fusion_palette, swap_map
from desktop.views.main_window import Banner, MainWindow
from desktop.views.partials.stage_count_grid import StageCountGrid
from desktop.views.status_indicators import WindowStatusLine

pytestmark = pytest.mark.desktop

TEXT_TONES = ("ok", "busy", "bad", "idle", "muted")
NOTICES = ("error", "info", "warning", "success")
WINDOWS = {"light": ("#efefef", "#ffffff"), "dark": ("#323232", "#242424")}  # window, base


@pytest.fixture
def appearance(qapp):
    appearance = theme.install(qapp)
    appearance.force(None)
    yield appearance
    appearance.force(None)  # the next test starts light again (offscreen is light)
    assert appearance.mode == "light"


# -- the tables ------------------------------------------------------------------------------


def test_each_colour_has_exactly_one_counterpart():
    """restyle swaps colours by value, so a value may stand for one name only."""
    assert LIGHT.keys() == DARK.keys()
    for mode in ("light", "dark"):
        other = DARK if mode == "light" else LIGHT
        mapping = swap_map(mode)  # built without losing an entry to a clash:
        assert len(mapping) == len({value.lower() for value in other.values()})
    for key, light in LIGHT.items():
        assert all(DARK[other] != light for other in DARK if other != key), key


@pytest.mark.parametrize("mode", ["light", "dark"])
def test_tones_and_notices_are_legible_on_their_backgrounds(mode):
    table = theme.TABLES[mode]
    wanted = 4.5 if mode == "dark" else 3.0  # the light tones are the app's existing ones
    for background in WINDOWS[mode]:
        for tone in TEXT_TONES:
            assert contrast_ratio(table[tone], background) >= wanted, (mode, tone, background)
    for notice in NOTICES:
        assert contrast_ratio(table[f"{notice}_text"], table[f"{notice}_bg"]) >= 4.5
        for tone in ("ok", "bad", "busy"):  # a status line shown inside a notice
            assert contrast_ratio(table[tone], table[f"{notice}_bg"]) >= 3.0, (notice, tone)
    assert contrast_ratio("#ffffff", table["accent"]) >= 4.5  # the primary button's words


def test_the_dark_fallback_palette_is_fusions_dark_one():
    palette = fusion_palette("dark")
    assert palette.color(QPalette.ColorRole.Window).name() == "#323232"
    assert palette.color(QPalette.ColorRole.WindowText).name() == "#f0f0f0"
    assert contrast_ratio(palette.color(QPalette.ColorRole.Link), "#242424") >= 4.5


def test_the_appearance_can_be_forced_from_the_environment(monkeypatch):
    for value, mode in (("dark", "dark"), (" Light ", "light"), ("purple", None), ("", None)):
        monkeypatch.setenv(theme.APPEARANCE_ENV, value)
        assert theme.forced_mode_from_env() == mode


# -- the switch ------------------------------------------------------------------------------


@dataclass
class Styled:
    """Widgets styled while the app was light: a banner, a state label, a count grid."""

    banner: Banner
    indicator: WindowStatusLine
    grid: StageCountGrid
    window: MainWindow | None = None

    def failed_score_cell(self):
        table = self.grid.table
        column = next(c for c in range(table.columnCount())
                      if table.horizontalHeaderItem(c).text() == "Failed")
        return table.item(1, column)  # score


def styled(qtbot, window: MainWindow | None = None) -> Styled:
    parts = Styled(Banner(), WindowStatusLine(), StageCountGrid(), window)
    for widget in (parts.banner, parts.indicator, parts.grid):
        qtbot.addWidget(widget)
    parts.banner.show_message("JobCtrl could not start: the port is taken", "error")
    parts.indicator.show_line(NOT_RUNNING)
    parts.grid.set_counts({"score": {"failed": 2, "succeeded": 5}})
    return parts


def assert_shows(qtbot, mode: str, parts: Styled) -> None:
    table, other = (DARK, LIGHT) if mode == "dark" else (LIGHT, DARK)
    palette = QApplication.palette()
    window_role = palette.color(QPalette.ColorRole.Window)
    assert theme.palette_mode(palette) == mode
    assert (window_role.lightness() < 128) == (mode == "dark")
    assert contrast_ratio(palette.color(QPalette.ColorRole.Text),
                          palette.color(QPalette.ColorRole.Base)) >= 7
    assert COLORS["bad"] == table["bad"]
    banner = parts.banner.styleSheet()
    assert table["error_bg"] in banner and other["error_bg"] not in banner
    indicator = parts.indicator.text()
    assert table["bad"] in indicator and other["bad"] not in indicator
    assert parts.failed_score_cell().foreground().color().name() == table["bad"]
    if parts.window is not None:
        # Widgets take the new palette from the events Qt posts for it.
        qtbot.waitUntil(
            lambda: parts.window.palette().color(QPalette.ColorRole.Window) == window_role)
        button = parts.window.discover_button.styleSheet()  # the light table's literals
        assert table["disabled_bg"] in button and other["disabled_bg"] not in button


def test_switching_appearance_recolours_palette_and_styled_widgets(qtbot, tmp_path, appearance):
    window = MainWindow(ShellController(tmp_path))
    qtbot.addWidget(window)
    window.show()
    parts = styled(qtbot, window)
    appearance.restyle_widgets()
    assert_shows(qtbot, "light", parts)
    with qtbot.waitSignal(appearance.changed) as switched:
        appearance.force("dark")
    assert switched.args == ["dark"]
    assert_shows(qtbot, "dark", parts)
    later = QLabel(window)  # styled after the switch: the live table gives the dark colour
    later.setStyleSheet(f"color: {COLORS['ok']};")
    assert DARK["ok"] in later.styleSheet()
    appearance.force("light")
    assert_shows(qtbot, "light", parts)
    assert LIGHT["ok"] in later.styleSheet()


def test_palette_role_style_sheets_follow_too(qtbot, appearance):
    label = QLabel("muted words")
    label.setStyleSheet("color: palette(placeholder-text);")
    qtbot.addWidget(label)
    label.show()
    light = label.palette().color(QPalette.ColorRole.WindowText)
    appearance.force("dark")
    qtbot.waitUntil(lambda: label.palette().color(QPalette.ColorRole.WindowText) != light)
    shown = label.palette().color(QPalette.ColorRole.WindowText)
    assert shown.rgb() == QApplication.palette().color(QPalette.ColorRole.PlaceholderText).rgb()


def test_the_app_follows_the_system_scheme_unless_forced(qtbot, appearance, qapp):
    parts = styled(qtbot)
    hints = qapp.styleHints()
    try:
        with qtbot.waitSignal(appearance.changed):
            hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)  # the desktop turned dark
        assert appearance.mode == "dark"
        assert_shows(qtbot, "dark", parts)
        appearance.force("light")  # the user's choice wins over the system's
        hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)
        assert appearance.mode == "light"
        assert_shows(qtbot, "light", parts)
    finally:
        hints.colorSchemeChanged.emit(hints.colorScheme())  # back to what Qt reports


def test_a_lists_unticked_box_has_a_visible_frame_in_dark(qtbot, appearance):
    """On the dark palette a list's check-box frame stands out from the list's background
    (Fusion alone draws it in the background's own colour)."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QColor
    from PySide6.QtWidgets import QListWidget, QListWidgetItem

    appearance.force("dark")
    box = QListWidget()
    qtbot.addWidget(box)
    item = QListWidgetItem("acme (Greenhouse)")
    item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
    item.setCheckState(Qt.CheckState.Unchecked)
    box.addItem(item)
    box.resize(240, 60)
    box.show()
    image = box.viewport().grab().toImage()
    rect = box.visualItemRect(item)
    base = QColor(WINDOWS["dark"][1]).lightness()
    row = [image.pixelColor(x, rect.center().y()).lightness() for x in range(rect.left(), 24)]
    assert max(row) - base > 40, row  # a frame line, not the background throughout
