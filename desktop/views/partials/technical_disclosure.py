"""A collapsed "Technical details" section: workflow ids, run ids and raw reason codes.

The user is a job seeker: identifiers and codes are for a support conversation, so they
stay folded away until asked for, and are selectable for copying.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from desktop.theme import COLORS
from desktop.views.partials.disclosure import Disclosure

TITLE = "Technical details"


class TechnicalDisclosure(Disclosure):
    """Folded details under a toggle; ``title`` names it (other folded details reuse it)."""

    def __init__(self, parent: QWidget | None = None, title: str = TITLE):
        super().__init__(title, parent, name="technical")
        self.details = QLabel(self.body)
        self.details.setObjectName("technicalText")
        self.details.setTextFormat(Qt.TextFormat.RichText)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setWordWrap(True)
        self.body_layout.addWidget(self.details)
        self.rows: list[tuple[str, str]] = []

    def set_rows(self, rows: Iterable[tuple[str, str]]) -> None:
        self.rows = list(rows)
        cells = "".join(
            f"<tr><td style='color:{COLORS['muted']}; padding-right:10px'>{html.escape(label)}</td>"
            f"<td><code>{html.escape(value)}</code></td></tr>" for label, value in self.rows)
        self.details.setText(f"<table>{cells}</table>" if cells else "—")

    def text(self) -> str:
        return "\n".join(f"{label}: {value}" for label, value in self.rows)
