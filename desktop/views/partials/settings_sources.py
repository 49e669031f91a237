"""The sources editor: the configured job sources as a table, add / remove / enable.

Rows keep the API's own dict for each source, so kinds this editor cannot build (a broad
job-board search, say) survive a save untouched; only ``enabled`` is edited in place.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

# kind -> (label, the one field a user types, its placeholder)
ADDABLE = {
    "greenhouse": ("Greenhouse board", "boardToken", "board token, e.g. acme"),
    "lever": ("Lever site", "company", "company, e.g. globex"),
    "ashby": ("Ashby board", "boardName", "board name, e.g. initech"),
    "feed": ("RSS / Atom feed", "url", "https://example.org/jobs.rss"),
    "json_file": ("JSON file", "path", "/path/to/postings.json"),
    "csv_file": ("CSV file", "path", "/path/to/jobs.csv"),
}
KIND_LABELS = {"demo_board": "Demo board", "jobspy": "Job boards search",
               "workday": "Workday careers site", "smartrecruiters": "SmartRecruiters company",
               "workable": "Workable careers page", "recruitee": "Recruitee careers site",
               "personio": "Personio job page",
               **{kind: label for kind, (label, _f, _p) in ADDABLE.items()}}
DETAIL_FIELDS = ("boardToken", "company", "boardName", "account", "host", "url", "path")


def describe_source(source: dict[str, Any]) -> str:
    for field in DETAIL_FIELDS:
        if source.get(field):
            return str(source[field])
    if source.get("kind") == "jobspy":
        return ", ".join(source.get("queries") or [])
    return "bundled sample postings"


def new_source_id(kind: str, value: str, taken: set[str]) -> str:
    """``gh-acme``-style ids: lower case, safe characters, unique among ``taken``."""
    short = {"greenhouse": "gh", "lever": "lever", "ashby": "ashby", "feed": "feed",
             "json_file": "json", "csv_file": "csv"}[kind]
    stem = re.sub(r"[^a-z0-9]+", "-", value.lower().rsplit("/", 1)[-1]).strip("-")[:40]
    base = f"{short}-{stem or 'source'}"
    candidate, n = base, 2
    while candidate in taken:
        candidate, n = f"{base}-{n}", n + 1
    return candidate


class SourcesEditor(QWidget):
    changed = Signal()
    COLUMNS = ("On", "Kind", "Where", "Id")

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._sources: list[dict[str, Any]] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.table = QTableWidget(0, len(self.COLUMNS), self)
        self.table.setObjectName("sourcesTable")
        self.table.setHorizontalHeaderLabels(self.COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.ResizeToContents)
        self.table.setMinimumHeight(120)
        self.table.itemChanged.connect(self._on_item_changed)
        layout.addWidget(self.table)

        add_row = QHBoxLayout()
        self.kind = QComboBox(self)
        self.kind.setObjectName("sourceKind")
        for kind, (label, _field, _placeholder) in ADDABLE.items():
            self.kind.addItem(label, kind)
        self.value = QLineEdit(self)
        self.value.setObjectName("sourceValue")
        self.add_button = QPushButton("Add source", self)
        self.add_button.setObjectName("addSource")
        self.remove_button = QPushButton("Remove selected", self)
        self.remove_button.setObjectName("removeSource")
        add_row.addWidget(self.kind)
        add_row.addWidget(self.value, 1)
        add_row.addWidget(self.add_button)
        add_row.addWidget(self.remove_button)
        layout.addLayout(add_row)
        self.kind.currentIndexChanged.connect(self._update_placeholder)
        self.add_button.clicked.connect(self.add_from_inputs)
        self.value.returnPressed.connect(self.add_from_inputs)
        self.remove_button.clicked.connect(self.remove_selected)
        self._update_placeholder()

    # -- data -----------------------------------------------------------------------------

    def set_sources(self, sources: list[dict[str, Any]]) -> None:
        self._sources = [copy.deepcopy(source) for source in sources]
        self._render()

    def sources(self) -> list[dict[str, Any]]:
        return [copy.deepcopy(source) for source in self._sources]

    def add_from_inputs(self) -> None:
        value = self.value.text().strip()
        if not value:
            return
        kind = self.kind.currentData()
        _label, field, _placeholder = ADDABLE[kind]
        taken = {str(source.get("id")) for source in self._sources}
        # Sent as typed: the API validates (a bad token or URL comes back inline).
        self._sources.append({"kind": kind, "id": new_source_id(kind, value, taken),
                              field: value, "enabled": True})
        self.value.clear()
        self._render()
        self.changed.emit()

    def remove_selected(self) -> None:
        rows = sorted({index.row() for index in self.table.selectedIndexes()}, reverse=True)
        for row in rows:
            del self._sources[row]
        if rows:
            self._render()
            self.changed.emit()

    # -- table ----------------------------------------------------------------------------

    def _render(self) -> None:
        self.table.blockSignals(True)
        try:
            self.table.setRowCount(len(self._sources))
            for row, source in enumerate(self._sources):
                on = QTableWidgetItem()
                on.setFlags(Qt.ItemFlag.ItemIsUserCheckable | Qt.ItemFlag.ItemIsEnabled
                            | Qt.ItemFlag.ItemIsSelectable)
                on.setCheckState(Qt.CheckState.Checked if source.get("enabled", True)
                                 else Qt.CheckState.Unchecked)
                self.table.setItem(row, 0, on)
                kind = str(source.get("kind"))
                for column, text in enumerate(
                        (KIND_LABELS.get(kind, kind), describe_source(source),
                         str(source.get("id", ""))), start=1):
                    self.table.setItem(row, column, QTableWidgetItem(text))
        finally:
            self.table.blockSignals(False)

    def _on_item_changed(self, item: QTableWidgetItem) -> None:
        if item.column() != 0 or item.row() >= len(self._sources):
            return
        self._sources[item.row()]["enabled"] = item.checkState() == Qt.CheckState.Checked
        self.changed.emit()

    def _update_placeholder(self) -> None:
        _label, _field, placeholder = ADDABLE[self.kind.currentData()]
        self.value.setPlaceholderText(placeholder)
