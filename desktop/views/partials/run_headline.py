"""The top of Pipelines: one honest line about the run, one bar over the whole run, and the
primary action: Discover (disabled, with the reason next to it, while a run is under
way or — after a failed, problem or still-draining run — until no work is running), and
Cancel while the run can be stopped.

It shows a ``RunSummary`` (desktop/presenters/operations.py) and nothing else, so what it
says is what the tray and the notifications say. It sits above the view's scroll area:
the action stays in view at any window size and scroll position.

The bar: a number when the run's remaining work is measured; Qt's moving "busy" bar when
work moves but its amount is unknown (the reason is its text); an empty, still bar with
the reason when nothing moves (paused, waiting for the worker); hidden when there is no run.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from desktop.plain_text import PlainLabel
from desktop.presenters.operations import RunSummary
from desktop.theme import primary_button_style
from desktop.views.status_indicators import COLORS

BAR_STEPS = 10_000  # 0.01 % per step: one more prepared job always moves the value
MUTED = "color: palette(placeholder-text);"


def _selectable(parent: QWidget, name: str, *, wrap: bool) -> QLabel:
    label = PlainLabel(parent)
    label.setObjectName(name)
    label.setWordWrap(wrap)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class RunHeadline(QFrame):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("runHeadlineCard")
        self.setStyleSheet("#runHeadlineCard { border-bottom: 1px solid palette(mid); }")
        self.summary: RunSummary | None = None
        outer = QHBoxLayout(self)
        outer.setContentsMargins(8, 8, 8, 10)
        outer.setSpacing(14)
        outer.addLayout(self._build_text(), 1)
        outer.addLayout(self._build_actions(), 0)

    def _build_text(self) -> QVBoxLayout:
        column = QVBoxLayout()
        column.setSpacing(4)
        self.headline = _selectable(self, "runHeadline", wrap=True)
        font = self.headline.font()
        font.setPointSizeF(font.pointSizeF() * 1.3)
        font.setBold(True)
        self.headline.setFont(font)
        self.headline.setText("Loading…")
        self.detail = _selectable(self, "runDetail", wrap=True)
        self.detail.setStyleSheet(MUTED)
        self.bar = QProgressBar(self)
        self.bar.setObjectName("runProgress")
        self.bar.setTextVisible(True)
        self.bar.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.bar.hide()
        self.bar_reason = _selectable(self, "runProgressReason", wrap=True)
        self.bar_reason.setStyleSheet(MUTED)
        self.bar_reason.hide()
        # Why Discover is disabled, or the answer to the last Discover request.
        self.note = _selectable(self, "discoverNote", wrap=True)
        self.updated = _selectable(self, "runUpdated", wrap=False)
        self.updated.setStyleSheet(MUTED)
        for widget in (self.headline, self.detail, self.bar, self.bar_reason, self.note,
                       self.updated):
            column.addWidget(widget)
        return column

    def _build_actions(self) -> QVBoxLayout:
        column = QVBoxLayout()
        column.setSpacing(6)
        self.discover_button = QPushButton("Discover", self)
        self.discover_button.setObjectName("pipelinesDiscoverButton")
        self.discover_button.setMinimumWidth(120)
        self.discover_button.setStyleSheet(primary_button_style())
        self.cancel_button = QPushButton("Cancel run", self)
        self.cancel_button.setObjectName("cancelRunButton")
        self.cancel_button.setToolTip("Stop the Discover run")
        self.cancel_button.hide()
        for button in (self.discover_button, self.cancel_button):
            column.addWidget(button)
        column.addStretch(1)
        return column

    # -- showing a summary ----------------------------------------------------------------

    def show_summary(self, summary: RunSummary) -> None:
        self.summary = summary
        self.headline.setText(summary.headline)
        # Idle is said in the normal text color: grey would read as a disabled control.
        self.headline.setStyleSheet("" if summary.tone == "idle"
                                    else f"color: {COLORS[summary.tone]};")
        self.detail.setText(summary.detail)
        self.detail.setVisible(bool(summary.detail))
        self._show_progress(summary)

    def _show_progress(self, summary: RunSummary) -> None:
        progress = summary.progress
        self.bar.setVisible(progress.kind != "none" or bool(progress.text))
        if progress.kind == "value":
            self.bar.setRange(0, BAR_STEPS)
            self.bar.setValue(round((progress.fraction or 0.0) * BAR_STEPS))
            self.bar.setFormat(progress.text)
        elif progress.kind == "busy":
            self.bar.setRange(0, 0)  # Qt's moving bar: work moves, its amount is unknown
            self.bar.setFormat(progress.text)
        else:
            self.bar.setRange(0, 1)  # still and empty: nothing moves
            self.bar.setValue(0)
            self.bar.setFormat(progress.text)
        # A busy bar draws no text on most styles: its reason is said under it. A still
        # bar draws its own text.
        show_reason = progress.kind == "busy" and bool(progress.text)
        self.bar_reason.setVisible(show_reason)
        self.bar_reason.setText(progress.text if show_reason else "")

    @property
    def bar_fraction(self) -> float | None:
        """What the bar shows as a number (None while busy, still or hidden)."""
        if not self.bar.isVisibleTo(self) or self.bar.maximum() != BAR_STEPS:
            return None
        return self.bar.value() / BAR_STEPS

    def set_updated_text(self, text: str) -> None:
        self.updated.setText(text)

    def set_note(self, text: str, color: str) -> None:
        self.note.setText(text)
        self.note.setStyleSheet(f"color: {color};")
        self.note.setVisible(bool(text))
