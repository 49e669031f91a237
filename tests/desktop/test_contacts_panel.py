"""The Contacts panel offscreen: without services, and against the real services (Temporal,
worker, API) where the user starts contact research and the panel follows the events."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from desktop.client import ApiUnavailable
from desktop.shell import ShellController
from desktop.views.contacts_panel import ContactsPanel, task_line
from tests.integration.conftest import write_settings

pytestmark = pytest.mark.desktop

JOB = "job_" + "b" * 24
FILLER = " ".join("We build calm, observable services for shippers all over Europe." for _ in range(12))


def test_the_panel_needs_a_job_and_reports_missing_services(qtbot, qloop, tmp_path):
    controller = ShellController(tmp_path)
    panel = ContactsPanel(controller)
    qtbot.addWidget(panel)
    panel.show()
    assert not panel.research_button.isEnabled()
    assert panel.status_label.text() == "Select a job."
    panel.set_job(JOB)
    assert panel.research_button.isEnabled()
    with qtbot.waitSignal(panel.research_result, timeout=5_000) as result:
        qtbot.mouseClick(panel.research_button, Qt.MouseButton.LeftButton)
    assert isinstance(result.args[0], ApiUnavailable)
    assert "not running" in panel.message_label.text()
    assert panel.research_button.isEnabled(), "the user can try again"
    panel.set_job(None)
    assert not panel.research_button.isEnabled() and panel.model.rowCount() == 0


def test_task_line_names_status_count_failure_and_sources():
    assert task_line({"status": "failed", "candidateCount": None,
                      "failure": {"code": "budget_exceeded"},
                      "sourceAttempts": [{"sourceId": "posting_text", "status": "used"},
                                         {"sourceId": "team", "status": "blocked",
                                          "errorCode": "ENRICH_ROBOTS_DISALLOWED"}]}) == (
        "Last research: failed · error: budget_exceeded · sources: posting_text read,"
        " team blocked (ENRICH_ROBOTS_DISALLOWED)")
    assert task_line({"status": "completed", "candidateCount": 1, "sourceAttempts": []}) == \
        "Last research: completed · 1 candidate"


@pytest.fixture
def contacts_app_dir(tmp_path) -> Path:
    app_dir = tmp_path / "app"
    board = {"postings": [
        {"id": "p-1", "url": "https://careers.invalid/jobs/1", "title": "Backend Engineer",
         "company": "Harborlight", "location": "Rotterdam", "remote": "hybrid",
         "descriptionHtml": f"<p>{FILLER}</p><p>Questions? Contact Maria Lopez, Senior"
                            " Recruiter, at maria.lopez@harborlight.example.</p>"
                            "<p>You will report to our hiring manager, Tom Becker.</p>"},
        {"id": "p-2", "url": "https://careers.invalid/jobs/2", "title": "Data Engineer",
         "company": "Harborlight", "location": "Rotterdam", "remote": "hybrid",
         "descriptionHtml": f"<p>{FILLER}</p>"},
    ]}
    app_dir.mkdir()
    (app_dir / "board.json").write_text(json.dumps(board), encoding="utf-8")
    write_settings(app_dir, sources=[{"kind": "json_file", "id": "hl",
                                      "path": str(app_dir / "board.json")}])
    return app_dir


def _call(qtbot, controller, request, timeout=30_000):
    box: dict = {}
    controller.call(request, lambda value: box.setdefault("value", value),
                    lambda error: box.setdefault("error", error))
    qtbot.waitUntil(lambda: bool(box), timeout=timeout)
    assert "error" not in box, box.get("error")
    return box["value"]


@pytest.mark.integration
def test_research_from_the_panel_against_the_real_services(qtbot, qloop, contacts_app_dir):
    controller = ShellController(contacts_app_dir, temporal_ui=False)
    panel = ContactsPanel(controller)
    qtbot.addWidget(panel)
    panel.show()
    seen: list[str] = []
    controller.event_received.connect(lambda event: seen.append(event.type))
    controller.start()
    try:
        qtbot.waitUntil(lambda: controller.client is not None, timeout=90_000)
        _call(qtbot, controller, lambda client: client.run_stage("discover"))
        qtbot.waitUntil(lambda: "DiscoveryRunCompleted" in seen, timeout=90_000)
        jobs = {j["title"]: j["jobId"] for j in _call(qtbot, controller, lambda c: c.jobs())["items"]}

        with qtbot.waitSignal(panel.refreshed, timeout=10_000):
            panel.set_job(jobs["Backend Engineer"])
        assert panel.status_label.text().startswith("No contact research yet")

        with qtbot.waitSignal(panel.research_result, timeout=30_000) as result:
            qtbot.mouseClick(panel.research_button, Qt.MouseButton.LeftButton)
        assert result.args[0]["workflowId"] == f"contacts-{jobs['Backend Engineer']}-1"
        # The panel refetches on the Contact* events of its job, delivered over SSE.
        qtbot.waitUntil(lambda: panel.status_label.text().startswith("Last research: completed"),
                        timeout=90_000)
        qtbot.waitUntil(lambda: panel.model.rowCount() == 2, timeout=10_000)
        assert "2 candidates" in panel.status_label.text()
        assert "posting_text read" in panel.status_label.text()
        rows = {panel.model.row_at(i)["name"]: panel.model.row_at(i) for i in range(2)}
        assert rows["Maria Lopez"]["email"] == "maria.lopez@harborlight.example"
        assert panel.model.data(panel.model.index(0, 3)) == "90%"
        assert panel.research_button.isEnabled()

        with qtbot.waitSignal(panel.refreshed, timeout=10_000):
            panel.set_job(jobs["Data Engineer"])
        assert panel.model.rowCount() == 0
        assert panel.status_label.text().startswith("No contact research yet")
    finally:
        with qtbot.waitSignal(controller.stopped, timeout=60_000):
            controller.shutdown()
