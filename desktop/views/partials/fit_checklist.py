"""The fit checklist of the job detail: the score's evidence ledger as lines a job seeker
reads — ✓ met (with the profile's evidence), ✗ missing (with why), ? unknown — must-haves
first, nice-to-haves after; the cap that limited the score; the minimum-fit threshold.

The words are plain functions (tests call them); ``FitChecklist`` shows them.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGridLayout, QLabel, QWidget

from desktop.plain_text import PlainLabel, rich_label
from desktop.views.status_indicators import COLORS

MARKS = {"met": ("✓", "ok"), "missing": ("✗", "bad"), "unknown": ("?", "idle")}
GROUP_TITLES = {"must": "Must-haves", "nice": "Nice-to-haves"}


@dataclass(frozen=True)
class ChecklistRow:
    group: str      # "must" | "nice"
    mark: str       # ✓ ✗ ?
    tone: str       # a COLORS key
    label: str
    note: str       # the evidence, or why it is missing / unknown ("" when none)


def checklist_rows(ledger: dict[str, Any] | None) -> list[ChecklistRow]:
    """Must-haves, then nice-to-haves, each in the ledger's order."""
    rows = [_row(item) for item in (ledger or {}).get("requirements") or []]
    return [row for group in GROUP_TITLES for row in rows if row.group == group]


def _row(item: dict[str, Any]) -> ChecklistRow:
    status = item.get("status") if item.get("status") in MARKS else "unknown"
    mark, tone = MARKS[status]
    if status == "met":
        note = item.get("evidence") or ""
    else:
        note = item.get("detail") or ("not in the posting or your profile"
                                      if status == "unknown" else "")
    if item.get("dealBreaker") and status != "met":
        note = f"{note} (deal-breaker)" if note else "deal-breaker"
    group = "nice" if item.get("importance") == "nice" else "must"
    return ChecklistRow(group, mark, tone, str(item.get("label") or "?"), note)


def cap_text(ledger: dict[str, Any] | None) -> str | None:
    """"Capped at 15: on-site role, you want remote"."""
    cap = (ledger or {}).get("cap")
    if not cap:
        return None
    return f"Capped at {cap.get('score')}: {cap.get('reason') or 'no reason given'}"


def coverage_text(items: list[dict[str, Any]] | None) -> str | None:
    """The posting's must-have terms in plain words: "Terms the posting asks for: SQL ✓ in
    your résumé · Spark ✗ not in your profile" (None when the posting names none)."""
    parts = []
    for item in items or []:
        term = str(item.get("term") or "?")
        if not item.get("proven"):
            parts.append(f"{term} ✗ not in your profile")
        elif item.get("inResume") is None:
            parts.append(f"{term} ✓ in your profile")
        elif item.get("inResume"):
            parts.append(f"{term} ✓ in your résumé")
        else:
            parts.append(f"{term} — in your profile, not in this résumé")
    return f"Terms the posting asks for: {' · '.join(parts)}" if parts else None


def threshold_text(job: dict[str, Any]) -> str | None:
    """Below the user's minimum fit: what happened to the materials (None when not below)."""
    threshold = job.get("fitThreshold") or {}
    score = (job.get("score") or {}).get("score")
    if not threshold.get("below") or score is None:
        return None
    head = f"Below your threshold (fit {score} < {threshold.get('minFitScore')})"
    if has_materials(job):
        return f"{head} — prepared anyway at your request"
    if threshold.get("prepareAnyway"):
        return f"{head} — being prepared anyway at your request"
    return f"{head} — no résumé or letter prepared"


def offers_prepare_anyway(job: dict[str, Any]) -> bool:
    """Below the threshold, nothing written and not asked for yet."""
    threshold = job.get("fitThreshold") or {}
    return (threshold_text(job) is not None and not has_materials(job)
            and not threshold.get("prepareAnyway"))


def has_materials(job: dict[str, Any]) -> bool:
    return bool(job.get("resume") or job.get("coverLetter"))


def is_below_threshold(job: dict[str, Any]) -> bool:
    return bool((job.get("fitThreshold") or {}).get("below"))


class FitChecklist(QWidget):
    """One line per requirement under its group's title; hidden when there is no ledger."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("fitChecklist")
        self.grid = QGridLayout(self)
        self.grid.setContentsMargins(0, 0, 0, 0)
        self.grid.setHorizontalSpacing(8)
        self.grid.setVerticalSpacing(3)
        self.grid.setColumnStretch(1, 1)
        self.rows: list[ChecklistRow] = []
        self._next_line = 0
        self.hide()

    def set_ledger(self, ledger: dict[str, Any] | None) -> None:
        self._clear()
        self.rows = checklist_rows(ledger)
        group = None
        for row in self.rows:
            if row.group != group:
                group = row.group
                self._add_title(GROUP_TITLES[group])
            self._add_row(row)
        self.setVisible(bool(self.rows))

    def lines(self) -> list[str]:
        """What each line says, as the user reads it (tests compare these)."""
        return [f"{row.mark} {row.label}" + (f" — {row.note}" if row.note else "")
                for row in self.rows]

    def _clear(self) -> None:
        while self.grid.count():
            item = self.grid.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        self._next_line = 0

    def _take_line(self) -> int:
        self._next_line += 1
        return self._next_line - 1

    def _add_title(self, text: str) -> None:
        title = PlainLabel(text, self)
        title.setStyleSheet(f"color: {COLORS['idle']}; font-weight: 600;")
        self.grid.addWidget(title, self._take_line(), 0, 1, 2)

    def _add_row(self, row: ChecklistRow) -> None:
        line = self._take_line()
        mark = QLabel(row.mark, self)
        mark.setObjectName("checkMark")
        mark.setStyleSheet(f"color: {COLORS[row.tone]}; font-weight: 700;")
        mark.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignHCenter)
        text = rich_label(QLabel(self))
        text.setObjectName("checkLine")
        text.setWordWrap(True)
        text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        note = (f" <span style='color:{COLORS['idle']}'>— {html.escape(row.note)}</span>"
                if row.note else "")
        text.setText(f"<b>{html.escape(row.label)}</b>{note}")
        self.grid.addWidget(mark, line, 0)
        self.grid.addWidget(text, line, 1)
