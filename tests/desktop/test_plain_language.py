"""The plain-language test: a populated app (a demo-board Discover with a saved profile,
prepared jobs, a rescored and marked job, a full Activity list) walked view by view.
Every visible label, button, group title, tab, placeholder, combo item, tooltip, table
header and table cell is read (tests/desktop/plain_walk.py); event type names,
snake_case / UPPER_SNAKE codes, ids and provider/model slugs fail the test unless they sit
inside a "Technical details" disclosure (tests/plain_words.py says what counts).

The Pipelines view is being rebuilt on another branch: its scan is the separate
``test_pipelines_speaks_plain_words`` below, so its findings are reported on their own.
"""

from __future__ import annotations

import contextlib
import json
import time
from pathlib import Path

import pytest
from PySide6.QtWidgets import QAbstractItemView, QApplication, QComboBox, QWidget

from backend.domain.profile import CandidateProfile
from backend.sources.board_file import demo_board_text
from desktop.views.live_view import LiveView
from desktop.views.main_window import MainWindow
from tests.desktop.discover_helpers import api, start_own_discover, wait_closed
from tests.desktop.plain_walk import problems_in, read, scan
from tests.plain_words import findings

pytestmark = [pytest.mark.desktop, pytest.mark.integration, pytest.mark.timeout(600)]

WALK_POSTINGS = 12  # enough for every kind of row: scored, skipped below the fit, prepared
RUN_TIMEOUT_MS = 400_000  # the small board's Discover and its first prepared job, busy machine


# -- a populated app -------------------------------------------------------------------------


def _every(seconds: float, check):
    """``check`` at most once per ``seconds`` (a wait polls every few milliseconds, and a
    blocking API call each time would load the machine it waits on)."""
    last = {"at": float("-inf"), "result": None}

    def throttled():
        if time.monotonic() - last["at"] >= seconds:
            last["at"], last["result"] = time.monotonic(), check()
        return last["result"]

    return throttled


def _prepared_job(http) -> str | None:
    jobs = http.get("/v1/jobs", params={"limit": 200}).json()["items"]
    return next((job["jobId"] for job in jobs
                 if (job.get("stages") or {}).get("pdf") == "succeeded"), None)


_populated: dict[str, str] = {}  # the prepared job, once this module made its run


@pytest.fixture
def window(qtbot, live_services, live_controller):
    """The main window on the live services. The first use runs a Discover seen live (so
    Activity has its rows), waits for a job prepared through every stage, rescores it and
    marks it (so Activity shows those sentences too); later uses reuse that data."""
    win = MainWindow(live_controller)
    qtbot.addWidget(win)
    win.resize(1240, 860)
    win.show()
    seen: list[tuple[str, str | None]] = []
    live_controller.event_received.connect(
        lambda event: seen.append((event.type, event.payload.get("jobId"))))
    with api(live_services) as http:
        if "job" not in _populated:
            _populate(qtbot, http, seen, Path(live_services.info.app_dir))
        win.prepared_job = _populated["job"]
    return win


@contextlib.contextmanager
def _walk_board(http, app_dir: Path):
    """While the block runs, the only enabled source is a JSON file of the first
    ``WALK_POSTINGS`` demo postings (real demo jobs, but a run a busy machine finishes in
    a minute, not the whole board's many); the user's sources come back after, and the
    walk's board stays listed (switched off) so Activity can still name it."""
    board = app_dir / "Walk board.json"
    postings = json.loads(demo_board_text())["postings"][:WALK_POSTINGS]
    board.write_text(json.dumps({"postings": postings}), encoding="utf-8")
    original = http.get("/v1/settings").json()["sources"]
    walk = {"kind": "json_file", "id": "walk", "path": str(board), "enabled": True}
    disabled = [{**source, "enabled": False} for source in original]
    http.patch("/v1/settings", json={"sources": [*disabled, walk]}).raise_for_status()
    try:
        yield
    finally:
        kept = [*original, {**walk, "enabled": False}]
        http.patch("/v1/settings", json={"sources": kept}).raise_for_status()


def _populate(qtbot, http, seen: list[tuple[str, str | None]], app_dir: Path) -> None:
    stored = CandidateProfile.model_validate(http.get("/v1/profile").json()["profile"])
    if stored.is_empty():  # none saved yet (or another test left an empty one): the sample
        sample = http.post("/v1/profile/import", params={"sample": "true"}, timeout=60)
        http.put("/v1/profile", json=sample.json()["profile"]).raise_for_status()
    with _walk_board(http, app_dir):
        run_id = start_own_discover(http)["firstExecutionRunId"]
        try:
            prepared = _every(2.0, lambda: _prepared_job(http))
            qtbot.waitUntil(lambda: ("DiscoveryRunCompleted", None) in seen
                            and prepared() is not None, timeout=RUN_TIMEOUT_MS)
        finally:
            wait_closed(http, run_id)
    job = _prepared_job(http)
    # Counted from before each action: the job's first score (and any earlier mark) is
    # in ``seen`` already, and would end the wait before the rescore had scored anything.
    scored = seen.count(("JobScored", job))
    http.post(f"/v1/jobs/{job}/actions/rescore", json={}).raise_for_status()
    qtbot.waitUntil(lambda: seen.count(("JobScored", job)) > scored, timeout=RUN_TIMEOUT_MS)
    marked = seen.count(("JobUserStatusChanged", job))
    for mark in ("applied", None):
        http.post(f"/v1/jobs/{job}/actions/mark", json={"userStatus": mark}).raise_for_status()
    qtbot.waitUntil(lambda: seen.count(("JobUserStatusChanged", job)) == marked + 2,
                    timeout=60_000)
    _populated["job"] = job


def settle(qtbot, root: QWidget) -> None:
    """Wait until every shown view under ``root`` has its data (no fetch in flight)."""
    def settled() -> bool:
        views = [w for w in [root, *root.findChildren(LiveView)]
                 if isinstance(w, LiveView) and w.isVisible()]
        return all(not v.refreshing and not v.stale for v in views)
    qtbot.waitUntil(settled, timeout=60_000)
    QApplication.processEvents()


def open_first_rows(qtbot, root: QWidget) -> None:
    """Select the first row of every visible list, so detail panes show what they show."""
    for view in root.findChildren(QAbstractItemView):
        if view.isVisible() and view.model() is not None and view.model().rowCount() > 0 \
                and not isinstance(view.parentWidget(), QComboBox) and view.currentIndex().row() < 0:
            view.setCurrentIndex(view.model().index(0, 0))
    settle(qtbot, root)


def show(qtbot, window: MainWindow, key: str) -> QWidget:
    view = window.show_view(key)
    settle(qtbot, window)
    return view


# -- the tests -------------------------------------------------------------------------------


def test_every_view_speaks_plain_words(qtbot, window):
    pipelines = window.views["pipelines"]
    seen: dict[str, list[tuple[str, str]]] = {}
    for key in ("runs", "apply", "spend", "activity"):
        view = show(qtbot, window, key)
        open_first_rows(qtbot, view)
        seen[key] = read(window, skip=pipelines)
    jobs = show(qtbot, window, "jobs")
    assert jobs.select_job(window.prepared_job)
    qtbot.waitUntil(lambda: (jobs.detail.detail or {}).get("jobId") == window.prepared_job,
                    timeout=30_000)
    settle(qtbot, jobs)
    seen["jobs"] = read(window, skip=pipelines)
    settings = show(qtbot, window, "settings")
    for page in ("profile", "settings"):
        settings.show_page(page)
        settle(qtbot, settings)
        seen[f"settings/{page}"] = read(window, skip=pipelines)

    # The walk read what each view shows (a detail pane, the rows), not an empty window.
    texts = {key: {text for _name, text in pairs} for key, pairs in seen.items()}
    assert jobs.detail.title_label.text() in texts["jobs"]
    assert jobs.detail.score_label.toolTip() in texts["jobs"]
    assert any("Run started" in text for text in texts["runs"])  # the selected run's timeline
    assert "Today by model" in texts["spend"]
    assert len([t for t in texts["activity"] if t in window.activity.model.texts()]) > 20
    assert "Job sources" in texts["settings/settings"]

    problems = {key: problems_in(pairs) for key, pairs in seen.items()}
    problems = {key: found for key, found in problems.items() if found}
    assert problems == {}, "\n".join(f"{key}: {line}" for key, found in problems.items()
                                     for line in found)

    # Activity: every row a sentence (the model holds more rows than the screen shows).
    texts = window.activity.model.texts()
    assert any(text.startswith("Started looking for jobs on ") for text in texts)
    assert any(text.startswith("Scored ") and ": fit " in text for text in texts)
    assert [f"{text!r}: {found}" for text in texts for found in findings(text)] == []
    window.activity.list_view.setCurrentIndex(window.activity.model.index(0))
    assert "Event: " in window.activity.technical.text()  # the codes: one click away


# What the Pipelines view still says in codes (idle, after a run), left to its rebuild on
# the wtD branch. The lead empties this after merging it; a finding not listed fails now.
PIPELINES_LEFT_TO_WTD: set[str] = set()


def test_pipelines_speaks_plain_words(qtbot, window):
    """Separate on purpose: the Pipelines view is being rebuilt (wtD); the lead finishes
    this part after merging (``PIPELINES_LEFT_TO_WTD``)."""
    pipelines = show(qtbot, window, "pipelines")
    found = {problem.split(" in ", 1)[0] for problem in scan(pipelines)}
    assert found - PIPELINES_LEFT_TO_WTD == set(), "\n".join(sorted(found))
