"""LiveView against the real services: invalidations refetch once, hidden views do not."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QTimer

from desktop.client import ApiClient, ApiUnavailable
from desktop.shell import ShellController
from desktop.views.live_view import LiveView

pytestmark = [pytest.mark.desktop, pytest.mark.integration]


# A view key no real event routes to: the shared live services keep emitting events from
# other tests' runs, which must not add fetches to the counts below.
PRIVATE = "test-only"


class HealthView(LiveView):
    view_keys = frozenset({PRIVATE})

    def __init__(self, controller):
        super().__init__(controller)
        self.results: list[dict] = []
        self.fetches = 0

    async def fetch(self, client: ApiClient):
        self.fetches += 1
        return await client.health()

    def apply(self, result):
        self.results.append(result)


def test_invalidations_coalesce_and_hidden_views_wait(qtbot, live_controller):
    view = HealthView(live_controller)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.refreshed, timeout=10_000):
        view.show()  # stale on first show: fetches at once
    assert view.results[-1]["status"] in {"ok", "degraded"}

    with qtbot.waitSignal(view.refreshed, timeout=10_000):
        for _ in range(20):
            live_controller.views_invalidated.emit(frozenset({PRIVATE}))
    qtbot.wait(400)  # longer than the debounce: no second fetch is queued
    assert view.fetches == 2

    view.hide()
    live_controller.views_invalidated.emit(frozenset({PRIVATE}))
    qtbot.wait(400)
    assert view.fetches == 2 and view.stale
    with qtbot.waitSignal(view.refreshed, timeout=10_000):
        view.show()
    assert view.fetches == 3


def test_without_services_the_view_reports_unavailable(qtbot, qloop, tmp_path):
    view = HealthView(ShellController(tmp_path))
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.refresh_failed, timeout=5_000) as failed:
        view.refresh()
    assert isinstance(failed.args[0], ApiUnavailable)
    assert view.stale and not view.refreshing


def test_a_steady_stream_of_events_does_not_postpone_the_refresh(qtbot, live_controller):
    view = HealthView(live_controller)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.refreshed, timeout=10_000):
        view.show()
    timer = QTimer()
    timer.timeout.connect(lambda: live_controller.views_invalidated.emit(frozenset({PRIVATE})))
    timer.start(50)  # an invalidation every 50 ms: faster than the debounce
    try:
        with qtbot.waitSignal(view.refreshed, timeout=10_000):
            pass
    finally:
        timer.stop()
    assert view.fetches >= 2
