"""The every-event-has-handler rule: each registered event type has a route to the views
it invalidates and a readable Activity row. Qt-free."""

from __future__ import annotations

import logging

import pytest

from backend.domain.events import EVENT_TYPES
from desktop.client import StreamedEvent
from desktop.event_router import ACTIVITY, ROUTES, VIEW_KEYS, EventRouter, UnknownEventType
from desktop.formatting import DESCRIBERS, describe_event
from tests.desktop.sample_events import sample_events

pytestmark = pytest.mark.desktop

REGISTERED = [cls.event_type for cls in EVENT_TYPES]


def test_every_registered_event_type_has_a_route():
    router = EventRouter()
    assert router.unrouted() == set(), "add the new event types to desktop.event_router.ROUTES"
    assert router.stale_routes() == set(), "ROUTES names event types that are not registered"


@pytest.mark.parametrize("event_type", REGISTERED)
def test_each_route_names_known_views_and_reaches_the_activity_list(event_type):
    views = EventRouter(strict=True).route(StreamedEvent(1, event_type, {}))
    assert ACTIVITY in views
    assert views <= VIEW_KEYS


def test_every_registered_event_type_has_a_readable_row():
    assert set(DESCRIBERS) == set(REGISTERED)
    for event in sample_events():
        text = describe_event(event).text
        assert text.startswith(f"#{event.id} {event.type} — "), text
        assert "unreadable" not in text, text


def test_routes_of_the_discover_events():
    router = EventRouter()
    assert router.route("JobDiscovered") >= {"jobs", "activity"}
    assert router.route("DiscoveryRunCompleted") >= {"runs", "pipelines", "jobs"}
    assert router.route("WorkflowStarted") >= {"runs"}


def test_an_unknown_type_raises_in_strict_mode():
    with pytest.raises(UnknownEventType, match="NotAnEvent"):
        EventRouter(strict=True).route(StreamedEvent(9, "NotAnEvent", {}))


def test_an_unknown_type_is_flagged_once_and_shown_in_activity(caplog):
    router = EventRouter()
    with caplog.at_level(logging.WARNING, logger="desktop.event_router"):
        assert router.route(StreamedEvent(9, "FromANewerBackend", {})) == {ACTIVITY}
        assert router.route(StreamedEvent(10, "FromANewerBackend", {})) == {ACTIVITY}
    assert router.unknown_types == {"FromANewerBackend"}
    assert len([r for r in caplog.records if "FromANewerBackend" in r.getMessage()]) == 1
    assert describe_event(StreamedEvent(9, "FromANewerBackend", {})).text == "#9 FromANewerBackend"


def test_routes_to_unknown_views_are_rejected():
    with pytest.raises(ValueError, match="unknown views"):
        EventRouter({"JobDiscovered": {"jobs", "nowhere"}})


def test_route_table_is_the_default():
    assert EventRouter().routes == dict(ROUTES)


def test_discover_rows_read_like_sentences():
    discovered = StreamedEvent(123, "JobDiscovered", {
        "jobId": "job_1", "title": "Senior Backend Engineer", "company": "Acme Robotics",
        "location": "Berlin", "remote": "hybrid", "sourceFamily": "demo_board",
        "discoverWorkflowId": "discover-local", "discoverRunId": "r1",
    })
    assert describe_event(discovered).text == (
        "#123 JobDiscovered — Senior Backend Engineer at Acme Robotics (Berlin)"
    )
    completed = StreamedEvent(124, "DiscoveryRunCompleted", {
        "status": "completed", "jobsObserved": 234, "jobsNew": 234,
        "familiesSucceeded": ["demo_board"], "familiesFailed": [],
        "discoverWorkflowId": "discover-local", "discoverRunId": "r1",
    })
    described = describe_event(completed)
    assert described.text == "#124 DiscoveryRunCompleted — 234 new of 234 seen"
    assert described.tone == "success"
    stage = StreamedEvent(125, "StageStarted", {"jobId": "job_1", "stage": "score", "attempt": 1})
    labels = {"job_1": "Senior Backend Engineer at Acme Robotics"}.get
    assert describe_event(stage, labels).text == (
        "#125 StageStarted — score for Senior Backend Engineer at Acme Robotics (attempt 1)"
    )


def test_skip_and_block_reasons_and_pdf_pages_read_as_words():
    labels = {"job_1": "Data Engineer at Northwind"}.get
    skipped = StreamedEvent(7, "StageSkipped", {"jobId": "job_1", "stage": "tailor",
                                                "reason": "below_min_fit_score"})
    assert describe_event(skipped, labels).text == (
        "#7 StageSkipped — tailor for Data Engineer at Northwind: fit score below your minimum")
    blocked = StreamedEvent(8, "StageBlocked", {"jobId": "job_1", "stage": "cover",
                                                "reason": "upstream_not_succeeded"})
    assert describe_event(blocked, labels).text.endswith(": an earlier stage did not finish")
    odd = StreamedEvent(9, "StageBlocked", {"jobId": "job_1", "stage": "cover",
                                            "reason": "from_a_newer_backend"})
    assert describe_event(odd, labels).text.endswith(": from_a_newer_backend")
    one_page = StreamedEvent(10, "PdfRendered", {"jobId": "job_1", "kind": "resume_pdf",
                                                 "pages": 1, "bytes": 2048})
    assert describe_event(one_page, labels).text.endswith(": 1 page, 2 KB")
    two_pages = StreamedEvent(11, "PdfRendered", {"jobId": "job_1", "kind": "cover_letter_pdf",
                                                  "pages": 2, "bytes": 4096})
    assert describe_event(two_pages, labels).text.endswith(": 2 pages, 4 KB")
