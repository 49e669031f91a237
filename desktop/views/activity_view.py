"""Activity: every streamed event as a sentence, newest at the bottom.

The selected row's event type, ids and codes are under "Technical details" below the
list (for a support conversation); the list itself speaks the job seeker's words.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QItemSelection, QModelIndex, QSize
from PySide6.QtWidgets import QAbstractItemView, QLabel, QListView, QVBoxLayout, QWidget

from desktop.client import StreamedEvent
from desktop.event_router import SETTINGS
from desktop.models.event_list_model import DetailsRole, EventListModel
from desktop.presenters.sources import source_names
from desktop.shell import ShellController
from desktop.views.partials.technical_disclosure import TechnicalDisclosure

NO_SELECTION = (("Event", "select a row to see its type, ids and codes"),)


class ActivityView(QWidget):
    view_key = "activity"

    def __init__(self, parent: QWidget | None = None, *, max_rows: int | None = None,
                 controller: ShellController | None = None):
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
            "Nothing has happened yet. What JobCtrl does appears here as it happens.", self
        )
        self.empty_label.setObjectName("emptyHint")
        self.empty_label.setStyleSheet("color: palette(placeholder-text); padding: 4px 2px;")
        self.technical = TechnicalDisclosure(self)
        self.technical.setObjectName("activityTechnical")
        self.technical.set_rows(NO_SELECTION)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        layout.addWidget(self.empty_label)
        layout.addWidget(self.list_view, 1)
        layout.addWidget(self.technical)
        # Follow the newest row while the user is at the bottom. scrollToBottom() per row
        # costs O(rows) in Python rowCount() calls; jumping when the range grows is O(1).
        self._follow = True
        self.model.rowsAboutToBeInserted.connect(self._remember_follow)
        self.model.rowsInserted.connect(self._after_insert)
        self.list_view.verticalScrollBar().rangeChanged.connect(self._range_changed)
        self.list_view.selectionModel().selectionChanged.connect(self._show_selected)
        self.controller = controller
        if controller is not None:  # sources are named as in Settings ("acme (Greenhouse)")
            controller.runtime_ready.connect(lambda _info: self.read_source_names())
            controller.views_invalidated.connect(self._on_invalidated)

    def append(self, event: StreamedEvent) -> None:
        self.model.append(event)

    # -- names ----------------------------------------------------------------------------

    def read_source_names(self) -> None:
        async def request(client) -> dict[str, Any]:
            return await client.settings()

        # A failed read keeps the generic names ("a source"); the next save reads again.
        self.controller.call(request, self._on_settings, lambda _error: None,
                             name="activity-source-names")

    def _on_settings(self, settings: dict[str, Any]) -> None:
        self.model.set_source_names(source_names(settings.get("sources") or []))

    def _on_invalidated(self, views: frozenset[str]) -> None:
        if SETTINGS in views:
            self.read_source_names()

    # -- technical details ----------------------------------------------------------------

    def _show_selected(self, selected: QItemSelection, _deselected: QItemSelection) -> None:
        indexes = selected.indexes()
        rows = indexes[0].data(DetailsRole) if indexes else None
        self.technical.set_rows(rows or NO_SELECTION)

    # -- following the newest row ---------------------------------------------------------

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
