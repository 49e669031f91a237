"""The API's planned restart (the idle recycle restarts it with the worker,
backend/supervision/supervisor.py ``_recycle_grown_services`` -> ``restart_planned``) is
invisible in the window: calls made while it is down wait for the new API and succeed —
the command once — and the status line stays "Ready"; an API that dies unplanned still
reads "Reconnecting…". Real Temporal, worker and API, supervised by the shell on the
qasync loop as in the app."""

from __future__ import annotations

import os
import signal

import psutil
import pytest

from desktop.presenters.window_status import PLANNED_RESTART_WORDS, READY, RECONNECTING
from desktop.shell import ShellController
from desktop.views.main_window import MainWindow

pytestmark = pytest.mark.integration


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def test_a_planned_api_restart_is_invisible_and_an_unplanned_one_is_not(qtbot, qloop, tmp_path):
    controller = ShellController(tmp_path, temporal_ui=False)
    window = MainWindow(controller)
    qtbot.addWidget(window)
    shown: list[tuple[str, str | None]] = []
    show_line = window.status_line.show_line

    def record(line) -> None:
        shown.append((line.text, line.details))
        show_line(line)

    window.status_line.show_line = record
    controller.start()
    try:
        qtbot.waitUntil(lambda: window.stream == "live" and shown[-1][0] == READY.text,
                        timeout=90_000)
        api = controller.supervisor.service("api")
        old_pid, shown[:] = api.pid, []
        restart = qloop.create_task(api.restart_planned())
        qtbot.waitUntil(lambda: _gone(old_pid), timeout=15_000)
        assert controller.statuses["api"].state == "recycling"  # still down: nothing listens
        answers: dict[str, object] = {}
        for name, request in (("jobs", lambda client: client.jobs(limit=5)),
                              ("patch", lambda client: client.patch_settings(minFitScore=42))):
            controller.call(request, lambda result, name=name: answers.setdefault(name, result),
                            lambda error, name=name: answers.setdefault(name, error))
        qtbot.waitUntil(lambda: len(answers) == 2 and restart.done(), timeout=60_000)
        assert restart.exception() is None and api.pid != old_pid
        assert isinstance(answers["jobs"], dict) and "items" in answers["jobs"], answers
        assert isinstance(answers["patch"], dict), answers
        qtbot.waitUntil(lambda: window.stream == "live", timeout=15_000)
        assert {text for text, _ in shown} == {READY.text}, shown
        assert (READY.text, PLANNED_RESTART_WORDS) in shown  # the tooltip says what happens
        assert shown[-1] == (READY.text, None)

        shown[:] = []
        os.kill(api.pid, signal.SIGKILL)  # not planned: a crash
        qtbot.waitUntil(lambda: (RECONNECTING.text, None) in shown, timeout=15_000)
        qtbot.waitUntil(lambda: window.stream == "live" and shown[-1][0] == READY.text,
                        timeout=60_000)
    finally:
        stopping = controller.shutdown()
        qtbot.waitUntil(stopping.done, timeout=60_000)
