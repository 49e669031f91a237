"""The window's status line, and the words and tones of the services' and the event
stream's states (shown in Pipelines → Details → Services)."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from desktop.plain_text import plain_tooltip
from desktop.presenters.window_status import DETAILS_HINT, STARTING, StatusLine
from desktop.theme import COLORS  # the views import the tone colours from here too

# state -> (tone, label)
SERVICE_STATES = {
    "waiting": ("idle", "waiting"),
    "starting": ("busy", "starting…"),
    "ready": ("ok", "ready"),
    "external": ("ok", "external"),
    "restarting": ("busy", "restarting…"),
    "recycling": ("ok", "restarting to free memory"),
    "failed": ("bad", "failed"),
    "stopped": ("idle", "stopped"),
}
STREAM_STATES = {
    "offline": ("idle", "offline"),
    "connecting": ("busy", "connecting…"),
    "live": ("ok", "live"),
    "reconnecting": ("busy", "reconnecting…"),
    "resuming": ("ok", "resuming after a restart"),
}


class WindowStatusLine(QLabel):
    """The window's one plain status line (``● Ready``), colored by its tone; the words come
    from desktop/presenters/window_status.py. The services' own states are in Pipelines →
    Details (the tooltip says so)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("windowStatus")
        self.setTextFormat(Qt.TextFormat.RichText)
        self.line: StatusLine | None = None
        self.show_line(STARTING)

    def show_line(self, line: StatusLine) -> None:
        self.line = line
        color = COLORS[line.tone]
        self.setText(f"<span style='color:{color}; font-size:14pt'>●</span>&nbsp;"
                     f"<span style='color:{color}'>{html.escape(line.text)}</span>")
        self.setToolTip(plain_tooltip(f"{line.details}.\n{DETAILS_HINT}") if line.details else DETAILS_HINT)
        self.setAccessibleName(line.text)

    def plain_text(self) -> str:
        return self.line.text if self.line else ""
