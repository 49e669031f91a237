"""The sources editor: the configured job sources as a table, add / remove / enable.

A company's board is added by pasting its careers-page or job-board link
(``backend/sources/link.py`` reads the family and board; the id is generated); a link it
cannot read is refused at once with a message saying what to paste instead. Feeds and
files are added by their address or path.

Rows keep the API's own dict for each source, so kinds this editor cannot build (a broad
job-board search, say) survive a save untouched; only ``enabled`` is edited in place.
Source ids are for the API: they are listed under "Technical details", not in the table.
"""

from __future__ import annotations

import copy
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

from backend.desktop_contract import SourceLinkError, new_source_id, resolve_source_link
from desktop.plain_text import PlainLabel
from desktop.presenters.sources import KIND_LABELS, describe_source, source_name
from desktop.theme import COLORS
from desktop.views.partials.settings_form import HINT_STYLE
from desktop.views.partials.technical_disclosure import TechnicalDisclosure

LINK = "link"
# what to add -> (label, the settings field a typed value goes in, its placeholder)
ADDABLE = {
    LINK: ("Company job board", None,
           "Paste a careers-page or job-board link, e.g. https://jobs.lever.co/acme"),
    "feed": ("RSS / Atom feed", "url", "https://example.org/jobs.rss"),
    "json_file": ("JSON file", "path", "/path/to/postings.json"),
    "csv_file": ("CSV file", "path", "/path/to/jobs.csv"),
}


class SourcesEditor(QWidget):
    changed = Signal()
    COLUMNS = ("On", "Source", "Where")

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
        self.feedback = PlainLabel(self)  # why a link was refused, or what was added
        self.feedback.setObjectName("sourceFeedback")
        self.feedback.setWordWrap(True)
        self.feedback.hide()
        layout.addWidget(self.feedback)
        self.technical = TechnicalDisclosure(self)
        self.technical.setObjectName("sourcesTechnical")
        layout.addWidget(self.technical)
        self.kind.currentIndexChanged.connect(self._update_placeholder)
        self.add_button.clicked.connect(self.add_from_inputs)
        self.value.returnPressed.connect(self.add_from_inputs)
        self.value.textEdited.connect(lambda _text: self.feedback.hide())
        self.remove_button.clicked.connect(self.remove_selected)
        self._update_placeholder()

    # -- data -----------------------------------------------------------------------------

    def set_sources(self, sources: list[dict[str, Any]]) -> None:
        self._sources = [copy.deepcopy(source) for source in sources]
        self.feedback.hide()
        self._render()

    def sources(self) -> list[dict[str, Any]]:
        return [copy.deepcopy(source) for source in self._sources]

    @property
    def error(self) -> str | None:
        """The message shown for the last refused link, if it is still shown."""
        return self.feedback.text() if self.feedback.property("refused") and \
            not self.feedback.isHidden() else None

    def add_from_inputs(self) -> None:
        value = self.value.text().strip()
        if not value:
            return
        taken = {str(source.get("id")) for source in self._sources}
        kind = self.kind.currentData()
        if kind == LINK:
            try:
                source = resolve_source_link(value).source(taken)
            except SourceLinkError as refused:
                self._say(refused.message, refused=True)
                return  # the typed link stays, to be corrected
        else:
            # Sent as typed: the API validates (a bad URL or path comes back inline).
            field = ADDABLE[kind][1]
            source = {"kind": kind, "id": new_source_id(kind, value, taken), field: value,
                      "enabled": True}
        self._sources.append(source)
        self.value.clear()
        self._say(f"Added {source_name(source)}. Save settings to keep it.", refused=False)
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
                label = KIND_LABELS.get(kind, kind.replace("_", " ").capitalize())  # a newer kind
                for column, text in enumerate((label, describe_source(source)), start=1):
                    self.table.setItem(row, column, QTableWidgetItem(text))
        finally:
            self.table.blockSignals(False)
        self.technical.set_rows((f"Source id of {source_name(source)}", str(source.get("id")))
                                for source in self._sources)

    def _on_item_changed(self, item: QTableWidgetItem) -> None:
        if item.column() != 0 or item.row() >= len(self._sources):
            return
        self._sources[item.row()]["enabled"] = item.checkState() == Qt.CheckState.Checked
        self.changed.emit()

    def _say(self, text: str, *, refused: bool) -> None:
        self.feedback.setText(text)
        self.feedback.setProperty("refused", refused)
        self.feedback.setStyleSheet(f"color: {COLORS['bad']}; font-size: 9pt;" if refused
                                    else HINT_STYLE)
        self.feedback.show()

    def _update_placeholder(self) -> None:
        _label, _field, placeholder = ADDABLE[self.kind.currentData()]
        self.value.setPlaceholderText(placeholder)
        self.feedback.hide()
