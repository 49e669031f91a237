"""Small colored state labels: one per service, one for the event stream."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QWidget

from backend.runtime.services import ServiceStatus

COLORS = {
    "ok": "#2e7d32",
    "busy": "#b26a00",
    "bad": "#c62828",
    "idle": "#8a8a8a",
}

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
DETAIL_CHARS = 48


class StateIndicator(QFrame):
    """``● Temporal  ready  pid 4242`` in a rounded frame, colored by state."""

    def __init__(self, title: str, states: dict[str, tuple[str, str]], initial: str,
                 parent: QWidget | None = None):
        super().__init__(parent)
        self.title = title
        self._states = states
        self.state = initial
        self.detail: str | None = None
        self.setObjectName("stateIndicator")
        self.setStyleSheet(
            "#stateIndicator { border: 1px solid palette(mid); border-radius: 6px;"
            " background: palette(base); }"
        )
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 5, 12, 5)
        self.label = QLabel(self)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(self.label)
        self.set_state(initial)

    def set_state(self, state: str, detail: str | None = None) -> None:
        self.state, self.detail = state, detail
        tone, text = self._states.get(state, ("idle", state))
        color = COLORS[tone]
        shown = detail or ""
        if len(shown) > DETAIL_CHARS:
            shown = shown[: DETAIL_CHARS - 1] + "…"
        extra = (f"&nbsp;&nbsp;<span style='color:{COLORS['idle']}'>{html.escape(shown)}</span>"
                 if shown else "")
        self.label.setText(
            f"<span style='color:{color}; font-size:14pt'>●</span>&nbsp;"
            f"<b>{html.escape(self.title)}</b>&nbsp;&nbsp;"
            f"<span style='color:{color}'>{html.escape(text)}</span>{extra}"
        )
        self.setToolTip(f"{self.title}: {text}" + (f"\n{detail}" if detail else ""))

    def text(self) -> str:
        """Plain text, for tests and accessibility."""
        _tone, text = self._states.get(self.state, ("idle", self.state))
        return f"{self.title}: {text}" + (f" ({self.detail})" if self.detail else "")


class ServiceIndicator(StateIndicator):
    def __init__(self, title: str, parent: QWidget | None = None):
        super().__init__(title, SERVICE_STATES, "waiting", parent)

    def show_status(self, status: ServiceStatus) -> None:
        detail = status.detail
        if detail is None and status.pid and status.state in ("starting", "ready"):
            detail = f"pid {status.pid}"
        self.set_state(status.state, detail)


class StreamIndicator(StateIndicator):
    def __init__(self, parent: QWidget | None = None):
        super().__init__("Events", STREAM_STATES, "offline", parent)
