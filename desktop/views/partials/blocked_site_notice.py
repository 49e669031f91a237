"""The job detail's notice for a site that asks automated tools not to read its pages
(Enrich blocked with ``ENRICH_ROBOTS_DISALLOWED``), and the user's way out: allow JobCtrl
to read postings on that host. The API stores the grant and resumes exactly the jobs on
that host that carry the block (Enrich → Score → Tailor → Cover); the notice says how many.
"""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from backend.desktop_contract import host_of
from desktop.formatting import describe_api_error
from desktop.plain_text import PlainLabel, rich_label
from desktop.qt_compat import emit
from desktop.shell import ShellController
from desktop.theme import COLORS, notice_colors

ROBOTS_CODE = "ENRICH_ROBOTS_DISALLOWED"


def notice_style(tone: str) -> str:
    """The notice's box: ``warning`` while blocked, ``success`` once allowed."""
    background, border, _text = notice_colors(tone)
    return (f"#blockedSiteNotice {{ background: {background}; border: 1px solid {border};"
            " border-radius: 6px; }")


def robots_blocked_host(detail: dict[str, Any] | None) -> str | None:
    """The posting's host when this job's Enrich is blocked by the site's robots.txt."""
    if not detail or not detail.get("url"):
        return None
    enrich = next((row for row in detail.get("stages") or [] if row.get("stage") == "enrich"),
                  None)
    if enrich is None or enrich.get("status") != "blocked":
        return None
    reasons = {enrich.get("blockedReason"), enrich.get("errorCode")}
    if ROBOTS_CODE not in reasons:
        return None
    return host_of(detail["url"]) or None


def describe_resolution(host: str, answer: dict[str, Any]) -> str:
    if answer.get("noopReason") == "no_blocked_jobs":
        return (f"JobCtrl may read postings on {host}. No job there was still waiting on "
                "this (it may already be running).")
    count = answer.get("jobCount") or 0
    jobs = "1 job" if count == 1 else f"{count:,} jobs"
    return (f"Allowed: JobCtrl may now read postings on {host}. {jobs} waiting on this site "
            f"{'is' if count == 1 else 'are'} being prepared again.")


class BlockedSiteNotice(QFrame):
    """Hidden unless the shown job is blocked by its site's robots.txt, or the user has
    just allowed that site (then it says what resumed until another job is shown)."""

    resolved = Signal(object)  # the API's answer dict, or the exception

    def __init__(self, controller: ShellController, parent: QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.host: str | None = None
        self.job_key: str | None = None
        self._resolved_for: str | None = None  # the job whose notice shows the outcome
        self._allowing = False  # a request is in flight: a refetch must not re-enable
        self.setObjectName("blockedSiteNotice")
        self.setStyleSheet(notice_style("warning"))
        layout = QVBoxLayout(self)
        layout.setContentsMargins(10, 8, 10, 8)
        self.title = rich_label(QLabel("<b>This site asks automated tools not to read its pages</b>", self))
        self.title.setObjectName("blockedSiteTitle")
        self.explanation = PlainLabel("", self)
        self.explanation.setObjectName("blockedSiteText")
        self.explanation.setWordWrap(True)
        self.explanation.setTextFormat(Qt.TextFormat.PlainText)
        row = QHBoxLayout()
        self.allow_button = QPushButton("", self)
        self.allow_button.setObjectName("allowSiteButton")
        self.allow_button.clicked.connect(self.allow)
        row.addWidget(self.allow_button)
        row.addStretch(1)
        self.result_label = PlainLabel("", self)
        self.result_label.setObjectName("blockedSiteResult")
        self.result_label.setWordWrap(True)
        self.result_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.result_label.hide()  # only while allowing, or to say why it failed
        layout.addWidget(self.title)
        layout.addWidget(self.explanation)
        layout.addLayout(row)
        layout.addWidget(self.result_label)
        self.hide()

    def show_job(self, detail: dict[str, Any] | None) -> None:
        key = (detail or {}).get("jobId")
        if key != self.job_key:
            self.job_key, self._resolved_for = key, None
            self.result_label.hide()
        if self._resolved_for is not None and self._resolved_for == key:
            return  # keep saying what resumed while the job runs again
        host = robots_blocked_host(detail)
        self.host = host
        if host is None:
            self.hide()
            return
        self.setStyleSheet(notice_style("warning"))
        self.title.setText("<b>This site asks automated tools not to read its pages</b>")
        self.explanation.setText(
            f"{host} asks programs like JobCtrl not to read its job pages, so JobCtrl "
            "could not read this posting's description and stopped before scoring it. "
            "Let JobCtrl read postings on this site for you, as your browser would, and "
            "every job waiting on it carries on.")
        self.allow_button.setText(f"Allow JobCtrl to read postings on {host}")
        self.allow_button.setEnabled(not self._allowing)
        self.allow_button.show()
        self.show()

    def allow(self) -> None:
        host, key = self.host, self.job_key
        if host is None:
            return
        self._allowing = True
        self.allow_button.setEnabled(False)
        self._say("Allowing…", "idle")

        def done(answer: dict[str, Any]) -> None:
            self._allowing = False
            if key == self.job_key:
                self._resolved_for = key
                self.setStyleSheet(notice_style("success"))
                self.title.setText(f"<b>JobCtrl may read postings on {html.escape(host)}</b>")
                self.explanation.setText(describe_resolution(host, answer))
                self.allow_button.hide()
                self.result_label.hide()
            emit(self.resolved, answer)

        def failed(error: Exception) -> None:
            self._allowing = False
            if key == self.job_key:
                self.allow_button.setEnabled(True)
                self._say(describe_api_error(error), "bad")
            emit(self.resolved, error)

        self.controller.call(
            lambda client: client.resolve_enrich_condition(ROBOTS_CODE, host), done, failed,
            name="allow-site")

    def _say(self, text: str, tone: str) -> None:
        self.result_label.setText(text)
        self.result_label.setStyleSheet(f"color: {COLORS[tone]};")
        self.result_label.show()
