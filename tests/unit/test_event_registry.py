"""The typed domain-event registry and the spec's catalog rules
(operations-and-events: "Domain Events, Projections, and SSE")."""

from __future__ import annotations

import inspect
import json
import types
import typing
from typing import Any, Literal, get_args, get_origin

import pytest
from pydantic import BaseModel, ValidationError

from backend.domain import events as ev
from backend.domain.events import EVENT_BY_NAME, EVENT_TYPES, DomainEvent, parse_event


def _sample_value(annotation: Any, name: str) -> Any:
    origin = get_origin(annotation)
    if origin is Literal:
        return get_args(annotation)[0]
    if origin in (typing.Union, types.UnionType):
        non_none = [arg for arg in get_args(annotation) if arg is not type(None)]
        return _sample_value(non_none[0], name)
    if origin is list:
        return [_sample_value(get_args(annotation)[0], name)]
    if origin is dict:
        return {"sampleKey": "v"}
    if inspect.isclass(annotation) and issubclass(annotation, BaseModel):
        return _sample(annotation)
    if annotation is str:
        return f"{name}-value"
    if annotation is bool:
        return True
    if annotation is int:
        return 3
    raise AssertionError(f"no sample for {name}: {annotation!r}; extend _sample_value")


def _sample(model: type[BaseModel]) -> BaseModel:
    """An instance with every field (required and optional) populated."""
    values = {
        name: _sample_value(field.annotation, name) for name, field in model.model_fields.items()
    }
    return model(**values)


def _keys(value: Any, *, skip: frozenset[str] = frozenset()) -> list[str]:
    found: list[str] = []
    if isinstance(value, dict):
        for key, child in value.items():
            found.append(key)
            if key not in skip:
                found.extend(_keys(child))
    elif isinstance(value, list):
        for child in value:
            found.extend(_keys(child))
    return found


@pytest.mark.parametrize("event_cls", EVENT_TYPES, ids=lambda cls: cls.__name__)
def test_payload_is_camel_case(event_cls):
    event = _sample(event_cls)
    payload = json.loads(event.payload_json())
    # inputSummary is a free-form map whose keys are data, not schema.
    keys = _keys(payload, skip=frozenset({"inputSummary"}))
    assert keys, "payload has no keys"
    offenders = [key for key in keys if "_" in key]
    assert not offenders, f"{event_cls.__name__} payload has snake_case keys: {offenders}"
    assert "occurredAt" in payload


@pytest.mark.parametrize("event_cls", EVENT_TYPES, ids=lambda cls: cls.__name__)
def test_payload_round_trips_through_parse_event(event_cls):
    event = _sample(event_cls)
    parsed = parse_event(event_cls.event_type, event.payload_json())
    assert type(parsed) is event_cls
    assert parsed == event


@pytest.mark.parametrize("event_cls", EVENT_TYPES, ids=lambda cls: cls.__name__)
def test_event_type_is_the_class_name(event_cls):
    assert event_cls.event_type == event_cls.__name__
    assert _sample(event_cls).event_type == event_cls.__name__


def test_event_type_is_not_part_of_the_payload_or_constructor():
    # The type lives in job_events.type; it must not be settable or leak into payload_json.
    event = _sample(ev.WorkflowCompleted)
    assert "eventType" not in json.loads(event.payload_json())
    assert "event_type" not in ev.WorkflowCompleted.model_fields


def test_registry_has_no_duplicates_and_name_map_round_trips():
    names = [cls.event_type for cls in EVENT_TYPES]
    assert len(names) == len(set(names))
    assert len(set(EVENT_TYPES)) == len(EVENT_TYPES)
    assert list(EVENT_BY_NAME) == names  # same order as the canonical tuple
    for cls in EVENT_TYPES:
        assert EVENT_BY_NAME[cls.event_type] is cls


def test_every_concrete_event_class_in_the_module_is_registered():
    """A public DomainEvent subclass that is not in EVENT_TYPES can be appended but never
    parsed back (and the desktop router would never learn about it)."""
    public = {
        obj
        for name, obj in vars(ev).items()
        if inspect.isclass(obj)
        and issubclass(obj, DomainEvent)
        and obj is not DomainEvent
        and not name.startswith("_")
    }
    assert public - set(EVENT_TYPES) == set()


def test_parse_event_rejects_unknown_types():
    with pytest.raises(ValueError, match="unknown event type"):
        parse_event("NoSuchEvent", "{}")
    # Case matters: the type is an exact identifier.
    with pytest.raises(ValueError):
        parse_event("workflowcompleted", "{}")


def test_parse_event_validates_the_payload():
    with pytest.raises(ValidationError):  # missing workflowId / runId / workflowType
        parse_event("WorkflowCompleted", "{}")
    with pytest.raises(ValidationError):  # not JSON
        parse_event("WorkflowCompleted", "not json")
    good = _sample(ev.DiscoveryRunCompleted)
    bad_status = {**json.loads(good.payload_json()), "status": "exploded"}
    with pytest.raises(ValidationError):
        parse_event("DiscoveryRunCompleted", json.dumps(bad_status))
    wrong_type_count = {**json.loads(good.payload_json()), "jobsNew": "many"}
    with pytest.raises(ValidationError):
        parse_event("DiscoveryRunCompleted", json.dumps(wrong_type_count))


def test_parse_event_reads_camel_case_wire_payloads():
    payload = {
        "discoverWorkflowId": "discover-local",
        "discoverRunId": "run-1",
        "jobId": "job_abc",
        "title": "Engineer",
        "company": "Acme",
        "remote": "remote",
        "sourceFamily": "demo_board",
        "occurredAt": "2024-01-01T00:00:00.000Z",
    }
    event = parse_event("JobDiscovered", json.dumps(payload))
    assert isinstance(event, ev.JobDiscovered)
    assert event.discover_run_id == "run-1"
    assert event.source_family == "demo_board"
    assert event.location is None


def test_occurred_at_defaults_to_a_utc_millisecond_timestamp():
    event = ev.WorkflowCompleted(workflow_id="w", run_id="r", workflow_type="DiscoverWorkflow")
    assert event.occurred_at.endswith("Z")
    assert len(event.occurred_at) == len("2024-01-01T00:00:00.000Z")


def test_events_are_immutable():
    event = _sample(ev.WorkflowCompleted)
    with pytest.raises(ValidationError):
        event.run_id = "other"


# --- catalog rules from the spec -------------------------------------------------------


@pytest.mark.parametrize("name", ["CoverLetterFailed", "StageQueued", "DiscoveryRunProgress"])
def test_catalog_corrections_are_not_registered(name):
    assert name not in EVENT_BY_NAME
    assert not any(cls.__name__ == name for cls in EVENT_TYPES)
    assert not hasattr(ev, name)
    with pytest.raises(ValueError):
        parse_event(name, "{}")


@pytest.mark.parametrize(
    "name",
    [
        "DiscoveryRunStarted",
        "JobDiscovered",
        "DiscoveryRunCompleted",
        "DiscoveryRunFailed",
        "WorkflowStarted",
        "WorkflowCompleted",
        "WorkflowFailed",
        "WorkflowCanceled",
    ],
)
def test_discovery_and_workflow_lifecycle_events_are_registered(name):
    assert name in EVENT_BY_NAME


def test_discovery_run_terminal_statuses_are_bounded():
    completed = get_args(ev.DiscoveryRunCompleted.model_fields["status"].annotation)
    failed = get_args(ev.DiscoveryRunFailed.model_fields["status"].annotation)
    assert set(completed) == {"completed", "completed_with_issues"}
    assert set(failed) == {"failed", "canceled"}


def test_discovery_events_carry_the_exact_execution_identity():
    for cls in (ev.DiscoveryRunStarted, ev.JobDiscovered, ev.DiscoveryRunCompleted,
                ev.DiscoveryRunFailed):
        assert {"discover_workflow_id", "discover_run_id"} <= set(cls.model_fields)
        assert cls.model_fields["discover_run_id"].is_required()
    for cls in (ev.WorkflowStarted, ev.WorkflowCompleted, ev.WorkflowFailed,
                ev.WorkflowCanceled):
        assert {"workflow_id", "run_id", "workflow_type"} <= set(cls.model_fields)
