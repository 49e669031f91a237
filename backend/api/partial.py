"""Request models for partial updates, derived from the model they update.

``PATCH /v1/settings`` and the LLM connection test take *some* settings keys, merged over
the saved ones. Typing the body as a free-form object would let the OpenAPI document allow
what the route refuses (unknown keys, wrong types); writing a second model by hand would
drift from the first. :func:`partial_model` derives it instead: every field of the model,
with its own type, alias, bounds and validators, none required, unknown keys refused.
"""

from __future__ import annotations

from copy import copy
from typing import Any

from pydantic import BaseModel, ConfigDict, create_model
from pydantic.fields import FieldInfo

# Request bodies take the camelCase names their document declares, and nothing else (the
# stored models also read snake_case names, which no document mentions).
REQUEST_CONFIG = ConfigDict(extra="forbid", populate_by_name=False, validate_by_name=False,
                            validate_by_alias=True)


def _drop_default(schema: dict[str, Any]) -> None:
    # A field left out is not set, and not "null" (which the field may refuse): the
    # document shows no default rather than a wrong one.
    schema.pop("default", None)


def _optional(field: FieldInfo) -> FieldInfo:
    """The same field, not required. Only the default changes: a left-out field stays
    unset (``model_dump(exclude_unset=True)`` omits it), so the placeholder default is
    never validated or stored, and an explicit null is refused where the field refuses it."""
    optional = copy(field)
    optional.default = None
    optional.default_factory = None
    optional.json_schema_extra = _drop_default
    return optional


def _replaced(field: FieldInfo) -> FieldInfo:
    """A field whose type the caller replaces: its name and description only (the original
    type's validators belong to the original type)."""
    return FieldInfo(default=None, alias=field.alias, description=field.description,
                     json_schema_extra=_drop_default)


def partial_model(model: type[BaseModel], *, name: str, description: str,
                  nested: dict[str, type[BaseModel]] | None = None) -> type[BaseModel]:
    """A model taking any subset of ``model``'s fields (``nested`` replaces the type of
    the named fields, e.g. by their own partial model). Fields are camelCase on the wire
    only: the snake_case names the document does not declare are refused too."""
    nested = nested or {}
    fields: dict[str, Any] = {
        field_name: (nested[field_name], _replaced(field)) if field_name in nested
        else (field.annotation, _optional(field))
        for field_name, field in model.model_fields.items()
    }
    config = ConfigDict(**{**model.model_config, **REQUEST_CONFIG, "title": name,
                           "json_schema_extra": {"description": description}})
    return create_model(name, __config__=config, **fields)
