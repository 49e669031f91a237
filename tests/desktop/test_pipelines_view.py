"""The Pipelines view: fed RECORDED operations snapshots (one per state a real run goes
through; tests/desktop/fixtures/operations/) it shows one headline, one bar and the
primary action in view at 900x600, agreeing with the tray; against the real services
Discover moves the bar to the end and Cancel stops a run."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QLabel, QWidget

from backend.supervision.services import ServiceStatus
from desktop.presenters import operations as ops
from desktop.shell import ShellController
from desktop.tray import SpendTray, TraySnapshot
from desktop.views.main_window import MainWindow
from desktop.views.partials.run_headline import BAR_STEPS
from desktop.views.pipelines_view import PipelinesView
from tests.desktop.discover_helpers import extra_source, wait_idle
from tests.desktop.recorded_operations import STATES, recorded
from tests.desktop.test_main_window import FakeClient, FakeSupervisor

# The phases a Discover run ends in (the spec's terminal execution phases).
FINISHED = {"completed", "completed_with_issues", "failed", "canceled"}

pytestmark = pytest.mark.desktop

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "_artifacts"
DEMO = [{"id": "demo_board", "kind": "demo_board", "enabled": True}]


def make_view(qtbot, controller) -> PipelinesView:
    view = PipelinesView(controller)
    qtbot.addWidget(view)
    view.resize(1040, 800)
    return view


def failed(active_items) -> dict:
    snap = recorded("failed")
    snap["activeItemsTotal"] = active_items
    return snap


def fully_visible(widget, window) -> bool:
    """The widget is shown, unclipped, and inside the window's area."""
    if not widget.isVisible() or widget.visibleRegion().boundingRect() != widget.rect():
        return False
    top_left = widget.mapTo(window, QPoint(0, 0))
    bottom_right = widget.mapTo(window, widget.rect().bottomRight())
    return window.rect().contains(top_left) and window.rect().contains(bottom_right)


def bar_agrees(view: PipelinesView, summary: ops.RunSummary) -> bool:
    bar, progress = view.headline.bar, summary.progress
    if progress.kind == "value":
        return (bar.isVisible() and bar.maximum() == BAR_STEPS
                and bar.value() == round(progress.fraction * BAR_STEPS))
    if progress.kind == "busy":
        return bar.isVisible() and (bar.minimum(), bar.maximum()) == (0, 0)
    return bar.maximum() == 1 and bar.value() == 0 if bar.isVisible() else not progress.text


# What the services' states and the Temporal link read like (Details → Services).
SERVICE_WORDS = re.compile(r"Temporal|Web UI|process id|Live updates|\b(API|Worker)"
                           r" (waiting|starting|ready|external|restarting|failed|stopped)")


def shown_outside(window: QWidget, details: QWidget) -> list[str]:
    """The texts and tooltips of the labels on screen that are not inside ``details``."""
    return [text for label in window.findChildren(QLabel)
            if label.isVisible() and not details.isAncestorOf(label)
            for text in (label.text(), label.toolTip()) if text]


# --------------------------------------------------------------------------- recorded states


def test_every_recorded_state_agrees_with_the_tray_and_keeps_the_action_in_view_at_900x600(
        qtbot, qloop, tmp_path):
    client = FakeClient()
    client.sources = DEMO
    controller = ShellController(tmp_path, supervisor_factory=FakeSupervisor,
                                 client_factory=lambda _info: client)
    window = MainWindow(controller)
    qtbot.addWidget(window)
    window.resize(900, 600)
    window.show()
    pipelines = window.views["pipelines"]
    tray = SpendTray(controller)
    controller.start()
    qtbot.waitUntil(lambda: pipelines.snapshot is not None, timeout=30_000)
    for state, name in STATES.items():
        client.operations = recorded(name)
        with qtbot.waitSignal(pipelines.refreshed, timeout=10_000):
            pipelines.invalidate()
        summary = ops.summarize(client.operations)
        assert pipelines.headline.headline.text() == summary.headline, state
        assert pipelines.headline.detail.text() == summary.detail, state
        assert bar_agrees(pipelines, summary), state
        # The tray says the same thing.
        tray.status.snapshot = TraySnapshot(client.operations["budget"], client.operations)
        tray.show_snapshot(tray.status.snapshot)
        assert tray.tooltip().endswith(" · " + summary.tray_text), state
        assert summary.headline in tray.tooltip(), state
        # The primary action is in view without scrolling, whatever the state.
        action = pipelines.cancel_button if summary.can_cancel else pipelines.discover_button
        assert fully_visible(action, window), state
        assert fully_visible(pipelines.discover_button, window), state
        assert not pipelines.scroll.horizontalScrollBar().isVisible(), state
        # The operations detail is there, folded away.
        assert not pipelines.details.expanded and not pipelines.details.body.isVisible()
        # The frame says one plain line; service states and the Temporal link only in Details.
        assert fully_visible(window.status_line, window), state
        outside = shown_outside(window, pipelines.details.body)
        assert not [text for text in outside if SERVICE_WORDS.search(text)], (state, outside)
        _screenshot(window, f"pipelines-{name}-900x600.png")
    with qtbot.waitSignal(controller.stopped, timeout=10_000):
        controller.shutdown()


def test_cancel_is_offered_only_while_the_run_can_be_stopped(qtbot, qloop, tmp_path):
    view = make_view(qtbot, ShellController(tmp_path))
    view.show()
    for name, cancelable in (("discovering", True), ("draining-midway", True),
                             ("paused-budget", False),  # its Discover workflow has closed
                             ("completed", False), ("canceled", False), ("idle", False)):
        view.show_snapshot(recorded(name))
        assert view.cancel_button.isVisible() is cancelable, name
        assert view.summary.can_cancel is cancelable, name


def test_after_a_failure_a_new_run_is_offered_only_when_no_work_is_running(
        qtbot, qloop, tmp_path):
    """The spec's "Set up a new Discover run" gate: the Discover button in the headline
    stays disabled, the reason beside it, until fresh inventory proves nothing runs."""
    client = FakeClient()
    controller = ShellController(tmp_path, supervisor_factory=FakeSupervisor,
                                 client_factory=lambda _info: client)
    client.operations = failed(3)
    window = MainWindow(controller)
    qtbot.addWidget(window)
    window.show()
    view = window.views["pipelines"]
    controller.start()
    qtbot.waitUntil(lambda: view.snapshot is not None, timeout=30_000)
    assert view.headline.headline.text() == "Discover failed"
    assert not view.discover_button.isEnabled() and not view.cancel_button.isVisible()
    assert "3 steps are still running" in view.discover_note.text()
    for active, words in ((None, "inventory is unavailable"),
                          (0, "Nothing is running now: you can start a new Discover run.")):
        client.operations = failed(active)
        with qtbot.waitSignal(view.refreshed, timeout=10_000):
            view.invalidate()
        assert view.discover_button.isEnabled() is (active == 0)
        assert words in view.discover_note.text()
    # Proven idle: Discover starts a run, and its answer replaces the offer.
    client.answer = {"workflowId": "discover-local", "firstExecutionRunId": "run-0003",
                     "alreadyRunning": False}
    with qtbot.waitSignal(view.discover_started, timeout=10_000):
        qtbot.mouseClick(view.discover_button, Qt.MouseButton.LeftButton)
    assert client.run_stage_calls == [("discover", {})]
    assert "Nothing is running now" not in view.discover_note.text()
    with qtbot.waitSignal(controller.stopped, timeout=10_000):
        controller.shutdown()


def test_the_window_discover_button_honours_the_recovery_gate(qtbot, qloop, tmp_path):
    """The window's one Discover control is the Pipelines button: the window's rules
    (services, stream) and the view's (run in progress, recovery gate) both apply; why it
    is disabled is said next to it."""
    client = FakeClient()
    controller = ShellController(tmp_path, supervisor_factory=FakeSupervisor,
                                 client_factory=lambda _info: client)
    window = MainWindow(controller)
    qtbot.addWidget(window)
    window.show()
    pipelines = window.views["pipelines"]
    assert window.discover_button is pipelines.discover_button
    assert window.tabs.tabText(0) == "Pipelines" and window.tabs.tabText(1) == "Runs"
    controller.start()
    qtbot.waitUntil(window.discover_button.isEnabled, timeout=10_000)
    assert window.discover_button.toolTip() == "Fetch postings from the ticked sources"

    client.operations = failed(2)
    with qtbot.waitSignal(pipelines.refreshed, timeout=10_000):
        pipelines.invalidate()
    assert not window.discover_button.isEnabled()
    assert "still running" in window.discover_button.toolTip()
    assert "still running" in pipelines.discover_note.text()
    client.operations = failed(0)
    with qtbot.waitSignal(pipelines.refreshed, timeout=10_000):
        pipelines.invalidate()
    assert window.discover_button.isEnabled()
    assert pipelines.discover_note.text().startswith("Nothing is running now")

    controller.service_status.emit(ServiceStatus("api", "restarting", "exited with code 1"))
    assert not window.discover_button.isEnabled()
    assert window.discover_button.toolTip() == "Waiting for the API"
    with qtbot.waitSignal(controller.stopped, timeout=10_000):
        controller.shutdown()


def test_before_any_run_there_is_no_bar(qtbot, qloop, tmp_path):
    view = make_view(qtbot, ShellController(tmp_path))
    view.show()
    assert view.headline.bar.isVisible()  # busy until the first snapshot says anything
    assert view.headline.bar_reason.text() == "Waiting for the pipeline status"
    view.show_snapshot(recorded("idle"))
    assert not view.headline.bar.isVisible()  # nothing runs: no bar that reads as stuck
    assert view.headline.headline.text() == "Ready to find jobs"
    assert view.details.family_text.text() == "No Discover run yet."


def test_sources_to_tick_are_named_in_plain_words(qtbot, qloop, tmp_path):
    view = make_view(qtbot, ShellController(tmp_path))
    view._show_sources([
        {"id": "demo_board", "kind": "demo_board", "enabled": True},
        {"id": "gh-acme", "kind": "greenhouse", "boardToken": "acme", "enabled": False},
        {"id": "x", "kind": "from_a_newer_backend", "enabled": True},
    ])
    texts = [view.source_list.item(i).text() for i in range(view.source_list.count())]
    assert texts == ["Demo board", "gh-acme (Greenhouse board) — turned off in Settings",
                     "x (from_a_newer_backend)"]
    assert view.checked_source_ids() == ["demo_board", "x"]


def test_details_hold_the_whole_snapshot_folded_away(qtbot, qloop, tmp_path):
    view = make_view(qtbot, ShellController(tmp_path))
    view.show()
    view._show_sources(DEMO)
    view.show_snapshot(recorded("draining-midway"))
    details = view.details
    assert not details.expanded and not details.body.isVisible()
    assert not view.technical.expanded
    qtbot.mouseClick(details.toggle, Qt.MouseButton.LeftButton)
    assert details.expanded and details.body.isVisible()
    page = view.scroll.widget()
    # Open, it takes the room it needs and the page scrolls (nothing is squeezed).
    qtbot.waitUntil(lambda: page.height() >= page.minimumSizeHint().height() > view.height())
    assert page.minimumSizeHint().height() >= page.sizeHint().height()
    grid = details.scope_grids["current_execution"]
    assert grid.showing_counts and grid.cell_text("enrich", "succeeded") == "122"
    assert details.family_list.text().startswith("Demo board: done — 234 new")
    assert details.slots_label.text().startswith("Slots in use:")
    assert "(approximate)" in details.queues_label.text()
    assert "Final check of job details" in details.reconciliation_label.text()
    assert details.eta_label.text() == "No ETA: the list of jobs is not final yet"
    assert "Temporal Web UI" in details.temporal_label.text()
    assert "discover-local" in view.technical.text()
    _screenshot(view, "pipelines-details.png")


def test_restoring_history_hides_selected_run_numbers(qtbot, qloop, tmp_path):
    view = make_view(qtbot, ShellController(tmp_path))
    view.show()
    view.show_snapshot(recorded("recovering-history"))
    details = view.details
    assert not details.scope_grids["current_execution"].showing_counts
    assert not details.scope_grids["execution_sweep"].showing_counts
    assert details.scope_grids["global_outside_execution"].showing_counts
    assert view.headline.bar_fraction is None
    assert details.eta_label.text().startswith("No ETA")
    assert details.stage_eta_label.text() == ""
    assert "being restored" in details.coverage_label.text()
    # runtime facts stay visible
    assert details.slots_label.text().startswith("Slots in use: ")
    assert "unknown" not in details.slots_label.text()


def test_relative_times_tick(qtbot, qloop, tmp_path):
    view = make_view(qtbot, ShellController(tmp_path))
    view.show()
    snap = recorded("draining-midway")
    beat = ops.parse_time(snap["capacity"]["freshness"]["newestHeartbeatAt"])
    view.show_snapshot(snap, now=beat + timedelta(seconds=1))
    assert view.details.freshness_label.text() == "Worker reporting (last report 1 s ago)"
    view.show_times(beat + timedelta(seconds=45))
    assert view.details.freshness_label.text() == "Worker reporting (last report 45 s ago)"
    # The view's own timer re-renders them from the stored timestamps once a second.
    shown = view.headline.updated.text()
    qtbot.waitUntil(lambda: view.headline.updated.text() != shown, timeout=5_000)
    view.hide()
    assert not view._tick.isActive()


def test_polls_every_15_s_while_live_60_s_otherwise_and_never_while_hidden(
        qtbot, qloop, tmp_path):
    view = make_view(qtbot, ShellController(tmp_path))
    view.show()
    view.show_snapshot(recorded("draining-midway"))
    view.reschedule_poll()
    assert view._poll.isActive() and view._poll.interval() == 15_000
    view.show_snapshot(recorded("completed"))
    view.reschedule_poll()
    assert view._poll.interval() == 60_000
    view.hide()
    assert not view._poll.isActive()


def test_a_notice_without_a_notification_service_stays_until_dismissed(qtbot, qloop, tmp_path):
    view = make_view(qtbot, ShellController(tmp_path))
    view.show()
    notice = ops.run_end_notice(recorded("completed"))
    view.show_notice(notice.title, notice.text, notice.level)
    assert view.notice.isVisible() and view.notice.title == "Discover finished"
    qtbot.mouseClick(view.notice.dismiss, Qt.MouseButton.LeftButton)
    assert not view.notice.isVisible()


# --------------------------------------------------------------------------- live services


def _state(view: PipelinesView) -> tuple:
    selected = (view.snapshot or {}).get("execution") or {}
    return (selected.get("discoverRunId"), selected.get("phase"), view.headline.bar_fraction)


@pytest.mark.integration
def test_a_snapshot_older_than_10_s_is_refetched_when_shown_again(qtbot, live_controller):
    view = make_view(qtbot, live_controller)
    # Only the show-time rule is under test: events from other tests' work in the shared
    # services would add refetches of their own.
    live_controller.views_invalidated.disconnect(view._on_invalidated)
    fetched: list[float] = []
    view.refreshed.connect(lambda: fetched.append(view.last_refreshed_at))
    with qtbot.waitSignal(view.refreshed, timeout=20_000):
        view.show()
    assert view.details.slots_label.text().startswith("Slots in use")

    view.hide()
    view.show()  # fresh (under 10 s old): shown as it is
    qtbot.wait(400)
    assert len(fetched) == 1

    view.hide()
    view.last_refreshed_at -= ops.STALE_AFTER_S + 1  # as if shown 11 s ago
    with qtbot.waitSignal(view.refreshed, timeout=20_000):
        view.show()
    assert len(fetched) == 2


@pytest.mark.integration
def test_discover_moves_the_progress_bar_until_the_run_completes(
        qtbot, live_controller, live_services):
    # The paced source answers after 15 s: meanwhile the bar is busy (the total is not
    # known yet); then it shows how much of the run's measured work is done.
    wait_idle(live_services)  # the Discover button waits for earlier tests' work
    with extra_source(live_services, "paced-gh", delay=15) as started_runs:
        view = make_view(qtbot, live_controller)
        seen: list[tuple] = []
        view.refreshed.connect(lambda: seen.append(_state(view)))
        with qtbot.waitSignal(view.refreshed, timeout=20_000):
            view.show()
        view.set_source_checked("paced-gh", True)
        assert view.checked_source_ids() == ["demo_board", "paced-gh"]
        qtbot.waitUntil(view.discover_button.isEnabled, timeout=60_000)
        with qtbot.waitSignal(view.discover_started, timeout=20_000) as accepted:
            qtbot.mouseClick(view.discover_button, Qt.MouseButton.LeftButton)
        assert not accepted.args[0]["alreadyRunning"]
        run_id = accepted.args[0]["firstExecutionRunId"]
        started_runs.append(run_id)

        # Generous: the machine may be busy; the wait ends as soon as the phase is reached.
        qtbot.waitUntil(lambda: _state(view)[0] == run_id and _state(view)[1] in FINISHED,
                        timeout=240_000)
        assert _state(view)[1] == "completed", view.headline.headline.text()
        ours = [state for state in seen if state[0] == run_id]
        # Only states whose bar shows a number (busy while the sources answer).
        values = [fraction for _, _, fraction in ours if fraction is not None]
        assert values and values[-1] == 1.0, ours
        assert values == sorted(values), ours  # it never goes back
        assert ("discovering" in {phase for _, phase, _ in ours}), ours
        assert view.headline.headline.text().startswith("Discover finished")
        assert not view.cancel_button.isVisible()
        assert "Demo board: done" in view.details.family_list.text()
        assert view.details.scope_grids["current_execution"].showing_counts
        _screenshot(view, "pipelines-view.png")


@pytest.mark.integration
def test_cancel_stops_a_running_discover(qtbot, live_controller, live_services):
    wait_idle(live_services)  # the Discover button waits for earlier tests' work
    with extra_source(live_services, "stuck-gh", delay=120) as started_runs:
        view = make_view(qtbot, live_controller)
        with qtbot.waitSignal(view.refreshed, timeout=20_000):
            view.show()
        view.set_source_checked("demo_board", False)
        view.set_source_checked("stuck-gh", True)
        qtbot.waitUntil(view.discover_button.isEnabled, timeout=60_000)
        with qtbot.waitSignal(view.discover_started, timeout=20_000) as accepted:
            qtbot.mouseClick(view.discover_button, Qt.MouseButton.LeftButton)
        run_id = accepted.args[0]["firstExecutionRunId"]
        started_runs.append(run_id)

        qtbot.waitUntil(lambda: _state(view)[:2] == (run_id, "discovering")
                        and view.cancel_button.isVisible(), timeout=30_000)
        assert view.headline.headline.text() == "Finding jobs on 1 source"
        assert not view.discover_button.isEnabled()  # one Discover at a time
        _screenshot(view, "pipelines-view-discovering.png")
        # Cancel is reachable in the space a 900x600 window gives the view.
        view.resize(870, 470)
        qtbot.waitUntil(lambda: not view.scroll.horizontalScrollBar().isVisible())
        assert fully_visible(view.cancel_button, view)
        qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
        assert view.cancel_button.text() == "Cancellation requested…"
        assert not view.cancel_button.isEnabled()

        qtbot.waitUntil(lambda: _state(view)[:2] == (run_id, "canceled"), timeout=60_000)
        assert not view.cancel_button.isVisible()
        assert view.headline.headline.text() == "Discover canceled"


def _screenshot(view, name: str) -> None:
    """Saved under tests/_artifacts; the best ones are copied to docs/screenshots by hand."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    assert view.grab().save(str(ARTIFACTS / name))
