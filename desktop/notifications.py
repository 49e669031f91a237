"""Native notifications: when today's budget becomes exhausted and when a Discover run ends.

Once per occurrence: a budget is announced once per spend day (a refetch that still says
"exhausted" says nothing new), a run once per Discover run id (a replayed or repeated event
says nothing new). The message goes to a sink, normally the tray icon's ``showMessage``
(the platform's notification center); every notification is also emitted as ``notified``
so the window and tests can see it where no tray exists.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QSystemTrayIcon

from desktop.client import StreamedEvent
from desktop.presenters.applications import follow_ups_due_text
from desktop.qt_compat import emit
from desktop.shell import ShellController
from desktop.tray import TraySnapshot, TrayStatus, money

Level = QSystemTrayIcon.MessageIcon
Sink = Callable[[str, str, Level], None]
MESSAGE_MS = 8_000

RUN_END_EVENTS = ("DiscoveryRunCompleted", "DiscoveryRunFailed")


def run_end_message(event: StreamedEvent) -> tuple[str, str, Level]:
    """Title, text and level for a Discover run's terminal event."""
    p = event.payload
    status = p.get("status")
    if event.type == "DiscoveryRunCompleted":
        text = f"{p.get('jobsNew', 0):,} new jobs of {p.get('jobsObserved', 0):,} seen."
        failed = [item.get("family") for item in p.get("familiesFailed") or []]
        if failed:
            return ("Discover finished with issues",
                    f"{text} Sources that failed: {', '.join(map(str, failed))}.",
                    Level.Warning)
        return "Discover finished", text, Level.Information
    if status == "canceled":
        return "Discover canceled", "The run was stopped before it finished.", Level.Information
    return ("Discover failed",
            f"The run ended with an error ({p.get('errorCode', 'unknown')}).", Level.Critical)


def budget_message(today: dict) -> tuple[str, str, Level]:
    return ("Today's budget is used up",
            f"Spent {money(today['spentUsd'])} of {money(today['ceilingUsd'])}. "
            "Jobs waiting for scoring and writing continue by themselves once the budget "
            "resets or you raise it.",
            Level.Warning)


def follow_up_message(count: int) -> tuple[str, str, Level]:
    return ("Time to follow up",
            f"{follow_ups_due_text(count)}. Open Applications to see them.", Level.Information)


class Notifier(QObject):
    notified = Signal(str, str)  # title, text

    def __init__(self, controller: ShellController, status: TrayStatus, sink: Sink | None = None,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.sink = sink
        self.history: list[tuple[str, str]] = []
        self._runs_announced: set[str] = set()
        self._budget_days_announced: set[str] = set()
        controller.event_received.connect(self.on_event)
        status.changed.connect(self.on_snapshot)

    def on_event(self, event: StreamedEvent) -> None:
        if event.type not in RUN_END_EVENTS:
            return
        run_id = event.payload.get("discoverRunId") or f"event-{event.id}"
        if run_id in self._runs_announced:
            return
        self._runs_announced.add(run_id)
        self._send(*run_end_message(event))

    def on_snapshot(self, snapshot: TraySnapshot) -> None:
        today = snapshot.today
        if not today or not today.get("exhausted"):
            return
        day = today.get("day") or "?"
        if day in self._budget_days_announced:
            return
        self._budget_days_announced.add(day)
        self._send(*budget_message(today))

    def announce_follow_ups(self, count: int) -> None:
        """Once a day at most: ``FollowUpReminders`` decides when (desktop/follow_ups.py)."""
        self._send(*follow_up_message(count))

    def _send(self, title: str, text: str, level: Level) -> None:
        self.history.append((title, text))
        if self.sink is not None:
            self.sink(title, text, level)
        emit(self.notified, title, text)


def tray_sink(icon: QSystemTrayIcon) -> Sink:
    def show(title: str, text: str, level: Level) -> None:
        if icon.isVisible() and QSystemTrayIcon.supportsMessages():
            icon.showMessage(title, text, level, MESSAGE_MS)

    return show
