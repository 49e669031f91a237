"""Apply Review against the real services: a prepared job is approved, applied as a
packet the user completes, and marked applied; the standing loop toggles from the view."""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from backend.domain.clock import parse_iso
from backend.sources.board_file import demo_board_text
from desktop.presenters.runs import local_time_text
from desktop.views.apply_review_view import UPDATED, ApplyReviewView
from tests.desktop.discover_helpers import api, start_own_discover
from tests.fakes.posting_pages import PostingPagesServer
from tests.integration.test_preparation import PROFILE

pytestmark = [pytest.mark.desktop, pytest.mark.integration]

ARTIFACTS = Path(__file__).resolve().parents[1] / "_artifacts"
PREPARED_TIMEOUT_S = 240


@contextmanager
def prepared_jobs(live_services, tmp_path, count: int = 2):
    """Setup: a board whose apply pages are served on loopback, discovered and prepared.

    The source is added turned off and discovered explicitly, so other tests' Discover
    runs never crawl it; teardown restores the sources."""
    pages = PostingPagesServer().start()
    postings = json.loads(demo_board_text())["postings"][:count]
    for n, posting in enumerate(postings):
        posting.update(id=f"apply-review-{n}", title=f"Apply Review Tester {n}",
                       url=pages.url(f"/jobs/backend-engineer?n={n}"),
                       applyUrl=pages.url("/jobs/backend-engineer"))
    board = tmp_path / "apply-review-board.json"
    board.write_text(json.dumps({"postings": postings}), encoding="utf-8")
    with api(live_services) as http:
        original = http.get("/v1/settings").json()["sources"]
        source = {"kind": "json_file", "id": "apply-review", "path": str(board), "enabled": False}
        http.patch("/v1/settings", json={"sources": [*original, source],
                                         "localNetworkHosts": [pages.host]}).raise_for_status()
        try:
            http.put("/v1/profile", json=PROFILE).raise_for_status()
            start_own_discover(http, sourceIds=["apply-review"])
            deadline = time.monotonic() + PREPARED_TIMEOUT_S
            while not _all_prepared(http, count):
                if time.monotonic() > deadline:
                    raise AssertionError("the test board's jobs were not prepared in time")
                time.sleep(0.5)
            yield pages
        finally:
            http.patch("/v1/settings", json={"sources": original, "localNetworkHosts": []}
                       ).raise_for_status()
            pages.stop()


def _all_prepared(http, count: int) -> bool:
    queue = http.get("/v1/apply/queue", params={"status": "awaiting_approval",
                                                "limit": 500}).json()
    mine = [item for item in queue["items"] if item["title"].startswith("Apply Review Tester")]
    return len(mine) >= count


def click(qtbot, button) -> None:
    assert button.isEnabled(), button.text()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def updated_cell(view: ApplyReviewView, job_key: str) -> str:
    return view.model.index(view.model.row_of(job_key), UPDATED).data()


def status_of(view: ApplyReviewView, job_key: str) -> str | None:
    row = view.model.get(job_key)
    return None if row is None else row["status"]


def test_approve_apply_and_mark_applied(qtbot, live_controller, live_services, tmp_path):
    with prepared_jobs(live_services, tmp_path):
        approve_apply_and_mark_applied(qtbot, live_controller)


def approve_apply_and_mark_applied(qtbot, live_controller):
    view = ApplyReviewView(live_controller)
    qtbot.addWidget(view)
    view.resize(1100, 600)
    with qtbot.waitSignal(view.refreshed, timeout=30_000):
        view.show()
    assert view.model.rowCount() > 0 and not view.empty.isVisible()
    item = next(row for row in (view.model.row_at(r) for r in range(view.model.rowCount()))
                if row["status"] == "awaiting_approval"
                and row["title"].startswith("Apply Review Tester"))
    job_key = item["jobKey"]
    assert view.select_job(job_key)
    assert view.approve_button.isEnabled() and not view.mark_applied_button.isEnabled()
    assert view.open_resume.isEnabled() and view.open_cover.isEnabled()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    QApplication.processEvents()
    assert view.grab().save(str(ARTIFACTS / "apply-review-view.png"))

    # Updated: when the item changed - here when its PDFs were made, then at approval.
    prepared_at = item["updatedAt"]
    assert view.model.headerData(UPDATED, Qt.Orientation.Horizontal) == "Updated"
    assert updated_cell(view, job_key) == local_time_text(prepared_at) != "—"

    click(qtbot, view.approve_button)
    qtbot.waitUntil(lambda: status_of(view, job_key) == "approved", timeout=30_000)
    assert view.selected()["jobKey"] == job_key  # the refetch kept the selection
    approved_at = view.model.get(job_key)["updatedAt"]
    assert parse_iso(approved_at) > parse_iso(prepared_at)
    assert updated_cell(view, job_key) == local_time_text(approved_at)

    click(qtbot, view.start_button)
    # A web form is never submitted: the job waits for the user to finish it by hand.
    qtbot.waitUntil(lambda: status_of(view, job_key) in {"awaiting_manual_completion", "failed"},
                    timeout=60_000)
    assert status_of(view, job_key) == "awaiting_manual_completion", view.model.get(job_key)
    assert view.open_page_button.isEnabled()

    click(qtbot, view.mark_applied_button)
    # "Open" hides finished jobs: the applied row leaves the list.
    qtbot.waitUntil(lambda: view.model.get(job_key) is None, timeout=30_000)
    index = view.status_filter.findData("applied")
    with qtbot.waitSignal(view.refreshed, timeout=30_000):
        view.status_filter.setCurrentIndex(index)
    qtbot.waitUntil(lambda: status_of(view, job_key) == "applied", timeout=30_000)


def test_the_loop_toggle_starts_and_stops_the_standing_loop(qtbot, live_controller, live_services):
    view = ApplyReviewView(live_controller)
    qtbot.addWidget(view)
    with qtbot.waitSignal(view.refreshed, timeout=30_000):
        view.show()
    assert not view.loop_toggle.isChecked()
    try:
        click(qtbot, view.loop_toggle)
        qtbot.waitUntil(lambda: (view.loop or {}).get("state") == "running", timeout=60_000)
        assert "running" in view.loop_label.text()
        assert view.loop_toggle.isChecked()
        click(qtbot, view.loop_toggle)
        qtbot.waitUntil(lambda: (view.loop or {}).get("state") == "stopped", timeout=60_000)
    finally:
        with api(live_services) as http:
            http.patch("/v1/settings", json={"autoApply": False})
