"""The tray: the tooltip words, the menu, notifications, closing (the painted icon is in
test_tray_icon.py).

The tooltip's words about the run and the notifications come from the Pipelines run
summary (desktop/presenters/operations.py): checked here on recorded operations snapshots
(tests/desktop/fixtures/operations/). The live test reads the real services.
"""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QSystemTrayIcon

from backend.supervision.services import ServiceStatus
from desktop.app import DesktopShell
from desktop.client import StreamedEvent
from desktop.notifications import Notifier
from desktop.presenters import operations as ops
from desktop.shell import ShellController
from desktop.tray import (
    SpendTray,
    TraySnapshot,
    TrayStatus,
    cancelable_run,
    spend_look,
    tooltip_text,
)
from desktop.views.main_window import MainWindow
from tests.desktop.recorded_operations import STATES, recorded

pytestmark = pytest.mark.desktop
Level = QSystemTrayIcon.MessageIcon


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


@pytest.mark.parametrize("name", sorted(set(STATES.values())))
def test_tooltip_says_spend_and_the_pipelines_headline(name):
    snapshot = recorded(name)
    summary = ops.summarize(snapshot)
    text = tooltip_text(today(3.2, 25), snapshot)
    assert text == f"Spent $3.20 of $25.00 today · {summary.tray_text}"
    assert summary.headline in text


def test_tooltip_reasons_are_the_windows():
    assert tooltip_text(today(0, 25), recorded("discovering")) == (
        "Spent $0.00 of $25.00 today · Finding jobs on 1 source · no time estimate yet: "
        "jobs are still being found")
    # Sources done: never "still being found" (the window's headline says preparing).
    midway = tooltip_text(today(0, 25), recorded("draining-midway"))
    assert "being found" not in midway and "Preparing 115 of 234 new jobs" in midway


def test_unknown_spend_is_never_shown_as_zero():
    text = tooltip_text(None, None, spend_error="API not reachable",
                        operations_error="API not reachable")
    assert text == "Spend unknown: API not reachable · Run status unknown: API not reachable"
    assert "$0" not in text


def test_unlimited_and_exhausted_read_plainly():
    assert tooltip_text(today(4, 0), recorded("idle")).startswith(
        "Spent $4.00 today (no daily limit)")
    assert tooltip_text(today(25, 25), recorded("idle")).startswith(
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
    assert tray.tooltip() == "Spend unknown: not read yet · Run status unknown: not read yet"
    assert not tray.discover_action.isEnabled()  # no services yet
    eta = recorded("draining-eta")
    tray.status.snapshot = TraySnapshot(today(21, 25), eta)
    tray.show_snapshot(tray.status.snapshot)
    assert tray.tooltip() == ("Spent $21.00 of $25.00 today · Preparing 228 of 234 new jobs"
                              " · under a minute left")
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
        snap = {**operations(phase, status), "activeItemsTotal": active}
        tray.status.snapshot = TraySnapshot(today(1, 25), snap)
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


def with_run(name: str, run_id: str) -> dict:
    snapshot = recorded(name)
    snapshot["execution"]["discoverRunId"] = run_id
    return snapshot


def test_notifications_come_when_a_run_seen_under_way_ends_once_in_the_windows_words(
        qtbot, tmp_path):
    controller = ShellController(tmp_path)
    status = TrayStatus(controller)
    sent: list[tuple[str, str, object]] = []
    notifier = Notifier(controller, status,
                        lambda title, text, level: sent.append((title, text, level)) or True)
    spend = today(1, 25)
    # A run that was over before JobCtrl opened says nothing.
    status.changed.emit(TraySnapshot(spend, with_run("completed", "run-old")))
    assert sent == []
    # Seen live, then ended: one notification, the headline's words, however often read.
    status.changed.emit(TraySnapshot(spend, with_run("draining-midway", "run-a")))
    # The Discover workflow's own end is not the run's end: its jobs are still prepared.
    controller.event_received.emit(StreamedEvent(1, "DiscoveryRunCompleted",
                                                 {"discoverRunId": "run-a"}))
    assert sent == []
    finished = with_run("completed", "run-a")
    status.changed.emit(TraySnapshot(spend, finished))
    status.changed.emit(TraySnapshot(spend, finished))  # read again: nothing new
    assert [(t, x) for t, x, _ in sent] == [
        ("Discover finished", ops.run_end_notice(finished).text)]
    assert "234 new jobs" in sent[0][1] and sent[0][2] == Level.Information
    # A run that failed at once is never seen live; its start event marks it under way.
    controller.event_received.emit(StreamedEvent(2, "DiscoveryRunStarted",
                                                 {"discoverRunId": "run-b"}))
    status.changed.emit(TraySnapshot(spend, with_run("failed", "run-b")))
    assert sent[-1][0] == "Discover failed" and sent[-1][2] == Level.Critical
    assert notifier.history == [(t, x) for t, x, _ in sent]


def test_the_budget_is_announced_once_per_spend_day(qtbot, tmp_path):
    controller = ShellController(tmp_path)
    status = TrayStatus(controller)
    sent: list[tuple[str, str]] = []
    notifier = Notifier(controller, status,
                        lambda title, text, _level: sent.append((title, text)) or True)
    paused = recorded("paused-budget")
    status.changed.emit(TraySnapshot(paused["budget"], paused))
    status.changed.emit(TraySnapshot(paused["budget"], paused))  # still used up: said already
    assert sent == [(ops.budget_notice(paused).title, ops.budget_notice(paused).text)]
    assert sent[0][0] == "Paused: today's budget is used up"
    # No operations snapshot: the spend answer alone, on a new day.
    status.changed.emit(TraySnapshot(today(26, 25, day="2026-12-02")))
    assert sent[-1][0] == "Today's budget is used up" and len(sent) == 2
    assert "Spent $26.00 of $25.00" in sent[-1][1]
    assert notifier.history == sent


def test_without_a_tray_the_notice_is_shown_in_the_window(qtbot, qloop, tmp_path):
    shell = DesktopShell(tmp_path)
    qtbot.addWidget(shell.window)
    assert not SpendTray.available()  # offscreen: no tray host, so no message can be shown
    shell.window.show()
    status = shell.tray.status
    status.changed.emit(TraySnapshot(today(1, 25), with_run("draining-midway", "run-c")))
    status.changed.emit(TraySnapshot(today(1, 25), with_run("canceled", "run-c")))
    banner = shell.window.views["pipelines"].notice
    assert banner.isVisible() and banner.title == "Discover canceled"
    assert "stopped before it finished" in banner.text
    assert shell.window.statusBar().currentMessage().startswith("Discover canceled: ")


# -- live ------------------------------------------------------------------------------------


@pytest.mark.integration
def test_tray_reads_the_live_spend_and_eta(qtbot, live_controller):
    tray = SpendTray(live_controller)
    with qtbot.waitSignal(tray.status.changed, timeout=30_000):
        tray.status.refresh()
    snapshot = tray.status.snapshot
    assert snapshot.spend_error is None and snapshot.operations_error is None
    assert tray.tooltip().startswith("Spent $")
    assert tray.tooltip().endswith(" · " + ops.summarize(snapshot.operations).tray_text)
    assert tray.discover_action.isEnabled()
    # Cancelling a run that does not exist gets a readable answer, not a crash.
    tray.status.snapshot = TraySnapshot(snapshot.today, operations("draining"))
    with qtbot.waitSignal(tray.cancel_result, timeout=30_000) as said:
        tray.cancel_current_run()
    assert said.args[0].startswith("Workflow run not found")


def test_the_window_and_the_tray_show_the_newest_snapshot_either_fetched(qtbot, qloop, tmp_path):
    """Both fetch the snapshot on their own schedule; a headline one job ahead of the
    tooltip was seen under a real X server. Whichever is newer is shown by both."""
    shell = DesktopShell(tmp_path)
    qtbot.addWidget(shell.window)
    pipelines, status = shell.window.views["pipelines"], shell.tray.status
    midway, later = recorded("draining-midway"), recorded("draining-eta")
    assert ops.newer(later, midway) and not ops.newer(midway, later)
    pipelines.show_snapshot(midway)
    assert shell.tray.tooltip().endswith(ops.summarize(midway).tray_text)
    status._on_result(TraySnapshot(today(1, 25), later))  # the tray's own, newer fetch
    assert pipelines.headline.headline.text() == ops.summarize(later).headline
    assert shell.tray.tooltip().endswith(ops.summarize(later).tray_text)
    pipelines.show_snapshot(midway)  # an older answer arriving late changes nothing there
    assert shell.tray.tooltip().endswith(ops.summarize(later).tray_text)
    status._on_result(TraySnapshot(today(1, 25), midway))  # nor here
    assert status.snapshot.operations is later
