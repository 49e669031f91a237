"""One scope's per-stage counts: five stage rows by the twelve count fields.

Cells are updated in place (setText on existing items), so a refetch never resets the
table. ``None`` counts mean the scope may not be shown (no run, or the selected run's
history being restored): a plain sentence replaces the table and no number is shown.
"""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QStackedWidget,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from desktop.plain_text import PlainLabel
from desktop.presenters.operations import COUNT_FIELDS, COUNT_HINTS, COUNT_LABELS, STAGE_LABELS, STAGES
from desktop.theme import COLORS

# Fields that mean trouble get a warm color when non-zero (a tone of desktop.theme).
ATTENTION = {"failed": "bad", "exhausted": "bad", "blocked": "busy",
             "needsVerification": "busy", "stale": "busy", "unknown": "idle"}


class StageCountGrid(QStackedWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.table = QTableWidget(len(STAGES), len(COUNT_FIELDS), self)
        self.table.setObjectName("stageCountTable")
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.table.setAlternatingRowColors(True)
        self.table.setVerticalHeaderLabels([STAGE_LABELS[stage] for stage in STAGES])
        for column, name in enumerate(COUNT_FIELDS):
            header = QTableWidgetItem(COUNT_LABELS[name])
            header.setToolTip(COUNT_HINTS.get(name, COUNT_LABELS[name]))
            self.table.setHorizontalHeaderItem(column, header)
            for row in range(len(STAGES)):
                item = QTableWidgetItem("")
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, column, item)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.horizontalHeader().setMinimumSectionSize(48)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        height = (self.table.horizontalHeader().sizeHint().height()
                  + self.table.verticalHeader().defaultSectionSize() * len(STAGES) + 4)
        self.table.setFixedHeight(height)
        self.rows_height = height
        self.placeholder = PlainLabel(self)
        self.placeholder.setObjectName("stageCountPlaceholder")
        self.placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.placeholder.setWordWrap(True)
        self.placeholder.setStyleSheet("color: palette(placeholder-text);")
        self.addWidget(self.table)
        self.addWidget(self.placeholder)
        self.setFixedHeight(height)

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        # A table's own hint is a default 192 px tall; the tab widget sized itself to that and
        # left an empty band under the last row. The hint is the rows' height.
        return QSize(super().sizeHint().width(), self.rows_height)

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(super().minimumSizeHint().width(), self.rows_height)

    @property
    def showing_counts(self) -> bool:
        return self.currentWidget() is self.table

    def set_counts(self, blocks: Mapping[str, Mapping[str, int]] | None,
                   unavailable_text: str = "Not available.") -> None:
        if blocks is None:
            self.placeholder.setText(unavailable_text)
            self.setCurrentWidget(self.placeholder)
            return
        for row, stage in enumerate(STAGES):
            block = blocks.get(stage) or {}
            for column, name in enumerate(COUNT_FIELDS):
                value = block.get(name)
                item = self.table.item(row, column)
                text = "—" if value is None else f"{value:,}"
                if item.text() != text:
                    item.setText(text)
                tone = ATTENTION.get(name) if value else None
                if tone is None:
                    item.setData(Qt.ItemDataRole.ForegroundRole, None)  # the palette's text color
                else:
                    item.setForeground(QBrush(QColor(COLORS[tone])))
        self.setCurrentWidget(self.table)

    def cell_text(self, stage: str, name: str) -> str:
        return self.table.item(STAGES.index(stage), COUNT_FIELDS.index(name)).text()

