"""Light and dark appearance, following the system.

Qt 6.5+ reports the system's colour scheme (``QStyleHints.colorScheme``) and signals each
change. Where the platform theme also supplies the palette for it (GNOME through Qt's
gtk3 platform theme, KDE, macOS, Windows) Qt's palette already matches; where it cannot
(the generic X11 theme, offscreen) :class:`Appearance` installs Fusion's palette for the
scheme itself. ``JOBCTRL_APPEARANCE=light|dark`` forces one (a desktop that reports none,
screenshots); it is asked of Qt first (``QStyleHints.setColorScheme``).

Colours that are not palette roles - the tones of states (``ok`` / ``busy`` / ``bad`` /
``idle``), banners, notices, the primary button - come from one table per appearance
(:data:`LIGHT`, :data:`DARK`), read live through :data:`COLORS` when a widget is styled.
Neutral greys and links use palette roles in style sheets (``palette(placeholder-text)``,
``palette(link)``). When the appearance changes,
:func:`restyle` walks the widgets and swaps every colour of the other table for its
counterpart - in style sheets, rich-text labels and table items - so what was styled
before the change (or with a literal copied from the light table) is re-coloured too, and
sets sheets that name palette roles again (Qt resolves those only when it polishes).
That is why each table colour must name exactly one counterpart (a test holds it).
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Literal

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from desktop.qt_compat import emit

if TYPE_CHECKING:
    from PySide6.QtWidgets import QTableWidget

log = logging.getLogger(__name__)

Mode = Literal["light", "dark"]
APPEARANCE_ENV = "JOBCTRL_APPEARANCE"

LIGHT: dict[str, str] = {
    # states
    "ok": "#2e7d32", "busy": "#b26a00", "bad": "#c62828", "idle": "#8a8a8a",
    "muted": "#6a6a6a",
    # the primary button (Discover, Save): white text on the accent in both appearances
    "accent": "#1f6feb", "accent_hover": "#2a78f0", "accent_pressed": "#1a5fcc",
    "disabled_bg": "#c9d3df", "disabled_border": "#b9c4d1", "disabled_text": "#f4f6f8",
    # banners and notices: background, border, text
    "error_bg": "#fdecea", "error_border": "#f1b0ab", "error_text": "#8e1c14",
    "info_bg": "#eef3fb", "info_border": "#b9cbe8", "info_text": "#1d3b66",
    "warning_bg": "#fff4e0", "warning_border": "#f0c987", "warning_text": "#5c4300",
    "success_bg": "#edf7ee", "success_border": "#a5d6a7", "success_text": "#1b4d20",
}
# Every text colour at least 4.5:1 against Fusion's dark window (#323232) and base (#242424).
DARK: dict[str, str] = {
    "ok": "#81c995", "busy": "#f5b461", "bad": "#f28b82", "idle": "#9aa0a6",
    "muted": "#a9aeb3",
    "accent": "#1f6feb", "accent_hover": "#2a78f0", "accent_pressed": "#1a5fcc",
    "disabled_bg": "#3b4350", "disabled_border": "#4b5565", "disabled_text": "#9aa3ae",
    "error_bg": "#3c1f1e", "error_border": "#8c3a35", "error_text": "#f6b8b3",
    "info_bg": "#1c2a3f", "info_border": "#3d5a85", "info_text": "#c6dafc",
    "warning_bg": "#3a2e14", "warning_border": "#8a6d2a", "warning_text": "#f7d98b",
    "success_bg": "#1d3321", "success_border": "#3f7a47", "success_text": "#b9e4c0",
}
TABLES: dict[Mode, dict[str, str]] = {"light": LIGHT, "dark": DARK}

_R = QPalette.ColorRole
# Fusion's own palettes (Qt 6.11: QFusionStyle::standardPalette, light and dark), for
# platforms whose theme cannot supply the one asked for. (role, active, disabled)
FUSION_ROLES: dict[Mode, tuple[tuple[QPalette.ColorRole, str, str], ...]] = {
    "light": (
        (_R.WindowText, "#000000", "#bebebe"), (_R.Button, "#efefef", "#efefef"),
        (_R.Light, "#ffffff", "#ffffff"), (_R.Midlight, "#cacaca", "#cacaca"),
        (_R.Dark, "#9f9f9f", "#bebebe"), (_R.Mid, "#b8b8b8", "#b8b8b8"),
        (_R.Text, "#000000", "#bebebe"), (_R.BrightText, "#ffffff", "#ffffff"),
        (_R.ButtonText, "#000000", "#bebebe"), (_R.Base, "#ffffff", "#efefef"),
        (_R.Window, "#efefef", "#efefef"), (_R.Shadow, "#767676", "#b1b1b1"),
        (_R.Highlight, "#308cc6", "#919191"), (_R.HighlightedText, "#ffffff", "#ffffff"),
        (_R.Link, "#0000ff", "#0000ff"), (_R.LinkVisited, "#ff00ff", "#ff00ff"),
        (_R.AlternateBase, "#f7f7f7", "#f7f7f7"), (_R.ToolTipBase, "#ffffdc", "#ffffdc"),
        (_R.ToolTipText, "#000000", "#000000"), (_R.PlaceholderText, "#80000000", "#80000000"),
        (_R.Accent, "#308cc6", "#919191"),
    ),
    "dark": (
        (_R.WindowText, "#f0f0f0", "#828282"), (_R.Button, "#323232", "#323232"),
        (_R.Light, "#4b4b4b", "#4b4b4b"), (_R.Midlight, "#2a2a2a", "#2a2a2a"),
        (_R.Dark, "#212121", "#bebebe"), (_R.Mid, "#262626", "#262626"),
        (_R.Text, "#f0f0f0", "#828282"), (_R.BrightText, "#4b4b4b", "#4b4b4b"),
        (_R.ButtonText, "#f0f0f0", "#828282"), (_R.Base, "#242424", "#323232"),
        (_R.Window, "#323232", "#323232"), (_R.Shadow, "#191919", "#252525"),
        (_R.Highlight, "#308cc6", "#919191"), (_R.HighlightedText, "#f0f0f0", "#f0f0f0"),
        (_R.Link, "#62b0e8", "#62b0e8"), (_R.LinkVisited, "#c58af9", "#c58af9"),
        (_R.AlternateBase, "#2b2b2b", "#2b2b2b"), (_R.ToolTipBase, "#3c3c3c", "#3c3c3c"),
        (_R.ToolTipText, "#f0f0f0", "#f0f0f0"), (_R.PlaceholderText, "#80f0f0f0", "#80f0f0f0"),
        (_R.Accent, "#308cc6", "#919191"),
    ),
}

_active: dict[str, str] = LIGHT
_HEX = re.compile(r"#[0-9a-fA-F]{6}\b")


class _LiveColors(Mapping[str, str]):
    """``COLORS["bad"]``: the hex colour of a tone in the appearance shown right now."""

    def __getitem__(self, key: str) -> str:
        return _active[key]

    def __iter__(self) -> Iterator[str]:
        return iter(_active)

    def __len__(self) -> int:
        return len(_active)


COLORS: Mapping[str, str] = _LiveColors()


def current_mode() -> Mode:
    return "dark" if _active is DARK else "light"


# -- style sheets built from the live table ----------------------------------------------------


def primary_button_style() -> str:
    c = COLORS
    return (f"QPushButton {{ background: {c['accent']}; color: white; border: 1px solid"
            f" {c['accent_pressed']}; border-radius: 5px; padding: 6px 16px; font-weight: 600; }}"
            f" QPushButton:hover {{ background: {c['accent_hover']}; }}"
            f" QPushButton:pressed {{ background: {c['accent_pressed']}; }}"
            f" QPushButton:disabled {{ background: {c['disabled_bg']};"
            f" border-color: {c['disabled_border']}; color: {c['disabled_text']}; }}")


def notice_colors(tone: str) -> tuple[str, str, str]:
    """(background, border, text) of an ``error`` / ``info`` / ``warning`` / ``success``
    banner or notice."""
    return COLORS[f"{tone}_bg"], COLORS[f"{tone}_border"], COLORS[f"{tone}_text"]


def notice_style(tone: str) -> str:
    """The declarations of a banner's box: ``background: ..; border: ..; color: ..;``."""
    background, border, text = notice_colors(tone)
    return f"background: {background}; border: 1px solid {border}; color: {text};"


# -- palettes ----------------------------------------------------------------------------------


def fusion_palette(mode: Mode) -> QPalette:
    palette = QPalette()
    for role, active, disabled in FUSION_ROLES[mode]:
        palette.setColor(QPalette.ColorGroup.All, role, QColor(active))
        palette.setColor(QPalette.ColorGroup.Disabled, role, QColor(disabled))
    return palette


def palette_mode(palette: QPalette) -> Mode:
    return "dark" if palette.color(QPalette.ColorRole.Window).lightness() < 128 else "light"


def scheme_mode(scheme: Qt.ColorScheme) -> Mode | None:
    return {Qt.ColorScheme.Dark: "dark", Qt.ColorScheme.Light: "light"}.get(scheme)


# -- re-colouring what was styled before a change -----------------------------------------------


def swap_map(to_mode: Mode) -> dict[str, str]:
    """Each colour of the other table -> its counterpart in ``to_mode``'s table."""
    target = TABLES[to_mode]
    return {hex_color.lower(): target[key]
            for mode, table in TABLES.items() if mode != to_mode
            for key, hex_color in table.items()}


def swap_colors(text: str, mapping: Mapping[str, str]) -> str:
    return _HEX.sub(lambda m: mapping.get(m.group(0).lower(), m.group(0)), text)


def restyle(widgets: Iterable[QWidget], to_mode: Mode) -> int:
    """Re-colour style sheets, rich-text labels and table items for ``to_mode``; returns
    how many widgets changed."""
    mapping = swap_map(to_mode)
    changed = 0
    for widget in widgets:
        touched = _restyle_sheet(widget, mapping)
        if isinstance(widget, QLabel):
            touched |= _restyle_label(widget, mapping)
        if widget.inherits("QTableWidget"):  # by name: the class costs its enums to import
            touched |= _restyle_items(widget, mapping)
        changed += touched
    return changed


def _restyle_sheet(widget: QWidget, mapping: Mapping[str, str]) -> bool:
    """Swap the sheet's colours; a sheet naming palette roles is set again too: Qt
    resolves ``palette(...)`` when it polishes a widget, not when the palette changes."""
    sheet = widget.styleSheet()
    swapped = swap_colors(sheet, mapping) if "#" in sheet else sheet
    if swapped != sheet or "palette(" in sheet:
        widget.setStyleSheet(swapped)
        return True
    return False


def _restyle_label(label: QLabel, mapping: Mapping[str, str]) -> bool:
    if label.textFormat() == Qt.TextFormat.PlainText:
        return False
    text = label.text()
    swapped = swap_colors(text, mapping) if "#" in text else text
    if swapped != text:
        label.setText(swapped)
    return swapped != text


def _restyle_items(table: QTableWidget, mapping: Mapping[str, str]) -> bool:
    touched = False
    for row in range(table.rowCount()):
        for column in range(table.columnCount()):
            item = table.item(row, column)
            if item is None or item.data(Qt.ItemDataRole.ForegroundRole) is None:
                continue
            name = item.foreground().color().name()
            if name in mapping:
                item.setForeground(QColor(mapping[name]))
                touched = True
    return touched


# -- following the system ----------------------------------------------------------------------


def forced_mode_from_env() -> Mode | None:
    value = (os.environ.get(APPEARANCE_ENV) or "").strip().lower()
    return value if value in ("light", "dark") else None  # type: ignore[return-value]


class Appearance(QObject):
    """The app's one appearance: follows ``colorSchemeChanged`` unless forced."""

    changed = Signal(str)  # "light" | "dark"

    def __init__(self, app: QApplication, forced: Mode | None = None,
                 parent: QObject | None = None):
        super().__init__(parent or app)
        self.app = app
        self.forced = forced
        self._own_palette = False  # True while a palette of ours overrides the platform's
        self.mode: Mode = current_mode()
        self._reported = app.styleHints().colorScheme()  # what the system last announced
        app.styleHints().colorSchemeChanged.connect(self._on_scheme_changed)

    def system_mode(self) -> Mode:
        """The system's choice; where Qt reports none, what its own palette looks like."""
        reported = scheme_mode(self._reported)
        if reported is not None:
            return reported
        return palette_mode(self._platform_palette())

    def _platform_palette(self) -> QPalette:
        """The palette Qt draws with by itself (an empty app palette resets to it)."""
        if self._own_palette:
            self.app.setPalette(QPalette())
            self._own_palette = False
        return self.app.palette()

    def force(self, mode: Mode | None) -> None:
        """Show ``mode`` whatever the system says (None: follow the system again). Asked of
        Qt first, so a platform theme that can (gtk3, KDE, macOS, Windows) draws it."""
        self.forced = mode
        scheme = {"light": Qt.ColorScheme.Light, "dark": Qt.ColorScheme.Dark}.get(
            mode or "", Qt.ColorScheme.Unknown)
        self.app.styleHints().setColorScheme(scheme)  # may emit colorSchemeChanged
        self._reported = self.app.styleHints().colorScheme()
        self.apply()

    def _on_scheme_changed(self, scheme: Qt.ColorScheme) -> None:
        self._reported = scheme
        self.apply()

    def apply(self) -> None:
        """Bring palette, tone table and styled widgets to the wanted appearance."""
        global _active
        wanted = self.forced or self.system_mode()
        self._match_palette(wanted)
        previous, _active = self.mode, TABLES[wanted]
        self.mode = wanted
        count = self.restyle_widgets()
        if previous != wanted:
            log.info("appearance: %s (%d widgets re-coloured)", wanted, count)
            emit(self.changed, wanted)

    def restyle_widgets(self) -> int:
        """Bring every widget's own colours to this appearance (also after building a
        window whose style sheets were written with the light table's literals)."""
        return restyle(QApplication.allWidgets(), self.mode)

    def _match_palette(self, wanted: Mode) -> None:
        if palette_mode(self._platform_palette()) != wanted:
            self.app.setPalette(fusion_palette(wanted))
            self._own_palette = True


_appearance: Appearance | None = None
_checks_style_installed = False


def install(app: QApplication | None = None, forced: Mode | None = None, *,
            checks_style: bool = True) -> Appearance:
    """The app's Appearance, created once (then applied); later calls return it.

    ``checks_style=False``: without :func:`install_checks_style` yet (the shell installs
    it once its first frame is painted: lists with check boxes are built later)."""
    global _appearance
    if _appearance is None:
        app = app or QApplication.instance()
        _appearance = Appearance(app, forced if forced is not None else forced_mode_from_env())
        _appearance.apply()
    if checks_style:
        install_checks_style(_appearance.app)
    return _appearance


def install_checks_style(app: QApplication | None = None) -> None:
    """The app's style becomes :class:`desktop.readable_checks.ReadableChecksStyle` over
    the platform's (once): unticked boxes in lists stay visible on a dark base. Widgets
    shown already are polished again by Qt; a palette the Appearance set stays."""
    global _checks_style_installed
    if _checks_style_installed:
        return
    from desktop.readable_checks import ReadableChecksStyle

    app = app or QApplication.instance()
    # A fresh base style by name: the proxy owns it, and the app deletes its old one.
    app.setStyle(ReadableChecksStyle(app.style().name()))
    _checks_style_installed = True


def relative_luminance(color: QColor) -> float:
    """WCAG 2 relative luminance of an opaque colour."""
    def channel(value: float) -> float:
        return value / 12.92 if value <= 0.04045 else ((value + 0.055) / 1.055) ** 2.4

    return (0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF())
            + 0.0722 * channel(color.blueF()))


def contrast_ratio(first: QColor | str, second: QColor | str) -> float:
    """WCAG 2 contrast ratio, 1 (none) to 21 (black on white)."""
    a, b = sorted((relative_luminance(QColor(first)), relative_luminance(QColor(second))))
    return (b + 0.05) / (a + 0.05)


def qcolor(tone: str) -> QColor:
    """The QColor of a tone in the current appearance (item models' ForegroundRole)."""
    return QColor(COLORS[tone])


