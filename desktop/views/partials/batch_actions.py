"""The Jobs view's bulk controls: a selected batch (tailor resumes / write cover letters
for the selected jobs, N at a time) and the stale-work buttons (rescore / re-tailor every
job whose result predates the saved profile).

Every action that may spend asks first (a window-modal dialog opened without blocking the
UI thread), then runs through ``controller.call`` and says what happened in plain words.
The wording is plain functions, so tests call them directly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from backend.desktop_contract import MAX_BATCH_JOBS, MAX_WORKERS
from desktop.formatting import describe_api_error
from desktop.plain_text import PlainLabel
from desktop.qt_compat import emit
from desktop.shell import ShellController
from desktop.views.status_indicators import COLORS

FALLBACK_WORKERS = 1  # when the worker's slot count cannot be read: the gentlest choice
SPEND_NOTE = ("This uses your AI provider and counts toward today's spending limit; "
              "JobCtrl stops before going over it.")

BATCH_WORDS = {
    # stage: (button, dialog title, what it does, verb in progress)
    "tailor": ("Tailor selected…", "Tailor the selected jobs",
               "Write a tailored resume, a cover letter and both PDFs again for {jobs}.",
               "Tailoring"),
    "cover": ("Write cover letters for selected…", "Write cover letters",
              "Write a new cover letter and its PDF for {jobs}.",
              "Writing cover letters for"),
}
STALE_WORDS = {
    # action: (button, tooltip, question, confirm button, started, nothing stale)
    "rescore-stale": (
        "Rescore stale", "Score again every job scored against an older version of your "
        "profile",
        "Score again every job whose fit score was computed against an older version of "
        "your profile?",
        "Rescore",
        "Rescoring {jobs} whose score predates your profile.",
        "Nothing to rescore: every score matches your current profile."),
    "retailor-stale": (
        "Re-tailor stale", "Write the resume, cover letter and PDFs again where they predate "
        "your profile",
        "Write the resume, cover letter and PDFs again for every job whose materials were "
        "made from an older version of your profile (and for jobs that now meet your fit "
        "threshold)?",
        "Re-tailor",
        "Re-tailoring {jobs} whose materials predate your profile.",
        "Nothing to re-tailor: every resume and cover letter matches your current profile."),
}


def jobs_phrase(count: int) -> str:
    return f"{count:,} job" if count == 1 else f"{count:,} jobs"


def selected_phrase(count: int) -> str:
    return "the selected job" if count == 1 else f"the {count:,} selected jobs"


def default_workers(settings: dict[str, Any] | None) -> int:
    """The worker's activity slots, capped at what a batch allows (1–16)."""
    slots = (settings or {}).get("workerActivitySlots")
    if not isinstance(slots, int) or isinstance(slots, bool) or slots < 1:
        return FALLBACK_WORKERS
    return min(slots, MAX_WORKERS)


def describe_batch_answer(stage: str, answer: dict[str, Any]) -> tuple[str, str]:
    """(text, tone) for the API's answer to a selected batch."""
    busy = len(answer.get("busyJobKeys") or [])
    if answer.get("noopReason"):
        if busy:
            return (f"Nothing started: {'it is' if busy == 1 else f'all {busy} are'} being "
                    "prepared right now. Try again when that finishes.", "busy")
        return "Nothing started: there was nothing to do.", "idle"
    jobs = jobs_phrase(answer.get("jobCount") or 0)
    workers = answer.get("workers")
    pace = f", {workers} at a time" if workers else ""
    verb = BATCH_WORDS[stage][3]
    if answer.get("alreadyRunning"):
        text = f"Already running: {verb.lower()} these {jobs}{pace}."
    else:
        text = f"Started: {verb.lower()} {jobs}{pace}. Follow it in Runs."
    if busy:
        text += (f" {jobs_phrase(busy)} left out: {'it is' if busy == 1 else 'they are'} "
                 "being prepared right now.")
    return text, "ok"


def describe_stale_answer(action: str, answer: dict[str, Any]) -> tuple[str, str]:
    """(text, tone) for the API's answer to rescore-stale / retailor-stale."""
    words = STALE_WORDS[action]
    if answer.get("noopReason") == "nothing_stale":
        return words[5], "ok"
    stale, started = answer.get("staleJobs") or 0, answer.get("startedWorkflows") or 0
    text = words[4].format(jobs=jobs_phrase(stale))
    if started < stale:
        text += f" {jobs_phrase(stale - started)} already being prepared will catch up."
    return text, "ok"


class BatchDialog(QDialog):
    """"Tailor the 3 selected jobs, N at a time?" with the worker-count spin box."""

    def __init__(self, stage: str, count: int, workers: int, parent: QWidget | None = None):
        super().__init__(parent)
        _button, title, what, _verb = BATCH_WORDS[stage]
        self.setObjectName("batchDialog")
        self.setWindowTitle(title)
        layout = QVBoxLayout(self)
        text = PlainLabel(what.format(jobs=selected_phrase(count)) + "\n\n" + SPEND_NOTE, self)
        text.setObjectName("batchDialogText")
        text.setWordWrap(True)
        text.setMinimumWidth(380)
        layout.addWidget(text)
        row = QHBoxLayout()
        row.addWidget(QLabel("Jobs at a time:", self))
        self.workers = QSpinBox(self)
        self.workers.setObjectName("batchWorkers")
        self.workers.setRange(1, MAX_WORKERS)
        self.workers.setValue(workers)
        self.workers.setToolTip("How many of the selected jobs are prepared at once "
                                f"(1–{MAX_WORKERS}). More is faster and uses more of your "
                                "computer at once.")
        row.addWidget(self.workers)
        row.addStretch(1)
        layout.addLayout(row)
        buttons = QDialogButtonBox(self)
        self.start_button = buttons.addButton("Start", QDialogButtonBox.ButtonRole.AcceptRole)
        self.start_button.setObjectName("batchStart")
        self.start_button.setDefault(True)
        self.cancel_button = buttons.addButton(QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)


class BatchActionsBar(QWidget):
    """One row under the Jobs filters: the selection's batch buttons, the stale-work
    buttons, and a line that says what the last action did."""

    action_finished = Signal(str, object)  # action, the answer dict or the exception

    def __init__(self, controller: ShellController, selected_keys: Callable[[], list[str]],
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.selected_keys = selected_keys
        self.dialog: BatchDialog | None = None
        self.confirm: QMessageBox | None = None
        self._build()
        self.set_selection_count(0)

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        row = QHBoxLayout()
        self.selection_label = PlainLabel("", self)
        self.selection_label.setObjectName("selectionCount")
        self.selection_label.setStyleSheet(f"color: {COLORS['idle']};")
        row.addWidget(self.selection_label)
        self.batch_buttons: dict[str, QPushButton] = {}
        for stage, words in BATCH_WORDS.items():
            button = QPushButton(words[0], self)
            button.setObjectName(f"batch_{stage}")
            button.clicked.connect(lambda _checked=False, s=stage: self.start_batch(s))
            self.batch_buttons[stage] = button
            row.addWidget(button)
        row.addStretch(1)
        separator = QFrame(self)
        separator.setFrameShape(QFrame.Shape.VLine)
        separator.setFrameShadow(QFrame.Shadow.Sunken)
        row.addWidget(separator)
        self.stale_buttons: dict[str, QPushButton] = {}
        for action, words in STALE_WORDS.items():
            button = QPushButton(words[0], self)
            button.setObjectName(action.replace("-", "_"))
            button.setToolTip(words[1])
            button.clicked.connect(lambda _checked=False, a=action: self.rerun_stale(a))
            self.stale_buttons[action] = button
            row.addWidget(button)
        layout.addLayout(row)
        self.result_label = PlainLabel("", self)
        self.result_label.setObjectName("bulkResult")
        self.result_label.setWordWrap(True)
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.result_label.hide()
        layout.addWidget(self.result_label)

    def set_selection_count(self, count: int) -> None:
        if count == 0:
            text = "Select jobs (Ctrl/Shift-click) to tailor them together"
        elif count == 1:
            text = "1 selected · Ctrl/Shift-click to add more"
        else:
            text = f"{count:,} selected"
        self.selection_label.setText(text)
        for stage, button in self.batch_buttons.items():
            button.setEnabled(count >= 1)
            button.setToolTip(BATCH_WORDS[stage][2].format(jobs=selected_phrase(count))
                              if count else "Select one or more jobs first")

    def say(self, text: str, tone: str) -> None:
        self.result_label.setText(text)
        self.result_label.setStyleSheet(f"color: {COLORS[tone]};")
        self.result_label.show()

    # -- a selected batch -----------------------------------------------------------------

    def start_batch(self, stage: str) -> None:
        keys = list(self.selected_keys())
        if not keys:
            return
        if len(keys) > MAX_BATCH_JOBS:
            self.say(f"A batch takes at most {MAX_BATCH_JOBS} jobs; {len(keys):,} are "
                     "selected. Narrow the list with search or filters.", "bad")
            return
        self.say("Reading how many jobs JobCtrl can prepare at once…", "idle")
        # The default comes from the worker's slots; if settings cannot be read, the
        # dialog still opens with the gentlest choice.
        self.controller.call(lambda client: client.settings(),
                             lambda settings: self._ask_batch(stage, keys, settings),
                             lambda _error: self._ask_batch(stage, keys, None),
                             name="batch-settings")

    def _ask_batch(self, stage: str, keys: list[str], settings: dict[str, Any] | None) -> None:
        self.result_label.hide()
        dialog = BatchDialog(stage, len(keys), default_workers(settings), self)
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.accepted.connect(lambda: self._run_batch(stage, keys, dialog.workers.value()))
        self._replace_dialog(dialog)
        dialog.open()  # not exec(): the UI thread keeps running

    def _run_batch(self, stage: str, keys: list[str], workers: int) -> None:
        self.say("Starting…", "idle")
        action = f"batch-{stage}"

        def done(answer: dict[str, Any]) -> None:
            self.say(*describe_batch_answer(stage, answer))
            emit(self.action_finished, action, answer)

        self.controller.call(lambda client: client.run_batch(stage, keys, workers), done,
                             lambda error: self._failed(action, error), name=action)

    # -- stale work -----------------------------------------------------------------------

    def rerun_stale(self, action: str) -> None:
        words = STALE_WORDS[action]
        box = QMessageBox(QMessageBox.Icon.Question, words[0], words[2],
                          QMessageBox.StandardButton.Cancel, self)
        box.setObjectName("staleConfirm")
        box.setInformativeText("Jobs you marked applied or skipped, and jobs being prepared "
                               "right now, are left alone. " + SPEND_NOTE)
        confirm = box.addButton(words[3], QMessageBox.ButtonRole.AcceptRole)
        confirm.setObjectName("staleConfirmButton")
        box.setDefaultButton(confirm)
        box.setWindowModality(Qt.WindowModality.WindowModal)
        box.finished.connect(lambda _result: self._confirmed(action, box, confirm))
        self._replace_dialog(box)
        box.open()

    def _confirmed(self, action: str, box: QMessageBox, confirm: QPushButton) -> None:
        if box.clickedButton() is not confirm:
            return
        self.say("Starting…", "idle")

        def done(answer: dict[str, Any]) -> None:
            self.say(*describe_stale_answer(action, answer))
            emit(self.action_finished, action, answer)

        self.controller.call(lambda client: client.rerun_stale(action), done,
                             lambda error: self._failed(action, error), name=action)

    def _replace_dialog(self, dialog: QDialog) -> None:
        """Keep the newest dialog (tests and the user may still look at it after it
        closed); the one it replaces is deleted."""
        for old in (self.dialog, self.confirm):
            if old is not None and old is not dialog:
                old.deleteLater()
        self.dialog = dialog if isinstance(dialog, BatchDialog) else None
        self.confirm = dialog if isinstance(dialog, QMessageBox) else None

    def _failed(self, action: str, error: Exception) -> None:
        self.say(describe_api_error(error), "bad")
        emit(self.action_finished, action, error)
