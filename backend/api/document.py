"""Corrections to the generated OpenAPI document, so it says what the routes take."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any


def _walk(node: Any) -> Iterator[dict]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def require_discriminator_tags(document: dict) -> dict:
    """Mark every discriminator's property as required in each schema it maps to.

    pydantic reads a tagged union's tag before any default applies, so a body without it
    is refused even where the variant gives the tag a default (``DemoBoardSource.kind``);
    the generated schema still calls the tag optional. OpenAPI expects the discriminator
    property to be present in the payload, so the document says so."""
    schemas = document.get("components", {}).get("schemas", {})
    prefix = "#/components/schemas/"
    for node in list(_walk(document)):
        discriminator = node.get("discriminator")
        if not isinstance(discriminator, dict) or "propertyName" not in discriminator:
            continue
        tag = discriminator["propertyName"]
        for ref in set(discriminator.get("mapping", {}).values()):
            target = schemas.get(ref.removeprefix(prefix)) if ref.startswith(prefix) else None
            if target is not None and tag in target.get("properties", {}):
                required = target.setdefault("required", [])
                if tag not in required:
                    required.insert(0, tag)
    return document
