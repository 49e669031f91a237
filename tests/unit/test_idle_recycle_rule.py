"""The idle-recycle rule: a worker restarts only when nothing at all is open or running,
nothing happened for the quiet period, and the restart gives back enough memory."""

import dataclasses

import pytest

from backend.temporal.loops.recycle_rule import (
    IdleFacts,
    QuietClock,
    RecyclePolicy,
    decide_recycle,
)

POLICY = RecyclePolicy(quiet_s=180, grown_mib=48)
IDLE = IdleFacts(open_workflows=0, open_runs=0, active_stages=0, active_slots=0,
                 quiet_for_s=200, rss_mib=190, ready_rss_mib=95)


def test_idle_quiet_and_grown_may_recycle():
    assert decide_recycle(IDLE, POLICY).may
    assert decide_recycle(IDLE, POLICY).reason == "idle_and_grown"


@pytest.mark.parametrize(("change", "reason"), [
    ({"open_workflows": 1}, "workflow_open"),
    ({"open_workflows": None}, "visibility_unknown"),
    ({"open_runs": 2}, "run_open"),
    ({"active_stages": 1}, "stage_active"),
    ({"active_slots": 1}, "activity_running"),
    ({"quiet_for_s": 179.9}, "not_quiet_long_enough"),
    ({"rss_mib": 142.9}, "not_grown"),
])
def test_anything_open_recent_or_small_refuses(change, reason):
    decision = decide_recycle(dataclasses.replace(IDLE, **change), POLICY)
    assert (decision.may, decision.reason) == (False, reason)


def test_open_work_wins_over_every_other_reason():
    busy = dataclasses.replace(IDLE, open_workflows=1, quiet_for_s=0, rss_mib=0)
    assert decide_recycle(busy, POLICY).reason == "workflow_open"


def test_a_zero_quiet_period_turns_recycling_off():
    assert decide_recycle(IDLE, RecyclePolicy(quiet_s=0)).reason == "disabled"


def test_the_policy_is_off_outside_a_supervisor(monkeypatch):
    monkeypatch.setenv("JOBCTRL_RECYCLE_QUIET_S", "5")
    assert not RecyclePolicy.from_env(supervised=False).enabled
    assert RecyclePolicy.from_env(supervised=True) == RecyclePolicy(quiet_s=5)


def test_the_quiet_clock_restarts_on_a_new_event_or_open_work():
    clock = QuietClock(now=0)
    assert clock.quiet_for(10, last_event_id=7, busy=False) == 0  # first sight of event 7
    assert clock.quiet_for(50, last_event_id=7, busy=False) == 40
    assert clock.quiet_for(60, last_event_id=8, busy=False) == 0  # something happened
    assert clock.quiet_for(90, last_event_id=8, busy=True) == 0   # work is open
    assert clock.quiet_for(100, last_event_id=8, busy=False) == 10
