"""Activity: every streamed event, newest at the bottom."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QSize
from PySide6.QtWidgets import QAbstractItemView, QLabel, QListView, QVBoxLayout, QWidget

from desktop.client import StreamedEvent
from desktop.models.event_list_model import EventListModel


class ActivityView(QWidget):
    view_key = "activity"

    def __init__(self, parent: QWidget | None = None, *, max_rows: int | None = None):
        super().__init__(parent)
        self.model = EventListModel(max_rows) if max_rows else EventListModel()
        self.model.setParent(self)
        self.list_view = QListView(self)
        self.list_view.setObjectName("eventList")
        self.list_view.setModel(self.model)
        self.list_view.setUniformItemSizes(True)  # cheap layout for thousands of rows
        self.list_view.setAlternatingRowColors(True)
        self.list_view.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list_view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.list_view.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.list_view.setIconSize(QSize(12, 12))
        self.list_view.setStyleSheet("QListView#eventList::item { padding: 2px 4px; }")
        self.empty_label = QLabel(
            "No events yet. Events appear here live as runs make progress.", self
        )
        self.empty_label.setObjectName("emptyHint")
        self.empty_label.setStyleSheet("color: palette(placeholder-text); padding: 4px 2px;")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.addWidget(self.empty_label)
        layout.addWidget(self.list_view)
        # Follow the newest row while the user is at the bottom. scrollToBottom() per row
        # costs O(rows) in Python rowCount() calls; jumping when the range grows is O(1).
        self._follow = True
        self.model.rowsAboutToBeInserted.connect(self._remember_follow)
        self.model.rowsInserted.connect(self._after_insert)
        self.list_view.verticalScrollBar().rangeChanged.connect(self._range_changed)

    def append(self, event: StreamedEvent) -> None:
        self.model.append(event)

    def _remember_follow(self, _parent: QModelIndex, _first: int, _last: int) -> None:
        bar = self.list_view.verticalScrollBar()
        self._follow = bar.value() >= bar.maximum() - 4  # at the bottom: keep following

    def _after_insert(self, _parent: QModelIndex, _first: int, _last: int) -> None:
        # isHidden, not isVisible: rows also arrive while the tab is not shown, and the
        # hint must be gone when the user opens it.
        if not self.empty_label.isHidden():
            self.empty_label.hide()

    def _range_changed(self, _minimum: int, maximum: int) -> None:
        if self._follow:
            self.list_view.verticalScrollBar().setValue(maximum)
