"""The every-event-has-handler rule: each registered event type has a route to the views
it invalidates (its Activity sentence: tests/unit/test_activity_presenter.py). Qt-free."""

from __future__ import annotations

import logging

import pytest

from backend.domain.events import EVENT_TYPES
from desktop.client import StreamedEvent
from desktop.event_router import ACTIVITY, ROUTES, VIEW_KEYS, EventRouter, UnknownEventType

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


def test_routes_to_unknown_views_are_rejected():
    with pytest.raises(ValueError, match="unknown views"):
        EventRouter({"JobDiscovered": {"jobs", "nowhere"}})


def test_route_table_is_the_default():
    assert EventRouter().routes == dict(ROUTES)
