"""The discovery schedule as a person picks it ("Weekdays at 08:00", their local time) and
as the API keeps it (a five-field cron evaluated in UTC). Qt-free.

A cron in UTC fires at one UTC time all year. The picker converts with the UTC offset the
user's zone has *now* (``at``), so what it shows is what the schedule does now; where
clocks change, ``clock_change_note`` says what the same schedule does in the other part of
the year instead of pretending it follows the clock. A cron the picker cannot express
(several times a day, days of the month, steps…) is a ``custom`` schedule: it is shown
with its next runs in local time and saved back unchanged, never rewritten.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo

WEEKDAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")  # Python's weekday()
EVERY_DAY = frozenset(range(7))
WEEKDAYS = frozenset(range(5))
CRON_DAY_NAMES = {"SUN": 0, "MON": 1, "TUE": 2, "WED": 3, "THU": 4, "FRI": 5, "SAT": 6}
MINUTES_PER_DAY = 24 * 60
MINUTES_PER_WEEK = 7 * MINUTES_PER_DAY
_NUMBER = re.compile(r"^[0-9]{1,2}$")
_DAY_ITEM = re.compile(r"^([0-9]|[A-Za-z]{3})(?:-([0-9]|[A-Za-z]{3}))?$")


@dataclass(frozen=True)
class SchedulePick:
    """Local days (0 = Monday … 6 = Sunday) and a local time of day."""

    days: frozenset[int]
    hour: int
    minute: int

    def __post_init__(self):
        if not self.days or not self.days <= EVERY_DAY:
            raise ValueError("pick at least one day")
        if not (0 <= self.hour < 24 and 0 <= self.minute < 60):
            raise ValueError("a time of day is 00:00 to 23:59")

    @property
    def kind(self) -> str:
        """``every_day``, ``weekdays`` or ``chosen``."""
        if self.days == EVERY_DAY:
            return "every_day"
        return "weekdays" if self.days == WEEKDAYS else "chosen"


def utc_offset_minutes(zone: tzinfo | None = None, at: datetime | None = None) -> int:
    """The zone's offset from UTC at ``at`` (default: now); ``None`` is the system zone."""
    moment = (at or datetime.now(UTC)).astimezone(UTC)
    local = moment.astimezone(zone) if zone is not None else moment.astimezone()
    return int(local.utcoffset().total_seconds() // 60)


def _shift(day: int, hour: int, minute: int, by_minutes: int) -> tuple[int, int, int]:
    """A (weekday, hour, minute) moved by ``by_minutes`` around the week."""
    total = (day * MINUTES_PER_DAY + hour * 60 + minute + by_minutes) % MINUTES_PER_WEEK
    return total // MINUTES_PER_DAY, total % MINUTES_PER_DAY // 60, total % 60


# -- pick -> cron --------------------------------------------------------------------------------


def cron_from_pick(pick: SchedulePick, zone: tzinfo | None = None,
                   at: datetime | None = None) -> str:
    """``SchedulePick(weekdays, 8, 0)`` in UTC+2 -> ``"0 6 * * 1-5"``."""
    offset = utc_offset_minutes(zone, at)
    shifted = [_shift(day, pick.hour, pick.minute, -offset) for day in sorted(pick.days)]
    _day, hour, minute = shifted[0]  # one offset: every day lands on the same UTC time
    cron_days = {(day + 1) % 7 for day, _h, _m in shifted}  # cron: 0 = Sunday
    return f"{minute} {hour} * * {_cron_days(cron_days)}"


def _cron_days(days: set[int]) -> str:
    if len(days) == 7:
        return "*"
    ordered = sorted(days)
    runs: list[list[int]] = []
    for day in ordered:
        if runs and day == runs[-1][-1] + 1:
            runs[-1].append(day)
        else:
            runs.append([day])
    return ",".join(f"{run[0]}-{run[-1]}" if len(run) >= 3 else ",".join(map(str, run))
                    for run in runs)


# -- cron -> pick --------------------------------------------------------------------------------


def pick_from_cron(cron: str, zone: tzinfo | None = None,
                   at: datetime | None = None) -> SchedulePick | None:
    """The local pick a UTC cron means now, or None when the picker cannot express it."""
    fields = (cron or "").split()
    if len(fields) != 5:
        return None
    minute, hour, day_of_month, month, day_of_week = fields
    if not (_NUMBER.match(minute) and _NUMBER.match(hour)) or (day_of_month, month) != ("*", "*"):
        return None
    minute_value, hour_value = int(minute), int(hour)
    cron_days = _parse_cron_days(day_of_week)
    if cron_days is None or minute_value > 59 or hour_value > 23:
        return None
    offset = utc_offset_minutes(zone, at)
    utc_days = {(day - 1) % 7 for day in cron_days}  # to Python's 0 = Monday
    local = [_shift(day, hour_value, minute_value, offset) for day in sorted(utc_days)]
    return SchedulePick(frozenset(day for day, _h, _m in local), local[0][1], local[0][2])


def _parse_cron_days(field: str) -> set[int] | None:
    """``"1-5"``, ``"MON,WED,FRI"``, ``"*"`` -> cron days (0 = Sunday); None for steps
    and anything else the picker does not speak."""
    if field == "*":
        return set(range(7))
    days: set[int] = set()
    for item in field.split(","):
        match = _DAY_ITEM.match(item)
        if match is None:
            return None
        first, last = (_cron_day(part) for part in (match.group(1), match.group(2) or match.group(1)))
        if first is None or last is None or first > last:
            return None
        days.update(day % 7 for day in range(first, last + 1))  # 7 is Sunday too
    return days


def _cron_day(text: str) -> int | None:
    if text.isdigit():
        value = int(text)
        return value if value <= 7 else None
    return CRON_DAY_NAMES.get(text.upper())


# -- words ---------------------------------------------------------------------------------------


def describe_pick(pick: SchedulePick) -> str:
    """"Weekdays at 08:00", "Every day at 18:30", "Mon, Wed and Fri at 07:15"."""
    at = f"at {pick.hour:02d}:{pick.minute:02d}"
    if pick.kind == "every_day":
        return f"Every day {at}"
    if pick.kind == "weekdays":
        return f"Weekdays {at}"
    names = [WEEKDAY_NAMES[day] for day in sorted(pick.days)]
    days = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return f"{days} {at}"


def next_runs(cron: str, count: int = 3, zone: tzinfo | None = None,
              at: datetime | None = None) -> list[datetime] | None:
    """The next ``count`` runs in local time, or None for a cron that cannot be read."""
    from cronsim import CronSim, CronSimError

    start = (at or datetime.now(UTC)).astimezone(UTC).replace(tzinfo=None)
    try:
        runs = CronSim(cron, start)
        upcoming = [next(runs) for _ in range(count)]
    except (CronSimError, StopIteration, ValueError):
        return None
    return [run.replace(tzinfo=UTC).astimezone(zone) if zone is not None
            else run.replace(tzinfo=UTC).astimezone() for run in upcoming]


def describe_custom(cron: str, zone: tzinfo | None = None, at: datetime | None = None) -> str:
    """"Custom schedule: next runs Mon 06 Jan 09:00, Mon 06 Jan 09:05 and … (your time)"."""
    runs = next_runs(cron, 3, zone, at)
    if not runs:
        return "Custom schedule (JobCtrl cannot tell when it runs)"
    times = [f"{run:%a %d %b %H:%M}" for run in runs]
    listed = f"{', '.join(times[:-1])} and {times[-1]}" if len(times) > 1 else times[0]
    return f"Custom schedule: next runs {listed} (your time)"


def clock_change_note(pick: SchedulePick, zone: tzinfo | None = None,
                      at: datetime | None = None) -> str | None:
    """Where the clocks change within the year, what the same schedule does then."""
    moment = (at or datetime.now(UTC)).astimezone(UTC)
    now = utc_offset_minutes(zone, moment)
    other = next((offset for offset in (utc_offset_minutes(zone, moment + timedelta(days=d))
                                        for d in range(30, 366, 30)) if offset != now), None)
    if other is None:
        return None
    _day, hour, minute = _shift(0, pick.hour, pick.minute, other - now)
    return (f"When the clocks change, it runs at {hour:02d}:{minute:02d} your time instead "
            "(the schedule keeps one fixed time).")
