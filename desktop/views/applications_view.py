"""Applications: the board of every job applied to (``GET /v1/applications``), from Applied
through Heard back, Interviewing and Offer, plus Rejected, Withdrawn and Ghosted.

Drag a card to another column (or use its right-click menu) to record what happened; Undo
takes the last move back (a newer event, the history keeps both). Cards show the next
step ("Follow up today"), silence past the ghosting threshold ("No reply yet (31 days)")
and the next interview. The selected card's panel has its story, the follow-up (snooze,
done, an email drafted from the profile and the letter, sent from the user's account),
interviews with a calendar file, and the posting as it was when applied.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QPushButton,
    QScrollArea,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from backend.desktop_contract import APPLICATION_STAGE_LABELS
from desktop.client import ApiClient
from desktop.event_router import APPLICATIONS, JOBS
from desktop.formatting import describe_api_error
from desktop.plain_text import PlainLabel
from desktop.presenters.applications import board_headline, calendar_file_name
from desktop.qt_compat import emit
from desktop.shell import ShellController
from desktop.views.live_view import LiveView
from desktop.views.partials.application_board import ApplicationBoard, card_menu
from desktop.views.partials.application_detail import (
    ApplicationDetailPanel,
    FollowUpEmailDialog,
    InterviewDialog,
)
from desktop.views.status_indicators import COLORS

DAY_POLL_MS = 15 * 60_000  # "due today" changes at local midnight, with no event


class ApplicationsView(LiveView):
    view_keys = frozenset({APPLICATIONS, JOBS})
    open_job = Signal(str)

    def __init__(self, controller: ShellController, parent: QWidget | None = None):
        super().__init__(controller, parent)
        self.board_data: dict[str, Any] | None = None
        self.detail: dict[str, Any] | None = None
        self.last_moved: str | None = None  # the card the Undo button takes back
        self.unsent: dict[str, dict[str, Any]] = {}  # job key -> an email a send refused
        self.email_dialog: FollowUpEmailDialog | None = None
        self._build()

    @property
    def today(self) -> date:
        if self.board_data and self.board_data.get("today"):
            return date.fromisoformat(self.board_data["today"])
        return date.today()

    def _build(self) -> None:
        root = QVBoxLayout(self)
        root.setContentsMargins(0, 6, 0, 0)
        top = QHBoxLayout()
        self.headline = PlainLabel(board_headline(None), self)
        self.headline.setObjectName("applicationsHeadline")
        self.headline.setWordWrap(True)
        self.undo_button = QPushButton("Undo last move", self)
        self.undo_button.setObjectName("undoMoveButton")
        self.undo_button.setEnabled(False)
        self.undo_button.clicked.connect(self.undo_last)
        top.addWidget(self.headline, 1)
        top.addWidget(self.undo_button)
        root.addLayout(top)
        self.message = PlainLabel("", self)
        self.message.setObjectName("applicationsMessage")
        self.message.setWordWrap(True)
        root.addWidget(self.message)

        splitter = QSplitter(Qt.Orientation.Vertical, self)
        scroll = QScrollArea(splitter)
        scroll.setWidgetResizable(True)
        scroll.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.board = ApplicationBoard(scroll)
        scroll.setWidget(self.board)
        self.panel = ApplicationDetailPanel(splitter)
        splitter.addWidget(scroll)
        splitter.addWidget(self.panel)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setSizes([430, 260])  # the board first: its cards are the point
        root.addWidget(splitter, 1)

        self.board.move_requested.connect(self.move_card)
        self.board.card_selected.connect(self._load_detail)
        self.board.menu_requested.connect(self._show_menu)
        self.panel.snooze_requested.connect(lambda days: self._command(
            "follow-up/snooze", {"days": days}, f"Follow-up moved {days} days later."))
        self.panel.done_requested.connect(lambda: self._command(
            "follow-up/done", {}, "Follow-up marked done."))
        self.panel.interview_requested.connect(self.add_interview)
        self.panel.calendar_requested.connect(self.save_calendar)
        self.panel.draft_requested.connect(self.draft_email)
        self.panel.open_job_requested.connect(self._open_selected_job)

    def poll_interval_ms(self) -> int | None:
        return DAY_POLL_MS

    # -- data -----------------------------------------------------------------------------

    async def fetch(self, client: ApiClient) -> tuple[dict, dict | None]:
        board = await client.applications()
        selected = self.board.selected_key()
        detail = None
        if selected and any(c["jobKey"] == selected for c in board.get("items") or []):
            detail = await client.application(selected)
        return board, detail

    def apply(self, result: tuple[dict, dict | None]) -> None:
        board, detail = result
        self.board_data = board
        self.headline.setText(board_headline(board))
        self.board.set_cards(board.get("items") or [], self.today)
        self.detail = detail
        self.panel.show_detail(detail, self.today)
        self.undo_button.setEnabled(self._undo_target() is not None)

    def show_error(self, error: Exception) -> None:
        self._say(f"Could not load your applications: {describe_api_error(error)}", "bad")

    # -- commands -------------------------------------------------------------------------

    def move_card(self, job_key: str, stage: str) -> None:
        self.last_moved = job_key
        self._command("moves", {"stage": stage}, f"Moved to {APPLICATION_STAGE_LABELS[stage]}.",
                      job_key=job_key)

    def undo_last(self) -> None:
        target = self._undo_target()
        if target is not None:
            self._command("undo", {}, "Last move undone.", job_key=target)

    def _undo_target(self) -> str | None:
        """The card moved last here, else the selected one, if it has a move to undo."""
        cards = self.board.cards
        for key in (self.last_moved, self.board.selected_key()):
            if key and (cards.get(key) or {}).get("lastMove"):
                return key
        return None

    def _command(self, path: str, body: dict[str, Any], done: str, *,
                 job_key: str | None = None) -> None:
        key = job_key or self.board.selected_key()
        if key is None:
            return
        self._say("Saving…", "idle")

        def finished(detail: dict[str, Any]) -> None:
            self._say(done, "ok")
            if key == self.board.selected_key():
                self.detail = detail
                self.panel.show_detail(detail, self.today)
            self.refresh()

        def refused(error: Exception) -> None:
            self._say(describe_api_error(error), "bad")
            self.refresh()  # the board may have changed elsewhere meanwhile

        self.controller.call(lambda client: client.application_action(key, path, **body),
                             finished, refused, name=f"application-{path}")

    def _show_menu(self, job_key: str, where: QPoint) -> None:
        card = self.board.cards.get(job_key)
        if card is None:
            return
        menu, actions = card_menu(self, card)
        chosen = menu.exec(where)
        if chosen is None:
            return
        name = next(key for key, action in actions.items() if action is chosen)
        self.run_menu_action(job_key, name)

    def run_menu_action(self, job_key: str, name: str) -> None:
        kind, _, value = name.partition(":")
        if kind == "move":
            self.move_card(job_key, value)
        elif kind == "undo":
            self._command("undo", {}, "Last move undone.", job_key=job_key)
        elif kind == "snooze":
            self._command("follow-up/snooze", {"days": int(value)},
                          f"Follow-up moved {value} days later.", job_key=job_key)
        elif kind == "done":
            self._command("follow-up/done", {}, "Follow-up marked done.", job_key=job_key)
        elif kind in ("interview", "email"):
            self.board.select(job_key)
            (self.add_interview if kind == "interview" else self.draft_email)()
        elif kind == "job":
            emit(self.open_job, job_key)

    def add_interview(self) -> None:
        dialog = InterviewDialog(self)  # open(), not exec(): see _edit_email
        dialog.accepted.connect(lambda: self._command("interviews", dialog.body(),
                                                      "Interview saved."))
        dialog.finished.connect(lambda _result: dialog.deleteLater())
        dialog.open()

    def _detail_of(self, key: str) -> dict[str, Any] | None:
        """The shown detail when it is this card's (it lags a click on another card)."""
        return self.detail if (self.detail or {}).get("jobKey") == key else None

    def save_calendar(self) -> None:
        key = self.board.selected_key()
        if key is None:
            return
        path, _ = QFileDialog.getSaveFileName(self, "Save interviews to a calendar file",
                                              str(Path.home() / calendar_file_name(self._detail_of(key))),
                                              "Calendar files (*.ics)")
        if not path:
            return

        def write(text: str) -> None:
            Path(path).write_text(text, encoding="utf-8", newline="")
            self._say(f"Saved {Path(path).name}: open it with your calendar app.", "ok")

        self.controller.call(lambda client: client.interviews_ics(key), write,
                             lambda error: self._say(describe_api_error(error), "bad"),
                             name="application-ics")

    def draft_email(self) -> None:
        """The draft (or the text a refused send left) in a dialog; Send sends it."""
        key = self.board.selected_key()
        if key is None:
            return
        if key in self.unsent:
            self._edit_email(key, self.unsent[key])
            return
        self.panel.say_email("Writing a draft…", "idle")
        self.controller.call(lambda client: client.follow_up_draft(key),
                             lambda draft: self._edit_email(key, draft),
                             lambda error: self.panel.say_email(describe_api_error(error), "bad"),
                             name="application-draft")

    def _edit_email(self, key: str, draft: dict[str, Any]) -> None:
        """Opened window-modal, never with ``exec()``: this runs in an API call's callback,
        inside an asyncio task, and a nested event loop there would run the other tasks
        (the event stream among them) inside this one, which asyncio refuses."""
        self.panel.say_email("", "idle")
        dialog = FollowUpEmailDialog(draft, self)
        self.email_dialog = dialog  # tests and screenshots reach the open dialog here
        dialog.accepted.connect(lambda: self.send_email(key, dialog.email()))
        dialog.finished.connect(lambda _result: self._email_dialog_closed(dialog))
        dialog.open()

    def _email_dialog_closed(self, dialog: FollowUpEmailDialog) -> None:
        if self.email_dialog is dialog:
            self.email_dialog = None
        dialog.deleteLater()

    def send_email(self, key: str, email: dict[str, Any]) -> None:
        self.panel.say_email("Sending…", "idle")

        def accepted(_answer: dict[str, Any]) -> None:
            self.unsent.pop(key, None)
            self.panel.say_email(f"Sending to {email['recipient']}; it shows here once it "
                                 "is sent.", "ok")
            self.refresh()

        def refused(error: Exception) -> None:
            self.unsent[key] = email  # the next "Write…" opens the user's text again
            self.panel.say_email(describe_api_error(error), "bad")

        self.controller.call(
            lambda client: client.application_action(key, "follow-up/email", **email),
            accepted, refused, name="application-send")

    # -- selection ------------------------------------------------------------------------

    def select_job(self, job_key: str) -> bool:
        return self.board.select(job_key)

    def _load_detail(self, job_key: str) -> None:
        if not job_key:
            self.detail = None
            self.panel.show_detail(None, self.today)
            return
        self.undo_button.setEnabled(self._undo_target() is not None)

        def show(detail: dict[str, Any]) -> None:
            if self.board.selected_key() == job_key:
                self.detail = detail
                self.panel.show_detail(detail, self.today)

        self.controller.call(lambda client: client.application(job_key), show,
                             lambda error: self._say(describe_api_error(error), "bad"),
                             name="application-detail")

    def _open_selected_job(self) -> None:
        key = self.board.selected_key()
        if key:
            emit(self.open_job, key)

    def _say(self, text: str, tone: str) -> None:
        self.message.setText(text)
        self.message.setStyleSheet(f"color: {COLORS[tone]};")
