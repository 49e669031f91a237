"""Apply Review: the approval queue, each job's application packet, the standing loop.

Nothing here submits an application. Approving lets the Apply workflow claim the job;
browser forms end as packets the user completes by hand ("Open application page", then
"Mark applied"); an email target sends only to the exact recipient and attachments
approved here. The packet's PDFs are the latest ones (the user's edited version when there
is one): their file names show with Open / Show in folder / Save as…, and "includes your
edits" when the user edited the résumé or letter.
"""

from __future__ import annotations

import html
import re
from typing import Any

from PySide6.QtCore import QSortFilterProxyModel, Qt, QUrl, Signal
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from desktop.client import ApiClient
from desktop.event_router import APPLY, JOBS, RUNS
from desktop.formatting import describe_api_error
from desktop.models.keyed_table_model import Column, KeyedTableModel, SortRole, field
from desktop.plain_text import PlainLabel, rich_label
from desktop.presenters.runs import local_time_text
from desktop.qt_compat import emit
from desktop.shell import ShellController
from desktop.views.live_view import LiveView
from desktop.views.partials.column_fit import ColumnFitter
from desktop.views.partials.jobs_table_model import whole
from desktop.views.partials.materials_panel import has_user_edits
from desktop.views.partials.pdf_files import PdfFiles
from desktop.views.status_indicators import COLORS

STATUS_FILTERS: list[tuple[str, str | None]] = [
    ("Open (not finished)", None),
    ("Awaiting approval", "awaiting_approval"),
    ("Approved", "approved"),
    ("In progress", "in_progress"),
    ("Awaiting manual completion", "awaiting_manual_completion"),
    ("Applied", "applied"),
    ("Rejected", "rejected"),
    ("Failed", "failed"),
]
STATUS_LABELS = {value: label for label, value in STATUS_FILTERS if value}
TARGET_LABELS = {"browser_form": "Web form", "email": "Email", "unknown": "Unknown"}
LOOP_STATES = {
    "running": ("ok", "running"),
    "stopped": ("idle", "stopped"),
    "budget_halted": ("bad", "halted: today's budget is used up"),
    "failed": ("bad", "failed"),
    "unknown": ("idle", "state unknown"),
}
PAGE_SIZE = 200
EDITED_NOTE = {("resume",): "The résumé includes your edits.",
               ("cover_letter",): "The cover letter includes your edits.",
               ("resume", "cover_letter"): "The résumé and cover letter include your edits."}


def packet_files(packet: dict[str, Any]) -> list[dict[str, Any]]:
    """The packet's PDFs as the files ``PdfFiles`` shows."""
    return [{"kind": kind, "path": packet.get(key)}
            for kind, key in (("resume_pdf", "resumePdf"), ("cover_letter_pdf", "coverLetterPdf"))
            if packet.get(key)]


def edits_note(job: dict[str, Any] | None) -> str:
    """"The résumé includes your edits." ("" when the user edited neither)."""
    return EDITED_NOTE.get(tuple(has_user_edits(job)), "")


def _humanize(key: str) -> str:
    """``salaryExpectation`` -> ``Salary expectation``."""
    words = re.sub(r"(?<!^)(?=[A-Z])", " ", str(key)).lower()
    return words[:1].upper() + words[1:]


def _target_kind(row: dict) -> str:
    return TARGET_LABELS.get((row.get("target") or {}).get("kind") or "unknown", "Unknown")


def _status(row: dict) -> str:
    return STATUS_LABELS.get(row.get("status"), row.get("status") or "—")


def _fit(row: dict) -> str:
    score = row.get("fitScore")
    return "—" if score is None else str(score)


APPLY_COLUMNS = [
    Column("Job", field("title"), tooltip=whole(field("title"))),
    Column("Company", field("company"), tooltip=whole(field("company"))),
    Column("Fit", _fit, sort_value=lambda r: -1 if r.get("fitScore") is None else r["fitScore"],
           align_right=True),
    Column("Target", _target_kind),
    Column("Status", _status, tooltip=whole(_status)),
    # The one timestamp style of every view: 14:03:07 today, else 28 Nov 14:03 (local).
    Column("Updated", lambda r: local_time_text(r.get("updatedAt")),
           sort_value=lambda r: r.get("updatedAt") or "", tooltip=lambda r: r.get("updatedAt")),
]
JOB, COMPANY, FIT, TARGET, STATUS, UPDATED = range(len(APPLY_COLUMNS))
# Fit, Target, Status and Updated as wide as their texts; Company as wide as its cells
# (capped); Job takes the rest.
APPLY_FIXED_TEXTS = {
    FIT: ("Fit", "100"),
    TARGET: tuple(TARGET_LABELS.values()),
    # "Awaiting manual completion" is rare and long: elided, whole in its tooltip.
    STATUS: tuple(label for label in STATUS_LABELS.values()
                  if len(label) <= len("Awaiting approval")),
    UPDATED: ("Updated", "28 Nov 14:03", "14:03:07"),
}
APPLY_FITTED_CAPS = {COMPANY: 170}


class ApplyReviewView(LiveView):
    view_keys = frozenset({APPLY, JOBS, RUNS})
    open_job = Signal(str)

    def __init__(self, controller: ShellController, parent: QWidget | None = None):
        super().__init__(controller, parent)
        self.loop: dict[str, Any] | None = None
        self._files_shown: tuple[str | None, tuple[str, ...]] | None = None
        self.model = KeyedTableModel(APPLY_COLUMNS, key=lambda r: r["jobKey"], parent=self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SortRole)
        self._build()

    # -- layout ---------------------------------------------------------------------------

    def _build(self) -> None:
        root = QVBoxLayout(self)
        root.setContentsMargins(0, 6, 0, 0)

        loop_row = QHBoxLayout()
        self.loop_label = rich_label(QLabel("Standing apply loop: —", self))
        self.loop_label.setObjectName("loopState")
        self.loop_toggle = QCheckBox("Apply automatically", self)
        self.loop_toggle.setObjectName("autoApplyToggle")
        self.loop_toggle.setToolTip("Keep the standing apply loop running. It still never "
                                    "submits a web form and never emails without your approval.")
        self.loop_toggle.clicked.connect(self._toggle_loop)
        self.status_filter = QComboBox(self)
        self.status_filter.setObjectName("statusFilter")
        for label, value in STATUS_FILTERS:
            self.status_filter.addItem(label, value)
        self.status_filter.currentIndexChanged.connect(lambda _i: self.refresh())
        loop_row.addWidget(self.loop_label, 1)
        loop_row.addWidget(self.loop_toggle)
        loop_row.addSpacing(16)
        loop_row.addWidget(QLabel("Show:", self))
        loop_row.addWidget(self.status_filter)
        root.addLayout(loop_row)

        self.message = PlainLabel("", self)
        self.message.setObjectName("applyMessage")
        self.message.setWordWrap(True)
        root.addWidget(self.message)

        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        self.table = QTableView(splitter)
        self.table.setObjectName("applyTable")
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        self.table.sortByColumn(2, Qt.SortOrder.DescendingOrder)  # best fit first
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.column_fitter = ColumnFitter(self.table, fixed_texts=APPLY_FIXED_TEXTS,
                                          fitted=APPLY_FITTED_CAPS, stretch=JOB,
                                          stretch_min=200)
        self.table.selectionModel().currentRowChanged.connect(lambda *_: self._show_detail())
        self.empty = QLabel("Nothing to review. Jobs appear here once they are scored at or "
                            "above your fit threshold and their resume and cover letter are "
                            "ready.", self)
        self.empty.setWordWrap(True)
        self.empty.setObjectName("emptyHint")
        self.detail = self._build_detail(splitter)
        splitter.addWidget(self.table)
        splitter.addWidget(self.detail)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setSizes([680, 420])  # the queue first: its six columns need ~650 px
        root.addWidget(self.empty)
        root.addWidget(splitter, 1)

    def _build_detail(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Application packet", parent)
        form = self._form = QFormLayout(box)
        self.d_title = rich_label(QLabel("Select a job", box))
        self.d_title.setWordWrap(True)
        self.d_target = PlainLabel("—", box)
        self.d_target.setWordWrap(True)
        self.d_target.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.d_answers = rich_label(QLabel("—", box))
        self.d_answers.setWordWrap(True)
        self.d_answers.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.d_failure = PlainLabel("", box)
        self.d_failure.setWordWrap(True)
        self.d_failure.setStyleSheet(f"color: {COLORS['bad']};")
        pdfs = QVBoxLayout()
        self.pdf_files = PdfFiles(box)
        self.open_resume = self.pdf_files.open_buttons["resume_pdf"]
        self.open_cover = self.pdf_files.open_buttons["cover_letter_pdf"]
        self.edits_label = PlainLabel("", box)
        self.edits_label.setObjectName("packetEdits")
        self.edits_label.setStyleSheet(f"color: {COLORS['ok']};")
        self.edits_label.hide()
        pdfs.addWidget(self.edits_label)
        pdfs.addWidget(self.pdf_files)
        self.recipient = QLineEdit(box)
        self.recipient.setObjectName("approvedRecipient")
        self.recipient.setPlaceholderText("exact recipient address")
        self.attach_resume = QCheckBox("Attach resume PDF", box)
        self.attach_cover = QCheckBox("Attach cover letter PDF", box)
        self.approve_button = QPushButton("Approve", box)
        self.approve_button.setObjectName("approveButton")
        self.reject_button = QPushButton("Reject", box)
        self.reject_button.setObjectName("rejectButton")
        self.start_button = QPushButton("Apply now", box)
        self.start_button.setObjectName("startApplyButton")
        self.start_button.setToolTip("Prepare the application now: a web form becomes a packet "
                                     "you complete yourself; an email goes only to the approved "
                                     "recipient.")
        self.open_page_button = QPushButton("Open application page", box)
        self.mark_applied_button = QPushButton("Mark applied", box)
        self.mark_applied_button.setObjectName("markAppliedButton")
        self.approve_button.clicked.connect(self._approve)
        self.reject_button.clicked.connect(lambda: self._act("reject"))
        self.start_button.clicked.connect(lambda: self._act("start"))
        self.mark_applied_button.clicked.connect(lambda: self._act("mark-applied"))
        self.open_page_button.clicked.connect(self._open_page)
        # Two rows (deciding; finishing a web form by hand), so the packet pane stays narrow
        # enough for every column of the queue, Updated included, at the default width.
        buttons = QVBoxLayout()
        for row in ((self.approve_button, self.reject_button, self.start_button),
                    (self.open_page_button, self.mark_applied_button)):
            line = QHBoxLayout()
            for button in row:
                line.addWidget(button)
            buttons.addLayout(line)
        self.job_link = QPushButton("Show job details", box)
        self.job_link.setFlat(True)
        self.job_link.clicked.connect(self._open_job)
        form.addRow(self.d_title)
        form.addRow("Target:", self.d_target)
        form.addRow("Materials:", pdfs)
        form.addRow("Answers:", self.d_answers)
        form.addRow("Send to:", self.recipient)
        form.addRow("", self.attach_resume)
        form.addRow("", self.attach_cover)
        form.addRow(self.d_failure)
        form.addRow(buttons)
        form.addRow(self.job_link)
        self._email_rows = (self.recipient, self.attach_resume, self.attach_cover)
        self._set_detail(None)
        return box

    # -- data -----------------------------------------------------------------------------

    async def fetch(self, client: ApiClient) -> tuple[dict, dict]:
        status = self.status_filter.currentData()
        queue = await client.apply_queue(status=status, limit=PAGE_SIZE)
        loop = await client.apply_loop()
        return queue, loop

    def apply(self, result: tuple[dict, dict]) -> None:
        queue, loop = result
        self.model.set_rows(queue.get("items") or [])
        self.empty.setVisible(self.model.rowCount() == 0)
        self._show_loop(loop)
        self._show_detail()

    def show_error(self, error: Exception) -> None:
        self._say(f"Could not load the queue: {describe_api_error(error)}", "bad")

    def _show_loop(self, loop: dict) -> None:
        self.loop = loop
        tone, text = LOOP_STATES.get(loop.get("state") or "unknown", LOOP_STATES["unknown"])
        reason = loop.get("reason")
        suffix = f" ({html.escape(reason)})" if reason and loop.get("state") != "budget_halted" else ""
        self.loop_label.setText(
            f"Standing apply loop: <b style='color:{COLORS[tone]}'>{html.escape(text)}</b>{suffix}")
        self.loop_toggle.setChecked(bool(loop.get("enabled")))

    # -- selection ------------------------------------------------------------------------

    def selected(self) -> dict | None:
        index = self.table.selectionModel().currentIndex()
        if not index.isValid():
            return None
        return self.model.row_at(self.proxy.mapToSource(index).row())

    def select_job(self, job_key: str) -> bool:
        row = self.model.row_of(job_key)
        if row is None:
            return False
        self.table.selectRow(self.proxy.mapFromSource(self.model.index(row, 0)).row())
        return True

    def _show_detail(self) -> None:
        self._set_detail(self.selected())

    def _set_detail(self, item: dict | None) -> None:
        target = (item or {}).get("target") or {}
        packet = (item or {}).get("packet") or {}
        status = (item or {}).get("status")
        is_email = target.get("kind") == "email"
        self.d_title.setText("Select a job" if item is None else
                             f"<b>{html.escape(item.get('title') or '—')}</b> at "
                             f"{html.escape(item.get('company') or '—')}")
        self.d_target.setText(self._target_text(target))
        answers = packet.get("answers") or {}
        self.d_answers.setText("<br>".join(
            f"{html.escape(_humanize(k))}: {html.escape(str(v))}" for k, v in answers.items())
            or "—")
        failure = (item or {}).get("failure")
        self.d_failure.setText("" if not failure else
                               f"Failed: {failure.get('message') or failure.get('code')}")
        approval = (item or {}).get("approval") or {}
        self.recipient.setText(approval.get("recipient") or target.get("recipient") or "")
        attached = set(approval.get("attachments") or [])
        self.attach_resume.setChecked(not approval or packet.get("resumePdf") in attached)
        self.attach_cover.setChecked(not approval or packet.get("coverLetterPdf") in attached)
        for widget in self._email_rows:
            self._form.setRowVisible(widget, is_email)
        self._show_files(item, packet)
        self.approve_button.setEnabled(status == "awaiting_approval")
        self.reject_button.setEnabled(status in {"awaiting_approval", "approved",
                                                 "awaiting_manual_completion"})
        self.start_button.setEnabled(status == "approved")
        self.open_page_button.setEnabled(bool(packet.get("targetUrl") or target.get("url")))
        self.mark_applied_button.setEnabled(status == "awaiting_manual_completion")
        self.job_link.setEnabled(item is not None)

    def _show_files(self, item: dict | None, packet: dict) -> None:
        """The packet's files; whether they include the user's edits is read once per job
        and packet (the job's detail says), not on every refresh."""
        files = packet_files(packet)
        shown = ((item or {}).get("jobKey"), tuple(f["path"] for f in files))
        self.pdf_files.set_files(files)
        if shown == self._files_shown:
            return
        self._files_shown = shown
        self.pdf_files.say("")
        self.edits_label.hide()
        if item is None or not files:
            return

        def done(job: dict[str, Any]) -> None:
            if self._files_shown == shown:
                note = edits_note(job)
                self.edits_label.setText(note)
                self.edits_label.setVisible(bool(note))

        self.controller.call(lambda client: client.job(shown[0]), done, lambda _error: None,
                             name="apply-packet-edits")

    @staticmethod
    def _target_text(target: dict) -> str:
        kind = target.get("kind")
        if kind == "email":
            return f"Email to {target.get('recipient') or 'an unknown address'}"
        if kind == "browser_form":
            return f"Web form: {target.get('url') or 'address unknown'} (you submit it yourself)"
        return "Unknown: the posting names no application form or address" if target else "—"

    # -- actions --------------------------------------------------------------------------

    def _approve(self) -> None:
        item = self.selected()
        if item is None:
            return
        body: dict[str, Any] = {}
        if (item.get("target") or {}).get("kind") == "email":
            packet = item.get("packet") or {}
            body["recipient"] = self.recipient.text().strip()
            body["attachments"] = [path for path, box in (
                (packet.get("resumePdf"), self.attach_resume),
                (packet.get("coverLetterPdf"), self.attach_cover)) if path and box.isChecked()]
        self._act("approve", **body)

    def _act(self, action: str, **body: Any) -> None:
        item = self.selected()
        if item is None:
            return
        job_key = item["jobKey"]
        self._say("Working…", "idle")
        self.controller.call(lambda client: client.apply_action(job_key, action, **body),
                             lambda _result: self._acted(action),
                             lambda error: self._say(describe_api_error(error), "bad"),
                             name=f"apply-{action}")

    def _acted(self, action: str) -> None:
        done = {"approve": "Approved.", "reject": "Rejected.", "mark-applied": "Marked applied.",
                "start": "Applying… the packet appears here when it is ready."}
        self._say(done.get(action, "Done."), "ok")
        self.refresh()

    def _toggle_loop(self, checked: bool) -> None:
        self.controller.call(lambda client: client.patch_settings(autoApply=checked),
                             lambda _settings: self.refresh(),
                             lambda error: (self._say(describe_api_error(error), "bad"),
                                            self.loop_toggle.setChecked(not checked)),
                             name="apply-loop-toggle")

    def _open_page(self) -> None:
        item = self.selected() or {}
        url = (item.get("packet") or {}).get("targetUrl") or (item.get("target") or {}).get("url")
        if url:
            QDesktopServices.openUrl(QUrl(url))

    def _open_job(self) -> None:
        item = self.selected()
        if item is not None:
            emit(self.open_job, item["jobKey"])

    def _say(self, text: str, tone: str) -> None:
        self.message.setText(text)
        self.message.setStyleSheet(f"color: {COLORS[tone]};")
