"""Jobs: the list (search, filters, sort) and the selected job's detail.

Search and filters run on the server; the list holds up to ``row_limit`` matching rows,
fetched in pages, sorted on the server by the clicked column (so a truncated list holds
the right top rows) and kept sorted locally by a proxy. It opens sorted by fit, best
first; a click on a header changes that for as long as the view lives. Each row gets the
user's minimum fit (``minFitScore`` from the settings), so a job below it says so.
Events update rows in place: an event that carries the canonical value (a score, a
stage's new status, the user's mark) patches its row; anything else — or a patch that
could move the row in or out of the current filters — refetches, debounced. Refetches
diff into the model, so selection, sorting and scroll survive.
"""

from __future__ import annotations

import asyncio
from typing import Any

from PySide6.QtCore import QItemSelectionModel, QSortFilterProxyModel, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLineEdit,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from desktop.client import ApiClient, StreamedEvent
from desktop.event_router import JOBS
from desktop.formatting import describe_api_error
from desktop.models.keyed_table_model import KeyRole, SortRole
from desktop.plain_text import PlainLabel
from desktop.qt_compat import emit
from desktop.shell import ShellController
from desktop.views.job_detail import JobDetail
from desktop.views.live_view import LiveView
from desktop.views.partials.batch_actions import BatchActionsBar
from desktop.views.partials.column_fit import ColumnFitter
from desktop.views.partials.jobs_table_model import (
    COMPANY,
    FILTER_FIELDS,
    FIT,
    LOCATION,
    SALARY,
    SERVER_SORT,
    SORT_FIELDS,
    STAGE,
    STAGE_TITLES,
    STATUS,
    TITLE,
    JobsTableModel,
    event_changes,
)
from desktop.views.status_indicators import COLORS

PAGE_SIZE = 500  # the API's largest page
ROW_LIMIT = 2_000
SEARCH_DEBOUNCE_MS = 300
# Fit, Stage and Status as wide as their common texts (a rare "gave up after retries" is
# elided; its tooltip says it whole); Company and Location as wide as their cells, capped;
# Title takes the rest.
JOBS_FIXED_TEXTS = {
    FIT: ("Fit", "100"),
    STAGE: (*STAGE_TITLES.values(), "Materials ready", "Discovered"),
    STATUS: ("ready to apply", "not started", "waiting", "running", "skipped",
             "below threshold", "prepared anyway"),
}
# Salary is fitted, not fixed: most postings have none, and a narrow table gives its room
# to the title before it scrolls sideways.
JOBS_FITTED_CAPS = {COMPANY: 160, LOCATION: 230, SALARY: 120}
TITLE_MIN = 200  # the title is what the user reads first

FIT_CHOICES = (("Any fit", None), ("Fit 50+", 50), ("Fit 70+", 70), ("Fit 85+", 85))
STATUS_CHOICES = (
    ("All jobs", {}),
    ("Needs attention", {"stageStatus": "failed"}),
    ("Gave up after retries", {"stageStatus": "exhausted"}),
    ("Blocked", {"stageStatus": "blocked"}),
    ("In progress", {"stageStatus": "running"}),
    ("Ready to apply", {"stage": "pdf", "stageStatus": "succeeded", "userStatus": "none"}),
    ("Not marked", {"userStatus": "none"}),
    ("Applied", {"userStatus": "applied"}),
    ("Skipped", {"userStatus": "skipped"}),
)
WHERE_CHOICES = (("Anywhere", None), ("Remote", "remote"), ("Hybrid", "hybrid"),
                 ("On-site", "onsite"))


class JobsView(LiveView):
    view_keys = frozenset({JOBS})
    open_job = Signal(str)  # the job the user selected; Runs and others can follow it

    def __init__(self, controller: ShellController, parent: QWidget | None = None, *,
                 row_limit: int = ROW_LIMIT):
        super().__init__(controller, parent)
        self.row_limit = row_limit
        self.total: int | None = None
        self.patched_events = 0
        self._absorbed = False
        self._pending_select: str | None = None
        self.model = JobsTableModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SortRole)
        self.proxy.setDynamicSortFilter(True)  # patched rows move to their sorted place
        self._build()
        controller.event_received.connect(self._on_event)

    def focus_search(self) -> None:
        """Edit → Find: the search field focused with its text selected, ready to type."""
        self.search.setFocus(Qt.FocusReason.ShortcutFocusReason)
        self.search.selectAll()

    # -- layout ---------------------------------------------------------------------------

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 6, 0, 0)
        bar = QHBoxLayout()
        self.search = QLineEdit(self)
        self.search.setObjectName("jobSearch")
        self.search.setPlaceholderText("Search title, company or location")
        self.search.setClearButtonEnabled(True)
        self.fit_filter = self._combo("fitFilter", FIT_CHOICES)
        self.status_filter = self._combo("statusFilter", STATUS_CHOICES)
        self.where_filter = self._combo("whereFilter", WHERE_CHOICES)
        self.count_label = PlainLabel("", self)
        self.count_label.setObjectName("jobCount")
        bar.addWidget(self.search, 2)
        for combo in (self.fit_filter, self.status_filter, self.where_filter):
            bar.addWidget(combo)
        bar.addWidget(self.count_label, 1, Qt.AlignmentFlag.AlignRight)
        layout.addLayout(bar)
        self.bulk = BatchActionsBar(self.controller, self.selected_keys, self)
        self.bulk.setObjectName("bulkActions")
        layout.addWidget(self.bulk)

        self.error_label = PlainLabel("", self)
        self.error_label.setObjectName("jobsError")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(f"color: {COLORS['bad']};")
        self.error_label.hide()
        layout.addWidget(self.error_label)

        self.splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.table = QTableView(self.splitter)
        self.table.setObjectName("jobsTable")
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(FIT, Qt.SortOrder.DescendingOrder)  # best fit first
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        # Ctrl/Shift-click selects several jobs for a batch; the current row is the detail.
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setAlternatingRowColors(True)
        self.table.setWordWrap(False)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(24)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.column_fitter = ColumnFitter(self.table, fixed_texts=JOBS_FIXED_TEXTS,
                                          fitted=JOBS_FITTED_CAPS, stretch=TITLE,
                                          stretch_min=TITLE_MIN)
        header.sortIndicatorChanged.connect(self._on_sort_changed)
        self.table.selectionModel().currentRowChanged.connect(self._on_current_changed)
        self.table.selectionModel().selectionChanged.connect(
            lambda *_: self.bulk.set_selection_count(len(self.selected_keys())))
        self.detail = JobDetail(self.controller, self.splitter)
        self.detail.setObjectName("jobDetail")
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(self.detail)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)
        self.splitter.setSizes([760, 440])  # the list gets the room; the user can drag
        layout.addWidget(self.splitter, 1)

        self._search_timer = QTimer(self)
        self._search_timer.setSingleShot(True)
        self._search_timer.setInterval(SEARCH_DEBOUNCE_MS)
        self._search_timer.timeout.connect(self.refresh)
        self.search.textChanged.connect(lambda _text: self._search_timer.start())
        for combo in (self.fit_filter, self.status_filter, self.where_filter):
            combo.currentIndexChanged.connect(lambda _index: self.refresh())

    def _combo(self, name: str, choices) -> QComboBox:
        combo = QComboBox(self)
        combo.setObjectName(name)
        for text, value in choices:
            combo.addItem(text, value)
        return combo

    # -- what to fetch --------------------------------------------------------------------

    def query(self) -> dict[str, Any]:
        """The API parameters for the current search, filters and sort."""
        params: dict[str, Any] = {"q": self.search.text().strip() or None,
                                  "minScore": self.fit_filter.currentData(),
                                  "remote": self.where_filter.currentData()}
        params.update(self.status_filter.currentData() or {})
        column = self.proxy.sortColumn()
        if column in SERVER_SORT:
            params["sort"] = SERVER_SORT[column]
            descending = self.proxy.sortOrder() == Qt.SortOrder.DescendingOrder
            params["order"] = "desc" if descending else "asc"
        return {key: value for key, value in params.items() if value is not None}

    async def fetch(self, client: ApiClient) -> dict[str, Any]:
        params = self.query()
        items, settings = await asyncio.gather(self._fetch_items(client, params),
                                               client.settings())
        minimum = settings.get("minFitScore")
        for item in items["items"]:
            item["minFitScore"] = minimum
        return {"params": params, **items}

    async def _fetch_items(self, client: ApiClient, params: dict[str, Any]) -> dict[str, Any]:
        items: list[dict[str, Any]] = []
        total = 0
        while True:
            limit = min(PAGE_SIZE, self.row_limit - len(items))
            page = await client.jobs(limit=limit, offset=len(items), **params)
            total = page["total"]
            items.extend(page["items"])
            if len(page["items"]) < limit or len(items) >= min(total, self.row_limit):
                break
        return {"total": total, "items": items}

    def apply(self, result: dict[str, Any]) -> None:
        if result["params"] != self.query():
            self.invalidate()  # the filters changed while this was in flight
        self.error_label.hide()
        self.total = result["total"]
        self.model.set_rows(result["items"])
        self._show_count()
        if self._pending_select and self.model.row_of(self._pending_select) is not None:
            self.select_job(self._pending_select)

    def show_error(self, error: Exception) -> None:
        self.error_label.setText(f"Could not load jobs. {describe_api_error(error)}")
        self.error_label.show()

    def _show_count(self) -> None:
        shown, total = self.model.rowCount(), self.total or 0
        if total > shown:
            self.count_label.setText(f"Showing {shown:,} of {total:,} jobs — search or filter "
                                     "to narrow")
        else:
            self.count_label.setText(f"{total:,} job{'s' if total != 1 else ''}")

    def _on_sort_changed(self, column: int, _order: Qt.SortOrder) -> None:
        # A complete list is already sorted locally; a truncated one needs the server's top.
        if column in SERVER_SORT and (self.total or 0) > self.model.rowCount():
            self.refresh()

    # -- events ---------------------------------------------------------------------------

    def _on_event(self, event: StreamedEvent) -> None:
        """Patch a shown row when the event carries the new value; the router's
        invalidation that follows (same dispatch) is then skipped unless the patched
        field decides which rows the server returns."""
        key = event.payload.get("jobId")
        row = self.model.get(key) if key else None
        if row is None:
            return
        changes = event_changes(row, event.type, event.payload)
        if changes is None:
            return
        self.model.patch(key, changes)
        self.patched_events += 1
        if not self._patch_affects_membership(changes):
            self._absorbed = True
            if key == self.detail.job_key:
                self.detail.invalidate()

    def _patch_affects_membership(self, changes: dict[str, Any]) -> bool:
        params = self.query()
        touched = {FILTER_FIELDS[name] for name in params if name in FILTER_FIELDS}
        if (self.total or 0) > self.model.rowCount() and params.get("sort") in SORT_FIELDS:
            touched.add(SORT_FIELDS[params["sort"]])
        return bool(touched & set(changes))

    def _on_invalidated(self, views: frozenset[str]) -> None:
        if self._absorbed:
            self._absorbed = False
            return
        super()._on_invalidated(views)

    # -- selection ------------------------------------------------------------------------

    def selected_key(self) -> str | None:
        index = self.table.selectionModel().currentIndex()
        return index.data(KeyRole) if index.isValid() else None

    def selected_keys(self) -> list[str]:
        """The selected jobs' keys, in the order the table shows them."""
        rows = sorted(self.table.selectionModel().selectedRows(), key=lambda i: i.row())
        return [key for key in (index.data(KeyRole) for index in rows) if key]

    def select_job(self, job_key: str) -> bool:
        """Select and show ``job_key`` (e.g. from a link in Runs). When it is not in the
        list (yet, or filtered out) the detail shows it anyway and the row is selected once
        it arrives."""
        row = self.model.row_of(job_key)
        if row is None:
            self._pending_select = job_key
            self.detail.set_job(job_key)
            return False
        self._pending_select = None
        index = self.proxy.mapFromSource(self.model.index(row, 0))
        self.table.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect
            | QItemSelectionModel.SelectionFlag.Rows)
        self.table.scrollTo(index)
        return True

    def _on_current_changed(self, current, _previous) -> None:
        key = current.data(KeyRole) if current.isValid() else None
        if key is None or key == self.detail.job_key:
            return
        self.detail.set_job(key)
        emit(self.open_job, key)

