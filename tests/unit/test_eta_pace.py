"""pipeline-eta-v1 and the measured pace: what bench/eta_calibration.py found, as tests.

The recorded cases (``tests/unit/data/eta_recorded/``) are moments of real Discover runs
of the demo board on the 2-core machine, taken by the benchmark: the stage rows still to
do, the 50 most recent successful durations per stage, the rows settled in the pace
windows, the worker's heartbeat slots, what the snapshot showed then, and when the work
actually finished. Stage durations alone priced a job's stages (tenths of a second
offline, about two seconds with the paid stand-in) but not what the whole machine spends
per job, so the range ended minutes before the finish.
"""

from __future__ import annotations

import dataclasses
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from backend.domain.clock import parse_iso, to_iso
from backend.domain.stages import STAGES
from backend.operations.capacity import CapacityFreshness, CapacitySnapshot, stage_slots
from backend.operations.eta import (
    HIGH_CONFIDENCE_PACE_ROWS,
    MIN_PACE_ROWS,
    PACE_WINDOW,
    DurationSample,
    EtaInputs,
    EtaRange,
    EtaWithheld,
    Pace,
    RuntimeCapacity,
    StageDemand,
    Throughput,
    estimate_overall,
    estimate_stage,
)
from backend.operations.snapshot import _pace, eta_capacity

RECORDED = Path(__file__).parent / "data" / "eta_recorded"
NOW = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


# ----------------------------------------------------------------------------- recorded


def recorded(name: str) -> dict:
    return json.loads((RECORDED / f"{name}.json").read_text(encoding="utf-8"))


def throughput(window: dict) -> Throughput:
    return Throughput(settled=window["settled"], window_seconds=window["windowSeconds"])


def recorded_inputs(case: dict) -> EtaInputs:
    now = parse_iso(case["now"])
    capacity = snapshot_capacity(configured=case["heartbeatSlots"], workers=case["workers"])
    return EtaInputs(
        now=now,
        demand=[StageDemand(stage=stage, remaining=case["remaining"][stage]) for stage in STAGES],
        samples=[DurationSample(stage=stage, duration_seconds=seconds, finished_at=parse_iso(at))
                 for stage in STAGES for seconds, at in case["durations"][stage]],
        capacity=dataclasses.replace(eta_capacity(capacity), last_heartbeat_at=now),
        membership_open=case["membershipOpen"],
        last_dispatch_at=now,
        active_in_scope=1,
        pace=Pace(recent=throughput(case["pace"]["recent"]), run=throughput(case["pace"]["run"])),
    )


def seconds_left(case: dict, stage: str) -> float:
    return (parse_iso(case["finishedAt"][stage]) - parse_iso(case["now"])).total_seconds()


@pytest.mark.parametrize("name", ["offline_demo_round2", "paid_demo_round1"])
def test_recorded_runs_the_known_backlog_finishes_inside_the_range(name):
    case = recorded(name)
    left = seconds_left(case, "pdf")
    shown = case["shownThen"]["pdfEta"]
    assert shown["state"] == "available" and shown["highSeconds"] < left  # what users saw
    eta = estimate_stage("pdf", recorded_inputs(case))
    assert isinstance(eta, EtaRange), eta
    assert eta.low_seconds <= left <= eta.high_seconds


@pytest.mark.parametrize("name", ["offline_demo_round2", "paid_demo_round1"])
def test_recorded_runs_stage_durations_alone_end_before_the_finish(name):
    """The pace term is what holds the range open: without it the same inputs still end early."""
    case = recorded(name)
    eta = estimate_stage("pdf", dataclasses.replace(recorded_inputs(case), pace=None))
    assert isinstance(eta, EtaRange)
    assert eta.high_seconds < seconds_left(case, "pdf")


# ----------------------------------------------------------------------------- slots


def snapshot_capacity(*, configured: int | None, workers: int) -> CapacitySnapshot:
    return CapacitySnapshot(
        observed_at="2026-03-02T09:00:00.000Z", task_queue="jobctrl-local",
        freshness=CapacityFreshness(state="fresh", reason="fresh_heartbeat",
                                    newest_heartbeat_at="2026-03-02T09:00:00.000Z",
                                    age_seconds=1.0),
        workers=workers, invalid_workers=0, configured_slots=configured,
        active_slots=0 if configured is not None else None,
        available_slots=configured, active_stage_counts=None, active_items=[],
        active_items_total=0, active_items_truncated=False, duration_summaries={},
        task_queues={},
    )


@pytest.mark.parametrize(("configured", "workers", "stage"), [(12, 1, 8), (24, 2, 16), (5, 1, 1)])
def test_the_eta_divides_stage_work_by_the_preparation_slots_only(configured, workers, stage):
    # A worker's heartbeat counts its 4 Discover/Apply slots, where no stage ever runs.
    capacity = snapshot_capacity(configured=configured, workers=workers)
    assert stage_slots(capacity) == stage
    assert eta_capacity(capacity).configured_slots == stage


def test_unknown_slots_stay_unknown():
    assert stage_slots(snapshot_capacity(configured=None, workers=0)) is None


# ----------------------------------------------------------------------------- pace


def steady(rows_per_stage: int, seconds: float = PACE_WINDOW.total_seconds()) -> Throughput:
    return Throughput(settled={stage: rows_per_stage for stage in STAGES}, window_seconds=seconds)


def pace_inputs(pace: Pace | None, *, remaining: int = 1000, samples: int = 25,
                **overrides) -> EtaInputs:
    base = dict(
        now=NOW,
        demand=[StageDemand(stage=stage, remaining=remaining) for stage in STAGES],
        samples=[DurationSample(stage=stage, duration_seconds=0.05,
                                finished_at=NOW - timedelta(minutes=1 + k))
                 for stage in STAGES for k in range(samples)],
        capacity=RuntimeCapacity(last_heartbeat_at=NOW - timedelta(seconds=1),
                                 configured_slots=8, available_slots=8),
        membership_open=False, last_dispatch_at=NOW, active_in_scope=1, pace=pace,
    )
    base.update(overrides)
    return EtaInputs(**base)


def test_the_range_brackets_the_measured_pace():
    # 5,000 rows at 10 rows a second (2 a stage): 500 s either way; the pace may triple or
    # halve before the end: 166.7 s .. 1000 s, rounded outward to the minute.
    eta = estimate_overall(pace_inputs(Pace(recent=steady(60), run=steady(1200, 600))))
    assert isinstance(eta, EtaRange)
    assert (eta.low_seconds, eta.high_seconds) == (120, 1020)


def test_the_slowest_window_and_stage_set_the_high_end():
    # The run so far went at half the recent pace, and score settled at half the others.
    recent = Throughput(settled={**{stage: 60 for stage in STAGES}, "score": 30},
                        window_seconds=30)
    run = steady(600, 600)  # 1 row a second a stage
    eta = estimate_overall(pace_inputs(Pace(recent=recent, run=run)))
    assert isinstance(eta, EtaRange)
    # slowest: score's 1000 rows at 1 row a second, slowed 2x = 2000 s (-> 2040);
    # quickest: the recent pooled pace, 5000 rows at 9 rows a second, tripled = 185.2 s.
    assert (eta.low_seconds, eta.high_seconds) == (180, 2040)
    assert eta.confidence == "medium"  # recent and run-long pace disagree by more than 1.5x


def test_a_pace_from_a_few_rows_or_seconds_is_not_known_yet():
    for pace in (Pace(recent=steady(1)),  # 5 rows
                 Pace(recent=Throughput(settled={"enrich": 500}, window_seconds=5))):
        eta = estimate_overall(pace_inputs(pace))
        assert isinstance(eta, EtaWithheld)
        assert (eta.state, eta.reason) == ("calibrating", "insufficient_samples")
        assert "pace" in (eta.detail or "")
    enough = Pace(recent=Throughput(settled={"enrich": MIN_PACE_ROWS}, window_seconds=10))
    assert isinstance(estimate_overall(pace_inputs(enough)), EtaRange)


def test_a_stalled_pace_withholds_instead_of_promising_a_minute():
    # Work remains, a dispatch is recent, but nothing settled in the window: unknown.
    stalled = Pace(recent=steady(0), run=steady(400, 600))
    eta = estimate_stage("pdf", pace_inputs(stalled, remaining=2))
    assert isinstance(eta, EtaWithheld) and eta.reason == "insufficient_samples"


@pytest.mark.parametrize(("recent_rows", "run_rows", "confidence"), [
    (HIGH_CONFIDENCE_PACE_ROWS // 5, 20 * HIGH_CONFIDENCE_PACE_ROWS // 5, "high"),
    (HIGH_CONFIDENCE_PACE_ROWS // 5 - 1, 20 * HIGH_CONFIDENCE_PACE_ROWS // 5, "medium"),
])
def test_high_confidence_needs_a_full_window_of_rows(recent_rows, run_rows, confidence):
    pace = Pace(recent=steady(recent_rows), run=steady(run_rows, 600))
    eta = estimate_overall(pace_inputs(pace, remaining=10))
    assert isinstance(eta, EtaRange) and eta.confidence == confidence


def test_a_run_younger_than_the_window_is_at_most_medium():
    eta = estimate_overall(pace_inputs(Pace(recent=steady(40, 20), run=steady(40, 20))))
    assert isinstance(eta, EtaRange) and eta.confidence == "medium"


def test_without_pace_evidence_the_durations_decide_as_before():
    with_none = estimate_overall(pace_inputs(None, remaining=10))
    assert isinstance(with_none, EtaRange) and with_none.high_seconds == 60


def test_negative_throughput_is_refused():
    with pytest.raises(ValueError):
        Throughput(settled={"enrich": -1}, window_seconds=30)
    with pytest.raises(ValueError):
        Throughput(settled={"enrich": 1}, window_seconds=-1)


# ----------------------------------------------------------------------------- the reader


async def seed_settled(db, rows: list[tuple[str, str, str | None]]) -> None:
    """(stage, status, finished_at) rows, one job each."""
    async with db.transaction() as conn:
        for number, (stage, status, finished_at) in enumerate(rows):
            job_id = f"job-{number:04d}"
            await conn.execute(
                "INSERT INTO jobs (job_id, tenant_id, canonical_url, url, title, company,"
                " first_source, first_seen_at, last_seen_at) VALUES (?, 'local', ?, ?, 't',"
                " 'c', 'demo', ?, ?)", (job_id, f"u{number}", f"u{number}", at(0), at(0)))
            await conn.execute(
                "INSERT INTO job_stage_states (tenant_id, job_id, stage, status, finished_at,"
                " updated_at) VALUES ('local', ?, ?, ?, ?, ?)",
                (job_id, stage, status, finished_at, finished_at or at(0)))


def at(seconds: float) -> str:
    """The stored timestamp ``seconds`` after NOW."""
    return to_iso(NOW + timedelta(seconds=seconds))


async def test_the_pace_counts_settled_rows_of_the_execution_windows_only(db):
    await seed_settled(db, [
        ("enrich", "succeeded", at(-120)),   # before the execution started
        ("enrich", "succeeded", at(-10)),    # in the run window only
        ("score", "skipped", at(50)),        # recent
        ("tailor", "blocked", at(55)),       # recent
        ("cover", "failed", at(58)),         # recent
        ("pdf", "exhausted", at(59)),        # recent
        ("pdf", "canceled", at(59)),         # canceled: no work was done
        ("pdf", "running", None),            # not settled
        ("pdf", "pending", None),
    ])
    pace = await _pace(db, NOW + timedelta(seconds=60), execution_started_at=at(-30))
    assert pace.recent.window_seconds == PACE_WINDOW.total_seconds()
    assert pace.recent.settled == {"enrich": 0, "score": 1, "tailor": 1, "cover": 1, "pdf": 1}
    assert pace.run.window_seconds == 90  # since the execution started, not before
    assert pace.run.settled == {"enrich": 1, "score": 1, "tailor": 1, "cover": 1, "pdf": 1}
