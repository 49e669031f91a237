"""The discovery schedule setting: cron validation at save time, and the pieces of the
Temporal Schedule we build from it (no services)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from temporalio.client import ScheduleActionStartWorkflow, ScheduleOverlapPolicy

from backend.api.routers.schedule import _reason
from backend.api.routers.settings import merge_patch
from backend.config import AppSettings, DiscoveryScheduleSettings, validate_cron
from backend.temporal.schedule import (
    SCHEDULE_ID,
    ScheduleStatus,
    build_schedule,
    cron_of_note,
    schedule_note,
)


def test_the_schedule_is_off_by_default_with_a_weekday_morning_cron():
    settings = AppSettings()
    assert settings.discovery_schedule == DiscoveryScheduleSettings(enabled=False,
                                                                    cron="0 8 * * 1-5")


@pytest.mark.parametrize("cron, normalized", [
    ("0 8 * * 1-5", "0 8 * * 1-5"),
    ("  */5   * * * *  ", "*/5 * * * *"),
    ("30 7 1,15 JAN-JUN MON-FRI", "30 7 1,15 JAN-JUN MON-FRI"),
    ("* * * * *", "* * * * *"),
])
def test_valid_crons_are_accepted_and_normalized(cron, normalized):
    assert validate_cron(cron) == normalized


@pytest.mark.parametrize("cron, fragment", [
    ("0 8 * *", "five fields"),
    ("0 8 * * 1-5 2026", "five fields"),
    ("", "five fields"),
    ("@daily", "five fields"),
    ("61 * * * *", "Bad minute"),
    ("0 25 * * *", "Bad hour"),
    ("0 0 31 2 *", "Bad day-of-month"),   # can never fire
    ("0 8 L * *", "not supported"),        # an extension Temporal's parser may not share
    ("0 8 ? * MON", "not supported"),
    ("0 8 * * MON#2", "not supported"),
])
def test_invalid_crons_are_refused_with_a_message_naming_the_problem(cron, fragment):
    with pytest.raises(ValidationError) as caught:
        AppSettings.model_validate({"discoverySchedule": {"enabled": True, "cron": cron}})
    problem = caught.value.errors()[0]
    assert problem["loc"] == ("discoverySchedule", "cron")
    assert fragment in problem["msg"]


def test_a_partial_schedule_patch_keeps_the_other_key():
    current = {"discoverySchedule": {"enabled": False, "cron": "*/10 * * * *"}}
    merged = merge_patch(current, {"discoverySchedule": {"enabled": True}})
    assert merged["discoverySchedule"] == {"enabled": True, "cron": "*/10 * * * *"}


def test_the_schedule_starts_discover_local_and_skips_overlaps():
    schedule = build_schedule("*/5 * * * *")
    action = schedule.action
    assert isinstance(action, ScheduleActionStartWorkflow)
    assert action.workflow == "DiscoverWorkflow"
    assert action.id == "discover-local"
    assert action.task_queue == "jobctrl-local"
    assert schedule.spec.cron_expressions == ["*/5 * * * *"]
    assert schedule.policy.overlap == ScheduleOverlapPolicy.SKIP
    assert cron_of_note(schedule.state.note) == "*/5 * * * *"
    assert SCHEDULE_ID == "jobctrl-discovery-local"


def test_a_foreign_note_names_no_cron():
    assert cron_of_note(None) is None
    assert cron_of_note("paused by hand") is None
    assert cron_of_note(schedule_note("0 8 * * 1-5")) == "0 8 * * 1-5"


def test_the_view_says_why_temporal_differs_from_the_setting():
    active = ScheduleStatus("active", next_run_times=[], paused=False, configured_cron="0 8 * * *")
    assert _reason(True, "0 8 * * *", active) is None
    assert _reason(True, "0 9 * * *", active) == "not_reconciled"
    assert _reason(False, "0 8 * * *", active) == "not_reconciled"
    assert _reason(True, "0 8 * * *", ScheduleStatus("absent", next_run_times=[])) == "not_reconciled"
    assert _reason(False, "0 8 * * *", ScheduleStatus("absent", next_run_times=[])) is None
    unknown = ScheduleStatus("unknown", "temporal_unavailable")
    assert _reason(True, "0 8 * * *", unknown) == "temporal_unavailable"
    paused = ScheduleStatus("active", next_run_times=[], paused=True, configured_cron="0 8 * * *")
    assert _reason(True, "0 8 * * *", paused) == "paused"
