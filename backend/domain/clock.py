"""UTC timestamps as sortable ISO-8601 strings (millisecond precision, ``Z`` suffix)."""

from __future__ import annotations

from datetime import UTC, date, datetime, tzinfo


def utc_now() -> datetime:
    return datetime.now(UTC)


def to_iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def utc_now_iso() -> str:
    return to_iso(utc_now())


def parse_iso(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def local_zone() -> tzinfo:
    """The machine's time zone: the user's calendar days (follow-ups, moves) are its days."""
    return datetime.now().astimezone().tzinfo or UTC


def local_today(zone: tzinfo, now: datetime | None = None) -> date:
    return (now or utc_now()).astimezone(zone).date()
