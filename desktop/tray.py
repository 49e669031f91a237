"""The tray: today's spend as a ring against the ceiling, the ETA in the tooltip, a menu.

Three parts, each testable on its own:

- plain functions (``spend_look``, ``tooltip_text``) that turn the API's ``/v1/spend`` and
  ``/v1/pipeline/operations`` answers into words and a look; what the tooltip says about
  the run is the Pipelines headline (``ops.summarize(...).tray_text``), never words of
  its own, so the tray and the window cannot disagree;
- ``paint_spend_icon``: the icon, painted at runtime with QPainter (no image files), with a
  distinct look near the ceiling and when the budget is exhausted;
- ``TrayStatus``: keeps those two answers fresh. Unlike a view it refreshes while the window
  is hidden (the tray is what the user sees then): on SSE invalidations of spend and
  pipelines, after a settings save, and by polling (15 s while a run discovers or drains,
  60 s otherwise), one fetch in flight at a time;
- ``SpendTray``: the QSystemTrayIcon with Open, Start Discover, Cancel current run, Quit.

Unknown stays unknown: a spend that could not be read is a grey ring with "?" and the
tooltip says why, never "$0.00".
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Any

from PySide6.QtCore import QObject, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QColor, QFont, QIcon, QPainter, QPainterPath, QPen, QPixmap
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from desktop.event_router import PIPELINES, SETTINGS, SPEND
from desktop.formatting import describe_api_error
from desktop.plain_text import plain_tooltip
from desktop.presenters import operations as ops
from desktop.presenters.applications import follow_ups_due_text
from desktop.qt_compat import emit
from desktop.shell import ShellController

log = logging.getLogger(__name__)

NEAR_FRACTION = 0.8  # at or above 80 % of the ceiling the ring turns amber
ICON_SIZE = 64

# look -> the colour of its arc and disc: each at least 3:1 against the white glyph and
# against a light panel (tests/desktop/test_tray_icon_contrast.py measures the renders).
LOOK_COLORS = {
    "normal": "#2e7d32",
    "near": "#b26a00",
    "exhausted": "#d32f2f",
    "unlimited": "#1f6feb",
    "unknown": "#6b7280",
}
GLYPHS = {"exhausted": "!", "unlimited": "∞", "unknown": "?"}
GLYPH_COLOR = "#ffffff"
TRACK_COLOR = "#e3e7ec"  # light: outlines the icon on dark panels
TRAY_SIZES = (16, 22, 24, 32, 48, 64)

# -- words and looks (Qt-free) ---------------------------------------------------------------


def money(value: Any) -> str:
    return f"${Decimal(str(value)):,.2f}"


def spend_look(today: dict[str, Any] | None) -> str:
    """``normal`` | ``near`` | ``exhausted`` | ``unlimited`` | ``unknown``."""
    if not today:
        return "unknown"
    if today.get("unlimited"):
        return "unlimited"
    if today.get("exhausted"):
        return "exhausted"
    fraction = spend_fraction(today)
    if fraction is not None and fraction >= NEAR_FRACTION:
        return "near"
    return "normal"


def spend_fraction(today: dict[str, Any] | None) -> float | None:
    """Spent / ceiling in 0..1, or None when unknown or unlimited."""
    if not today or today.get("unlimited"):
        return None
    ceiling = Decimal(str(today.get("ceilingUsd") or 0))
    if ceiling <= 0:
        return None
    spent = Decimal(str(today.get("spentUsd") or 0))
    return float(min(spent / ceiling, Decimal(1)))


def spend_text(today: dict[str, Any] | None, error: str | None = None) -> str:
    if not today:
        return f"Spend unknown: {error or 'not read yet'}"
    spent = money(today["spentUsd"])
    if today.get("unlimited"):
        return f"Spent {spent} today (no daily limit)"
    text = f"Spent {spent} of {money(today['ceilingUsd'])} today"
    return text + " (budget used up)" if today.get("exhausted") else text


def run_text(operations: dict[str, Any] | None, error: str | None = None) -> str:
    """The Pipelines headline (plus why there is no estimate while work moves)."""
    if operations is None:
        return f"Run status unknown: {error or 'not read yet'}"
    return ops.summarize(operations).tray_text


def tooltip_text(today: dict[str, Any] | None, operations: dict[str, Any] | None,
                 *, spend_error: str | None = None, operations_error: str | None = None) -> str:
    """``Spent $x.xx of $y today · Preparing 135 of 234 new jobs · about 2–3 min left``."""
    return f"{spend_text(today, spend_error)} · {run_text(operations, operations_error)}"


def cancelable_run(operations: dict[str, Any] | None) -> str | None:
    """The Discover run id the tray may cancel: the Pipelines Cancel rule (only an
    in-progress run that is still discovering or draining)."""
    if not operations or not ops.can_cancel(operations):
        return None
    return operations["execution"].get("discoverRunId")


# -- the icon --------------------------------------------------------------------------------
#
# A tray icon cannot know its panel's colour (GNOME's bar is black in light mode too), so
# the icon carries its own contrast: a white glyph on a disc of the state's colour (dark
# enough to stand out on light panels) inside a light track (which outlines it on dark
# panels). The arc of spend runs inside the track, so a light band shows on both of its
# sides even when the ring is full. Painted at each size the tray may ask for (16, 22,
# 24 px ...) rather than scaled down from one large pixmap, whose thin strokes blur away.


def paint_spend_icon(today: dict[str, Any] | None, size: int = ICON_SIZE) -> QPixmap:
    """A ring that fills clockwise from 12 o'clock with today's share of the ceiling,
    around a disc with "$". near: amber; exhausted: a full red ring around a red disc
    with "!"; unlimited: a full blue ring with "∞"; unknown: a grey disc with "?" and an
    empty track."""
    look = spend_look(today)
    color = QColor(LOOK_COLORS[look])
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(TRACK_COLOR))
        painter.drawEllipse(QRectF(0, 0, size, size))  # the light track and its bands
        band = max(0.9, size * 0.045)  # light each side of the arc
        arc = max(2.0, size * 0.12)
        fraction = {"exhausted": 1.0, "unlimited": 1.0, "unknown": 0.0}.get(
            look, spend_fraction(today) or 0.0)
        if fraction > 0:
            cap = Qt.PenCapStyle.RoundCap if fraction < 1 else Qt.PenCapStyle.FlatCap
            painter.setPen(QPen(color, arc, Qt.PenStyle.SolidLine, cap))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            edge = band + arc / 2
            # Qt angles: 1/16 degree, counter-clockwise from 3 o'clock; negative = clockwise.
            painter.drawArc(QRectF(edge, edge, size - 2 * edge, size - 2 * edge), 90 * 16,
                            -round(max(fraction, 0.03) * 360 * 16))
        inset = 2 * band + arc
        disc = QRectF(inset, inset, size - 2 * inset, size - 2 * inset)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(color)
        painter.drawEllipse(disc)
        _draw_glyph(painter, disc, GLYPHS.get(look, "$"))
    finally:
        painter.end()
    return pixmap


def _draw_glyph(painter: QPainter, disc: QRectF, glyph: str) -> None:
    if glyph == "∞":  # the font's ∞ is a thin speck at 16 px: a stroked figure eight
        _draw_infinity(painter, disc)
        return
    font = QFont()
    font.setBold(True)
    font.setPixelSize(max(7, round(disc.height() * 0.9)))
    painter.setFont(font)
    painter.setPen(QColor(GLYPH_COLOR))
    painter.drawText(disc, Qt.AlignmentFlag.AlignCenter, glyph)


def _draw_infinity(painter: QPainter, disc: QRectF) -> None:
    """A lemniscate of Bernoulli across 80 % of the disc, stroked ~1/7 of its width."""
    half = disc.width() * 0.4
    centre = disc.center()
    path = QPainterPath(QPointF(centre.x() + half, centre.y()))
    for step in range(1, 65):
        t = step / 64 * 2 * math.pi
        scale = half / (1 + math.sin(t) ** 2)
        path.lineTo(QPointF(centre.x() + scale * math.cos(t),
                            centre.y() + scale * math.sin(t) * math.cos(t)))
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.setPen(QPen(QColor(GLYPH_COLOR), max(1.4, disc.width() * 0.14)))
    painter.drawPath(path)


def spend_icon(today: dict[str, Any] | None) -> QIcon:
    """The tray icon, painted at every size a tray host may ask for."""
    icon = QIcon()
    for size in TRAY_SIZES:
        icon.addPixmap(paint_spend_icon(today, size))
    return icon


# -- keeping the numbers fresh ---------------------------------------------------------------


@dataclass
class TraySnapshot:
    today: dict[str, Any] | None = None
    operations: dict[str, Any] | None = None
    spend_error: str | None = None
    operations_error: str | None = None

    @property
    def tooltip(self) -> str:
        return tooltip_text(self.today, self.operations, spend_error=self.spend_error,
                            operations_error=self.operations_error)

    @property
    def look(self) -> str:
        return spend_look(self.today)


class TrayStatus(QObject):
    """Spend and operations for the tray, fresh while the window is hidden too."""

    changed = Signal(object)  # TraySnapshot
    KEYS = frozenset({SPEND, PIPELINES, SETTINGS})

    def __init__(self, controller: ShellController, parent: QObject | None = None):
        super().__init__(parent)
        self.controller = controller
        self.snapshot = TraySnapshot()
        self._in_flight = False
        self._again = False
        self._poll = QTimer(self)
        self._poll.setSingleShot(True)
        self._poll.timeout.connect(self.refresh)
        controller.views_invalidated.connect(self._on_invalidated)
        controller.runtime_ready.connect(lambda _info: self.refresh())
        controller.stopping.connect(self._poll.stop)

    def _on_invalidated(self, views: frozenset[str]) -> None:
        if views & self.KEYS:
            self.refresh()

    def offer_operations(self, operations: dict[str, Any]) -> None:
        """A snapshot the window fetched: kept when it is newer than ours, so the tray
        and the Pipelines headline say the same thing."""
        if ops.newer(operations, self.snapshot.operations):
            self.snapshot = replace(self.snapshot, operations=operations, operations_error=None)
            emit(self.changed, self.snapshot)

    def refresh(self) -> None:
        if self._in_flight:
            self._again = True
            return
        self._in_flight = True
        task = self.controller.call(self._fetch, self._on_result, self._on_unavailable,
                                    name="tray-refresh")
        if task is None:
            self._in_flight = False

    @staticmethod
    async def _fetch(client) -> TraySnapshot:
        """Both reads, each failing on its own: a broken operations read keeps the spend."""
        snapshot = TraySnapshot()
        try:
            snapshot.today = (await client.spend())["today"]
        except Exception as error:  # noqa: BLE001 - shown as the reason
            snapshot.spend_error = describe_api_error(error)
        try:
            snapshot.operations = await client.pipeline_operations()
        except Exception as error:  # noqa: BLE001 - shown as the reason
            snapshot.operations_error = describe_api_error(error)
        return snapshot

    def _on_result(self, snapshot: TraySnapshot) -> None:
        self._in_flight = False
        if not ops.newer(snapshot.operations, self.snapshot.operations) and \
                self.snapshot.operations is not None and snapshot.operations is not None:
            # The window showed a newer one meanwhile: keep it (never step back).
            snapshot = replace(snapshot, operations=self.snapshot.operations)
        self.snapshot = snapshot
        emit(self.changed, snapshot)
        self._next()

    def _on_unavailable(self, error: Exception) -> None:
        self._in_flight = False
        self.snapshot = TraySnapshot(spend_error=describe_api_error(error),
                                     operations_error=describe_api_error(error))
        emit(self.changed, self.snapshot)

    def _next(self) -> None:
        if self._again:
            self._again = False
            self.refresh()
            return
        if self.controller.shutting_down:
            return
        self._poll.start(self.poll_interval_ms())

    def poll_interval_ms(self) -> int:
        """The Pipelines cadence: 15 s while a run discovers or drains, else 60 s."""
        return ops.poll_interval_ms(self.snapshot.operations)


# -- the tray icon ---------------------------------------------------------------------------


class SpendTray(QObject):
    """The system tray icon and its menu. Works (hidden) where no tray exists, so the
    same code paths run offscreen and in tests."""

    open_requested = Signal()
    quit_requested = Signal()
    cancel_result = Signal(str)  # a readable line after "Cancel current run"
    applications_requested = Signal()  # the follow-ups entry: open the Applications tab

    def __init__(self, controller: ShellController, status: TrayStatus | None = None,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.controller = controller
        self.status = status or TrayStatus(controller, self)
        self.icon = QSystemTrayIcon(self)
        self.menu = QMenu()
        self.open_action = QAction("Open JobCtrl", self.menu)
        self.discover_action = QAction("Start Discover", self.menu)
        self.cancel_action = QAction("Cancel current run", self.menu)
        self.quit_action = QAction("Quit", self.menu)
        for action in (self.open_action, self.discover_action, self.cancel_action):
            self.menu.addAction(action)
        self.follow_ups_action = QAction(follow_ups_due_text(0), self.menu)
        self.follow_ups_action.setEnabled(False)
        self.follow_ups_action.triggered.connect(self.applications_requested)
        self.menu.addAction(self.follow_ups_action)
        self.menu.addSeparator()
        self.menu.addAction(self.quit_action)
        self.icon.setContextMenu(self.menu)
        self.open_action.triggered.connect(self.open_requested)
        self.discover_action.triggered.connect(controller.request_discover)
        self.cancel_action.triggered.connect(self.cancel_current_run)
        self.quit_action.triggered.connect(self.quit_requested)
        self.icon.activated.connect(self._on_activated)
        self.status.changed.connect(self.show_snapshot)
        controller.runtime_ready.connect(lambda _info: self._update_actions())
        controller.stopping.connect(self._update_actions)
        self.show_snapshot(self.status.snapshot)

    @staticmethod
    def available() -> bool:
        return QSystemTrayIcon.isSystemTrayAvailable()

    def show(self) -> None:
        self.icon.show()

    def hide(self) -> None:
        self.icon.hide()

    def tooltip(self) -> str:
        return self.icon.toolTip()

    def show_snapshot(self, snapshot: TraySnapshot) -> None:
        self.icon.setIcon(spend_icon(snapshot.today))
        self.icon.setToolTip(plain_tooltip(snapshot.tooltip))
        self._update_actions()

    def show_follow_ups(self, count: int) -> None:
        """"2 follow-ups due" (opens Applications), or a greyed "No follow-ups due"."""
        self.follow_ups_action.setText(follow_ups_due_text(count))
        self.follow_ups_action.setEnabled(count > 0)

    def _update_actions(self) -> None:
        running = self.controller.client is not None and not self.controller.shutting_down
        # The same rule as the Pipelines Discover button: no new run while one is in
        # progress or while a failed run may still have work running.
        operations = self.status.snapshot.operations
        blocked = None if operations is None else ops.discover_block_reason(operations)
        self.discover_action.setEnabled(running and blocked is None)
        self.discover_action.setToolTip(plain_tooltip(blocked) or "Fetch postings from every enabled source")
        self.cancel_action.setEnabled(
            running and cancelable_run(self.status.snapshot.operations) is not None)

    def _on_activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger,
                      QSystemTrayIcon.ActivationReason.DoubleClick):
            emit(self.open_requested)

    def cancel_current_run(self) -> None:
        run_id = cancelable_run(self.status.snapshot.operations)
        if run_id is None:
            emit(self.cancel_result, "No Discover run is running.")
            return
        self.cancel_action.setEnabled(False)

        def done(answer: dict) -> None:
            if answer.get("alreadyTerminal"):
                emit(self.cancel_result, f"The run had already ended ({answer.get('status')}).")
            else:
                emit(self.cancel_result, "Cancellation requested; the run stops shortly.")
            self.status.refresh()

        def failed(error: Exception) -> None:
            emit(self.cancel_result, describe_api_error(error))
            self._update_actions()

        self.controller.call(lambda client: client.cancel_run(run_id, "tray"), done, failed,
                             name="tray-cancel")
