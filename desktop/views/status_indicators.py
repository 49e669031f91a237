"""Small colored state labels: one per service, one for the event stream."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QWidget

from desktop.theme import COLORS  # the views import the tone colours from here too

if TYPE_CHECKING:
    from backend.desktop_contract import ServiceStatus

# state -> (tone, label)
SERVICE_STATES = {
    "waiting": ("idle", "waiting"),
    "starting": ("busy", "starting…"),
    "ready": ("ok", "ready"),
    "external": ("ok", "external"),
    "restarting": ("busy", "restarting…"),
    "failed": ("bad", "failed"),
    "stopped": ("idle", "stopped"),
}
STREAM_STATES = {
    "offline": ("idle", "offline"),
    "connecting": ("busy", "connecting…"),
    "live": ("ok", "live"),
    "reconnecting": ("busy", "reconnecting…"),
}


class StateIndicator(QFrame):
    """``● Temporal ready`` in a rounded frame, colored by state. The header must fit a
    small laptop's screen (900 px), so the detail (why it restarts, the external address)
    and the process id are in the tooltip and the accessible name, not in the text; a
    failure's reason is also in the window's banner."""

    def __init__(self, title: str, states: dict[str, tuple[str, str]], initial: str,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.title = title
        self._states = states
        self.state = initial
        self.detail: str | None = None
        self.pid: int | None = None
        self.setObjectName("stateIndicator")
        self.setStyleSheet(
            "#stateIndicator { border: 1px solid palette(mid); border-radius: 6px;"
            " background: palette(base); }"
        )
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 9, 4)
        self.label = QLabel(self)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(self.label)
        self.set_state(initial)

    def set_state(self, state: str, detail: str | None = None,
                  pid: int | None = None) -> None:
        self.state, self.detail, self.pid = state, detail, pid
        tone, text = self._states.get(state, ("idle", state))
        color = COLORS[tone]
        self.label.setText(
            f"<span style='color:{color}; font-size:14pt'>●</span>&nbsp;"
            f"<b>{html.escape(self.title)}</b>&nbsp;"
            f"<span style='color:{color}'>{html.escape(text)}</span>"
        )
        self.setToolTip(f"{self.title}: {text}" + (f"\n{detail}" if detail else "")
                        + (f"\nProcess id (pid): {pid}" if pid else ""))
        self.setAccessibleName(self.text())

    def text(self) -> str:
        """Plain text with the detail, for tests and accessibility."""
        _tone, text = self._states.get(self.state, ("idle", self.state))
        return f"{self.title}: {text}" + (f" ({self.detail})" if self.detail else "")


class ServiceIndicator(StateIndicator):
    def __init__(self, title: str, parent: QWidget | None = None):
        super().__init__(title, SERVICE_STATES, "waiting", parent)

    def show_status(self, status: ServiceStatus) -> None:
        pid = status.pid if status.state in ("starting", "ready") else None
        self.set_state(status.state, status.detail, pid)


class StreamIndicator(StateIndicator):
    def __init__(self, parent: QWidget | None = None):
        super().__init__("Events", STREAM_STATES, "offline", parent)
