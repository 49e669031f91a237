"""The discovery schedule picked in local time and kept as a UTC cron: round trips in zones
without clock changes, honesty where clocks change, and crons the picker cannot express
kept as custom schedules. Plain functions, fixed zones and instants."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from desktop.presenters.schedule import (
    EVERY_DAY,
    WEEKDAYS,
    SchedulePick,
    clock_change_note,
    cron_from_pick,
    describe_custom,
    describe_pick,
    next_runs,
    pick_from_cron,
)

KOLKATA = ZoneInfo("Asia/Kolkata")       # UTC+05:30, no clock changes
SAO_PAULO = ZoneInfo("America/Sao_Paulo")  # UTC-03:00, no clock changes since 2019
BERLIN = ZoneInfo("Europe/Berlin")       # UTC+1 in winter, UTC+2 in summer
WINTER = datetime(2027, 1, 12, 12, 0, tzinfo=UTC)
SUMMER = datetime(2027, 7, 12, 12, 0, tzinfo=UTC)
MON_WED_FRI = frozenset({0, 2, 4})


@pytest.mark.parametrize(("zone", "pick", "cron"), [
    (UTC, SchedulePick(WEEKDAYS, 8, 0), "0 8 * * 1-5"),
    (KOLKATA, SchedulePick(WEEKDAYS, 8, 0), "30 2 * * 1-5"),
    # 03:00 in Kolkata is 21:30 UTC the day before: Monday–Friday become Sunday–Thursday.
    (KOLKATA, SchedulePick(WEEKDAYS, 3, 0), "30 21 * * 0-4"),
    (SAO_PAULO, SchedulePick(WEEKDAYS, 22, 15), "15 1 * * 2-6"),  # Friday night is Saturday
    (SAO_PAULO, SchedulePick(EVERY_DAY, 23, 0), "0 2 * * *"),
    (SAO_PAULO, SchedulePick(frozenset({5, 6}), 23, 0), "0 2 * * 0,1"),  # Sat+Sun -> Sun+Mon
    (timezone(timedelta(hours=-5)), SchedulePick(MON_WED_FRI, 7, 45), "45 12 * * 1,3,5"),
])
def test_picks_round_trip_through_the_utc_cron(zone, pick, cron):
    assert cron_from_pick(pick, zone, WINTER) == cron
    assert pick_from_cron(cron, zone, WINTER) == pick
    assert cron_from_pick(pick, zone, SUMMER) == cron  # no clock change: the same all year


def test_every_local_pick_round_trips_in_a_half_hour_zone():
    for hour in range(24):
        for days in (EVERY_DAY, WEEKDAYS, MON_WED_FRI, frozenset({6})):
            pick = SchedulePick(days, hour, 30)
            assert pick_from_cron(cron_from_pick(pick, KOLKATA, WINTER), KOLKATA, WINTER) == pick


def test_where_clocks_change_the_pick_shows_what_the_cron_does_now():
    weekday_eight = SchedulePick(WEEKDAYS, 8, 0)
    assert cron_from_pick(weekday_eight, BERLIN, WINTER) == "0 7 * * 1-5"
    assert cron_from_pick(weekday_eight, BERLIN, SUMMER) == "0 6 * * 1-5"
    # The saved winter cron is 09:00 in summer: shown as it is, never silently "08:00".
    assert pick_from_cron("0 7 * * 1-5", BERLIN, SUMMER) == SchedulePick(WEEKDAYS, 9, 0)
    assert clock_change_note(weekday_eight, BERLIN, WINTER) == (
        "When the clocks change, it runs at 09:00 your time instead "
        "(the schedule keeps one fixed time).")
    assert clock_change_note(SchedulePick(WEEKDAYS, 8, 0), BERLIN, SUMMER).startswith(
        "When the clocks change, it runs at 07:00")
    assert clock_change_note(weekday_eight, KOLKATA, WINTER) is None


@pytest.mark.parametrize("cron", [
    "*/5 * * * *",        # every five minutes
    "0 8,18 * * *",       # twice a day
    "0 8 1 * *",          # the first of each month
    "0 8 * 1 *",          # January only
    "0 8 * * 1-5/2",      # steps in the days
    "0 8-10 * * *",       # a range of hours
    "0 8 * * L",          # not a day at all
])
def test_crons_the_picker_cannot_express_are_custom(cron):
    assert pick_from_cron(cron, KOLKATA, WINTER) is None


def test_day_names_and_sunday_as_seven_are_read():
    assert pick_from_cron("0 8 * * MON-FRI", UTC, WINTER) == SchedulePick(WEEKDAYS, 8, 0)
    assert pick_from_cron("0 8 * * sat,7", UTC, WINTER) == SchedulePick(frozenset({5, 6}), 8, 0)
    assert pick_from_cron("0 8 * * *", UTC, WINTER) == SchedulePick(EVERY_DAY, 8, 0)


def test_a_custom_schedule_is_described_by_its_next_local_runs():
    monday_noon_utc = datetime(2027, 1, 11, 12, 0, tzinfo=UTC)
    assert describe_custom("0 8,18 * * *", KOLKATA, monday_noon_utc) == (
        "Custom schedule: next runs Mon 11 Jan 23:30, Tue 12 Jan 13:30 and "
        "Tue 12 Jan 23:30 (your time)")
    runs = next_runs("*/5 * * * *", 2, UTC, monday_noon_utc)
    assert [run.minute for run in runs] == [5, 10]
    assert describe_custom("not a cron", UTC, monday_noon_utc) == \
        "Custom schedule (JobCtrl cannot tell when it runs)"


def test_picks_in_words():
    assert describe_pick(SchedulePick(WEEKDAYS, 8, 0)) == "Weekdays at 08:00"
    assert describe_pick(SchedulePick(EVERY_DAY, 18, 30)) == "Every day at 18:30"
    assert describe_pick(SchedulePick(MON_WED_FRI, 7, 5)) == "Mon, Wed and Fri at 07:05"
    assert describe_pick(SchedulePick(frozenset({6}), 7, 5)) == "Sun at 07:05"
    with pytest.raises(ValueError):
        SchedulePick(frozenset(), 8, 0)
    with pytest.raises(ValueError):
        SchedulePick(WEEKDAYS, 24, 0)
