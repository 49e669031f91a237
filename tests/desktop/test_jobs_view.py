"""Jobs view: the row logic directly, then the view against the real services (Discover
fills it, filters keep the selection while events arrive, a job's detail and actions)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from desktop.client import StreamedEvent
from desktop.formatting import salary_range_text
from desktop.shell import ShellController
from desktop.views.jobs_view import JobsView
from desktop.views.partials.jobs_table_model import (
    FIT,
    SALARY,
    STAGE,
    STATUS,
    JobsTableModel,
    current_stage,
    event_changes,
    status_text,
)
from tests.integration.test_preparation import PROFILE

ARTIFACTS = Path(__file__).resolve().parents[1] / "_artifacts"


# -- plain row logic ----------------------------------------------------------------------

@pytest.mark.desktop
def test_current_stage_reads_like_a_person_would():
    assert current_stage({}) == (None, "new")
    assert current_stage({"enrich": "succeeded", "score": "running"}) == ("score", "running")
    assert current_stage({"enrich": "succeeded", "score": "failed"}) == ("score", "failed")
    assert current_stage({"enrich": "succeeded"}) == ("score", "pending")
    done = dict(DONE)
    assert current_stage(done) == (None, "ready")
    assert status_text({"stages": done, "userStatus": None}) == "ready to apply"
    assert status_text({"stages": done, "userStatus": "applied"}) == "Applied"
    assert status_text({"stages": {"enrich": "exhausted"}}) == "gave up after retries"


@pytest.mark.desktop
def test_salaries_read_as_a_range_and_unknown_stays_blank():
    assert salary_range_text(70_000, 90_000, "EUR") == "€70k–90k"
    assert salary_range_text(120_000, 150_000, "USD") == "$120k–150k"
    assert salary_range_text(72_500, 80_000, "EUR") == "€72.5k–80k"
    assert salary_range_text(60_000, None, "GBP") == "from £60k"
    assert salary_range_text(None, 95_000, "CHF") == "up to CHF 95k"
    assert salary_range_text(0, 0, "EUR") == ""  # a zero is unknown, never "0"
    assert salary_range_text(None, None, None) == ""


DONE = dict.fromkeys(("enrich", "score", "tailor", "cover", "pdf"), "succeeded")
NOT_PREPARED = {"enrich": "succeeded", "score": "succeeded", "tailor": "skipped",
                "cover": "skipped", "pdf": "skipped"}


@pytest.mark.desktop
def test_a_job_below_the_minimum_fit_never_reads_ready(qapp):
    below = {"jobId": "job_1", "title": "A", "company": "B", "score": 15, "minFitScore": 50,
             "stages": NOT_PREPARED, "userStatus": None, "salaryMin": 0, "salaryMax": None,
             "fitReasons": ["✗ On-site in Munich — you want remote", "✓ Python — Northwind"]}
    assert status_text(below) == "below threshold"
    assert status_text({**below, "stages": DONE}) == "prepared anyway"
    assert status_text({**below, "score": 80, "stages": DONE}) == "ready to apply"
    assert status_text({**below, "minFitScore": None, "stages": DONE}) == "ready to apply"
    model = JobsTableModel()
    model.set_rows([below])
    status = model.index(0, STATUS)
    assert status.data() == "below threshold"
    assert status.data(Qt.ItemDataRole.ForegroundRole) is None  # not green
    assert "Fit 15 is below your minimum of 50" in status.data(Qt.ItemDataRole.ToolTipRole)
    assert model.index(0, FIT).data(Qt.ItemDataRole.ToolTipRole) == (
        "✗ On-site in Munich — you want remote\n✓ Python — Northwind")
    assert model.index(0, SALARY).data() == ""


@pytest.mark.desktop
def test_the_list_opens_best_fit_first_and_keeps_a_chosen_sort(qtbot, tmp_path):
    view = JobsView(ShellController(tmp_path))
    qtbot.addWidget(view)
    view.model.set_rows([
        {"jobId": f"job_{n}", "title": f"T{n}", "company": "C", "score": score,
         "stages": {}, "userStatus": None, "salaryMin": 70_000, "salaryMax": 90_000,
         "salaryCurrency": "EUR"}
        for n, score in enumerate((40, None, 91, 65))])
    assert view.query()["sort"] == "score" and view.query()["order"] == "desc"
    shown = [view.proxy.index(row, FIT).data() for row in range(4)]
    assert shown == ["91", "65", "40", "—"]  # unscored last
    assert view.proxy.index(0, SALARY).data() == "€70k–90k"
    view.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)  # the user clicks Title
    assert view.query()["sort"] == "title"
    rows = [view.model.row_at(row) for row in range(view.model.rowCount())]
    view.apply({"params": view.query(), "total": len(rows), "items": rows})  # a refetch
    assert view.query()["sort"] == "title"
    assert [view.proxy.index(row, 0).data() for row in range(4)] == ["T0", "T1", "T2", "T3"]


@pytest.mark.desktop
def test_events_patch_only_what_they_carry():
    row = {"jobId": "job_1", "score": None, "stages": {"enrich": "succeeded"}}
    assert event_changes(row, "JobScored", {"score": 71}) == {"score": 71}
    assert event_changes(row, "StageStarted", {"stage": "score"}) == {
        "stages": {"enrich": "succeeded", "score": "running"}}
    assert event_changes(row, "StageFailed", {"stage": "score", "retryable": False}) == {
        "stages": {"enrich": "succeeded", "score": "failed"}}
    # A retryable failure may still be retrying; a new description needs the server.
    assert event_changes(row, "StageFailed", {"stage": "score", "retryable": True}) is None
    assert event_changes(row, "JobEnriched", {"wordCount": 5}) is None
    assert event_changes(row, "JobUserStatusChanged", {"userStatus": None}) == {
        "userStatus": None}


@pytest.mark.desktop
def test_a_patch_announces_only_the_cells_it_changes(qapp):
    model = JobsTableModel()
    model.set_rows([{"jobId": "job_1", "title": "A", "company": "B", "location": None,
                     "remote": None, "score": None, "stages": {"enrich": "succeeded"},
                     "userStatus": None}])
    changed: list[tuple[int, int, int, int]] = []
    model.dataChanged.connect(lambda top, bottom, *_: changed.append(
        (top.row(), top.column(), bottom.row(), bottom.column())))
    assert model.patch("job_1", {"score": 64})
    assert changed == [(0, FIT, 0, FIT)]
    assert model.index(0, FIT).data() == "64"
    changed.clear()
    assert model.patch("job_1", {"score": 64}) and changed == []  # nothing new: no signal
    assert model.patch("job_1", {"stages": {"enrich": "succeeded", "score": "running"}})
    assert {column for _r, column, _r2, _c2 in changed} == {STAGE, STATUS}
    assert not model.patch("job_unknown", {"score": 1})


# -- against the live services ------------------------------------------------------------

def status_of(view: JobsView, key: str) -> str:
    row = view.model.row_of(key)
    return view.model.index(row, STATUS).data() if row is not None else ""


def put_profile(qtbot, controller) -> None:
    done: list = []
    controller.call(lambda client: client.put_profile(PROFILE), done.append, done.append)
    qtbot.waitUntil(lambda: bool(done), timeout=10_000)
    assert isinstance(done[0], dict), done[0]


@pytest.fixture
def jobs_view(qtbot, live_controller):
    view = JobsView(live_controller)
    qtbot.addWidget(view)
    view.resize(1100, 640)
    with qtbot.waitSignal(view.refreshed, timeout=15_000):
        view.show()
    return view


@pytest.mark.desktop
@pytest.mark.integration
def test_discover_fills_the_list_and_a_filter_keeps_the_selection(qtbot, live_controller,
                                                                  jobs_view):
    view = jobs_view
    events: list[StreamedEvent] = []
    live_controller.event_received.connect(events.append)
    put_profile(qtbot, live_controller)
    live_controller.request_discover()
    qtbot.waitUntil(lambda: view.model.rowCount() >= 40, timeout=90_000)
    assert any(e.type == "JobDiscovered" for e in events)

    # Select an engineering job, then search and filter while events keep arriving.
    first = next(key for key in view.model.keys()  # noqa: SIM118 - a list
                 if "engineer" in view.model.get(key)["title"].lower())
    assert view.select_job(first)
    assert view.selected_key() == first
    qtbot.keyClicks(view.search, "engineer")
    qtbot.waitUntil(lambda: view.query().get("q") == "engineer" and not view.stale
                    and not view.refreshing and view.total is not None
                    and all("engineer" in " ".join(str(v) for v in row.values()).lower()
                            for row in map(view.model.row_at, range(view.model.rowCount()))),
                    timeout=30_000)
    seen = len(events)
    qtbot.waitUntil(lambda: len(events) > seen + 5, timeout=90_000)
    assert view.selected_key() == first
    assert view.table.selectionModel().isRowSelected(
        view.proxy.mapFromSource(view.model.index(view.model.row_of(first), 0)).row())

    # "Not marked": marking another visible job applied moves it out (a refetch, since the
    # patched field decides membership); the selected row stays selected.
    view.status_filter.setCurrentIndex(view.status_filter.findText("Not marked"))
    qtbot.waitUntil(lambda: view.query().get("userStatus") == "none" and not view.refreshing
                    and not view.stale, timeout=30_000)
    other = next(key for key in view.model.keys() if key != first)  # noqa: SIM118
    done: list = []
    live_controller.call(lambda c: c.job_action(other, "mark", userStatus="applied"),
                         done.append, done.append)
    qtbot.waitUntil(lambda: view.model.row_of(other) is None, timeout=30_000)
    assert view.selected_key() == first
    live_controller.call(lambda c: c.job_action(other, "mark", userStatus=None),
                         done.append, done.append)
    qtbot.waitUntil(lambda: view.model.row_of(other) is not None, timeout=30_000)
    assert view.selected_key() == first


@pytest.mark.desktop
@pytest.mark.integration
def test_a_job_detail_and_its_actions(qtbot, live_controller, jobs_view):
    view = jobs_view
    qtbot.waitUntil(lambda: view.model.rowCount() > 0, timeout=60_000)
    view.table.setCurrentIndex(view.proxy.index(0, 0))
    key = view.selected_key()
    qtbot.waitUntil(lambda: (view.detail.detail or {}).get("jobId") == key, timeout=15_000)
    assert view.detail.title_label.text()
    assert view.detail.stage_labels["enrich"].text() != "—"

    # Mark applied with the button: the row changes from the event (a patch, no refetch).
    patched = view.patched_events
    with qtbot.waitSignal(view.detail.action_finished, timeout=15_000) as finished:
        qtbot.mouseClick(view.detail.applied_button, Qt.MouseButton.LeftButton)
    assert finished.args == ["mark", {"jobId": key, "userStatus": "applied"}]
    assert view.detail.action_result.text() == "Marked applied."
    qtbot.waitUntil(lambda: status_of(view, key) == "Applied", timeout=15_000)
    assert view.patched_events > patched
    qtbot.waitUntil(lambda: not view.detail.applied_button.isEnabled(), timeout=15_000)
    with qtbot.waitSignal(view.detail.action_finished, timeout=15_000):
        qtbot.mouseClick(view.detail.clear_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: status_of(view, key) != "Applied", timeout=15_000)

    # Run a stage: started, or a plain-words no-op when it is running or done.
    qtbot.waitUntil(view.detail.run_button.isEnabled, timeout=120_000)
    with qtbot.waitSignal(view.detail.action_finished, timeout=15_000) as ran:
        qtbot.mouseClick(view.detail.run_button, Qt.MouseButton.LeftButton)
    assert ran.args[0] == "run-stage" and isinstance(ran.args[1], dict), ran.args
    assert view.detail.action_result.text() in {
        "Started.", "Already running.", "This job is already being prepared.",
        "That stage is already done."}


@pytest.mark.desktop
@pytest.mark.integration
def test_select_job_from_a_link_and_screenshot(qtbot, live_controller, jobs_view):
    view = jobs_view
    # Wait for a job with its materials, so the screenshot shows a prepared job.
    def ready_key() -> str | None:
        return next((k for k in view.model.keys()  # noqa: SIM118 - a list
                     if (view.model.get(k)["stages"] or {}).get("pdf") == "succeeded"), None)
    qtbot.waitUntil(lambda: ready_key() is not None, timeout=180_000)
    key = ready_key()
    with qtbot.waitSignal(view.open_job, timeout=5_000) as opened:
        assert view.select_job(key)
    assert opened.args == [key]
    def detail_shown() -> None:
        shown = view.detail.detail or {}
        assert shown.get("jobId") == key, (key, shown.get("jobId"), view.detail.job_key,
                                            view.detail.last_error)
        assert shown.get("resume") is not None, shown.get("stages")
    qtbot.waitUntil(detail_shown, timeout=15_000)
    assert "Not scored" not in view.detail.score_label.text()
    assert view.detail.pdf_buttons["resume_pdf"].isEnabled()
    ARTIFACTS.mkdir(exist_ok=True)
    view.resize(1280, 720)
    qtbot.waitUntil(lambda: view.width() == 1280, timeout=5_000)
    assert view.grab().save(str(ARTIFACTS / "jobs-view.png"))

    # A key that is not listed (filtered out): the detail shows it, the row follows later.
    view.search.setText("zzz-no-such-job")
    qtbot.waitUntil(lambda: view.model.rowCount() == 0 and not view.refreshing, timeout=15_000)
    assert not view.select_job(key)
    assert view.detail.job_key == key
    view.search.clear()
    qtbot.waitUntil(lambda: view.selected_key() == key, timeout=15_000)
