"""The live event list: rows appended at the bottom, the oldest dropped past a cap.

Each row is a sentence (``desktop/presenters/activity.py``); the event's type, ids and
codes are the row's ``DetailsRole`` for the view's "Technical details", never its text.

A row keeps its sentence, its tone and the event's payload as compact JSON text, not the
parsed event: the list holds up to ``DEFAULT_MAX_ROWS`` rows all week, and a parsed payload
(a dict of strings) costs ~4x its JSON text. Only a tooltip, the Technical details or a
caller asking for the event (``EventRole``) parse it again (issue 18: 8.4 → ~2.6 MiB for
5,000 rows of a real 1,000-job run, bench/README.md).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap

from desktop.client import StreamedEvent
from desktop.plain_text import plain_tooltip
from desktop.presenters.activity import (
    ActivityLine,
    Names,
    Tone,
    activity_line,
    job_label,
    occurred_text,
    technical_details,
)
from desktop.theme import qcolor

DEFAULT_MAX_ROWS = 5_000
MAX_JOB_LABELS = 20_000

# A colored dot per row; the text keeps the palette's color unless something went wrong.
DOT_COLORS: dict[Tone, str] = {
    "info": "#9aa5b1",
    "success": "#2e7d32",
    "warning": "#c77700",
    "error": "#c62828",
}
TEXT_COLORS: dict[Tone, str | None] = {  # a tone of desktop.theme
    "info": None,
    "success": None,
    "warning": None,
    "error": "bad",
}
_dots: dict[Tone, QIcon] = {}


def tone_dot(tone: Tone) -> QIcon:
    """A small filled circle, made once per tone (needs a QGuiApplication)."""
    if tone not in _dots:
        pixmap = QPixmap(12, 12)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(QColor(DOT_COLORS[tone]))
        painter.drawEllipse(2, 2, 8, 8)
        painter.end()
        _dots[tone] = QIcon(pixmap)
    return _dots[tone]

EventRole = Qt.ItemDataRole.UserRole + 1
EventTypeRole = Qt.ItemDataRole.UserRole + 2
DetailsRole = Qt.ItemDataRole.UserRole + 3  # ((label, value), ...) for Technical details

Index = QModelIndex | QPersistentModelIndex


class EventRow:
    """One row: the sentence and tone shown, and what Technical details needs."""

    __slots__ = ("event_id", "event_type", "payload_json", "text", "tone")

    def __init__(self, event: StreamedEvent, line: ActivityLine):
        self.event_id = event.id
        self.event_type = sys.intern(event.type)  # a few dozen types, shared by every row
        self.payload_json = json.dumps(event.payload, ensure_ascii=False, separators=(",", ":"))
        self.text = line.text
        self.tone: Tone = line.tone

    @property
    def payload(self) -> dict:
        return json.loads(self.payload_json)

    @property
    def event(self) -> StreamedEvent:
        return StreamedEvent(self.event_id, self.event_type, self.payload)


class EventListModel(QAbstractListModel):
    def __init__(self, max_rows: int = DEFAULT_MAX_ROWS, parent=None):
        super().__init__(parent)
        if max_rows < 1:
            raise ValueError("max_rows must be positive")
        self.max_rows = max_rows
        self._rows: list[EventRow] = []
        # "Title at Company" by job id, learnt from JobDiscovered: later rows name the job.
        self._job_labels: dict[str, str] = {}
        # "Acme (Greenhouse)" by source id, from the settings (set_source_names).
        self._source_names: dict[str, str] = {}
        self._names = Names(job=self._job_labels.get, source=self._source_names.get)

    # -- writing --------------------------------------------------------------------------

    def append(self, event: StreamedEvent) -> None:
        self.extend((event,))

    def extend(self, events: Iterable[StreamedEvent]) -> None:
        new = [self._row(event) for event in events]
        if not new:
            return
        new = new[-self.max_rows:]
        overflow = len(self._rows) + len(new) - self.max_rows
        if overflow > 0:
            self.beginRemoveRows(QModelIndex(), 0, overflow - 1)
            del self._rows[:overflow]
            self.endRemoveRows()
        first = len(self._rows)
        self.beginInsertRows(QModelIndex(), first, first + len(new) - 1)
        self._rows.extend(new)
        self.endInsertRows()

    def _row(self, event: StreamedEvent) -> EventRow:
        if event.type == "JobDiscovered":
            label = job_label(event.payload)
            if label and event.payload.get("jobId"):
                if len(self._job_labels) >= MAX_JOB_LABELS:
                    del self._job_labels[next(iter(self._job_labels))]  # the oldest
                self._job_labels[event.payload["jobId"]] = label
        return EventRow(event, activity_line(event.type, event.payload, self._names))

    def set_source_names(self, names: Mapping[str, str]) -> None:
        """Name sources in rows added from now on (rows shown keep their words)."""
        self._source_names.clear()
        self._source_names.update(names)

    def clear(self) -> None:
        self.beginResetModel()
        self._rows.clear()
        self.endResetModel()

    # -- reading --------------------------------------------------------------------------

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802 - Qt API
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < len(self._rows):
            return None
        row = self._rows[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return row.text
        if role == Qt.ItemDataRole.ForegroundRole:
            return qcolor(TEXT_COLORS[row.tone]) if TEXT_COLORS[row.tone] else None
        if role == Qt.ItemDataRole.DecorationRole:
            return tone_dot(row.tone)
        if role == Qt.ItemDataRole.ToolTipRole:
            return plain_tooltip(occurred_text(row.payload))
        if role == DetailsRole:  # made when asked: most rows are never inspected
            return technical_details(row.event_id, row.event_type, row.payload)
        if role == EventRole:
            return row.event
        if role == EventTypeRole:
            return row.event_type
        return None

    def row_text(self, row: int) -> str:
        return self._rows[row].text

    def texts(self) -> list[str]:
        return [row.text for row in self._rows]

    def last_event_id(self) -> int | None:
        return self._rows[-1].event_id if self._rows else None

