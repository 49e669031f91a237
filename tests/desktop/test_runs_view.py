"""The Runs view against the real services: filters, sorting and paging drive the API
query; a running Discover is canceled from the detail pane; the selection survives
refetches while events arrive; the related-job link asks the window to open the job."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest
from PySide6.QtCore import QDate, Qt

from desktop.client import StreamedEvent
from desktop.presenters.runs import local_day_start_utc, parse_time
from desktop.shell import ShellController
from desktop.views.runs_view import CUSTOM_DATES, RunsView
from tests.desktop.discover_helpers import api, extra_source, start_own_discover, wait_closed

pytestmark = pytest.mark.desktop
live = pytest.mark.integration

ARTIFACTS = Path(__file__).resolve().parents[1] / "_artifacts"
TIMEOUT_MS = 60_000
RUN_TIMEOUT_MS = 300_000  # a whole Discover on a machine that may be busy


@pytest.fixture
def demo_runs(live_services):
    """At least one finished demo-board Discover, so the list has more than a page."""
    with api(live_services) as http:
        if http.get("/v1/workflow-runs", params={"limit": 1}).json()["total"] <= 60:
            wait_closed(http, start_own_discover(http)["firstExecutionRunId"])
        yield http


def make_view(qtbot, controller) -> RunsView:
    view = RunsView(controller)
    qtbot.addWidget(view)
    view.resize(1180, 720)
    with qtbot.waitSignal(view.refreshed, timeout=TIMEOUT_MS):
        view.show()
    return view


def click_row(qtbot, view: RunsView, run_id: str) -> None:
    row = view.model.row_of(run_id)
    assert row is not None
    rect = view.table.visualRect(view.model.index(row, 1))
    qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert view.selected_key() == run_id


def rows(view: RunsView) -> list[dict]:
    return [view.model.row_at(i) for i in range(view.model.rowCount())]


@live
def test_filters_sorting_and_paging_change_the_query(qtbot, live_controller, demo_runs):
    view = make_view(qtbot, live_controller)
    total = demo_runs.get("/v1/workflow-runs", params={"limit": 1}).json()["total"]
    assert view.total >= total > 50
    assert view.page_label.text().startswith("1–50 of")
    first_page = view.model.keys()

    qtbot.mouseClick(view.next_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: view.model.keys() != first_page and not view.refreshing,
                    timeout=TIMEOUT_MS)
    assert view.query.offset == 50 and view.query.params()["offset"] == 50
    assert view.page_label.text().startswith("51–")
    assert view.previous_button.isEnabled()

    # A filter returns to the first page; the total is the whole filtered result.
    view.status_filter.setCurrentIndex(view.status_filter.findData("completed"))
    assert view.query.offset == 0 and view.query.params()["status"] == "completed"
    completed = demo_runs.get("/v1/workflow-runs",
                              params={"status": "completed", "limit": 1}).json()["total"]
    qtbot.waitUntil(lambda: bool(view.total >= completed and rows(view)
                    and all(r["status"] == "completed" for r in rows(view))), timeout=TIMEOUT_MS)

    view.type_filter.setCurrentIndex(view.type_filter.findData("DiscoverWorkflow"))
    assert view.query.params()["workflowType"] == "DiscoverWorkflow"
    qtbot.waitUntil(lambda: bool(rows(view)) and all(r["workflowType"] == "DiscoverWorkflow"
                                                     and r["displayName"] == "Discover run"
                                                     for r in rows(view)), timeout=TIMEOUT_MS)
    view.type_filter.setCurrentIndex(0)

    # Dates: today holds the runs started since local midnight (not all of this session's
    # runs: CI may cross midnight after they started); a day a year ago holds none.
    before = date.today()
    view.date_filter.setCurrentIndex(1)
    day = view.query.started_from
    assert day == view.query.started_to and day in (before, date.today())
    window = {"startedSince": local_day_start_utc(day),
              "startedBefore": local_day_start_utc(day + timedelta(days=1))}
    assert view.query.params() | window == view.query.params()
    completed_today = demo_runs.get("/v1/workflow-runs", params={
        **window, "status": "completed", "limit": 1}).json()["total"]
    qtbot.waitUntil(lambda: view.total >= completed_today and not view.refreshing,
                    timeout=TIMEOUT_MS)
    assert all(parse_time(r["startedAt"]).astimezone().date() == day for r in rows(view))
    view.date_filter.setCurrentIndex(CUSTOM_DATES)
    assert view.from_date.isVisible() and view.to_date.isVisible()
    year_ago = QDate.currentDate().addYears(-1)
    view.to_date.setDate(year_ago)
    view.from_date.setDate(year_ago)
    qtbot.waitUntil(lambda: view.total == 0 and view.model.rowCount() == 0, timeout=TIMEOUT_MS)
    assert view.page_label.text() == "No runs match"
    view.date_filter.setCurrentIndex(0)
    qtbot.waitUntil(lambda: view.model.rowCount() > 0, timeout=TIMEOUT_MS)

    # Sorting is the server's: click Duration, then again for the other direction.
    duration_column = 3
    header = view.table.horizontalHeader()
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton,
                     pos=header.rect().topLeft() + _section_center(header, duration_column))
    assert (view.query.sort, view.query.order) == ("durationMs", "desc")
    qtbot.waitUntil(lambda: _durations(view) == sorted(_durations(view), reverse=True)
                    and not view.refreshing, timeout=TIMEOUT_MS)
    qtbot.mouseClick(header.viewport(), Qt.MouseButton.LeftButton,
                     pos=header.rect().topLeft() + _section_center(header, duration_column))
    assert view.query.order == "asc"
    qtbot.waitUntil(lambda: _durations(view) == sorted(_durations(view)) and not view.refreshing,
                    timeout=TIMEOUT_MS)
    # The related-job column cannot be sorted by the server: nothing changes.
    view.sort_by_column(4)
    assert (view.query.sort, view.query.order) == ("durationMs", "asc")


def _section_center(header, column):
    from PySide6.QtCore import QPoint

    return QPoint(header.sectionViewportPosition(column) + header.sectionSize(column) // 2,
                  header.height() // 2)


def _durations(view: RunsView) -> list[int]:
    return [r["durationMs"] for r in rows(view) if r["durationMs"] is not None]


@live
def test_cancel_a_running_discover_from_its_detail(qtbot, live_controller, live_services):
    with extra_source(live_services, "stuck-runs-gh", delay=120) as started_runs:
        with api(live_services) as http:
            run_id = start_own_discover(http, sourceIds=["stuck-runs-gh"])["firstExecutionRunId"]
        started_runs.append(run_id)

        view = make_view(qtbot, live_controller)
        view.type_filter.setCurrentIndex(view.type_filter.findData("DiscoverWorkflow"))
        view.status_filter.setCurrentIndex(view.status_filter.findData("running"))
        qtbot.waitUntil(lambda: view.model.row_of(run_id) is not None, timeout=TIMEOUT_MS)
        click_row(qtbot, view, run_id)
        qtbot.waitUntil(lambda: "Run started" in " ".join(view.timeline_texts()),
                        timeout=TIMEOUT_MS)
        assert view.detail_status.text() == "Running"
        assert view.cancel_button.isVisible() and view.cancel_button.isEnabled()
        assert not view.technical.expanded
        assert run_id in view.technical.text() and "discover-local" in view.technical.text()

        with qtbot.waitSignal(view.cancel_answered, timeout=TIMEOUT_MS) as answer:
            qtbot.mouseClick(view.cancel_button, Qt.MouseButton.LeftButton)
            # Shown at once, and kept until the terminal state arrives.
            assert view.cancel_button.text() == "Cancellation requested"
            assert not view.cancel_button.isEnabled()
        assert answer.args[0]["cancellationRequested"] is True

        qtbot.waitUntil(lambda: view.detail_status.text() == "Canceled", timeout=TIMEOUT_MS)
        assert not view.cancel_button.isVisible()
        timeline = " ".join(view.timeline_texts())
        assert "Cancellation requested by you" in timeline
        assert "Run canceled" in timeline
        # The selected run stays in the detail pane though it left the "Running" filter.
        assert view.detail["runId"] == run_id
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        view.technical.set_expanded(True)
        assert view.grab().save(str(ARTIFACTS / "runs-view-canceled.png"))

        # Idempotent: asking again changes nothing and says the run already ended.
        with qtbot.waitSignal(view.cancel_answered, timeout=TIMEOUT_MS) as again:
            view.request_cancel()
        assert again.args[0]["alreadyTerminal"] is True
        assert again.args[0]["status"] == "canceled"


@live
def test_selection_survives_refetches_while_a_discover_runs(
        qtbot, live_controller, demo_runs):
    view = make_view(qtbot, live_controller)
    view.type_filter.setCurrentIndex(view.type_filter.findData("DiscoverWorkflow"))
    qtbot.waitUntil(lambda: bool(rows(view)) and all(r["workflowType"] == "DiscoverWorkflow"
                                                     for r in rows(view)), timeout=TIMEOUT_MS)
    chosen = view.model.key_at(0)
    click_row(qtbot, view, chosen)
    qtbot.waitUntil(lambda: view.timeline.count() > 0, timeout=TIMEOUT_MS)
    refreshes: list[int] = []
    view.refreshed.connect(lambda: refreshes.append(view.model.rowCount()))

    new_run = start_own_discover(demo_runs)["firstExecutionRunId"]
    try:
        # The new run appears above the chosen one, then finishes, while events arrive.
        qtbot.waitUntil(lambda: view.model.row_of(new_run) == 0, timeout=TIMEOUT_MS)
        qtbot.waitUntil(lambda: (view.model.get(new_run) or {}).get("status") == "completed",
                        timeout=RUN_TIMEOUT_MS)
    finally:
        wait_closed(demo_runs, new_run)
    assert refreshes  # refetched while the run's events arrived
    assert view.selected_key() == chosen
    assert view.model.row_of(chosen) == 1
    assert view.detail["runId"] == chosen
    assert view.type_filter.currentData() == "DiscoverWorkflow"


@live
def test_related_job_link_asks_to_open_the_job(qtbot, live_controller, demo_runs):
    view = make_view(qtbot, live_controller)
    view.type_filter.setCurrentIndex(view.type_filter.findData("JobPreparationWorkflow"))
    qtbot.waitUntil(lambda: bool(rows(view)) and all(r["relatedJob"] for r in rows(view)),
                    timeout=TIMEOUT_MS)
    run = rows(view)[0]
    click_row(qtbot, view, run["runId"])
    assert view.open_job_button.isVisible()
    assert run["relatedJob"]["title"] in view.open_job_button.text()
    assert view.model.data(view.model.index(0, 4)) == (
        f"{run['relatedJob']['title']} · {run['relatedJob']['company']}")
    with qtbot.waitSignal(view.open_job, timeout=2_000) as opened:
        qtbot.mouseClick(view.open_job_button, Qt.MouseButton.LeftButton)
    assert opened.args == [run["relatedJob"]["jobKey"]]
    qtbot.waitUntil(lambda: view.timeline.count() > 0, timeout=TIMEOUT_MS)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    assert view.grab().save(str(ARTIFACTS / "runs-view.png"))


def test_a_cancellation_request_event_patches_its_row_at_once(qtbot, qloop, tmp_path):
    """The event names the exact run, so the row and the open detail say so before any
    refetch; a run that is not shown is left alone."""
    controller = ShellController(tmp_path)
    view = RunsView(controller)
    qtbot.addWidget(view)
    view.show()
    row = {"workflowId": "apply-auto-local", "runId": "r-1", "workflowType": "ApplyWorkflow",
           "displayName": "ApplyWorkflow", "status": "running", "startedAt": None,
           "closedAt": None, "durationMs": None, "errorCode": None, "cancelRequested": False,
           "relatedJob": None}
    view.model.set_rows([row])
    click_row(qtbot, view, "r-1")
    assert view.detail_title.text() == "Standing apply loop"
    assert view.model.data(view.model.index(0, 1)) == "Standing apply loop"
    assert view.cancel_button.isEnabled()

    controller.dispatch(StreamedEvent(7, "WorkflowCancellationRequested", {
        "workflowId": "apply-auto-local", "runId": "r-1", "workflowType": "ApplyWorkflow",
        "requester": "local_operator", "sourceBoundary": "request_intent"}))
    assert view.model.data(view.model.index(0, 0)) == "Cancellation requested"
    assert view.cancel_button.text() == "Cancellation requested"
    assert not view.cancel_button.isEnabled()
    controller.dispatch(StreamedEvent(8, "WorkflowCancellationRequested", {"runId": "r-other"}))
    assert view.model.keys() == ["r-1"]


def test_fixed_columns_fit_their_longest_text_and_the_related_job_takes_the_rest(qtbot, tmp_path):
    from desktop.views.runs_view import WIDEST_TEXTS

    view = RunsView(ShellController(tmp_path))
    qtbot.addWidget(view)
    view.resize(900, 560)
    view.show()
    metrics = view.table.fontMetrics()
    header = view.table.horizontalHeader()
    for column, texts in enumerate(WIDEST_TEXTS):
        widest = max(metrics.horizontalAdvance(text) for text in texts)
        assert widest < view.table.columnWidth(column) <= widest + 40, column
    assert header.stretchLastSection()
    assert view.model.headerData(len(WIDEST_TEXTS), Qt.Orientation.Horizontal) == "Related job"
