"""Due follow-ups outside the board: the tray's menu entry and one notification a day.

``FollowUpReminders`` keeps the number of due follow-ups fresh (on the shell's start, on
board events, and every 15 minutes, since "due today" changes at local midnight with no
event) while the window is hidden too. It asks for one announcement per local calendar
day at most, remembered in ``<app dir>/reminders.json`` so a restart the same day stays
quiet; the day is the user's (a UTC date would turn over mid-afternoon in California).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable
from datetime import date, datetime, tzinfo
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from backend.desktop_contract import local_today, local_zone, utc_now
from desktop.event_router import APPLICATIONS
from desktop.qt_compat import emit
from desktop.shell import ShellController

log = logging.getLogger(__name__)

POLL_MS = 15 * 60_000
LOG_NAME = "reminders.json"


class ReminderLog:
    """The last local day a follow-up notification was shown, kept across restarts."""

    def __init__(self, app_dir: Path):
        self.path = Path(app_dir) / LOG_NAME

    def last_day(self) -> date | None:
        try:
            return date.fromisoformat(json.loads(self.path.read_text("utf-8"))["followUpsOn"])
        except (OSError, ValueError, KeyError, TypeError):
            return None  # never shown, or an unreadable file: showing once more is fine

    def claim(self, day: date) -> bool:
        """True the first time it is asked on ``day`` (and records it); False after."""
        last = self.last_day()
        if last is not None and last >= day:
            return False
        tmp = self.path.with_suffix(".json.tmp")
        try:
            tmp.write_text(json.dumps({"followUpsOn": day.isoformat()}), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError as error:
            log.warning("could not remember today's follow-up reminder: %s", error)
        return True


class FollowUpReminders(QObject):
    changed = Signal(int)    # follow-ups due now
    announce = Signal(int)   # at most once per local day, when some are due

    def __init__(self, controller: ShellController, app_dir: Path, *,
                 clock: Callable[[], datetime] = utc_now, zone: tzinfo | None = None,
                 parent: QObject | None = None):
        super().__init__(parent)
        self.controller = controller
        self.log = ReminderLog(app_dir)
        self.clock = clock
        self.zone = zone or local_zone()
        self.due = 0
        self._poll = QTimer(self)
        self._poll.setInterval(POLL_MS)
        self._poll.timeout.connect(self.refresh)
        controller.runtime_ready.connect(lambda _info: self._started())
        controller.views_invalidated.connect(self._on_invalidated)
        controller.stopping.connect(self._poll.stop)

    def _started(self) -> None:
        self._poll.start()
        self.refresh()

    def _on_invalidated(self, views: frozenset[str]) -> None:
        if APPLICATIONS in views:
            self.refresh()

    def refresh(self) -> None:
        self.controller.call(lambda client: client.applications(), self._on_board,
                             lambda _error: None, name="follow-up-reminders")

    def _on_board(self, board: dict) -> None:
        self.show_count(int(board.get("followUpsDue") or 0))

    def show_count(self, due: int) -> None:
        self.due = due
        emit(self.changed, due)
        if due > 0 and self.log.claim(local_today(self.zone, self.clock())):
            emit(self.announce, due)
