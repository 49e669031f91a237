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
import json
from pathlib import Path

import pytest
import pytest_asyncio

from backend.supervision.supervisor import Supervisor
from desktop.qt_loop import QEventLoop
from desktop.shell import ShellController


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



# -- real services for view tests ---------------------------------------------------------
#
# One supervised instance (Temporal dev server, worker, API as real child processes) per
# session, started on pytest-asyncio's session loop before any qasync loop exists (session
# fixtures are set up before function fixtures). Its children log to files, so nothing
# needs that idle loop while a view test runs on ``qloop``. A view test attaches a fresh
# ShellController to it: a new ApiClient and SSE consumer on the qasync loop.

DESKTOP_SOURCES = [{"kind": "demo_board", "id": "demo_board"}]


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def live_services(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("desktop-app")
    # minFitScore 0: the views are tested with every job prepared (the threshold has its own).
    (app_dir / "settings.json").write_text(json.dumps({"sources": DESKTOP_SOURCES, "minFitScore": 0}),
                                          encoding="utf-8")
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    yield supervisor
    await supervisor.stop()


@pytest.fixture
def live_controller(live_services, qloop, qtbot):
    """A ShellController attached to the live services, its event stream already live."""
    controller = ShellController(Path(live_services.info.app_dir))
    states: list[str] = []
    controller.stream_state.connect(states.append)
    controller.attach(live_services.info)
    qtbot.waitUntil(lambda: "live" in states, timeout=30_000)
    yield controller
    client = controller.client
    for task in list(controller._tasks):
        task.cancel()
    controller.client = None
    if client is not None:
        closing = qloop.create_task(client.close())
        qtbot.waitUntil(closing.done, timeout=10_000)
