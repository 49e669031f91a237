"""Due follow-ups in the tray and one notification per local day: kept across a restart of
the app and across the UTC day boundary in a non-UTC time zone (Los Angeles)."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from desktop.follow_ups import FollowUpReminders, ReminderLog
from desktop.notifications import Notifier, follow_up_message
from desktop.shell import ShellController
from desktop.tray import SpendTray

pytestmark = pytest.mark.desktop

LOS_ANGELES = ZoneInfo("America/Los_Angeles")


class Clock:
    def __init__(self, iso: str):
        self.now = datetime.fromisoformat(iso).replace(tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def set(self, iso: str) -> None:
        self.now = datetime.fromisoformat(iso).replace(tzinfo=UTC)


def reminders(app_dir, clock) -> tuple[FollowUpReminders, list[int]]:
    controller = ShellController(app_dir)
    made = FollowUpReminders(controller, app_dir, clock=clock, zone=LOS_ANGELES)
    announced: list[int] = []
    made.announce.connect(announced.append)
    return made, announced


def test_one_notification_per_local_day_across_a_restart_and_the_utc_boundary(qapp, tmp_path):
    # 16 March, 09:00 in Los Angeles (16:00 UTC): two follow-ups are due.
    clock = Clock("2026-03-16T16:00:00")
    first, announced = reminders(tmp_path, clock)
    first.show_count(2)
    first.show_count(3)  # a refetch the same day says nothing new
    assert announced == [2]
    # UTC turns to the 17th at 17:00 in Los Angeles; the user's day is still the 16th,
    # and the app restarted in between: still quiet.
    clock.set("2026-03-17T01:00:00")
    restarted, announced_again = reminders(tmp_path, clock)
    restarted.show_count(3)
    assert announced_again == []
    assert ReminderLog(tmp_path).last_day().isoformat() == "2026-03-16"
    # Local midnight (07:00 UTC): a new day, one more notification.
    clock.set("2026-03-17T07:00:00")
    restarted.show_count(1)
    restarted.show_count(1)
    assert announced_again == [1]


def test_nothing_due_is_never_announced_and_does_not_use_up_the_day(qapp, tmp_path):
    clock = Clock("2026-03-16T16:00:00")
    made, announced = reminders(tmp_path, clock)
    made.show_count(0)
    assert announced == [] and ReminderLog(tmp_path).last_day() is None
    made.show_count(1)
    assert announced == [1]


def test_an_unreadable_log_means_one_more_notification_not_a_crash(qapp, tmp_path):
    (tmp_path / "reminders.json").write_text("{broken", encoding="utf-8")
    made, announced = reminders(tmp_path, Clock("2026-03-16T16:00:00"))
    made.show_count(2)
    assert announced == [2]


def test_the_tray_entry_and_the_notification_say_it_plainly(qapp, tmp_path):
    controller = ShellController(tmp_path)
    tray = SpendTray(controller)
    assert tray.follow_ups_action.text() == "No follow-ups due"
    assert not tray.follow_ups_action.isEnabled()
    opened: list[bool] = []
    tray.applications_requested.connect(lambda: opened.append(True))
    tray.show_follow_ups(2)
    assert tray.follow_ups_action.text() == "2 follow-ups due"
    tray.follow_ups_action.trigger()
    assert opened == [True]
    notifier = Notifier(controller, tray.status)
    notifier.announce_follow_ups(1)
    assert notifier.history == [("Time to follow up",
                                 "1 follow-up due. Open Applications to see them.")]
    assert follow_up_message(3)[1].startswith("3 follow-ups due.")
