"""Notifications: a Discover run that has ended, and today's budget used up.

The words are the window's: ``ops.run_end_notice`` and ``ops.budget_notice`` build them
from the same run summary as the Pipelines headline and the tray tooltip, from the same
operations snapshot the tray keeps fresh (``TrayStatus``).

When:

- a run: once per run id, when a snapshot shows it ended (finished, finished with problems,
  failed, canceled) after this session saw it under way — live in a snapshot, or its
  ``DiscoveryRunStarted`` event (a run that fails at once may never be seen live). A run
  that was already over when JobCtrl opened says nothing. The Discover workflow's own end
  (``DiscoveryRunCompleted``) is not the run's end: its jobs may still be prepared, and
  "Discover finished" while the headline says "Preparing 135 of 234" would contradict it;
- the budget: once per spend day, the first time a snapshot says it is used up.

Where: the sink, normally the tray icon's ``showMessage`` (the platform's notification
center), reports whether it could show the message. Where it could not (no tray host, no
message support), ``undelivered`` is emitted so the window shows an in-window banner.
Every notification is also emitted as ``notified``.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QSystemTrayIcon

from desktop.client import StreamedEvent
from desktop.plain_text import notification_text
from desktop.presenters import operations as ops
from desktop.presenters.applications import follow_ups_due_text
from desktop.qt_compat import emit
from desktop.shell import ShellController
from desktop.tray import TraySnapshot, TrayStatus

Level = QSystemTrayIcon.MessageIcon
Sink = Callable[[str, str, Level], bool]  # True when the message was shown
MESSAGE_MS = 8_000
LEVELS = {"info": Level.Information, "warning": Level.Warning, "critical": Level.Critical}


def follow_up_message(count: int) -> tuple[str, str, Level]:
    return ("Time to follow up",
            f"{follow_ups_due_text(count)}. Open Applications to see them.", Level.Information)


class Notifier(QObject):
    notified = Signal(str, str)           # title, text
    undelivered = Signal(str, str, str)   # title, text, level: show it in the window

    def __init__(self, controller: ShellController, status: TrayStatus, sink: Sink | None = None,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.sink = sink
        self.history: list[tuple[str, str]] = []
        self._announced: set[str] = set()   # notice keys already said
        self._under_way: set[str] = set()   # run ids seen under way in this session
        controller.event_received.connect(self.on_event)
        status.changed.connect(self.on_snapshot)

    def on_event(self, event: StreamedEvent) -> None:
        if event.type == "DiscoveryRunStarted" and event.payload.get("discoverRunId"):
            self._under_way.add(event.payload["discoverRunId"])

    def on_snapshot(self, snapshot: TraySnapshot) -> None:
        operations = snapshot.operations
        if operations is not None:
            self._on_run(operations)
        budget = ops.budget_notice(operations if operations is not None
                                   else {"budget": snapshot.today})
        if budget is not None:
            self._say(budget)

    def _on_run(self, operations: dict) -> None:
        run_id = (ops.execution(operations) or {}).get("discoverRunId")
        if run_id is None:
            return
        if ops.phase(operations) in ops.LIVE_PHASES:
            self._under_way.add(run_id)
            return
        notice = ops.run_end_notice(operations)
        if notice is not None and run_id in self._under_way:
            self._say(notice)

    def _say(self, notice: ops.Notice) -> None:
        if notice.key in self._announced:
            return
        self._announced.add(notice.key)
        self._deliver(notice.title, notice.text, notice.level)

    def announce_follow_ups(self, count: int) -> None:
        """Once a day at most: ``FollowUpReminders`` decides when (desktop/follow_ups.py)."""
        title, text, _level = follow_up_message(count)
        self._deliver(title, text, "info")

    def _deliver(self, title: str, text: str, level: str) -> None:
        self.history.append((title, text))
        shown = self.sink is not None and self.sink(title, text, LEVELS[level])
        if not shown:
            emit(self.undelivered, title, text, level)
        emit(self.notified, title, text)


def tray_sink(icon: QSystemTrayIcon) -> Sink:
    def show(title: str, text: str, level: Level) -> bool:
        if icon.isVisible() and QSystemTrayIcon.supportsMessages():
            icon.showMessage(notification_text(title), notification_text(text), level, MESSAGE_MS)
            return True
        return False

    return show
