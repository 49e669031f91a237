"""Interviews as an iCalendar file (RFC 5545) any calendar app imports. Plain text, no I/O."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from backend.domain.applications import Interview
from backend.domain.clock import parse_iso

PRODUCT_ID = "-//JobCtrl//Interviews//EN"
MAX_LINE_OCTETS = 75


def _escape(text: str) -> str:
    return (text.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,")
            .replace("\r\n", "\\n").replace("\n", "\\n"))


def _fold(line: str) -> list[str]:
    """Lines longer than 75 octets continue on the next line after a space."""
    out: list[str] = []
    current = ""
    for char in line:
        limit = MAX_LINE_OCTETS if not out else MAX_LINE_OCTETS - 1
        if len((current + char).encode("utf-8")) > limit:
            out.append(current)
            current = char
        else:
            current += char
    out.append(current)
    return [out[0], *(" " + rest for rest in out[1:])]


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y%m%dT%H%M%SZ")


def interviews_ics(job_key: str, title: str, company: str, interviews: Iterable[Interview],
                   *, now: datetime) -> str:
    """One VEVENT per interview that is not canceled, in UTC; the UID is stable per
    interview, so importing the file again updates the events instead of doubling them."""
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", f"PRODID:{PRODUCT_ID}", "CALSCALE:GREGORIAN",
             "METHOD:PUBLISH"]
    for interview in interviews:
        if interview.canceled:
            continue
        start = parse_iso(interview.starts_at)
        end = start + timedelta(minutes=interview.duration_minutes)
        lines += ["BEGIN:VEVENT",
                  f"UID:{interview.interview_id}.{job_key}@jobctrl.local",
                  f"DTSTAMP:{_stamp(now)}",
                  f"DTSTART:{_stamp(start)}",
                  f"DTEND:{_stamp(end)}",
                  f"SUMMARY:{_escape(f'Interview (round {interview.round}): {title} at {company}')}"]
        if interview.location:
            lines.append(f"LOCATION:{_escape(interview.location)}")
        if interview.notes:
            lines.append(f"DESCRIPTION:{_escape(interview.notes)}")
        lines.append("END:VEVENT")
    lines.append("END:VCALENDAR")
    return "".join(f"{part}\r\n" for line in lines for part in _fold(line))
