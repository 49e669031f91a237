"""The selected application: what happened when, the next step, interviews, the posting as
it was when applied, and the follow-up email. No I/O: buttons become signals."""

from __future__ import annotations

import html
from datetime import date, datetime
from typing import Any

from PySide6.QtCore import QDate, QDateTime, QTime, Signal
from PySide6.QtWidgets import (
    QDateTimeEdit,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from backend.desktop_contract import sanitize_html
from desktop.plain_text import PlainLabel, rich_label
from desktop.presenters.applications import (
    EMAIL_FAILURE_WORDS,
    VIA_TEXT,
    day_text,
    instant_day_text,
    interview_time_text,
    next_step_text,
    stage_label,
)
from desktop.theme import COLORS
from desktop.views.partials.scroll_column import scroll_column


def history_html(detail: dict[str, Any], today: date) -> str:
    """Applied, then every move and follow-up email in order of their day; an undone move
    stays, struck through."""
    rows: list[tuple[str, str]] = []
    for move in detail.get("moves") or []:
        text = (f"{day_text(move.get('date'), today=today)}: "
                f"{html.escape(stage_label(move.get('stage')))}")
        if move.get("note"):
            text += f" — {html.escape(move['note'])}"
        if move.get("undone"):
            text = f"<s>{text}</s> <i>(undone)</i>"
        rows.append((move.get("date") or "", text))
    for email in detail.get("emails") or []:
        outcome = {"sent": "sent", "failed": "not confirmed as sent",
                   "requested": "being sent"}.get(email.get("status"), "")
        rows.append(((email.get("at") or "")[:10],
                     f"{instant_day_text(email.get('at'), today=today)}: follow-up email to "
                     f"{html.escape(email.get('recipient') or '')} {outcome}"))
    applied = (f"{day_text(detail.get('appliedOn'), today=today)}: applied "
               f"({html.escape(VIA_TEXT.get(detail.get('via') or '', 'applied'))})")
    ordered = [applied, *(text for _day, text in sorted(rows, key=lambda row: row[0]))]
    return ("<ul style='margin-left: -20px'>" + "".join(f"<li>{t}</li>" for t in ordered)
            + "</ul>")


def interviews_html(interviews: list[dict[str, Any]]) -> str:
    if not interviews:
        return "No interviews yet."
    rows = []
    for interview in interviews:
        text = (f"Round {interview.get('round')}: "
                f"{html.escape(interview_time_text(interview.get('startsAt')))}"
                f" ({interview.get('durationMinutes')} min)")
        if interview.get("location"):
            text += f", {html.escape(interview['location'])}"
        if interview.get("notes"):
            text += f"<br><i>{html.escape(interview['notes'])}</i>"
        if interview.get("canceled"):
            text = f"<s>{text}</s> (canceled)"
        rows.append(text)
    return "<br>".join(rows)


class InterviewDialog(QDialog):
    """A date and time (the user's local time), the length, where, and notes."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Add an interview")
        form = QFormLayout(self)
        # Tomorrow at 10:00, a time a person would pick; not now + 24 h to the second.
        self.starts = QDateTimeEdit(QDateTime(QDate.currentDate().addDays(1), QTime(10, 0)),
                                    self)
        self.starts.setCalendarPopup(True)
        self.starts.setDisplayFormat("ddd d MMM yyyy, HH:mm")
        self.duration = QSpinBox(self)
        self.duration.setRange(5, 600)
        self.duration.setValue(60)
        self.duration.setSuffix(" min")
        self.location = QLineEdit(self)
        self.location.setPlaceholderText("Video call, phone, or an address")
        self.notes = QPlainTextEdit(self)
        self.notes.setPlaceholderText("Who you meet, what to prepare")
        self.notes.setFixedHeight(70)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save
                                   | QDialogButtonBox.StandardButton.Cancel, self)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow("When:", self.starts)
        form.addRow("Length:", self.duration)
        form.addRow("Where:", self.location)
        form.addRow("Notes:", self.notes)
        form.addRow(buttons)

    def body(self) -> dict[str, Any]:
        # Whole minutes: the field shows no seconds, so none may reach the calendar file.
        moment: datetime = self.starts.dateTime().toPython().replace(second=0, microsecond=0)
        return {"startsAt": moment.astimezone().isoformat(),
                "durationMinutes": self.duration.value(),
                "location": self.location.text().strip() or None,
                "notes": self.notes.toPlainText().strip() or None}


class ApplicationDetailPanel(QWidget):
    snooze_requested = Signal(int)     # days
    done_requested = Signal()
    interview_requested = Signal()
    calendar_requested = Signal()
    draft_requested = Signal()
    open_job_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self._story_box(), 3)
        layout.addWidget(self._email_box(), 2)
        layout.addWidget(self._posting_box(), 5)
        self.show_detail(None, date.today())

    # -- layout ---------------------------------------------------------------------------

    def _story_box(self) -> QGroupBox:
        box = QGroupBox("This application", self)
        outer = QVBoxLayout(box)
        outer.setContentsMargins(0, 0, 0, 0)
        scroll, inner, column = scroll_column(box, margins=(8, 4, 8, 4), spacing=4,
                                              wrap_width=True)
        outer.addWidget(scroll)
        box = inner  # the widgets below live in the scrolling part
        self.title = rich_label(QLabel("Select a card", box))
        self.title.setWordWrap(True)
        self.history = rich_label(QLabel("", box))
        self.history.setObjectName("applicationHistory")
        self.history.setWordWrap(True)
        self.next_step = PlainLabel("", box)
        self.next_step.setObjectName("nextStep")
        self.next_step.setWordWrap(True)
        follow_row = QHBoxLayout()
        self.snooze_button = QPushButton("Follow up in 3 days", box)
        self.snooze_button.setToolTip("Move the follow-up three days later")
        self.week_button = QPushButton("In a week", box)
        self.done_button = QPushButton("Done", box)
        self.done_button.setObjectName("followUpDoneButton")
        self.snooze_button.clicked.connect(lambda: self.snooze_requested.emit(3))
        self.week_button.clicked.connect(lambda: self.snooze_requested.emit(7))
        self.done_button.clicked.connect(self.done_requested)
        for button in (self.snooze_button, self.week_button, self.done_button):
            follow_row.addWidget(button)
        follow_row.addStretch(1)
        self.interviews = rich_label(QLabel("", box))
        self.interviews.setObjectName("interviewList")
        self.interviews.setWordWrap(True)
        interview_row = QHBoxLayout()
        self.interview_button = QPushButton("Add interview…", box)
        self.calendar_button = QPushButton("Save to calendar…", box)
        self.calendar_button.setToolTip("An .ics file your calendar app imports")
        self.job_button = QPushButton("Show the job", box)
        self.interview_button.clicked.connect(self.interview_requested)
        self.calendar_button.clicked.connect(self.calendar_requested)
        self.job_button.clicked.connect(self.open_job_requested)
        for button in (self.interview_button, self.calendar_button):
            interview_row.addWidget(button)
        interview_row.addStretch(1)
        job_row = QHBoxLayout()
        job_row.addWidget(self.job_button)
        job_row.addStretch(1)
        column.addWidget(self.title)
        column.addWidget(self.history)
        column.addWidget(self.next_step)
        column.addLayout(follow_row)
        column.addWidget(QLabel("<b>Interviews</b>", box))
        column.addWidget(self.interviews)
        column.addLayout(interview_row)
        column.addLayout(job_row)
        column.addStretch(1)
        return scroll.parentWidget()

    def _email_box(self) -> QGroupBox:
        box = QGroupBox("Follow-up email", self)
        column = QVBoxLayout(box)
        note = QLabel("Written from your profile and the letter you sent, and checked to "
                      "say nothing your profile does not hold. It goes out from your own "
                      "email account, once.", box)
        note.setWordWrap(True)
        note.setStyleSheet(f"color: {COLORS['idle']};")
        self.draft_button = QPushButton("Write a follow-up email…", box)
        self.draft_button.setObjectName("draftFollowUpButton")
        self.draft_button.clicked.connect(self.draft_requested)
        self.email_state = PlainLabel("", box)
        self.email_state.setObjectName("followUpEmailState")
        self.email_state.setWordWrap(True)
        column.addWidget(note)
        column.addWidget(self.draft_button)
        column.addWidget(self.email_state)
        column.addStretch(1)
        return box

    def _posting_box(self) -> QGroupBox:
        box = QGroupBox("The posting when you applied", self)
        column = QVBoxLayout(box)
        self.posting = QTextBrowser(box)
        self.posting.setObjectName("postingSnapshot")
        self.posting.setOpenExternalLinks(True)
        column.addWidget(self.posting)
        return box

    # -- showing --------------------------------------------------------------------------

    def show_detail(self, detail: dict[str, Any] | None, today: date) -> None:
        enabled = detail is not None
        for widget in (self.snooze_button, self.week_button, self.done_button,
                       self.interview_button, self.calendar_button, self.job_button,
                       self.draft_button):
            widget.setEnabled(enabled)
        if detail is None:
            self.title.setText("Select a card to see its story, next step and posting.")
            self.history.setText("")
            self.next_step.setText("")
            self.interviews.setText("")
            self.posting.setHtml("")
            self.email_state.setText("")
            return
        self.title.setText(f"<b>{html.escape(detail.get('title') or '')}</b> at "
                           f"{html.escape(detail.get('company') or '')} — "
                           f"{html.escape(stage_label(detail.get('stage')))}")
        self.history.setText(history_html(detail, today))
        follow_up = detail.get("followUp") or {}
        step = next_step_text(detail, today) or (
            "Follow-up done." if follow_up.get("status") == "done" else
            "No follow-up planned; plan one below.")
        silence = detail.get("noReplyText")
        self.next_step.setText(step + (f" {silence[:1].upper()}{silence[1:]}." if silence else ""))
        self.next_step.setStyleSheet(f"color: {COLORS['busy']};" if follow_up.get("due") else "")
        self.done_button.setEnabled(follow_up.get("status") == "scheduled")
        interviews = detail.get("interviews") or []
        self.interviews.setText(interviews_html(interviews))
        self.calendar_button.setEnabled(any(not i.get("canceled") for i in interviews))
        self._show_posting(detail.get("posting"))
        self._show_email_rounds(detail.get("emails") or [])

    def _show_posting(self, posting: dict[str, Any] | None) -> None:
        if not posting:
            self.posting.setHtml("<i>No copy of the posting was kept.</i>")
            return
        head = (f"<h3>{html.escape(posting.get('title') or '')}</h3>"
                f"<p>{html.escape(posting.get('company') or '')}"
                f"{' · ' + html.escape(posting['location']) if posting.get('location') else ''}"
                f" · <a href='{html.escape(posting.get('url') or '')}'>original page</a></p>")
        # The posting's own HTML only through the backend's allowlist cleaner: Qt would
        # load an <img src> from a local file.
        raw = posting.get("descriptionHtml")
        body = sanitize_html(raw) if raw else html.escape(posting.get("descriptionText") or "")
        self.posting.setHtml(head + (body or "<i>The posting had no text.</i>"))

    def _show_email_rounds(self, emails: list[dict[str, Any]]) -> None:
        if not emails:
            self.email_state.setText("")
            return
        last = emails[-1]
        why = EMAIL_FAILURE_WORDS.get(last.get("errorCode") or "", "it could not be sent")
        words = {"requested": f"Sending to {last.get('recipient')}…",
                 "sent": f"Sent to {last.get('recipient')}"
                         f" on {instant_day_text(last.get('at'))}.",
                 "failed": f"Not confirmed as sent: {why}."}
        self.email_state.setText(words.get(last.get("status"), ""))
        self.email_state.setStyleSheet(
            f"color: {COLORS['bad']};" if last.get("status") == "failed" else "")
        self.draft_button.setEnabled(last.get("status") != "requested")

    def say_email(self, text: str, tone: str) -> None:
        self.email_state.setText(text)
        self.email_state.setStyleSheet(f"color: {COLORS[tone]};")


class FollowUpEmailDialog(QDialog):
    """The drafted email, for the user to read and change before it goes out."""

    def __init__(self, draft: dict[str, Any], parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Follow-up email")
        self.resize(620, 460)
        form = QFormLayout(self)
        self.recipient = QLineEdit(draft.get("recipient") or "", self)
        self.recipient.setObjectName("followUpRecipient")
        self.recipient.setPlaceholderText("the recruiter's or hiring team's address")
        self.subject = QLineEdit(draft.get("subject") or "", self)
        self.body = QPlainTextEdit(draft.get("body") or "", self)
        self.body.setObjectName("followUpBody")
        note = QLabel("JobCtrl sends it from your email account (Settings) after checking "
                      "that it states nothing your profile does not hold.", self)
        note.setWordWrap(True)
        note.setStyleSheet(f"color: {COLORS['idle']};")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel, self)
        self.send_button = buttons.addButton("Send", QDialogButtonBox.ButtonRole.AcceptRole)
        self.send_button.setObjectName("sendFollowUpButton")
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow("To:", self.recipient)
        form.addRow("Subject:", self.subject)
        form.addRow(self.body)
        form.addRow(note)
        form.addRow(buttons)

    def email(self) -> dict[str, str]:
        return {"recipient": self.recipient.text().strip(),
                "subject": self.subject.text().strip(),
                "body": self.body.toPlainText().strip()}
