"""Provider traversal progress of a broad-board (jobspy) family: one immutable value.

It is observational evidence inside the running family, not a completion authority: it
says how many traversal units (pages, or whole searches when the provider reports no
pages) a provider has completed, how many raw items it has seen, how many jobs it emitted
and whether continuation is known. ``total_units`` is null unless the provider reports it,
and nothing derives a percentage, a remaining-page count or an ETA from a null total.

Only bounded facts: never a cursor, checkpoint, resume token, raw row or message.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from backend.domain.model import CamelModel

PROVIDER_PATTERN = r"^[a-z0-9_]{1,32}$"

Phase = Literal["searching", "paging", "unit_completed", "unit_failed"]
TraversalUnit = Literal["page", "search"]
Continuation = Literal["more", "exhausted", "unknown"]


def continuation_from(has_more: bool | None) -> Continuation:
    """The tri-state: a provider that did not say stays ``unknown``."""
    if has_more is None:
        return "unknown"
    return "more" if has_more else "exhausted"


class ProviderProgress(CamelModel):
    """The latest normalized traversal observation of one provider (frozen)."""

    provider: str = Field(pattern=PROVIDER_PATTERN)
    phase: Phase
    unit: TraversalUnit
    completed_units: int = Field(ge=0)
    total_units: int | None = Field(default=None, ge=0)
    raw_items_seen: int | None = Field(default=None, ge=0)
    emitted_jobs: int = Field(ge=0)
    continuation: Continuation = "unknown"

    @model_validator(mode="after")
    def _consistent(self) -> ProviderProgress:
        if self.total_units is not None and self.completed_units > self.total_units:
            raise ValueError("completedUnits cannot exceed a known totalUnits")
        return self


class StampedProviderProgress(CamelModel):
    """The value as the worker recorded it: bound to the exact Discover workflow id and
    Temporal run id it read from the activity, the family, and the (attempt, sequence)
    that orders observations (a higher pair replaces a lower one, never the reverse)."""

    discover_workflow_id: str = Field(min_length=1, max_length=200)
    discover_run_id: str = Field(min_length=1, max_length=128)
    family: str = Field(min_length=1, max_length=64)
    attempt: int = Field(ge=1)
    sequence: int = Field(ge=0)
    observed_at: str
    progress: ProviderProgress

    def matches(self, discover_workflow_id: str, discover_run_id: str) -> bool:
        return (self.discover_workflow_id, self.discover_run_id) == (
            discover_workflow_id, discover_run_id)
