"""pipeline-eta-v1: every state on purpose, the range shape, rounding, sample selection, honesty."""

from __future__ import annotations

import heapq
import math
import random
from collections import deque
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import TypeAdapter

from backend.domain.stages import STAGES
from backend.operations.eta import (
    ETA_CAVEAT,
    ETA_ESTIMATOR_VERSION,
    REASON_STATE,
    WITHHOLDING_PRECEDENCE,
    DurationSample,
    Eta,
    EtaInputs,
    EtaRange,
    EtaWithheld,
    RuntimeCapacity,
    StageDemand,
    estimate_overall,
    estimate_source_families,
    estimate_stage,
    estimate_stages,
    percentile,
    round_outward,
    select_samples,
    telemetry_fresh,
)

NOW = datetime(2025, 3, 14, 12, 0, tzinfo=UTC)
# Constant per-stage durations make p50 == p90 and every expected number exact.
DURATION = {"enrich": 60.0, "score": 120.0, "tailor": 300.0, "cover": 180.0, "pdf": 30.0}
PATH = sum(DURATION.values())  # 690 s


def samples(stage: str, count: int, seconds: float | None = None, *, start_hours: float = 1.0,
            canonical: bool = True, succeeded: bool = True) -> list[DurationSample]:
    value = DURATION.get(stage, 600.0) if seconds is None else seconds
    return [
        DurationSample(stage=stage, duration_seconds=value,
                       finished_at=NOW - timedelta(hours=start_hours + k),
                       canonical=canonical, succeeded=succeeded)
        for k in range(count)
    ]


def all_samples(count: int = 25) -> list[DurationSample]:
    return [s for stage in STAGES for s in samples(stage, count)]


def fresh(slots: int = 4, available: int | None = None) -> RuntimeCapacity:
    return RuntimeCapacity(
        last_heartbeat_at=NOW - timedelta(seconds=2), configured_slots=slots,
        available_slots=slots if available is None else available,
    )


def inputs(**overrides) -> EtaInputs:
    base = dict(
        now=NOW,
        demand=[StageDemand(stage=stage, remaining=10) for stage in STAGES],
        samples=all_samples(),
        capacity=fresh(),
        membership_open=False,
        last_dispatch_at=NOW - timedelta(seconds=30),
    )
    base.update(overrides)
    return EtaInputs(**base)


def assert_withheld(eta, state: str, reason: str) -> EtaWithheld:
    assert isinstance(eta, EtaWithheld), eta
    assert (eta.state, eta.reason) == (state, reason)
    return eta


# ----------------------------------------------------------------------------- available


def test_available_range_shape_and_wire_format():
    eta = estimate_overall(inputs())
    assert isinstance(eta, EtaRange)
    # 10 jobs through every stage on 4 slots: 10 * 690 / 4 = 1725 s at p50 and p90 alike;
    # the last-wave bound is (ceil(10 / 4) - 1) * 690 + 690 = 2070 s.
    assert (eta.low_seconds, eta.high_seconds) == (1680, 2100)
    assert eta.confidence == "high"
    assert eta.basis == "stage_durations"
    assert eta.sample_size == 25
    assert eta.computed_at == "2025-03-14T12:00:00.000Z"
    assert eta.caveat == ETA_CAVEAT == "An operational estimate, not a completion promise."
    assert ETA_ESTIMATOR_VERSION == "pipeline-eta-v1"
    wire = eta.model_dump(by_alias=True, mode="json")
    assert set(wire) == {"state", "lowSeconds", "highSeconds", "confidence", "basis", "sampleSize",
                         "computedAt", "caveat"}
    assert wire["state"] == "available"
    adapter = TypeAdapter(Eta)
    assert adapter.validate_python(wire) == eta
    paused = adapter.validate_python({"state": "paused", "reason": "no_dispatch"})
    assert isinstance(paused, EtaWithheld)


def test_high_prices_outside_contention_and_retries_at_p90():
    demand = [StageDemand(stage=stage, remaining=40) for stage in STAGES]
    base = estimate_overall(inputs(demand=demand))
    assert isinstance(base, EtaRange)
    assert base.low_seconds == math.floor(40 * PATH / 4 / 300) * 300  # 6900 s -> 6900
    assert base.high_seconds == 6900
    contended = [
        StageDemand(stage="tailor", remaining=40, retry_demand=4, outside_queued=6, outside_running=2)
        if stage == "tailor" else StageDemand(stage=stage, remaining=40)
        for stage in STAGES
    ]
    eta = estimate_overall(inputs(demand=contended))
    assert isinstance(eta, EtaRange)
    assert eta.low_seconds == base.low_seconds  # contention never moves the low end
    # (40 * 690 + (4 + 8) * 300) / 4 = 7800 s
    assert eta.high_seconds == 7800
    assert eta.confidence == "medium"  # >= 20 samples but outside contention


def test_dormant_outside_rows_are_not_contention():
    dormant = [StageDemand(stage=stage, remaining=10, outside_dormant=500) for stage in STAGES]
    assert estimate_overall(inputs(demand=dormant)) == estimate_overall(inputs())


def test_outside_contention_on_a_stage_without_samples_is_not_guessed():
    demand = [StageDemand(stage="enrich", remaining=3), StageDemand(stage="pdf", outside_running=2)]
    eta = estimate_stage("enrich", inputs(demand=demand, samples=samples("enrich", 30)))
    eta = assert_withheld(eta, "calibrating", "insufficient_samples")
    assert eta.stages == ("pdf",)


def test_longest_path_dominates_when_slots_are_plentiful():
    spread = [s for stage in STAGES for s in samples(stage, 10, DURATION[stage])
              + samples(stage, 10, 2 * DURATION[stage], start_hours=20)]
    eta = estimate_overall(inputs(capacity=fresh(slots=100), samples=spread,
                                  demand=[StageDemand(stage=s, remaining=3) for s in STAGES]))
    assert isinstance(eta, EtaRange)
    p50 = sum(percentile([d, 2 * d] * 10, 50) for d in DURATION.values())  # 1.5 * 690 = 1035
    p90 = sum(percentile([d, 2 * d] * 10, 90) for d in DURATION.values())  # 2 * 690 = 1380
    assert (eta.low_seconds, eta.high_seconds) == round_outward(p50, p90) == (1020, 1380)
    assert eta.confidence == "high" and eta.sample_size == 20


def test_jobs_part_way_through_only_walk_the_stages_they_still_need():
    demand = [StageDemand(stage="cover", remaining=2), StageDemand(stage="pdf", remaining=2)]
    eta = estimate_overall(inputs(demand=demand, capacity=fresh(slots=8)))
    assert isinstance(eta, EtaRange)
    assert (eta.low_seconds, eta.high_seconds) == (180, 240)  # cover + pdf = 210 s


# ----------------------------------------------------------------------------- samples


def test_four_samples_calibrate_and_five_are_enough():
    four = [s for stage in STAGES for s in samples(stage, 5 if stage != "score" else 4)]
    eta = assert_withheld(estimate_overall(inputs(samples=four)), "calibrating", "insufficient_samples")
    assert eta.stages == ("score",)
    assert "score" in (eta.detail or "")
    five = estimate_overall(inputs(samples=all_samples(5)))
    assert isinstance(five, EtaRange)
    assert five.confidence == "low" and five.sample_size == 5


@pytest.mark.parametrize(("count", "confidence"), [(9, "low"), (10, "medium"), (19, "medium"), (20, "high")])
def test_confidence_levels(count, confidence):
    eta = estimate_overall(inputs(samples=all_samples(count)))
    assert isinstance(eta, EtaRange)
    assert (eta.confidence, eta.sample_size) == (confidence, count)


def test_sample_size_is_the_smallest_priced_stage():
    mixed = [s for stage in STAGES for s in samples(stage, 12 if stage == "cover" else 40)]
    eta = estimate_overall(inputs(samples=mixed))
    assert isinstance(eta, EtaRange)
    assert (eta.sample_size, eta.confidence) == (12, "medium")


def test_fourteen_day_window_and_fifty_most_recent_samples():
    window = [s for stage in STAGES for s in samples(stage, 50)]
    # Older than 14 days (however many) and more than 50: all priced at an absurd 10 hours.
    too_old = [s for stage in STAGES for s in samples(stage, 30, 36_000.0, start_hours=14 * 24 + 1)]
    beyond_cap = [s for stage in STAGES for s in samples(stage, 30, 36_000.0, start_hours=60)]
    eta = estimate_overall(inputs(samples=window + too_old + beyond_cap))
    assert eta == estimate_overall(inputs(samples=window))
    assert isinstance(eta, EtaRange) and eta.sample_size == 50
    picked = select_samples(window + beyond_cap, "tailor", NOW)
    assert picked.count == 50 and set(picked.durations) == {300.0}
    # Old samples do not count toward the minimum either.
    stale_only = [s for stage in STAGES for s in samples(stage, 4) + samples(stage, 20, start_hours=15 * 24)]
    assert_withheld(estimate_overall(inputs(samples=stale_only)), "calibrating", "insufficient_samples")


def test_failed_samples_are_ignored():
    failed = [s for stage in STAGES for s in samples(stage, 20, succeeded=False)]
    eta = estimate_overall(inputs(samples=all_samples(4) + failed))
    assert_withheld(eta, "calibrating", "insufficient_samples")


def test_operational_attempt_metrics_are_fallback_evidence_only():
    attempts = [s for stage in STAGES for s in samples(stage, 20, 5_000.0, canonical=False)]
    # Enough canonical samples: attempt metrics are ignored entirely.
    assert estimate_overall(inputs(samples=all_samples(25) + attempts)) == estimate_overall(inputs())
    # Short of canonical samples: attempt metrics top the stage up and the basis says so.
    short = [s for stage in STAGES for s in samples(stage, 25 if stage != "pdf" else 2)]
    pdf_attempts = samples("pdf", 6, 30.0, canonical=False)
    eta = estimate_overall(inputs(samples=short + pdf_attempts))
    assert isinstance(eta, EtaRange)
    assert eta.basis == "stage_durations_with_attempt_fallback"
    assert eta.sample_size == 8


# ----------------------------------------------------------------------------- withheld states


def test_membership_open_withholds_overall_but_not_per_stage_ranges():
    open_inputs = inputs(membership_open=True)
    eta = assert_withheld(estimate_overall(open_inputs), "calibrating", "membership_open")
    assert eta.detail
    stage = estimate_stage("score", open_inputs)
    assert isinstance(stage, EtaRange)
    # Score waits on enrich: (10 * 60 + 10 * 120) / 4 = 450 s at the low end.
    assert stage.low_seconds == 420
    ranges = estimate_stages(open_inputs)
    assert all(isinstance(value, EtaRange) for value in ranges.values())
    assert ranges["enrich"].low_seconds <= ranges["pdf"].low_seconds


def test_a_stage_with_no_known_backlog_waits_for_membership_then_reports_no_work():
    demand = [StageDemand(stage=stage, remaining=0 if stage == "enrich" else 4) for stage in STAGES]
    assert_withheld(estimate_stage("enrich", inputs(demand=demand, membership_open=True)),
                    "calibrating", "membership_open")
    assert_withheld(estimate_stage("enrich", inputs(demand=demand)), "unavailable", "no_work")
    assert isinstance(estimate_stage("score", inputs(demand=demand)), EtaRange)


def test_worker_unavailable():
    for capacity in (
        RuntimeCapacity(last_heartbeat_at=None, configured_slots=4),
        RuntimeCapacity(last_heartbeat_at=NOW, configured_slots=0),
        RuntimeCapacity(freshness="unavailable", last_heartbeat_at=NOW, configured_slots=4),
    ):
        for eta in (estimate_overall(inputs(capacity=capacity)),
                    estimate_stage("tailor", inputs(capacity=capacity))):
            assert_withheld(eta, "unavailable", "worker_unavailable")


def test_telemetry_stale_after_45_seconds():
    at_45 = RuntimeCapacity(last_heartbeat_at=NOW - timedelta(seconds=45), configured_slots=4)
    at_46 = RuntimeCapacity(last_heartbeat_at=NOW - timedelta(seconds=46), configured_slots=4)
    assert telemetry_fresh(at_45.last_heartbeat_at, NOW) and not telemetry_fresh(at_46.last_heartbeat_at, NOW)
    assert isinstance(estimate_overall(inputs(capacity=at_45)), EtaRange)
    assert_withheld(estimate_overall(inputs(capacity=at_46)), "stale", "telemetry_stale")
    assert_withheld(estimate_stage("pdf", inputs(capacity=at_46)), "stale", "telemetry_stale")
    reader_says_stale = RuntimeCapacity(freshness="stale", last_heartbeat_at=NOW, configured_slots=4)
    assert_withheld(estimate_overall(inputs(capacity=reader_says_stale)), "stale", "telemetry_stale")


def test_budget_exceeded_pauses():
    assert_withheld(estimate_overall(inputs(budget_blocked=True)), "paused", "budget_exceeded")
    assert_withheld(estimate_stage("cover", inputs(budget_blocked=True)), "paused", "budget_exceeded")


@pytest.mark.parametrize("flag", ["retry_demand_unbounded", "inventory_truncated", "queued_work_unbounded"])
def test_contention_unbounded(flag):
    assert_withheld(estimate_overall(inputs(**{flag: True})), "unavailable", "contention_unbounded")
    assert_withheld(estimate_stage("enrich", inputs(**{flag: True})), "unavailable", "contention_unbounded")


def test_no_dispatch_pauses_until_dispatch_is_observed():
    quiet = inputs(last_dispatch_at=NOW - timedelta(minutes=6))
    eta = assert_withheld(estimate_overall(quiet), "paused", "no_dispatch")
    assert eta.detail
    assert_withheld(estimate_overall(inputs(last_dispatch_at=None)), "paused", "no_dispatch")
    assert isinstance(estimate_overall(inputs(last_dispatch_at=NOW - timedelta(minutes=4))), EtaRange)
    assert isinstance(estimate_overall(inputs(last_dispatch_at=None, active_in_scope=1)), EtaRange)


def test_no_work_only_for_exactly_zero_demand_with_ready_coverage_and_closed_membership():
    empty = [StageDemand(stage=stage, outside_running=3) for stage in STAGES]
    assert_withheld(estimate_overall(inputs(demand=empty)), "unavailable", "no_work")
    assert REASON_STATE["no_work"] == "unavailable"
    # Outside contention or a stopped worker do not hide that nothing remains.
    assert_withheld(estimate_overall(inputs(demand=empty, capacity=RuntimeCapacity(last_heartbeat_at=None))),
                    "unavailable", "no_work")
    assert_withheld(estimate_overall(inputs(demand=empty, membership_open=True)),
                    "calibrating", "membership_open")
    assert_withheld(estimate_overall(inputs(demand=empty, coverage_ready=False)),
                    "calibrating", "coverage_not_ready")
    # One owed retry is demand: it gets a range (0 .. one score at p90), not no_work.
    retry = estimate_overall(inputs(demand=[StageDemand(stage="score", retry_demand=1)]))
    assert isinstance(retry, EtaRange) and (retry.low_seconds, retry.high_seconds) == (0, 120)
    assert_withheld(estimate_overall(inputs(demand=[], retry_demand_unbounded=True)),
                    "unavailable", "contention_unbounded")


def test_coverage_not_ready_hides_selected_scope_estimates():
    assert_withheld(estimate_overall(inputs(coverage_ready=False)), "calibrating", "coverage_not_ready")
    assert_withheld(estimate_stage("score", inputs(coverage_ready=False, membership_open=True)),
                    "calibrating", "coverage_not_ready")


def test_withholding_precedence_is_deterministic():
    assert WITHHOLDING_PRECEDENCE == (
        "no_work", "worker_unavailable", "telemetry_stale", "coverage_not_ready", "budget_exceeded",
        "contention_unbounded", "no_dispatch", "membership_open", "insufficient_samples",
    )
    conditions = {
        "worker_unavailable": dict(capacity=RuntimeCapacity(last_heartbeat_at=None, configured_slots=4)),
        "telemetry_stale": dict(capacity=RuntimeCapacity(last_heartbeat_at=NOW - timedelta(minutes=2),
                                                         configured_slots=4)),
        "coverage_not_ready": dict(coverage_ready=False),
        "budget_exceeded": dict(budget_blocked=True),
        "contention_unbounded": dict(inventory_truncated=True),
        "no_dispatch": dict(last_dispatch_at=None),
        "membership_open": dict(membership_open=True),
        "insufficient_samples": dict(samples=all_samples(4)),
    }
    active = dict(conditions)
    # Both runtime conditions set capacity; apply them weakest-first so the strongest wins.
    for reason in WITHHOLDING_PRECEDENCE[1:]:
        merged: dict = {}
        for name in reversed(WITHHOLDING_PRECEDENCE[1:]):
            if name in active:
                merged.update(active[name])
        eta = assert_withheld(estimate_overall(inputs(**merged)), REASON_STATE[reason], reason)
        assert eta.reason == reason
        del active[reason]
    assert isinstance(estimate_overall(inputs()), EtaRange)


def test_inputs_reject_duplicate_or_negative_demand():
    with pytest.raises(ValueError, match="twice"):
        inputs(demand=[StageDemand(stage="score", remaining=1), StageDemand(stage="score", remaining=2)])
    with pytest.raises(ValueError, match="negative"):
        inputs(demand=[StageDemand(stage="score", remaining=-1)])


# ----------------------------------------------------------------------------- helpers


def test_round_outward_minutes_under_an_hour_five_minutes_above():
    assert round_outward(59.5 * 60, 59.5 * 60) == (59 * 60, 60 * 60)
    assert round_outward(61 * 60, 61 * 60) == (60 * 60, 65 * 60)
    assert round_outward(61, 119) == (60, 120)  # low floors, high ceils
    assert round_outward(10, 10) == (0, 60)
    assert round_outward(120, 3900) == (120, 3900)  # exact steps stay put
    assert round_outward(0.1 + 0.2 + 119.7, 120.00000000001) == (120, 120)  # float noise
    assert round_outward(3599, 3601) == (3540, 3900)
    with pytest.raises(ValueError):
        round_outward(10, 5)


def test_percentile_interpolates_between_ranks():
    values = [10.0, 20.0, 30.0, 40.0, 50.0]
    assert percentile(values, 50) == 30.0
    assert percentile(values, 90) == pytest.approx(46.0)
    assert percentile([7.0], 90) == 7.0
    assert percentile(list(reversed(values)), 0) == 10.0
    with pytest.raises(ValueError):
        percentile([], 50)


# ----------------------------------------------------------------------------- source families


def family_samples(count: int, seconds: float = 600.0) -> list[DurationSample]:
    return samples("source_family", count, seconds)


def test_source_families_use_observed_concurrency_not_configured_slots():
    eta = estimate_source_families(6, family_samples(25), 2, fresh(slots=8, available=4), now=NOW,
                                   last_dispatch_at=NOW, membership_open=True)
    assert isinstance(eta, EtaRange)
    assert (eta.low_seconds, eta.high_seconds) == (1800, 1800)  # 6 families / 2 lanes * 600 s
    assert (eta.basis, eta.confidence, eta.sample_size) == ("source_family_durations", "high", 25)
    contended = estimate_source_families(6, family_samples(25), 2, fresh(slots=8, available=4), now=NOW,
                                         outside_source_contention=1)
    assert isinstance(contended, EtaRange)
    assert (contended.high_seconds, contended.confidence) == (2400, "medium")


def test_source_families_withheld_when_sweep_demand_exceeds_spare_capacity():
    capacity = fresh(slots=8, available=2)
    fits = estimate_source_families(3, family_samples(10), 1, capacity, now=NOW, sweep_demand=4,
                                    sweep_slots_held=2)
    assert isinstance(fits, EtaRange)
    eta = estimate_source_families(3, family_samples(10), 1, capacity, now=NOW, sweep_demand=5,
                                   sweep_slots_held=2)
    eta = assert_withheld(eta, "unavailable", "contention_unbounded")
    assert "Sweep demand" in (eta.detail or "")


def test_source_family_states():
    cap = fresh()
    assert_withheld(estimate_source_families(3, family_samples(4), 1, cap, now=NOW),
                    "calibrating", "insufficient_samples")
    assert isinstance(estimate_source_families(3, family_samples(5), 1, cap, now=NOW), EtaRange)
    assert_withheld(estimate_source_families(0, [], 0, cap, now=NOW), "unavailable", "no_work")
    assert_withheld(estimate_source_families(0, [], 0, cap, now=NOW, membership_open=True),
                    "calibrating", "membership_open")
    assert_withheld(estimate_source_families(3, family_samples(10), 0, cap, now=NOW),
                    "paused", "no_dispatch")
    # A recent dispatch with no family running right now still prices one lane.
    one_lane = estimate_source_families(3, family_samples(10), 0, cap, now=NOW, last_dispatch_at=NOW)
    assert isinstance(one_lane, EtaRange) and one_lane.high_seconds == 1800
    assert_withheld(estimate_source_families(3, family_samples(10), 1, RuntimeCapacity(), now=NOW),
                    "unavailable", "worker_unavailable")
    stale = RuntimeCapacity(last_heartbeat_at=NOW - timedelta(seconds=50), configured_slots=4)
    assert_withheld(estimate_source_families(3, family_samples(10), 1, stale, now=NOW),
                    "stale", "telemetry_stale")
    truncated = estimate_source_families(3, family_samples(10), 1, cap, now=NOW, inventory_truncated=True)
    assert_withheld(truncated, "unavailable", "contention_unbounded")
    assert_withheld(estimate_source_families(3, family_samples(10), 1, cap, now=NOW, budget_blocked=True),
                    "paused", "budget_exceeded")


# ----------------------------------------------------------------------------- honesty


def _fifo_activities(starts: list[int], slots: int, draw) -> float:
    """Temporal-like: every stage is one activity task, FIFO on the queue, one slot each."""
    queue = deque((job, stage) for job, stage in enumerate(starts))
    running: list[tuple[float, int, int]] = []
    clock = finished = 0.0
    while queue or running:
        while queue and len(running) < slots:
            job, stage = queue.popleft()
            heapq.heappush(running, (clock + draw(stage), job, stage))
        clock, job, stage = heapq.heappop(running)
        finished = max(finished, clock)
        if stage + 1 < len(STAGES):
            queue.append((job, stage + 1))
    return finished


def _workflow_per_slot(starts: list[int], slots: int, draw) -> float:
    """Each job's preparation workflow holds one slot through its remaining stages."""
    free = [0.0] * slots
    finished = 0.0
    for first in starts:
        start = heapq.heappop(free)
        done = start + sum(draw(stage) for stage in range(first, len(STAGES)))
        heapq.heappush(free, done)
        finished = max(finished, done)
    return finished


@pytest.mark.parametrize("schedule", [_fifo_activities, _workflow_per_slot])
def test_range_contains_simulated_completion_in_most_trials(schedule):
    rng = random.Random(20250314)
    trials, inside = 300, 0
    for _ in range(trials):
        medians = [rng.uniform(20, 600) for _ in STAGES]
        sigma = rng.uniform(0.2, 0.7)

        def draw(stage: int, medians=medians, sigma=sigma) -> float:
            return rng.lognormvariate(math.log(medians[stage]), sigma)

        per_stage = rng.choice([5, 10, 20, 50])
        history = [
            DurationSample(stage=name, duration_seconds=draw(index),
                           finished_at=NOW - timedelta(hours=k + 1))
            for index, name in enumerate(STAGES) for k in range(per_stage)
        ]
        jobs, slots = rng.randint(1, 80), rng.randint(1, 12)
        starts = [rng.choice([0, 0, 0, 1, 2, 3, 4]) for _ in range(jobs)]
        demand = [StageDemand(stage=name, remaining=sum(first <= index for first in starts))
                  for index, name in enumerate(STAGES)]
        eta = estimate_overall(inputs(demand=demand, samples=history, capacity=fresh(slots)))
        assert isinstance(eta, EtaRange)
        realized = schedule(starts, slots, draw)
        inside += eta.low_seconds <= realized <= eta.high_seconds
    assert inside / trials >= 0.8, inside / trials
