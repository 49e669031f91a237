"""The Contacts panel of one job: start supervised contact research, see its task status
and the candidates it found.

Research runs only when the user presses "Research contacts". The panel fetches through
the controller (``controller.call``), never on the GUI thread, and refetches when a
Contact* event names the job it shows.
"""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QPushButton,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from desktop.client import ApiClient, StreamedEvent
from desktop.formatting import describe_api_error
from desktop.models.keyed_table_model import Column, KeyedTableModel, field
from desktop.plain_text import PlainLabel
from desktop.qt_compat import emit
from desktop.shell import ShellController
from desktop.views.live_view import LiveView

CONTACT_EVENT_PREFIX = "Contact"
STATUS_TEXT = {
    "queued": "queued", "running": "running", "completed": "completed",
    "failed": "failed", "canceled": "canceled",
}
ATTEMPT_TEXT = {"used": "read", "fetched": "fetched", "blocked": "blocked", "failed": "failed"}


def _confidence(row: dict) -> str:
    value = row.get("confidence")
    return "—" if value is None else f"{round(value * 100)}%"


CANDIDATE_COLUMNS = [
    Column("Name", field("name")),
    Column("Title", field("title")),
    Column("Email", field("email")),
    Column("Confidence", _confidence, sort_value=lambda r: r.get("confidence") or 0,
           align_right=True),
    Column("Evidence", field("evidence"), tooltip=lambda r: r.get("sourceUrl")),
]


def task_line(task: dict[str, Any] | None) -> str:
    """``Last research: completed · 2 candidates · sources: posting_text read``."""
    if task is None:
        return "No contact research yet. Research reads the posting; public sources only " \
               "when enabled in Settings."
    parts = [f"Last research: {STATUS_TEXT.get(task.get('status'), task.get('status') or '?')}"]
    if task.get("candidateCount") is not None:
        count = task["candidateCount"]
        parts.append(f"{count} candidate{'s' if count != 1 else ''}")
    if task.get("failure"):
        parts.append(f"error: {task['failure'].get('code')}")
    attempts = task.get("sourceAttempts") or []
    if attempts:
        parts.append("sources: " + ", ".join(
            f"{a.get('sourceId')} {ATTEMPT_TEXT.get(a.get('status'), a.get('status'))}"
            + (f" ({a['errorCode']})" if a.get("errorCode") else "") for a in attempts))
    return " · ".join(parts)


class ContactsPanel(LiveView):
    research_result = Signal(object)  # the 202 body, or the error; tests wait on it

    def __init__(self, controller: ShellController, parent: QWidget | None = None):
        super().__init__(controller, parent)
        self.job_key: str | None = None
        self.tasks: list[dict[str, Any]] = []
        self.research_button = QPushButton("Research contacts")
        self.research_button.setToolTip(
            "Find recruiters and hiring managers named in this posting (and in the public "
            "sources you enabled). Runs once, now; it may use your model budget.")
        self.research_button.clicked.connect(self.request_research)
        self.status_label = PlainLabel()
        self.status_label.setWordWrap(True)
        self.message_label = PlainLabel()
        self.message_label.setWordWrap(True)
        self.model = KeyedTableModel(CANDIDATE_COLUMNS, key=lambda r: r["contactId"], parent=self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        self.table.verticalHeader().setVisible(False)
        top = QHBoxLayout()
        top.addWidget(self.research_button)
        top.addWidget(self.message_label, 1)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.status_label)
        layout.addWidget(self.table, 1)
        controller.event_received.connect(self._on_event)
        self.set_job(None)

    # -- the job shown ------------------------------------------------------------------

    def set_job(self, job_key: str | None) -> None:
        if job_key == self.job_key and job_key is not None:
            return
        self.job_key = job_key
        self.tasks = []
        self.model.clear()
        self.message_label.clear()
        self.research_button.setEnabled(job_key is not None)
        self.status_label.setText(task_line(None) if job_key else "Select a job.")
        if job_key is not None:
            self.invalidate()

    @property
    def active(self) -> bool:
        return self.job_key is not None and self.isVisible()

    # -- reading ------------------------------------------------------------------------

    async def fetch(self, client: ApiClient) -> tuple[str | None, dict[str, Any] | None]:
        key = self.job_key
        return key, (None if key is None else await client.contacts(key))

    def apply(self, result: tuple[str | None, dict[str, Any] | None]) -> None:
        key, body = result
        if key != self.job_key or body is None:
            return  # the user moved to another job while this fetch was in flight
        self.tasks = list(body.get("tasks") or [])
        self.model.set_rows(body.get("candidates") or [])
        self.status_label.setText(task_line(self.tasks[0] if self.tasks else None))
        running = bool(self.tasks) and self.tasks[0].get("status") in ("queued", "running")
        self.research_button.setEnabled(not running)

    def show_error(self, error: Exception) -> None:
        self.message_label.setText(describe_api_error(error))

    def _on_event(self, event: StreamedEvent) -> None:
        if (event.type.startswith(CONTACT_EVENT_PREFIX) and self.job_key is not None
                and event.payload.get("jobId") == self.job_key):
            self.invalidate()

    # -- the command --------------------------------------------------------------------

    def request_research(self) -> None:
        key = self.job_key
        if key is None:
            return
        self.research_button.setEnabled(False)
        self.message_label.setText("Starting contact research…")
        self.controller.call(lambda client: client.research_contacts(key),
                             lambda body: self._researched(key, body),
                             lambda error: self._research_failed(key, error),
                             name="contacts-research")

    def _researched(self, key: str, body: dict[str, Any]) -> None:
        if key == self.job_key:
            verb = "already running" if body.get("alreadyRunning") else "started"
            self.message_label.setText(f"Contact research {verb} ({body.get('workflowId')}).")
            self.invalidate()
        emit(self.research_result, body)

    def _research_failed(self, key: str, error: Exception) -> None:
        if key == self.job_key:
            self.message_label.setText(describe_api_error(error))
            self.research_button.setEnabled(True)
        emit(self.research_result, error)
