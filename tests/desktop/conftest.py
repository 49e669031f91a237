"""Driving the qasync shell from pytest-qt.

The shell's coroutines need an asyncio loop that runs *inside* Qt's event processing,
like in the app. qasync's ``QEventLoop(qapp, already_running=True)`` is exactly that: it
registers itself as the running asyncio loop of this thread and dispatches its callbacks
from Qt timers and socket notifiers. The test body then stays an ordinary synchronous
pytest-qt test: tasks make progress whenever Qt processes events, i.e. inside
``qtbot.waitUntil`` / ``qtbot.waitSignal`` / ``qtbot.wait``. Nothing blocks the GUI
thread, nothing is nested (no ``run_until_complete`` inside a running loop), and no
second loop runs at the same time: pytest-asyncio's session loop (used by the
integration tests) is idle between tests, and the fixture unregisters the qasync loop
at teardown, so both kinds of test share one session.
"""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from desktop.qt_compat import QEventLoop


@pytest.fixture
def qloop(qapp, qtbot):
    if asyncio.events._get_running_loop() is not None:
        pytest.fail("another asyncio loop is running in this thread")
    loop = QEventLoop(qapp, already_running=True)
    try:
        yield loop
    finally:
        # Cancel what a failed test left behind and let it unwind on the same loop.
        pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
        for task in pending:
            task.cancel()
        with contextlib.suppress(Exception):
            qtbot.waitUntil(lambda: all(task.done() for task in pending), timeout=60_000)
        # Not loop.stop(): it calls QApplication.exit(), which with no exec() running
        # leaves Qt's "quit now" flag set, and every later nested event loop (each
        # qtbot wait) would return at once without processing events. Mark the loop
        # stopped by hand instead (qasync keeps the flag name-mangled).
        loop._QEventLoop__is_running = False
        asyncio.events._set_running_loop(None)
        loop.close()

