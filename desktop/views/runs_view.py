"""Runs: every workflow run (``GET /v1/workflow-runs``) with a detail pane.

The table shows status, run type, start, duration and the related job; filters (status,
type, date range), sorting and paging are the API's, so totals cover the whole filtered
result. The standing auto-apply loop is shown by name. Selecting a run shows its ordered
timeline, failure diagnostics, a link to the related job (``open_job``), Cancel (idempotent:
"cancellation requested" stays until the terminal state arrives) and, folded away, the
workflow id, run id and raw codes.

Refetches keep the user's filters, sort, page, selection and scroll: the query is this
view's state (``RunsQuery``) and rows are diffed in place by the table model.
"""

from __future__ import annotations

import html
from datetime import date, timedelta
from typing import Any

from PySide6.QtCore import QDate, QItemSelectionModel, Qt, Signal
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QDateEdit,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from desktop.client import ApiClient
from desktop.event_router import PIPELINES, RUNS
from desktop.formatting import describe_api_error
from desktop.plain_text import PlainLabel, rich_label
from desktop.presenters import runs as present
from desktop.presenters.runs import RunsQuery
from desktop.qt_compat import emit
from desktop.shell import ShellController
from desktop.views.live_view import LiveView
from desktop.views.partials.runs_table_model import SORT_KEYS, RunsTableModel
from desktop.views.partials.scroll_column import scroll_column
from desktop.views.partials.technical_disclosure import TechnicalDisclosure
from desktop.views.status_indicators import COLORS

STATUS_FILTERS: list[tuple[str, str | None]] = [
    ("Any status", None), ("Running", "running"), ("Completed", "completed"),
    ("Failed", "failed"), ("Canceled", "canceled"),
]
TYPE_FILTERS: list[tuple[str, str | None]] = [
    ("All run types", None), *((name, value) for value, name in present.WORKFLOW_TYPES.items()),
]
DATE_FILTERS = ("Any time", "Today", "Last 7 days", "Last 30 days", "Choose dates…")
CUSTOM_DATES = len(DATE_FILTERS) - 1
DEFAULT_ORDER = {"startedAt": "desc", "durationMs": "desc", "status": "asc",
                 "workflowType": "asc", "closedAt": "desc"}
LINK_BUTTON = ("QPushButton { border: none; color: palette(link); text-align: left; padding: 0; }"
               " QPushButton:hover { text-decoration: underline; }")


def _label(parent: QWidget, name: str, *, muted: bool = False, rich: bool = False) -> QLabel:
    """A selectable label, plain text unless ``rich`` (its text escaped)."""
    label = rich_label(QLabel(parent)) if rich else PlainLabel(parent)
    label.setObjectName(name)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if muted:
        label.setStyleSheet("color: palette(placeholder-text);")
    return label


# The longest common text of each fixed column; Related job (the last) takes the rest.
# The rare longer ones ("Cancellation requested") are elided; the columns can be widened.
WIDEST_TEXTS = (
    tuple(present.STATUS_LABELS.values()),
    tuple(present.WORKFLOW_TYPES.values()),
    ("28 Nov 14:03", "14:03:07"),
    ("59 min 59 s", "Duration"),
)
CELL_PADDING = 22  # margins plus the sort indicator


def fixed_column_widths(metrics: QFontMetrics) -> list[int]:
    """Status, Run, Started and Duration as wide as their longest text, no wider, so the
    related job's title is not cut short."""
    return [max(metrics.horizontalAdvance(text) for text in texts) + CELL_PADDING
            for texts in WIDEST_TEXTS]


class RunsView(LiveView):
    view_keys = frozenset({RUNS})
    open_job = Signal(str)           # a job key: the window switches to Jobs
    cancel_answered = Signal(object)  # the cancel command's answer (tests wait on it)

    def __init__(self, controller: ShellController, parent: QWidget | None = None):
        super().__init__(controller, parent)
        self.query = RunsQuery()
        self.total = 0
        self.selected_run_id: str | None = None
        self.detail: dict[str, Any] | None = None
        self.cancel_requested: set[str] = set()  # asked here; shown until terminal
        self.model = RunsTableModel(self)
        self._build()
        controller.event_received.connect(self._on_event)

    # -- layout ---------------------------------------------------------------------------

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 8, 4, 4)
        layout.setSpacing(8)
        layout.addLayout(self._build_filters())
        self.error_label = _label(self, "runsError")
        self.error_label.setStyleSheet(f"color: {COLORS['bad']};")
        self.error_label.hide()
        layout.addWidget(self.error_label)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(self._build_table(splitter))
        splitter.addWidget(self._build_detail(splitter))
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        layout.addWidget(splitter, 1)
        layout.addLayout(self._build_pager())

    def _build_filters(self) -> QHBoxLayout:
        row = QHBoxLayout()
        row.setSpacing(8)
        self.status_filter = self._combo("statusFilter", STATUS_FILTERS)
        self.type_filter = self._combo("typeFilter", TYPE_FILTERS)
        self.date_filter = QComboBox(self)
        self.date_filter.setObjectName("dateFilter")
        self.date_filter.addItems(DATE_FILTERS)
        self.from_date = self._date_edit("fromDate", QDate.currentDate().addDays(-7))
        self.to_date = self._date_edit("toDate", QDate.currentDate())
        self.status_filter.currentIndexChanged.connect(self._filters_changed)
        self.type_filter.currentIndexChanged.connect(self._filters_changed)
        self.date_filter.currentIndexChanged.connect(self._filters_changed)
        self.from_date.dateChanged.connect(self._filters_changed)
        self.to_date.dateChanged.connect(self._filters_changed)
        for widget in (QLabel("Show", self), self.status_filter, self.type_filter,
                       QLabel("started", self), self.date_filter, self.from_date,
                       self.to_date):
            row.addWidget(widget)
        row.addStretch(1)
        self._show_custom_dates()
        return row

    def _combo(self, name: str, options: list[tuple[str, str | None]]) -> QComboBox:
        combo = QComboBox(self)
        combo.setObjectName(name)
        for label, value in options:
            combo.addItem(label, value)
        return combo

    def _date_edit(self, name: str, initial: QDate) -> QDateEdit:
        edit = QDateEdit(initial, self)
        edit.setObjectName(name)
        edit.setCalendarPopup(True)
        edit.setDisplayFormat("d MMM yyyy")
        return edit

    def _build_table(self, parent: QWidget) -> QTableView:
        self.table = QTableView(parent)
        self.table.setObjectName("runsTable")
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 10)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionsClickable(True)
        header.setSortIndicatorShown(True)
        header.setSortIndicator(SORT_KEYS.index("startedAt"), Qt.SortOrder.DescendingOrder)
        header.sectionClicked.connect(self.sort_by_column)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        for column, width in enumerate(fixed_column_widths(self.table.fontMetrics())):
            self.table.setColumnWidth(column, width)
        # Selection, not the current index: when a refetch removes the selected row, Qt
        # moves the current index to a neighbour, but the user chose nothing new.
        self.table.selectionModel().selectionChanged.connect(self._selection_changed)
        return self.table

    def _build_detail(self, parent: QWidget) -> QScrollArea:
        scroll, pane, layout = scroll_column(parent, margins=(10, 0, 4, 0), spacing=6)
        pane.setObjectName("runDetail")
        self.detail_title = _label(pane, "runTitle")
        font = self.detail_title.font()
        font.setPointSizeF(font.pointSizeF() * 1.2)
        font.setBold(True)
        self.detail_title.setFont(font)
        self.detail_status = _label(pane, "runStatus")
        self.detail_meta = _label(pane, "runMeta", muted=True)
        self.open_job_button = QPushButton(pane)
        self.open_job_button.setObjectName("openJobButton")
        self.open_job_button.setStyleSheet(LINK_BUTTON)
        self.open_job_button.setCursor(Qt.CursorShape.PointingHandCursor)
        self.open_job_button.clicked.connect(self._open_related_job)
        actions = QHBoxLayout()
        self.cancel_button = QPushButton("Cancel run", pane)
        self.cancel_button.setObjectName("runCancelButton")
        self.cancel_button.clicked.connect(self.request_cancel)
        self.cancel_note = _label(pane, "cancelNote")
        actions.addWidget(self.cancel_button)
        actions.addWidget(self.cancel_note, 1)
        self.diagnostics_label = _label(pane, "diagnosticsLabel", rich=True)
        self.diagnostics_label.setStyleSheet(f"color: {COLORS['bad']};")
        timeline_title = QLabel("Timeline", pane)
        timeline_title.setStyleSheet("font-weight: 600;")
        self.timeline = QListWidget(pane)
        self.timeline.setObjectName("runTimeline")
        self.timeline.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.timeline.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.timeline.setMinimumHeight(160)
        self.technical = TechnicalDisclosure(pane)
        for widget in (self.detail_title, self.detail_status, self.detail_meta,
                       self.open_job_button):
            layout.addWidget(widget)
        layout.addLayout(actions)
        layout.addWidget(self.diagnostics_label)
        layout.addWidget(timeline_title)
        layout.addWidget(self.timeline, 1)
        layout.addWidget(self.technical)
        self._show_detail(None)
        return scroll

    def _build_pager(self) -> QHBoxLayout:
        row = QHBoxLayout()
        self.page_label = _label(self, "pageLabel", muted=True)
        self.previous_button = QPushButton("‹ Previous", self)
        self.previous_button.setObjectName("previousPage")
        self.previous_button.clicked.connect(self.previous_page)
        self.next_button = QPushButton("Next ›", self)
        self.next_button.setObjectName("nextPage")
        self.next_button.clicked.connect(self.next_page)
        row.addWidget(self.page_label, 1)
        row.addWidget(self.previous_button)
        row.addWidget(self.next_button)
        return row

    # -- query ----------------------------------------------------------------------------

    def set_query(self, query: RunsQuery) -> None:
        if query == self.query:
            return
        self.query = query
        self._show_pager()
        self.invalidate()

    def _filters_changed(self, *_args) -> None:
        self._show_custom_dates()
        started_from, started_to = self._date_range()
        self.set_query(self.query.filtered(
            status=self.status_filter.currentData(),
            workflow_type=self.type_filter.currentData(),
            started_from=started_from, started_to=started_to))

    def _show_custom_dates(self) -> None:
        custom = self.date_filter.currentIndex() == CUSTOM_DATES
        self.from_date.setVisible(custom)
        self.to_date.setVisible(custom)

    def _date_range(self) -> tuple[date | None, date | None]:
        today = date.today()
        choice = self.date_filter.currentIndex()
        if choice == 1:
            return today, today
        if choice == 2:
            return today - timedelta(days=6), None
        if choice == 3:
            return today - timedelta(days=29), None
        if choice == CUSTOM_DATES:
            start, end = self.from_date.date().toPython(), self.to_date.date().toPython()
            return min(start, end), max(start, end)
        return None, None

    def sort_by_column(self, column: int) -> None:
        key = SORT_KEYS[column] if 0 <= column < len(SORT_KEYS) else None
        header = self.table.horizontalHeader()
        if key is None:  # not sortable on the server: keep the current indicator
            header.setSortIndicator(SORT_KEYS.index(self.query.sort), self._qt_order())
            return
        if key == self.query.sort:
            order = "asc" if self.query.order == "desc" else "desc"
        else:
            order = DEFAULT_ORDER[key]
        self.set_query(self.query.filtered(sort=key, order=order))
        header.setSortIndicator(column, self._qt_order())

    def _qt_order(self) -> Qt.SortOrder:
        return (Qt.SortOrder.DescendingOrder if self.query.order == "desc"
                else Qt.SortOrder.AscendingOrder)

    def next_page(self) -> None:
        if self.query.has_next(self.total):
            self.set_query(self.query.next_page(self.total))

    def previous_page(self) -> None:
        if self.query.has_previous():
            self.set_query(self.query.previous_page())

    # -- LiveView -------------------------------------------------------------------------

    async def fetch(self, client: ApiClient) -> dict[str, Any]:
        query, run_id = self.query, self.selected_run_id
        page = await client.workflow_runs(**query.params())
        detail = None
        if run_id is not None:
            try:
                detail = await client.workflow_run(run_id)
            except Exception as error:  # noqa: BLE001 - the list still shows; detail says why
                detail = {"runId": run_id, "error": describe_api_error(error)}
        return {"query": query, "page": page, "detail": detail}

    def apply(self, result: dict[str, Any]) -> None:
        self.error_label.hide()
        if result["query"] != self.query:
            return  # the query changed meanwhile; its own fetch is queued
        page = result["page"]
        self.total = int(page["total"])
        self.model.set_rows(page["items"])
        self._show_pager()
        detail = result["detail"]
        if detail is not None and detail.get("runId") == self.selected_run_id:
            self._show_detail(detail)

    def show_error(self, error: Exception) -> None:
        self.error_label.setText(f"Could not refresh runs: {describe_api_error(error)}")
        self.error_label.show()

    def _on_event(self, event) -> None:
        """A cancellation request names its exact run: the row can say so at once. Every
        other change waits for the refetch (the event lacks the folded row's fields)."""
        if event.type != "WorkflowCancellationRequested":
            return
        run_id = event.payload.get("runId")
        patched = bool(run_id) and self.model.patch(run_id, {"cancelRequested": True})
        if patched and run_id == self.selected_run_id and self.detail is not None:
            self._show_cancel({**self.detail, "cancelRequested": True})

    # -- selection and detail ---------------------------------------------------------------

    def select_run(self, run_id: str) -> bool:
        row = self.model.row_of(run_id)
        if row is None:
            return False
        self.table.selectionModel().setCurrentIndex(
            self.model.index(row, 0),
            QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows)
        return True

    def selected_key(self) -> str | None:
        rows = self.table.selectionModel().selectedRows()
        return self.model.key_at(rows[0].row()) if rows else None

    def _selection_changed(self, *_args) -> None:
        run_id = self.selected_key()
        if run_id is None or run_id == self.selected_run_id:
            return
        self.selected_run_id = run_id
        self._show_detail(self.model.get(run_id))  # the summary at once, detail follows
        self.invalidate()

    def _show_detail(self, run: dict[str, Any] | None) -> None:
        self.detail = run
        if run is None:
            self.detail_title.setText("Select a run to see its timeline")
            for widget in (self.detail_status, self.detail_meta, self.open_job_button,
                           self.cancel_button, self.cancel_note, self.diagnostics_label,
                           self.technical):
                widget.hide()
            self.timeline.clear()
            return
        self.detail_title.setText(present.run_name(run))
        self.detail_status.setText(present.status_text(run))
        self.detail_status.setStyleSheet(f"color: {COLORS[present.status_tone(run)]};"
                                         " font-weight: 600;")
        self.detail_status.show()
        self.detail_meta.setText(
            f"Started {present.local_time_text(run.get('startedAt'))} · "
            f"{present.duration_text(run.get('durationMs'), running=run.get('status') == 'running')}")
        self.detail_meta.show()
        job = run.get("relatedJob")
        self.open_job_button.setVisible(bool(job))
        if job:
            self.open_job_button.setText(f"Open job: {present.related_job_text(run)}")
        self._show_cancel(run)
        error = run.get("error")
        lines = [error] if error else present.diagnostics_lines(run)
        self.diagnostics_label.setVisible(bool(lines))
        self.diagnostics_label.setText("<br>".join(html.escape(line) for line in lines))
        self._show_timeline(run.get("timeline"))
        self.technical.set_rows(present.technical_rows(run))
        self.technical.show()

    def _show_cancel(self, run: dict[str, Any]) -> None:
        state = present.cancel_state(run)
        if state == "terminal":
            self.cancel_requested.discard(run.get("runId"))
        elif run.get("runId") in self.cancel_requested:
            state = "requested"
        self.cancel_button.setVisible(state != "terminal")
        self.cancel_button.setEnabled(state == "available")
        self.cancel_button.setText("Cancellation requested" if state == "requested"
                                   else "Cancel run")
        self.cancel_note.setVisible(state == "requested")
        self.cancel_note.setText("Waiting for the run to stop…" if state == "requested" else "")
        self.cancel_note.setStyleSheet(f"color: {COLORS['busy']};")

    def _show_timeline(self, entries: list[dict[str, Any]] | None) -> None:
        if entries is None:
            return  # a summary row: keep what is shown until the detail arrives
        texts = [f"{present.local_time_text(entry.get('occurredAt'))}   "
                 f"{present.timeline_text(entry)}" for entry in entries]
        current = [self.timeline.item(i).text() for i in range(self.timeline.count())]
        if texts[:len(current)] == current:
            for text in texts[len(current):]:  # append only what is new: no flicker
                QListWidgetItem(text, self.timeline)
        else:
            self.timeline.clear()
            self.timeline.addItems(texts)

    def timeline_texts(self) -> list[str]:
        return [self.timeline.item(i).text() for i in range(self.timeline.count())]

    def _show_pager(self) -> None:
        shown = self.model.rowCount()
        self.page_label.setText(present.page_text(self.query, self.total, shown))
        self.previous_button.setEnabled(self.query.has_previous())
        self.next_button.setEnabled(self.query.has_next(self.total))

    # -- actions --------------------------------------------------------------------------

    def _open_related_job(self) -> None:
        job = (self.detail or {}).get("relatedJob")
        if job:
            emit(self.open_job, job["jobKey"])

    def request_cancel(self) -> None:
        run_id = self.selected_run_id
        if run_id is None:
            return
        self.cancel_requested.add(run_id)
        if self.detail is not None:
            self._show_cancel(self.detail)
        self.controller.call(lambda client: client.cancel_run(run_id),
                             lambda answer: self._on_cancel_answer(run_id, answer),
                             lambda error: self._on_cancel_failed(run_id, error),
                             name="runs-cancel")

    def _on_cancel_answer(self, run_id: str, answer: dict[str, Any]) -> None:
        if answer.get("alreadyTerminal"):
            self.cancel_requested.discard(run_id)
        emit(self.cancel_answered, answer)
        # The stop request must not leave the runs list or the Pipelines snapshot stale.
        emit(self.controller.views_invalidated, frozenset({RUNS, PIPELINES}))

    def _on_cancel_failed(self, run_id: str, error: Exception) -> None:
        self.cancel_requested.discard(run_id)
        if self.detail is not None and self.detail.get("runId") == run_id:
            self._show_cancel(self.detail)
        self.cancel_note.setText(f"Could not cancel: {describe_api_error(error)}")
        self.cancel_note.setStyleSheet(f"color: {COLORS['bad']};")
        self.cancel_note.show()
        emit(self.cancel_answered, error)
