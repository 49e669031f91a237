"""pipeline-eta-v1: a conservative, withholdable ETA for the operations snapshot.

Pure domain logic. The operations snapshot reader gathers the inputs (canonical stage
rows, pipeline-step projections, heartbeats, task-queue observations, budget state) and
calls :func:`estimate_overall`, :func:`estimate_stage` and :func:`estimate_source_families`.
Nothing here touches the database, Temporal or Qt.

Evidence
    Successful canonical stage or pipeline-step durations (``DurationSample.canonical``).
    Operational-attempt metrics are fallback evidence only: they are used for a stage
    only when its canonical samples fall short of the minimum. Per stage: samples that
    finished within the last 14 days, the 50 most recent, at least 5 for every stage the
    estimate has to price (scoped remaining work, scoped retries, live outside contention).

Range (stages run enrich -> score -> tailor -> cover -> pdf for every job)::

    low  = max(sum(remaining * p50) / slots, longest remaining path at p50)
    high = max((sum(remaining * p90) + sum((outside + retries) * p90)) / slots,
               longest remaining path at p90,
               last-wave bound,
               low)

    The last-wave bound, ``(ceil(jobs / slots) - 1) * full path p90 + target path p90``
    with ``jobs`` the largest per-stage backlog, covers the quantisation the throughput
    term misses when the backlog is only a little larger than the slot count. It never
    lowers the range; with plentiful slots it equals the longest path.

    ``slots`` is the activity slots the fresh workers give the preparation stages (their
    Discover / Apply slots excluded: backend/operations/capacity.stage_slots).

Measured pace (``EtaInputs.pace``)
    Stage durations price only the activities' own run time. What a job costs the whole
    machine (Temporal dispatch and workflow tasks, the non-stage activities, the database,
    a busy CPU) is seen in how fast stage rows settle: offline, a job's five stages run for
    tenths of a second while the machine finishes about one job a second. So both ends
    also take the time to drain at the pace measured over the trailing 30 s and over the
    run so far (both starting no earlier than the execution)::

        low  = max(low,  quickest pace figure / PACE_SPEEDUP)
        high = max(high, slowest pace figure * PACE_SLOWDOWN)

    with a pooled figure (rows / rows settled per second: the target's own chain for the
    quick one, every row that holds a slot before it for the slow one) and a per-stage one
    (the slowest stage of the chain at its own settle rate). The factors, 3 and 2, are
    what bench/eta_calibration.py measured the pace to swing within one run on 2 cores.
    Fewer than 10 rows settled, or less than 10 s of window, is ``insufficient_samples``.

Both ends are rounded outward: to the minute under an hour, to 5 minutes from an hour up
(low floors, high ceils). Confidence is ``high`` at >= 20 samples for every priced stage
with no live outside contention and a steady pace (a full window with >= 50 settled rows,
the run-long pace within 1.5x of the recent one), ``medium`` at >= 10, else ``low``.

Withholding precedence (first match wins; deterministic for every estimate kind):

    1. no_work              (unavailable) coverage ready, membership closed, demand exactly 0
    2. worker_unavailable   (unavailable) no running worker heartbeat, or no configured slots
    3. telemetry_stale      (stale)       newest heartbeat older than 45 s
    4. coverage_not_ready   (calibrating) projection coverage is not ``ready``
    5. budget_exceeded      (paused)      the scope's work is budget-blocked
    6. contention_unbounded (unavailable) unbounded retries, truncated inventory, unbounded
                                          queued work, or (source families) sweep demand
                                          exceeding spare capacity
    7. no_dispatch          (paused)      work remains but no recent dispatch was observed
    8. membership_open      (calibrating) overall ETA while execution membership is open
                                          (jobs can still join: a source is still
                                          running, or the backlog sweep has not linked
                                          its cohort and an outside job could be swept
                                          in; backend/operations/phase.membership_open);
                                          per-stage / source-family estimates only when
                                          their known scoped backlog is zero
    9. insufficient_samples (calibrating) a priced stage has fewer than 5 samples, or the
                                          pace is not measurable yet (or has stalled)

An available range is an operational estimate, not a completion promise.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Final, Literal, get_args

from pydantic import Field

from backend.domain.clock import to_iso
from backend.domain.model import CamelModel
from backend.domain.stages import STAGES, Stage

ETA_ESTIMATOR_VERSION: Final = "pipeline-eta-v1"
ETA_CAVEAT: Final = "An operational estimate, not a completion promise."

SAMPLE_WINDOW: Final = timedelta(days=14)
MAX_SAMPLES_PER_STAGE: Final = 50
MIN_SAMPLES_PER_STAGE: Final = 5
MEDIUM_CONFIDENCE_SAMPLES: Final = 10
HIGH_CONFIDENCE_SAMPLES: Final = 20
WORKER_STALE_AFTER: Final = timedelta(seconds=45)
# The measured pace: the trailing window, the longest run-long window, and the least
# evidence a number needs.
PACE_WINDOW: Final = timedelta(seconds=30)
RUN_PACE_WINDOW: Final = timedelta(minutes=10)
MIN_PACE_WINDOW: Final = timedelta(seconds=10)
MIN_PACE_ROWS: Final = 10
MIN_STAGE_PACE_ROWS: Final = 20  # a stage's own drain rate needs this many of its rows
# Full-window pace with this many settled rows can back a high-confidence range.
HIGH_CONFIDENCE_PACE_ROWS: Final = 50
# How far the pace may swing before the work is done (calibrated with
# bench/eta_calibration.py): the low end assumes it speeds up by PACE_SPEEDUP, the high
# end that it slows down by PACE_SLOWDOWN. The speed-up is the larger one since the
# likeliest fits are prepared first: the costly rows (Tailor, Cover, PDF) settle early
# and the board's below-threshold tail (Enrich, Score, then three skipped rows a job)
# settles faster, rows per second, than anything before it.
PACE_SPEEDUP: Final = 3.0
PACE_SLOWDOWN: Final = 2.0
# A run-long pace within this factor of the recent one counts as steady (high confidence).
PACE_AGREEMENT: Final = 1.5
DISPATCH_RECENCY: Final = timedelta(minutes=5)

# The sample key for recent whole-family source durations.
SOURCE_FAMILY_STAGE: Final = "source_family"

_HOUR: Final = 3600
_MINUTE_STEP: Final = 60
_FIVE_MINUTE_STEP: Final = 300

EtaState = Literal["available", "calibrating", "paused", "stale", "unavailable"]
WithheldState = Literal["calibrating", "paused", "stale", "unavailable"]
EtaReason = Literal[  # in withholding precedence order (WITHHOLDING_PRECEDENCE)
    "no_work",
    "worker_unavailable",
    "telemetry_stale",
    "coverage_not_ready",
    "budget_exceeded",
    "contention_unbounded",
    "no_dispatch",
    "membership_open",
    "insufficient_samples",
]
EtaConfidence = Literal["high", "medium", "low"]
EtaBasis = Literal["stage_durations", "stage_durations_with_attempt_fallback", "source_family_durations"]

# Withholding precedence, first match wins: EtaReason lists the reasons in that order.
WITHHOLDING_PRECEDENCE: Final[tuple[EtaReason, ...]] = get_args(EtaReason)
# The state each reason reports.
REASON_STATE: Final[Mapping[EtaReason, WithheldState]] = {
    "no_work": "unavailable",
    "worker_unavailable": "unavailable",
    "telemetry_stale": "stale",
    "coverage_not_ready": "calibrating",
    "budget_exceeded": "paused",
    "contention_unbounded": "unavailable",
    "no_dispatch": "paused",
    "membership_open": "calibrating",
    "insufficient_samples": "calibrating",
}


# --------------------------------------------------------------------------- outputs


class EtaRange(CamelModel):
    """A numeric range: ``{state: "available", lowSeconds, highSeconds, ...}``."""

    state: Literal["available"] = "available"
    low_seconds: int
    high_seconds: int
    confidence: EtaConfidence
    basis: EtaBasis
    sample_size: int
    computed_at: str
    caveat: str = ETA_CAVEAT


class EtaWithheld(CamelModel):
    """No number: ``{state, reason, detail?, stages?}``; ``stages`` lists the stages short of samples."""

    state: WithheldState
    reason: EtaReason
    detail: str | None = None
    stages: tuple[str, ...] | None = None


Eta = Annotated[EtaRange | EtaWithheld, Field(discriminator="state")]


def withheld(
    reason: EtaReason, detail: str | None = None, *, stages: Sequence[str] | None = None
) -> EtaWithheld:
    return EtaWithheld(
        state=REASON_STATE[reason], reason=reason, detail=detail,
        stages=tuple(stages) if stages is not None else None,
    )


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True, kw_only=True)
class DurationSample:
    """One successful duration. ``stage`` is a Stage name or ``SOURCE_FAMILY_STAGE``.

    ``canonical`` is True for canonical stage / pipeline-step durations and False for
    operational-attempt metrics (fallback evidence only). Unsuccessful samples are ignored.
    """

    stage: str
    duration_seconds: float
    finished_at: datetime
    canonical: bool = True
    succeeded: bool = True


@dataclass(frozen=True, kw_only=True)
class StageDemand:
    """What remains for one stage.

    ``remaining`` counts items in the estimate's scope that still need this stage.
    ``retry_demand`` counts bounded extra attempts the scope still owes this stage.
    ``outside_queued`` / ``outside_running`` are global rows outside the selected execution
    whose canonical state is queued or running (or that inventory / the task queue
    observes). ``outside_dormant`` rows are recorded for completeness and never count as
    live contention.
    """

    stage: Stage
    remaining: int = 0
    retry_demand: int = 0
    outside_queued: int = 0
    outside_running: int = 0
    outside_dormant: int = 0

    @property
    def outside_live(self) -> int:
        return self.outside_queued + self.outside_running

    @property
    def scoped(self) -> int:
        return self.remaining + self.retry_demand


CapacityFreshnessState = Literal["fresh", "stale", "unavailable"]


@dataclass(frozen=True, kw_only=True)
class RuntimeCapacity:
    """Worker capacity on the selected task queue.

    ``freshness``, when given, is the capacity reader's verdict and is authoritative
    (``unavailable`` -> worker_unavailable, ``stale`` -> telemetry_stale). Without it the
    verdict is derived from ``last_heartbeat_at``, the newest heartbeat of a running worker:
    None is unavailable, older than 45 s is stale. ``configured_slots`` /
    ``available_slots`` are summed over the fresh workers; fresh with no configured slot
    counts as worker_unavailable.
    """

    last_heartbeat_at: datetime | None = None
    freshness: CapacityFreshnessState | None = None
    configured_slots: int = 0
    available_slots: int = 0

    def freshness_at(self, now: datetime) -> CapacityFreshnessState:
        if self.freshness is not None:
            return self.freshness
        if self.last_heartbeat_at is None:
            return "unavailable"
        return "fresh" if telemetry_fresh(self.last_heartbeat_at, now) else "stale"


@dataclass(frozen=True, kw_only=True)
class Throughput:
    """What the worker pool actually finished lately: per stage, the stage rows (any scope)
    that reached a final state (succeeded, skipped, blocked, failed or exhausted; never
    canceled) during the trailing ``window_seconds``.

    It is the measured pace of the whole machine (Temporal dispatch, workflow tasks, the
    non-stage activities, the database, a busy CPU), which stage durations alone do not
    see: offline, a job's stages run for tenths of a second while the job takes seconds.
    """

    settled: Mapping[str, int]
    window_seconds: float

    def __post_init__(self) -> None:
        if self.window_seconds < 0 or any(count < 0 for count in self.settled.values()):
            raise ValueError("negative throughput")

    @property
    def total(self) -> int:
        return sum(self.settled.values())

    @property
    def measurable(self) -> bool:
        return (self.window_seconds >= MIN_PACE_WINDOW.total_seconds()
                and self.total >= MIN_PACE_ROWS)

    @property
    def rows_per_second(self) -> float:
        return self.total / self.window_seconds


@dataclass(frozen=True, kw_only=True)
class Pace:
    """The measured pace over two windows: the trailing ``recent`` one (PACE_WINDOW) and
    the ``run`` so far (since the selected execution started, at most RUN_PACE_WINDOW).
    Both start no earlier than the execution. Where they disagree the pace is swinging,
    and the range widens to hold both."""

    recent: Throughput
    run: Throughput | None = None

    @property
    def measurable(self) -> bool:
        return self.recent.measurable

    def windows(self) -> tuple[Throughput, ...]:
        if self.run is not None and self.run.measurable:
            return (self.recent, self.run)
        return (self.recent,)


@dataclass(frozen=True, kw_only=True)
class EtaInputs:
    """Everything :func:`estimate_overall` and :func:`estimate_stage` need.

    ``demand`` may omit stages (they count as zero); a stage may appear at most once.
    ``last_dispatch_at`` is the newest observed dispatch for the scope (an activity start
    or a task-queue dispatch); ``active_in_scope`` counts the scope's activities running now.
    ``coverage_ready`` is the selected execution's projection coverage being ``ready``.
    ``pace`` is the measured pace; None (a caller without that evidence) prices stage
    durations alone.
    """

    now: datetime
    demand: Sequence[StageDemand]
    samples: Sequence[DurationSample]
    capacity: RuntimeCapacity
    membership_open: bool
    coverage_ready: bool = True
    budget_blocked: bool = False
    retry_demand_unbounded: bool = False
    inventory_truncated: bool = False
    queued_work_unbounded: bool = False
    last_dispatch_at: datetime | None = None
    active_in_scope: int = 0
    pace: Pace | None = None

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for row in self.demand:
            if row.stage not in STAGES:
                raise ValueError(f"unknown stage {row.stage!r}")
            if row.stage in seen:
                raise ValueError(f"stage {row.stage!r} appears twice in demand")
            seen.add(row.stage)
            if min(row.remaining, row.retry_demand, row.outside_queued, row.outside_running,
                   row.outside_dormant) < 0:
                raise ValueError(f"negative demand for stage {row.stage!r}")

    def demand_for(self, stage: Stage) -> StageDemand:
        for row in self.demand:
            if row.stage == stage:
                return row
        return StageDemand(stage=stage)


# --------------------------------------------------------------------------- helpers


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100) with linear interpolation between closest ranks."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError("q must be within 0..100")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    below = math.floor(rank)
    above = math.ceil(rank)
    return ordered[below] + (ordered[above] - ordered[below]) * (rank - below)


def _step(seconds: float) -> int:
    return _MINUTE_STEP if seconds < _HOUR else _FIVE_MINUTE_STEP


def round_outward(low: float, high: float) -> tuple[int, int]:
    """Floor ``low`` and ceil ``high``: to the minute under an hour, to 5 minutes from an hour."""
    if low < 0 or high < low:
        raise ValueError("need 0 <= low <= high")
    low_step, high_step = _step(low), _step(high)
    # Round the quotient first so float noise (120.0000000001 s) does not add a whole step.
    return (
        math.floor(round(low / low_step, 9)) * low_step,
        math.ceil(round(high / high_step, 9)) * high_step,
    )


def telemetry_fresh(last_heartbeat_at: datetime | None, now: datetime) -> bool:
    """A worker counts as stale once 45 s pass without a heartbeat."""
    return last_heartbeat_at is not None and now - last_heartbeat_at <= WORKER_STALE_AFTER


def dispatch_recent(last_dispatch_at: datetime | None, active: int, now: datetime) -> bool:
    return active > 0 or (last_dispatch_at is not None and now - last_dispatch_at <= DISPATCH_RECENCY)


@dataclass(frozen=True)
class StageSamples:
    """The selected durations for one stage (most recent first)."""

    stage: str
    durations: tuple[float, ...]
    fallback: bool

    @property
    def count(self) -> int:
        return len(self.durations)

    @property
    def p50(self) -> float:
        return percentile(self.durations, 50)

    @property
    def p90(self) -> float:
        return percentile(self.durations, 90)


def select_samples(samples: Iterable[DurationSample], stage: str, now: datetime) -> StageSamples:
    """Successful samples of ``stage`` finished in the last 14 days, the 50 most recent.

    Canonical durations come first; operational-attempt metrics top the set up only when
    the canonical ones fall short of the 5-sample minimum.
    """
    cutoff = now - SAMPLE_WINDOW
    canonical: list[DurationSample] = []
    attempts: list[DurationSample] = []
    for sample in samples:
        if sample.stage != stage or not sample.succeeded or sample.finished_at < cutoff:
            continue
        if sample.duration_seconds < 0 or not math.isfinite(sample.duration_seconds):
            continue
        (canonical if sample.canonical else attempts).append(sample)
    canonical.sort(key=lambda s: s.finished_at, reverse=True)
    chosen = canonical[:MAX_SAMPLES_PER_STAGE]
    fallback = False
    if len(chosen) < MIN_SAMPLES_PER_STAGE and attempts:
        attempts.sort(key=lambda s: s.finished_at, reverse=True)
        chosen += attempts[: MAX_SAMPLES_PER_STAGE - len(chosen)]
        fallback = True
    return StageSamples(stage, tuple(s.duration_seconds for s in chosen), fallback)


def _confidence(sample_size: int, contended: bool, pace: Pace | None = None) -> EtaConfidence:
    """By the samples, capped by the pace evidence: ``high`` needs a full recent window
    with HIGH_CONFIDENCE_PACE_ROWS rows and a run-long pace within PACE_AGREEMENT of it."""
    if sample_size >= HIGH_CONFIDENCE_SAMPLES and not contended and _steady(pace):
        return "high"
    if sample_size >= MEDIUM_CONFIDENCE_SAMPLES:
        return "medium"
    return "low"


def _steady(pace: Pace | None) -> bool:
    if pace is None:
        return True
    recent = pace.recent
    if recent.window_seconds < PACE_WINDOW.total_seconds() or recent.total < HIGH_CONFIDENCE_PACE_ROWS:
        return False
    rates = [window.rows_per_second for window in pace.windows()]
    return max(rates) <= min(rates) * PACE_AGREEMENT


def _available(
    low: float, high: float, *, sample_size: int, contended: bool, basis: EtaBasis, now: datetime,
    pace: Pace | None = None,
) -> EtaRange:
    low_r, high_r = round_outward(low, max(high, low))
    return EtaRange(
        low_seconds=low_r, high_seconds=high_r,
        confidence=_confidence(sample_size, contended, pace),
        basis=basis, sample_size=sample_size, computed_at=to_iso(now),
    )


def _runtime_gate(capacity: RuntimeCapacity, now: datetime) -> EtaWithheld | None:
    freshness = capacity.freshness_at(now)
    if freshness == "unavailable" or (freshness == "fresh" and capacity.configured_slots <= 0):
        return withheld("worker_unavailable", "No running worker with activity slots is heartbeating.")
    if freshness == "stale":
        return withheld(
            "telemetry_stale",
            f"No worker heartbeat in the last {int(WORKER_STALE_AFTER.total_seconds())} s.",
        )
    return None


# --------------------------------------------------------------------------- stage estimates


def _gate_stages(inputs: EtaInputs, *, target: Stage | None) -> EtaWithheld | None:
    """Steps 1-8 of the precedence for the overall (target None) or one stage's estimate."""
    if target is None:
        scope_demand = sum(row.scoped for row in inputs.demand)
    else:
        scope_demand = inputs.demand_for(target).scoped
    bounded_zero = scope_demand == 0 and not inputs.retry_demand_unbounded
    if bounded_zero and inputs.coverage_ready and not inputs.membership_open:
        return withheld("no_work", "Nothing remains in this scope.")
    gate = _runtime_gate(inputs.capacity, inputs.now)
    if gate is not None:
        return gate
    if not inputs.coverage_ready:
        return withheld("coverage_not_ready", "Selected-run history is being restored.")
    if inputs.budget_blocked:
        return withheld("budget_exceeded", "Remaining work is blocked by the daily budget.")
    unbounded = _unbounded_contention(inputs)
    if unbounded is not None:
        return withheld("contention_unbounded", unbounded)
    if scope_demand > 0 and not dispatch_recent(inputs.last_dispatch_at, inputs.active_in_scope, inputs.now):
        return withheld("no_dispatch", "No recent dispatch was observed while work remains.")
    if inputs.membership_open and (target is None or bounded_zero):
        return withheld("membership_open", "Execution membership is still open.")
    return None


def _unbounded_contention(inputs: EtaInputs) -> str | None:
    if inputs.retry_demand_unbounded:
        return "Retry demand is unbounded."
    if inputs.inventory_truncated:
        return "Active-work inventory is truncated."
    if inputs.queued_work_unbounded:
        return "Queued work cannot be bounded."
    return None


def _priced_stages(inputs: EtaInputs) -> tuple[Stage, ...]:
    """Stages whose durations the range needs: scoped remaining / retries or live outside work."""
    return tuple(
        stage for stage in STAGES
        if (row := inputs.demand_for(stage)).scoped > 0 or row.outside_live > 0
    )


def _estimate(inputs: EtaInputs, target: Stage | None) -> EtaRange | EtaWithheld:
    gate = _gate_stages(inputs, target=target)
    if gate is not None:
        return gate
    priced = _priced_stages(inputs)
    selected = {stage: select_samples(inputs.samples, stage, inputs.now) for stage in priced}
    short = [stage for stage in priced if selected[stage].count < MIN_SAMPLES_PER_STAGE]
    if short:
        return withheld(
            "insufficient_samples",
            f"Fewer than {MIN_SAMPLES_PER_STAGE} successful samples in the last "
            f"{SAMPLE_WINDOW.days} days for: {', '.join(short)}.",
            stages=short,
        )

    pace = inputs.pace
    if pace is not None and not pace.measurable:
        return withheld(
            "insufficient_samples",
            f"Fewer than {MIN_PACE_ROWS} stage results in the last "
            f"{int(PACE_WINDOW.total_seconds())} s: the current pace is not known yet.",
        )

    slots = inputs.capacity.configured_slots
    prefix = STAGES if target is None else STAGES[: STAGES.index(target) + 1]
    p50 = {stage: s.p50 for stage, s in selected.items()}
    p90 = {stage: s.p90 for stage, s in selected.items()}
    rows = {stage: inputs.demand_for(stage) for stage in STAGES}

    # Work the target still needs (itself and its upstream chain), and the longest chain.
    low_work = sum(rows[s].remaining * p50[s] for s in prefix if rows[s].remaining > 0)
    path_p50 = sum(p50[s] for s in prefix if rows[s].remaining > 0)
    low = max(low_work / slots, path_p50)

    # Everything that can hold a slot before the target finishes: all scoped work, its
    # retries and live outside contention, priced at p90.
    high_work = sum(
        (rows[s].remaining + rows[s].retry_demand + rows[s].outside_live) * p90[s] for s in priced
    )
    path_p90 = sum(p90[s] for s in prefix if rows[s].scoped > 0)
    full_path_p90 = sum(p90[s] for s in STAGES if rows[s].scoped > 0)
    jobs = max((rows[s].scoped for s in STAGES), default=0)
    last_wave = (math.ceil(jobs / slots) - 1) * full_path_p90 + path_p90 if jobs else 0.0
    high = max(high_work / slots, path_p90, last_wave, low)
    if pace is not None:
        pace_low, pace_high = _pace_range(pace, rows, prefix)
        low, high = max(low, pace_low), max(high, pace_high)

    fallback = any(selected[s].fallback for s in priced)
    return _available(
        low, high,
        sample_size=min((selected[s].count for s in priced), default=0),
        contended=any(rows[s].outside_live > 0 for s in STAGES),
        basis="stage_durations_with_attempt_fallback" if fallback else "stage_durations",
        now=inputs.now, pace=pace,
    )


def _pace_range(pace: Pace, rows: Mapping[Stage, StageDemand],
                prefix: Sequence[Stage]) -> tuple[float, float]:
    """Seconds to finish at the measured pace, and the range every window allows.

    Per window, two figures. Pooled: every row costs the same, so the time is rows over
    rows settled per second (for the quick figure only the target's own chain; for the
    slow one every row that holds a slot before the target is done: all scoped work,
    retries and live outside contention). Per stage: a stage's rows drain at the rate its
    rows settled in the window, and the target is done when the slowest stage of its chain
    is (only stages with MIN_STAGE_PACE_ROWS settled rows give a figure). Low is the
    quickest figure sped up by PACE_SPEEDUP, high the slowest slowed by PACE_SLOWDOWN.
    """
    chain = sum(rows[s].remaining for s in prefix)
    everything = sum(rows[s].scoped + rows[s].outside_live for s in STAGES)
    quick: list[float] = []
    slow: list[float] = []
    for window in pace.windows():
        rate = window.rows_per_second
        quick.append(chain / rate)
        slow.append(everything / rate)
        per_stage = [
            (rows[s].scoped + rows[s].outside_live) * window.window_seconds / window.settled[s]
            for s in prefix
            if rows[s].scoped > 0 and window.settled.get(s, 0) >= MIN_STAGE_PACE_ROWS
        ]
        if per_stage:
            quick.append(max(per_stage))
            slow.append(max(per_stage))
    return min(quick) / PACE_SPEEDUP, max(slow) * PACE_SLOWDOWN


def estimate_overall(inputs: EtaInputs) -> EtaRange | EtaWithheld:
    """The selected scope's whole remaining preparation (enrich -> pdf); withheld while membership is open."""
    return _estimate(inputs, None)


def estimate_stage(stage: Stage, inputs: EtaInputs) -> EtaRange | EtaWithheld:
    """When the scope's ``stage`` backlog (and the upstream work it waits on) should be done.

    Prices the known scoped backlog even while membership is open. The low end counts the
    stage and its upstream chain; the high end also counts every other scoped stage, retries
    and live outside contention (they hold slots too), so samples are needed for every
    stage with scoped or live outside demand, exactly as for the overall estimate.
    """
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}")
    return _estimate(inputs, stage)


def estimate_stages(inputs: EtaInputs) -> dict[Stage, EtaRange | EtaWithheld]:
    return {stage: estimate_stage(stage, inputs) for stage in STAGES}


# --------------------------------------------------------------------------- source families


def estimate_source_families(
    remaining_families: int,
    family_duration_samples: Sequence[DurationSample],
    observed_source_concurrency: int,
    capacity: RuntimeCapacity,
    *,
    now: datetime,
    membership_open: bool = False,
    coverage_ready: bool = True,
    budget_blocked: bool = False,
    sweep_demand: int = 0,
    sweep_slots_held: int = 0,
    outside_source_contention: int = 0,
    inventory_truncated: bool = False,
    queued_work_unbounded: bool = False,
    last_dispatch_at: datetime | None = None,
) -> EtaRange | EtaWithheld:
    """The selected execution's remaining source families.

    Prices whole families with recent whole-family durations (every sample given counts,
    whatever its ``stage``; the 14-day window and 50-sample cap apply) and the currently
    observed source concurrency, never a provider-derived page count or every configured
    slot. ``sweep_demand`` is the selected run's remaining sweep preparation workflows,
    one slot each; ``sweep_slots_held`` of them already hold a slot. The estimate is
    withheld (``contention_unbounded``) when that demand exceeds the spare capacity
    (``available_slots + sweep_slots_held``). ``outside_source_contention`` counts queued
    or running families outside the execution (dormant ones must not be passed).
    """
    if min(remaining_families, observed_source_concurrency, sweep_demand, sweep_slots_held,
           outside_source_contention) < 0:
        raise ValueError("negative source-family input")
    if remaining_families == 0 and coverage_ready and not membership_open:
        return withheld("no_work", "No source family remains.")
    gate = _runtime_gate(capacity, now)
    if gate is not None:
        return gate
    if not coverage_ready:
        return withheld("coverage_not_ready", "Selected-run history is being restored.")
    if budget_blocked:
        return withheld("budget_exceeded", "Remaining work is blocked by the daily budget.")
    if inventory_truncated:
        return withheld("contention_unbounded", "Active-work inventory is truncated.")
    if queued_work_unbounded:
        return withheld("contention_unbounded", "Queued work cannot be bounded.")
    spare = capacity.available_slots + sweep_slots_held
    if sweep_demand > spare:
        return withheld(
            "contention_unbounded",
            f"Sweep demand ({sweep_demand} slots) exceeds spare capacity ({spare} slots).",
        )
    if remaining_families > 0 and not dispatch_recent(last_dispatch_at, observed_source_concurrency, now):
        return withheld("no_dispatch", "No recent source dispatch was observed while families remain.")
    if remaining_families == 0:
        return withheld("membership_open", "Execution membership is still open.")

    pooled = [
        DurationSample(
            stage=SOURCE_FAMILY_STAGE, duration_seconds=s.duration_seconds, finished_at=s.finished_at,
            canonical=s.canonical, succeeded=s.succeeded,
        )
        for s in family_duration_samples
    ]
    selected = select_samples(pooled, SOURCE_FAMILY_STAGE, now)
    if selected.count < MIN_SAMPLES_PER_STAGE:
        return withheld(
            "insufficient_samples",
            f"Fewer than {MIN_SAMPLES_PER_STAGE} whole-family durations in the last "
            f"{SAMPLE_WINDOW.days} days.",
            stages=[SOURCE_FAMILY_STAGE],
        )
    # A recent dispatch with nothing running right now still means one lane, not zero.
    lanes = max(observed_source_concurrency, 1)
    p50, p90 = selected.p50, selected.p90
    low = max(remaining_families * p50 / lanes, p50)
    waves = math.ceil((remaining_families + outside_source_contention) / lanes)
    high = max(waves * p90, p90, low)
    return _available(
        low, high, sample_size=selected.count, contended=outside_source_contention > 0,
        basis="source_family_durations", now=now,
    )
