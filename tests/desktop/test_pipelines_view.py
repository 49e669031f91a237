"""The Pipelines view: against the real services (Discover moves the bar to completed,
Cancel stops a run) and fed snapshots shaped like the API's (the gating rules)."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from backend.runtime.services import ServiceStatus
from desktop.presenters import operations as ops
from desktop.shell import ShellController
from desktop.views.main_window import MainWindow
from desktop.views.pipelines_view import PipelinesView
from tests.desktop.discover_helpers import extra_source
from tests.desktop.test_main_window import FakeClient, FakeSupervisor
from tests.unit.test_operations_presenter import snapshot

pytestmark = pytest.mark.desktop

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "_artifacts"


def make_view(qtbot, controller) -> PipelinesView:
    view = PipelinesView(controller)
    qtbot.addWidget(view)
    view.resize(1040, 800)
    return view


def failed(active_items) -> dict:
    snap = snapshot(execution={"workflowStatus": "failed", "phase": "failed"},
                    activeItemsTotal=active_items)
    return snap


# --------------------------------------------------------------------------- fed snapshots


def test_after_a_failure_setup_is_offered_only_when_no_work_is_running(qtbot, qloop, tmp_path):
    view = make_view(qtbot, ShellController(tmp_path))
    view.show()
    view._show_sources([{"id": "demo_board", "kind": "demo_board", "enabled": True}])

    view.show_snapshot(failed(3))
    assert view.setup_button.isVisible() and not view.setup_button.isEnabled()
    assert "3 work items are still running" in view.recovery_label.text()
    assert not view.discover_button.isEnabled()
    assert not view.cancel_button.isVisible()

    view.show_snapshot(failed(None))
    assert not view.setup_button.isEnabled()
    assert "inventory is unavailable" in view.recovery_label.text()

    view.show_snapshot(failed(0))
    assert view.setup_button.isEnabled()
    view.activateWindow()
    with qtbot.waitSignal(view.setup_focused, timeout=2_000):
        qtbot.mouseClick(view.setup_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(view.source_list.hasFocus, timeout=2_000)
    # It only focuses the controls: nothing was dispatched.
    assert not view._discover_pending
    assert view.discover_note.text() != "Starting Discover…"


def test_the_window_discover_button_honours_the_recovery_gate(qtbot, qloop, tmp_path):
    """The window's one Discover control is the Pipelines button: the window's rules
    (services, stream) and the view's (run in progress, recovery gate) both apply."""
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
    client.operations = failed(0)
    with qtbot.waitSignal(pipelines.refreshed, timeout=10_000):
        pipelines.invalidate()
    assert window.discover_button.isEnabled()

    controller.service_status.emit(ServiceStatus("api", "restarting", "exited with code 1"))
    assert not window.discover_button.isEnabled()
    assert window.discover_button.toolTip() == "Waiting for the API"
    with qtbot.waitSignal(controller.stopped, timeout=10_000):
        controller.shutdown()


def test_before_any_run_the_sources_box_shows_no_empty_bar(qtbot, qloop, tmp_path):
    view = make_view(qtbot, ShellController(tmp_path))
    view.show()
    assert not view.family_bar.isVisible()  # nothing known before the first snapshot
    view.show_snapshot(snapshot(sourceFamilies=None, execution=None))
    assert not view.family_bar.isVisible()
    assert view.family_text.text() == "No Discover run yet."
    view.show_snapshot(snapshot())
    assert view.family_bar.isVisible() and view.family_bar.format() == "%p%"


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


def in_progress_without_etas() -> dict:
    """A discovering run early on: no stage has an ETA yet, the sources have long names."""
    return snapshot(
        execution={"workflowStatus": "in_progress", "phase": "discovering"},
        stageEtas={stage: {"state": "calibrating", "reason": "insufficient_samples"}
                   for stage in ops.STAGES},
        sourceFamilies={"families": [
            {"family": "demo_board", "status": "succeeded", "newJobs": 234, "existingJobs": 0},
            {"family": "gh-acme", "status": "waiting"}]})


def test_cancel_stays_in_view_in_a_900_by_600_window_while_no_stage_has_an_eta(
        qtbot, qloop, tmp_path):
    client = FakeClient()
    client.operations = in_progress_without_etas()
    client.sources = [{"id": "demo_board", "kind": "demo_board", "enabled": True},
                      {"id": "gh-acme", "kind": "greenhouse", "enabled": True}]
    controller = ShellController(tmp_path, supervisor_factory=FakeSupervisor,
                                 client_factory=lambda _info: client)
    window = MainWindow(controller)
    qtbot.addWidget(window)
    window.resize(900, 600)
    window.show()
    pipelines = window.views["pipelines"]
    controller.start()
    qtbot.waitUntil(pipelines.cancel_button.isVisible, timeout=10_000)
    qtbot.waitUntil(lambda: not pipelines.scroll.horizontalScrollBar().isVisible())

    viewport = pipelines.scroll.viewport()
    cancel = pipelines.cancel_button
    corner = cancel.mapTo(viewport, cancel.rect().topLeft())
    assert viewport.rect().contains(corner)
    assert viewport.rect().contains(corner + cancel.rect().bottomRight())
    # The per-stage list is short; the reason is said once.
    assert "No ETA" in pipelines.stage_eta_label.text()
    assert "not enough finished jobs" not in pipelines.stage_eta_label.text()
    assert "not enough finished jobs" in pipelines.stage_eta_reason.text()
    assert "not enough finished jobs" in pipelines.stage_eta_label.toolTip()
    # Sources in plain words, the same as the sources to tick.
    assert pipelines.family_list.text().startswith("Demo board: done")
    assert "gh-acme (Greenhouse board): waiting" in pipelines.family_list.text()
    # The counts table is as tall as its rows: no empty band under the last one.
    tabs = pipelines.scope_tabs
    grid = pipelines.scope_grids["current_execution"]
    table = grid.table
    rows_bottom = table.rowViewportPosition(4) + table.rowHeight(4)
    assert table.viewport().height() - rows_bottom <= 4
    assert tabs.height() - tabs.tabBar().height() - grid.height() <= 8
    _screenshot(window, "pipelines-view-900x600.png")
    with qtbot.waitSignal(controller.stopped, timeout=10_000):
        controller.shutdown()


def test_restoring_history_hides_selected_run_numbers(qtbot, qloop, tmp_path):
    view = make_view(qtbot, ShellController(tmp_path))
    view.show()
    view.show_snapshot(snapshot())
    grid = view.scope_grids["current_execution"]
    assert grid.showing_counts and grid.cell_text("score", "waiting") == "146"
    assert view.family_bar.value() == 1 and view.family_bar.maximum() == 4
    assert view.family_bar.isVisible()

    view.show_snapshot(snapshot(projectionCoverage={"status": "recovering"}))
    assert not view.scope_grids["current_execution"].showing_counts
    assert not view.scope_grids["execution_sweep"].showing_counts
    assert view.scope_grids["global_outside_execution"].showing_counts
    # No number to show: no bar at all (an empty one reads like a stuck run); text says why.
    assert not view.family_bar.isVisible()
    assert view.family_text.text() == "Progress hidden while the run's history is restored."
    assert view.eta_label.text().startswith("No ETA")
    assert view.stage_eta_label.text() == ""
    assert "being restored" in view.coverage_label.text()
    # runtime facts stay visible
    assert view.slots_label.text() == "Slots in use: 3 of 12"
    assert "(approximate)" in view.queues_label.text()


def test_unknown_capacity_reads_unknown_and_the_disclosure_starts_collapsed(
        qtbot, qloop, tmp_path):
    view = make_view(qtbot, ShellController(tmp_path))
    view.show()
    snap = snapshot(capacity={"freshness": {"state": "stale", "reason": "heartbeat_expired",
                                            "ageSeconds": 80},
                              "configuredSlots": None, "activeSlots": None, "taskQueues": {}},
                    activeItemsTotal=None, activeStageCounts=None)
    view.show_snapshot(snap)
    assert view.slots_label.text().startswith("Slots in use: unknown")
    assert view.active_items_label.text() == "Active items: unknown"
    assert not view.technical.expanded and not view.technical.body.isVisible()
    assert "discover-local" in view.technical.text()
    qtbot.mouseClick(view.technical.toggle, Qt.MouseButton.LeftButton)
    assert view.technical.expanded and view.technical.body.isVisible()


def test_polls_every_15_s_while_live_60_s_otherwise_and_never_while_hidden(
        qtbot, qloop, tmp_path):
    view = make_view(qtbot, ShellController(tmp_path))
    view.show()
    view.show_snapshot(snapshot())
    view.reschedule_poll()
    assert view._poll.isActive() and view._poll.interval() == 15_000
    done = copy.deepcopy(snapshot(execution={"workflowStatus": "completed",
                                             "phase": "completed"}))
    view.show_snapshot(done)
    view.reschedule_poll()
    assert view._poll.interval() == 60_000
    view.hide()
    assert not view._poll.isActive()


# --------------------------------------------------------------------------- live services


def _state(view: PipelinesView) -> tuple:
    selected = (view.snapshot or {}).get("execution") or {}
    return (selected.get("discoverRunId"), selected.get("phase"), view.family_bar.value(),
            view.family_bar.maximum(), view.family_bar.format() != "")


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
    assert view.slots_label.text().startswith("Slots in use")

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
    # The paced source answers after 15 s: the bar shows part-way progress meanwhile.
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
        qtbot.waitUntil(lambda: _state(view)[:2] == (run_id, "completed"), timeout=300_000)
        ours = [state for state in seen if state[0] == run_id]
        # Only states whose bar shows a number (history being restored shows none).
        shown = [(value, maximum) for _, _, value, maximum, numeric in ours if numeric]
        # The bar moved: part-way while the paced source answered, then full.
        assert any(value < maximum for value, maximum in shown), ours
        assert shown[-1] == (4, 4), ours
        values = [value for value, _ in shown]
        assert values == sorted(values), ours  # the spine never goes back
        assert view.phase_label.text() == "Completed"
        assert not view.cancel_button.isVisible()
        assert "Demo board: done" in view.family_list.text()
        assert view.scope_grids["current_execution"].showing_counts
        _screenshot(view, "pipelines-view.png")


@pytest.mark.integration
def test_cancel_stops_a_running_discover(qtbot, live_controller, live_services):
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
        assert view.phase_label.text() == "Discovering"
        assert not view.discover_button.isEnabled()  # one Discover at a time
        _screenshot(view, "pipelines-view-discovering.png")
        # Cancel is reachable in the space a 900x600 window gives the view.
        view.resize(870, 470)
        qtbot.waitUntil(lambda: not view.scroll.horizontalScrollBar().isVisible())
        corner = view.cancel_button.mapTo(view.scroll.viewport(),
                                          view.cancel_button.rect().bottomRight())
        assert view.scroll.viewport().rect().contains(corner)
        qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
        assert view.cancel_button.text() == "Cancellation requested…"
        assert not view.cancel_button.isEnabled()

        qtbot.waitUntil(lambda: _state(view)[:2] == (run_id, "canceled"), timeout=60_000)
        assert not view.cancel_button.isVisible()
        assert view.phase_label.text() == "Canceled"


def _screenshot(view, name: str) -> None:
    """Saved under tests/_artifacts; the best ones are copied to docs/screenshots by hand."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    assert view.grab().save(str(ARTIFACTS / name))
