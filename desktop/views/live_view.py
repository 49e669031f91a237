"""The base of every API-backed view: refetch when invalidated, poll only while shown.

A view names the event-router keys it shows (``view_keys``), how to fetch
(``fetch(client)``, a coroutine) and how to show the result (``apply``). The base turns
SSE invalidations into at most one fetch in flight plus one queued, debounced so a burst of
events costs one request; fetches happen only while the view is visible (a hidden tab or a
window minimised to the tray costs nothing) and a stale view refreshes when shown again.
"""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import QWidget

from desktop.client import ApiClient
from desktop.qt_compat import emit
from desktop.shell import ShellController

DEBOUNCE_MS = 200


class LiveView(QWidget):
    view_keys: frozenset[str] = frozenset()
    refreshed = Signal()          # after apply(); tests wait on it
    refresh_failed = Signal(object)

    def __init__(self, controller: ShellController, parent: QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.stale = True
        self.last_refreshed_at: float | None = None  # time.monotonic()
        self.last_error: Exception | None = None
        self._in_flight = False
        self._again = False
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(DEBOUNCE_MS)
        self._debounce.timeout.connect(self.refresh)
        self._poll = QTimer(self)
        self._poll.timeout.connect(self._on_poll)
        controller.views_invalidated.connect(self._on_invalidated)
        controller.runtime_ready.connect(lambda _info: self.invalidate())

    # -- to implement ---------------------------------------------------------------------

    async def fetch(self, client: ApiClient) -> Any:
        raise NotImplementedError

    def apply(self, result: Any) -> None:
        raise NotImplementedError

    def show_error(self, error: Exception) -> None:
        """Override to show a failed refresh (the previous data stays on screen)."""

    def poll_interval_ms(self) -> int | None:
        """Refetch this often while shown, or None for events only."""
        return None

    # -- machinery ------------------------------------------------------------------------

    @property
    def active(self) -> bool:
        return self.isVisible()

    @property
    def refreshing(self) -> bool:
        return self._in_flight

    def invalidate(self) -> None:
        self.stale = True
        # Not restarted while pending: a steady stream of events must not postpone the
        # refresh forever; a burst costs one fetch per DEBOUNCE_MS at most.
        if self.active and not self._debounce.isActive():
            self._debounce.start()

    def refresh(self) -> None:
        """Fetch now (or right after the fetch in flight)."""
        self._debounce.stop()
        if self._in_flight:
            self._again = True
            return
        self._in_flight = True
        self.stale = False
        task = self.controller.call(self.fetch, self._on_result, self._on_error,
                                    name=f"refresh-{type(self).__name__}")
        if task is None:
            self._in_flight = False  # _on_error already ran (no client yet)

    def _on_result(self, result: Any) -> None:
        self._in_flight = False
        self.last_error = None
        self.last_refreshed_at = time.monotonic()
        self.apply(result)
        emit(self.refreshed)
        self._after_fetch()

    def _on_error(self, error: Exception) -> None:
        self._in_flight = False
        self.stale = True
        self.last_error = error
        self.show_error(error)
        emit(self.refresh_failed, error)
        self._after_fetch()

    def _after_fetch(self) -> None:
        if self._again:
            self._again = False
            self.refresh()
        self.reschedule_poll()

    def reschedule_poll(self) -> None:
        interval = self.poll_interval_ms() if self.active else None
        if interval is None:
            self._poll.stop()
        elif not self._poll.isActive() or self._poll.interval() != interval:
            self._poll.start(interval)

    def _on_poll(self) -> None:
        if self.active:
            self.refresh()

    def _on_invalidated(self, views: frozenset[str]) -> None:
        if views & self.view_keys:
            self.invalidate()

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt API
        super().showEvent(event)
        if self.stale and self.controller.client is not None:
            self.refresh()
        self.reschedule_poll()

    def hideEvent(self, event: QHideEvent) -> None:  # noqa: N802 - Qt API
        super().hideEvent(event)
        self._poll.stop()
