"""Parameter types whose declared range is the range the routes can really serve, so an
out-of-range value is a 422 from validation instead of an overflow deep in SQLite or
``datetime``."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Annotated, Any

from pydantic import AfterValidator, AwareDatetime, BeforeValidator

# SQLite INTEGER is a signed 64-bit value: ids and cursors above it cannot be bound.
SQLITE_MAX_INT = 2**63 - 1

_ISO_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}")


def _iso_text_only(value: Any) -> Any:
    """pydantic reads numbers (and numeric strings like ``0.5``) as Unix times; a
    parameter declared ``date-time`` takes RFC 3339 text and nothing else."""
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or not _ISO_DATE_TIME.match(value):
        raise ValueError("must be an RFC 3339 date-time with an offset, e.g. 2026-01-31T09:00:00Z")
    return value


def _representable_in_utc(moment: datetime) -> datetime:
    """Year 1 at +09:02 is year 0 in UTC, which ``datetime`` cannot hold: reject it here
    rather than overflow when the bound is converted."""
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise ValueError("is outside the range of UTC date-times (years 1 to 9999)") from None


UtcDateTime = Annotated[AwareDatetime, BeforeValidator(_iso_text_only),
                        AfterValidator(_representable_in_utc)]
