"""The tray: the tooltip words, the menu, notifications, closing (the painted icon is in
test_tray_icon.py). The live test reads the real services.
"""

from __future__ import annotations

import pytest

from backend.runtime.services import ServiceStatus
from desktop.app import DesktopShell
from desktop.client import StreamedEvent
from desktop.notifications import Notifier
from desktop.shell import ShellController
from desktop.tray import (
    SpendTray,
    TraySnapshot,
    TrayStatus,
    cancelable_run,
    eta_text,
    spend_look,
    tooltip_text,
)
from desktop.views.main_window import MainWindow

pytestmark = pytest.mark.desktop


def today(spent: float, ceiling: float, *, day: str = "2026-03-02") -> dict:
    unlimited = ceiling == 0
    return {"day": day, "spentUsd": spent, "ceilingUsd": ceiling, "unlimited": unlimited,
            "remainingUsd": None if unlimited else max(ceiling - spent, 0),
            "exhausted": not unlimited and spent >= ceiling, "resetsAt": "2026-03-03T00:00:00Z"}


ETA = {"state": "available", "lowSeconds": 130, "highSeconds": 410, "confidence": "medium",
       "basis": "x", "sampleSize": 9, "computedAt": "2026-03-02T10:00:00Z", "caveat": "c"}


def operations(phase: str | None = None, status: str = "in_progress", eta=ETA) -> dict:
    execution = None if phase is None else {
        "discoverWorkflowId": "discover-local", "discoverRunId": "run-42",
        "workflowStatus": status, "phase": phase}
    return {"execution": execution, "overallEta": eta}


# -- words ----------------------------------------------------------------------------------


def test_tooltip_says_spend_against_the_ceiling_and_the_eta_range():
    assert tooltip_text(today(3.2, 25), operations("draining")) == \
        "Spent $3.20 of $25.00 today · ETA 2–7 min"


def test_tooltip_says_why_there_is_no_eta():
    withheld = {"state": "calibrating", "reason": "membership_open"}
    assert tooltip_text(today(0, 25), operations("discovering", eta=withheld)) == \
        "Spent $0.00 of $25.00 today · No ETA: jobs are still being discovered"
    assert eta_text(None) == "No ETA: the worker's status is not known yet"
    assert eta_text({"state": "unavailable", "reason": "no_work"}) == "No ETA: nothing is running"


def test_unknown_spend_is_never_shown_as_zero():
    text = tooltip_text(None, None, spend_error="API not reachable",
                        operations_error="API not reachable")
    assert text == "Spend unknown: API not reachable · No ETA: API not reachable"
    assert "$0" not in text


def test_unlimited_and_exhausted_read_plainly():
    assert tooltip_text(today(4, 0), operations()).startswith(
        "Spent $4.00 today (no daily limit)")
    assert tooltip_text(today(25, 25), operations()).startswith(
        "Spent $25.00 of $25.00 today (budget used up)")


def test_looks_follow_the_share_of_the_ceiling():
    assert spend_look(None) == "unknown"
    assert spend_look(today(1, 25)) == "normal"
    assert spend_look(today(19.99, 25)) == "normal"
    assert spend_look(today(20, 25)) == "near"
    assert spend_look(today(25, 25)) == "exhausted"
    assert spend_look(today(99, 0)) == "unlimited"


def test_only_an_in_progress_discovering_or_draining_run_is_cancelable():
    assert cancelable_run(operations("discovering")) == "run-42"
    assert cancelable_run(operations("draining")) == "run-42"
    assert cancelable_run(operations("draining", status="completed")) is None
    assert cancelable_run(operations("completed")) is None
    assert cancelable_run(operations(None)) is None
    assert cancelable_run(None) is None


# -- the tray object, the menu and closing ---------------------------------------------------


def test_tray_shows_a_snapshot_in_icon_tooltip_and_menu(qtbot, tmp_path):
    controller = ShellController(tmp_path)
    tray = SpendTray(controller)
    assert tray.tooltip() == "Spend unknown: not read yet · No ETA: not read yet"
    assert not tray.discover_action.isEnabled()  # no services yet
    tray.status.snapshot = TraySnapshot(today(21, 25), operations("draining"))
    tray.show_snapshot(tray.status.snapshot)
    assert tray.tooltip() == "Spent $21.00 of $25.00 today · ETA 2–7 min"
    assert not tray.icon.icon().isNull()
    assert not tray.cancel_action.isEnabled()  # still no client: nothing to send it to
    with qtbot.waitSignal(tray.quit_requested):
        tray.quit_action.trigger()
    with qtbot.waitSignal(tray.open_requested):
        tray.open_action.trigger()
    with qtbot.waitSignal(tray.cancel_result) as said:
        tray.status.snapshot = TraySnapshot(today(1, 25), operations("completed"))
        tray.cancel_current_run()
    assert said.args == ["No Discover run is running."]


def test_start_discover_follows_the_pipelines_rule(qtbot, tmp_path):
    controller = ShellController(tmp_path)
    tray = SpendTray(controller)
    controller.client = object()  # as if the services were up (no call is made)
    for phase, status, active, enabled in (
            ("completed", "completed", None, True),
            ("discovering", "in_progress", None, False),       # one is running already
            ("failed", "failed", 3, False),                      # work may still run
            ("failed", "failed", None, False),                   # inventory unknown
            ("failed", "failed", 0, True)):                      # proven idle
        ops = {**operations(phase, status), "activeItemsTotal": active}
        tray.status.snapshot = TraySnapshot(today(1, 25), ops)
        tray.show_snapshot(tray.status.snapshot)
        assert tray.discover_action.isEnabled() is enabled, (phase, active)
    controller.client = None


def test_closing_hides_to_the_tray_only_where_a_tray_exists(qtbot, tmp_path):
    controller = ShellController(tmp_path)
    window = MainWindow(controller)
    qtbot.addWidget(window)
    window.show()
    quits: list[bool] = []
    window.close_requested.connect(lambda: quits.append(True))
    window.hide_to_tray = True
    with qtbot.waitSignal(window.hidden_to_tray):
        window.close()
    assert not window.isVisible() and quits == []
    window.bring_to_front()
    assert window.isVisible()
    window.hide_to_tray = False  # e.g. GNOME without the AppIndicator extension
    window.close()
    assert quits == [True]
    assert window.isVisible()  # the app closes it after stopping the services


def test_offscreen_the_shell_quits_on_close_and_the_tray_quit_quits(qtbot, qloop, tmp_path):
    shell = DesktopShell(tmp_path)
    qtbot.addWidget(shell.window)
    assert not SpendTray.available()  # offscreen: no tray host
    shell.window.show()
    shell.window.close()
    assert shell.quitting
    shell2 = DesktopShell(tmp_path / "two")
    qtbot.addWidget(shell2.window)
    shell2.tray.quit_action.trigger()
    assert shell2.quitting


def test_a_failed_service_after_start_is_explained(qtbot, tmp_path):
    from tests.desktop.test_main_window import runtime_info

    controller = ShellController(tmp_path)
    window = MainWindow(controller)
    qtbot.addWidget(window)
    window.show()
    controller.runtime_ready.emit(runtime_info(tmp_path))
    controller.service_status.emit(ServiceStatus("worker", "failed", "exited with code 3"))
    assert window.banner.isVisible()
    assert "Worker stopped: exited with code 3" in window.banner.message.text()


# -- notifications ---------------------------------------------------------------------------


def run_end(event_id: int, run_id: str, kind: str = "DiscoveryRunCompleted", **payload):
    body = {"discoverWorkflowId": "discover-local", "discoverRunId": run_id,
            "status": "completed", "jobsObserved": 240, "jobsNew": 234,
            "familiesSucceeded": ["demo_board"], "familiesFailed": [], **payload}
    return StreamedEvent(event_id, kind, body)


def test_notifications_come_once_per_run_and_once_per_exhausted_day(qtbot, tmp_path):
    controller = ShellController(tmp_path)
    status = TrayStatus(controller)
    sent: list[tuple[str, str]] = []
    notifier = Notifier(controller, status, lambda title, text, _level: sent.append((title, text)))
    controller.event_received.emit(run_end(1, "run-a"))
    controller.event_received.emit(run_end(1, "run-a"))  # replayed: nothing new
    controller.event_received.emit(StreamedEvent(2, "JobDiscovered", {"jobId": "x"}))
    controller.event_received.emit(run_end(3, "run-b", "DiscoveryRunFailed",
                                           status="canceled", errorCode="canceled"))
    assert sent == [("Discover finished", "234 new jobs of 240 seen."),
                    ("Discover canceled", "The run was stopped before it finished.")]
    status.changed.emit(TraySnapshot(today(24, 25)))
    status.changed.emit(TraySnapshot(today(25, 25)))
    status.changed.emit(TraySnapshot(today(25.5, 25)))  # still exhausted: said already
    status.changed.emit(TraySnapshot(today(26, 25, day="2026-03-03")))  # a new day
    budget = [title for title, _text in sent[2:]]
    assert budget == ["Today's budget is used up"] * 2
    assert "Spent $25.00 of $25.00" in sent[2][1]
    assert notifier.history == sent


# -- live ------------------------------------------------------------------------------------


@pytest.mark.integration
def test_tray_reads_the_live_spend_and_eta(qtbot, live_controller):
    tray = SpendTray(live_controller)
    with qtbot.waitSignal(tray.status.changed, timeout=30_000):
        tray.status.refresh()
    snapshot = tray.status.snapshot
    assert snapshot.spend_error is None and snapshot.operations_error is None
    assert tray.tooltip().startswith("Spent $")
    assert " · ETA " in tray.tooltip() or " · No ETA: " in tray.tooltip()
    assert tray.discover_action.isEnabled()
    # Cancelling a run that does not exist gets a readable answer, not a crash.
    tray.status.snapshot = TraySnapshot(snapshot.today, operations("draining"))
    with qtbot.waitSignal(tray.cancel_result, timeout=30_000) as said:
        tray.cancel_current_run()
    assert said.args[0].startswith("Workflow run not found")
