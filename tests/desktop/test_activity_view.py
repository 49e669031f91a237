"""The Activity list's empty-state hint."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QTabWidget, QWidget

from desktop.client import StreamedEvent
from desktop.views.activity_view import ActivityView

pytestmark = pytest.mark.desktop


def test_the_empty_hint_is_gone_when_events_arrived_while_the_tab_was_hidden(qtbot):
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    tabs.addTab(QWidget(), "Pipelines")
    activity = ActivityView(tabs)
    tabs.addTab(activity, "Activity")
    tabs.show()
    assert not activity.isVisible()  # another tab is current, as at start-up
    activity.append(StreamedEvent(1, "DiscoveryRunStarted",
                                  {"discoverRunId": "run-1", "families": ["demo_board"]}))

    tabs.setCurrentWidget(activity)
    assert activity.isVisible()
    assert activity.model.rowCount() == 1
    assert not activity.empty_label.isVisible()


def test_the_empty_hint_explains_an_empty_list(qtbot):
    activity = ActivityView()
    qtbot.addWidget(activity)
    activity.show()
    assert activity.empty_label.isVisible()
    assert "appears here as it happens" in activity.empty_label.text()


def test_a_selected_row_shows_its_type_and_ids_under_technical_details(qtbot):
    activity = ActivityView()
    qtbot.addWidget(activity)
    activity.show()
    activity.append(StreamedEvent(7, "JobScored", {
        "jobId": "job_" + "0" * 24, "workflowId": "prep-x", "runId": "r-1", "score": 82,
        "rationale": "…", "version": 1, "provider": "offline", "model": "offline-heuristic"}))
    assert activity.model.row_text(0) == "Scored a job: fit 82"
    assert not activity.technical.expanded  # folded away until asked for
    activity.list_view.setCurrentIndex(activity.model.index(0))
    text = activity.technical.text()
    assert "JobScored #7" in text and "offline-heuristic" in text and "prep-x" in text
    activity.technical.set_expanded(True)
    assert activity.technical.details.isVisible()


def test_a_row_keeps_the_event_as_text_and_gives_it_back_whole(qtbot):
    """Rows hold the payload as compact JSON (memory, issue 18): every role that reads the
    event — the tooltip, Technical details, the event itself — still sees all of it, and a
    caller changing its own payload dict afterwards changes nothing in the list."""
    from PySide6.QtCore import Qt

    from desktop.models.event_list_model import DetailsRole, EventRole, EventTypeRole

    activity = ActivityView()
    qtbot.addWidget(activity)
    payload = {"jobId": "job_" + "1" * 24, "score": 82, "rationale": "Zürich — fine",
               "matched": ["Python", "Go"], "occurredAt": "2026-12-02T01:02:03Z"}
    event = StreamedEvent(9, "JobScored", dict(payload))
    activity.append(event)
    event.payload["score"] = 1  # the caller's dict, not the row's
    index = activity.model.index(0)
    assert index.data(EventRole) == StreamedEvent(9, "JobScored", payload)
    assert index.data(EventTypeRole) == "JobScored"
    assert index.data(Qt.ItemDataRole.ToolTipRole).startswith("At ")
    details = dict(index.data(DetailsRole))
    assert details["Event"] == "JobScored #9"
    assert details["rationale"] == "Zürich — fine" and details["matched"] == '["Python", "Go"]'
    assert activity.model.row_text(0) == "Scored a job: fit 82"
    assert activity.model.last_event_id() == 9
