"""A valid sample payload for every registered event type, built from its model, so a
newly registered type is covered by the desktop tests without editing them."""

from __future__ import annotations

import types
import typing
from typing import Any, Literal

from pydantic import BaseModel

from backend.domain.events import EVENT_TYPES, DomainEvent
from desktop.client import StreamedEvent


def _sample(annotation: Any, name: str) -> Any:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is Literal:
        return args[0]
    if origin in (typing.Union, types.UnionType):
        concrete = [arg for arg in args if arg is not type(None)]
        return _sample(concrete[0], name)
    if origin is list:
        return [_sample(args[0], name)] if args else []
    if origin is dict:
        return {}
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return {
            field.alias or field_name: _sample(field.annotation, field_name)
            for field_name, field in annotation.model_fields.items()
        }
    if annotation is bool:
        return True
    if annotation is int:
        return 3
    if annotation is str:
        return f"sample-{name}"
    raise TypeError(f"no sample for {name}: {annotation!r}")


def sample_payload(cls: type[DomainEvent]) -> dict[str, Any]:
    payload = _sample(cls, cls.event_type)
    cls.model_validate(payload)  # the sample must be a valid event
    return payload


def sample_events() -> list[StreamedEvent]:
    return [
        StreamedEvent(index, cls.event_type, sample_payload(cls))
        for index, cls in enumerate(EVENT_TYPES, start=1)
    ]
