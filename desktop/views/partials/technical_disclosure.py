"""A collapsed "Technical details" section: workflow ids, run ids and raw reason codes.

The user is a job seeker: identifiers and codes are for a support conversation, so they
stay folded away until asked for, and are selectable for copying.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QLabel, QToolButton, QVBoxLayout, QWidget

from desktop.theme import COLORS

TITLE = "Technical details"


class TechnicalDisclosure(QWidget):
    """Folded details under a toggle; ``title`` names it (other folded details reuse it)."""

    def __init__(self, parent: QWidget | None = None, title: str = TITLE):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        self.toggle = QToolButton(self)
        self.toggle.setObjectName("technicalToggle")
        self.toggle.setText(title)
        self.toggle.setCheckable(True)
        self.toggle.setChecked(False)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.toggled.connect(self.set_expanded)
        self.body = QFrame(self)
        self.body.setObjectName("technicalBody")
        self.body.setStyleSheet("#technicalBody { border-left: 2px solid palette(mid); }")
        body_layout = QVBoxLayout(self.body)
        body_layout.setContentsMargins(10, 2, 4, 2)
        self.details = QLabel(self.body)
        self.details.setObjectName("technicalText")
        self.details.setTextFormat(Qt.TextFormat.RichText)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setWordWrap(True)
        body_layout.addWidget(self.details)
        layout.addWidget(self.toggle, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.body)
        self.rows: list[tuple[str, str]] = []
        self.body.setVisible(False)

    @property
    def expanded(self) -> bool:
        return self.toggle.isChecked()

    def set_expanded(self, expanded: bool) -> None:
        if self.toggle.isChecked() != expanded:
            self.toggle.setChecked(expanded)  # re-enters through toggled
            return
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
        self.body.setVisible(expanded)

    def set_rows(self, rows: Iterable[tuple[str, str]]) -> None:
        self.rows = list(rows)
        cells = "".join(
            f"<tr><td style='color:{COLORS['muted']}; padding-right:10px'>{html.escape(label)}</td>"
            f"<td><code>{html.escape(value)}</code></td></tr>" for label, value in self.rows)
        self.details.setText(f"<table>{cells}</table>" if cells else "—")

    def text(self) -> str:
        return "\n".join(f"{label}: {value}" for label, value in self.rows)
