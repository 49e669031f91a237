"""Runtime capacity from worker heartbeats: slots, active work, durations, task queues.

The reader derives the expected app dir from the configured database path, keeps only
heartbeats written for that database from that app dir, selects the task queue named by
the newest matching heartbeat and aggregates the fresh (beat within 45 s, state running),
schema-valid workers on that queue. Whatever cannot be known is null, never zero: when
no fresh worker exists, slots, stage counts, items and durations are null and every
task-queue observation is reported as ``stale``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal

from backend.config import ORCHESTRATION_ACTIVITY_SLOTS
from backend.domain.clock import parse_iso, to_iso, utc_now
from backend.domain.model import CamelModel
from backend.store.db import Database
from backend.store.heartbeats import (
    MAX_ACTIVE_ITEMS,
    OPERATIONAL_STAGES,
    ActiveItem,
    DurationSummary,
    OperationalStage,
    TaskQueueObservation,
    TelemetryRow,
    newest_identity_heartbeat,
    queue_heartbeats_since,
)

FRESH_WITHIN = timedelta(seconds=45)  # a worker is stale after 45 s without a heartbeat
# A "supported" observation older than this (the worker polls every 5 s) is shown as stale.
TASK_QUEUE_STALE_AFTER = timedelta(seconds=30)

FreshnessState = Literal["fresh", "stale", "unavailable"]
FreshnessReason = Literal[
    "fresh_heartbeat", "heartbeat_expired", "worker_stopped", "no_heartbeat", "telemetry_invalid",
    "planned_restart",  # stopped on purpose while idle, coming back (supervision/recycle.py)
]


class CapacityFreshness(CamelModel):
    state: FreshnessState
    reason: FreshnessReason
    newest_heartbeat_at: str | None = None
    age_seconds: float | None = None
    stale_after_seconds: float = FRESH_WITHIN.total_seconds()


class CapacitySnapshot(CamelModel):
    """The runtime-capacity part of the operations snapshot.

    ``workers`` counts fresh schema-valid workers; ``invalidWorkers`` counts fresh running
    workers whose telemetry did not validate (their slots and work are unknown, so exact
    totals — ``activeItemsTotal``, ``activeItemsTruncated``, ``activeStageCounts`` — are
    null while any exists). ``taskQueues`` are approximate infrastructure observations,
    never job counts.
    """

    observed_at: str
    task_queue: str | None
    freshness: CapacityFreshness
    workers: int
    invalid_workers: int
    configured_slots: int | None
    active_slots: int | None
    available_slots: int | None
    active_stage_counts: dict[OperationalStage, int] | None
    active_items: list[ActiveItem] | None
    active_items_total: int | None
    active_items_truncated: bool | None
    duration_summaries: dict[str, DurationSummary] | None
    task_queues: dict[str, TaskQueueObservation]


def expected_identity(database_path: str | Path) -> tuple[str, str]:
    """(database path, app dir) exactly as a worker of this app dir writes them."""
    configured = Path(database_path).expanduser()
    app_dir = configured.parent.resolve()
    return str(app_dir / configured.name), str(app_dir)


def _age_seconds(now: datetime, stamp: str) -> float:
    return round(max(0.0, (now - parse_iso(stamp)).total_seconds()), 3)


async def read_capacity(
    db: Database, *, database_path: str | Path, now: datetime | None = None
) -> CapacitySnapshot:
    now = now or utc_now()
    database, app_dir = expected_identity(database_path)
    newest = await newest_identity_heartbeat(db, database_path=database, app_dir=app_dir)
    if newest is None:
        return _not_fresh(now, None, CapacityFreshness(state="unavailable", reason="no_heartbeat"))

    since = to_iso(now - FRESH_WITHIN)
    rows = await queue_heartbeats_since(
        db, database_path=database, app_dir=app_dir, task_queue=newest.task_queue, since=since)
    running = [row for row in rows if row.state == "running"
               and (now - parse_iso(row.heartbeat_at)) <= FRESH_WITHIN]
    valid = [row for row in running if row.schema_valid]
    if not valid:
        if running:
            freshness = CapacityFreshness(
                state="unavailable", reason="telemetry_invalid",
                newest_heartbeat_at=running[0].heartbeat_at,
                age_seconds=_age_seconds(now, running[0].heartbeat_at))
        elif newest.state != "running":
            freshness = CapacityFreshness(
                state="unavailable",
                reason="planned_restart" if newest.state == "recycling" else "worker_stopped",
                newest_heartbeat_at=newest.heartbeat_at,
                age_seconds=_age_seconds(now, newest.heartbeat_at))
        else:
            freshness = CapacityFreshness(
                state="stale", reason="heartbeat_expired",
                newest_heartbeat_at=newest.heartbeat_at,
                age_seconds=_age_seconds(now, newest.heartbeat_at))
        snapshot = _not_fresh(now, newest, freshness)
        return snapshot.model_copy(update={"invalid_workers": len(running)})
    return _aggregate(now, newest.task_queue, valid, invalid=len(running) - len(valid),
                      observed_from=running)


def _not_fresh(
    now: datetime, newest: TelemetryRow | None, freshness: CapacityFreshness
) -> CapacitySnapshot:
    queues = {}
    if newest is not None and newest.task_queues:
        queues = {name: _as_stale(observation, "worker_not_fresh")
                  for name, observation in sorted(newest.task_queues.items())}
    return CapacitySnapshot(
        observed_at=to_iso(now),
        task_queue=newest.task_queue if newest else None,
        freshness=freshness,
        workers=0,
        invalid_workers=0,
        configured_slots=None,
        active_slots=None,
        available_slots=None,
        active_stage_counts=None,
        active_items=None,
        active_items_total=None,
        active_items_truncated=None,
        duration_summaries=None,
        task_queues=queues,
    )


def _aggregate(
    now: datetime, task_queue: str, valid: list[TelemetryRow], *, invalid: int,
    observed_from: list[TelemetryRow],
) -> CapacitySnapshot:
    configured = sum(row.configured_slots for row in valid)
    active = sum(row.active_slots for row in valid)
    telemetry = [row.telemetry for row in valid if row.telemetry is not None]
    items = sorted(
        (item for t in telemetry for item in t.active_items),
        key=lambda item: item.started_at,
    )[:MAX_ACTIVE_ITEMS]
    exact = invalid == 0
    total = sum(t.active_items_total for t in telemetry)
    stage_counts = {stage: sum(t.stage_counts.get(stage, 0) for t in telemetry)
                    for stage in OPERATIONAL_STAGES}
    newest_at = valid[0].heartbeat_at
    return CapacitySnapshot(
        observed_at=to_iso(now),
        task_queue=task_queue,
        freshness=CapacityFreshness(
            state="fresh", reason="fresh_heartbeat", newest_heartbeat_at=newest_at,
            age_seconds=_age_seconds(now, newest_at)),
        workers=len(valid),
        invalid_workers=invalid,
        configured_slots=configured,
        active_slots=active,
        available_slots=max(0, configured - active),
        active_stage_counts=stage_counts if exact else None,
        active_items=items,
        active_items_total=total if exact else None,
        active_items_truncated=(total > len(items)) if exact else None,
        duration_summaries=merge_duration_summaries([t.duration_summaries for t in telemetry]),
        task_queues=_current_task_queues(now, observed_from),
    )


def merge_duration_summaries(
    per_worker: list[dict[str, DurationSummary]],
) -> dict[str, DurationSummary]:
    """One worker's summary stays exact. Several cannot be merged into true percentiles,
    so the merged p50 / p90 are the largest per-worker values (a conservative upper bound:
    any quantile of the pooled samples lies between the workers' smallest and largest)."""
    merged: dict[str, DurationSummary] = {}
    names = sorted({name for summaries in per_worker for name in summaries})
    for name in names:
        parts = [summaries[name] for summaries in per_worker if name in summaries]
        if len(parts) == 1:
            merged[name] = parts[0]
            continue
        merged[name] = DurationSummary(
            count=sum(part.count for part in parts),
            p50_seconds=max(part.p50_seconds for part in parts),
            p90_seconds=max(part.p90_seconds for part in parts),
            max_seconds=max(part.max_seconds for part in parts),
            exact=False,
        )
    return merged


def _current_task_queues(
    now: datetime, rows: list[TelemetryRow]
) -> dict[str, TaskQueueObservation]:
    """Per queue: the newest supported observation of any fresh worker, else the newest of
    any state; a supported one older than the stale limit is reported as stale."""
    candidates: dict[str, list[TaskQueueObservation]] = {}
    for row in rows:
        for name, observation in (row.task_queues or {}).items():
            candidates.setdefault(name, []).append(observation)
    chosen: dict[str, TaskQueueObservation] = {}
    for name in sorted(candidates):
        observations = candidates[name]
        supported = [o for o in observations if o.state == "supported"]
        pool = supported or observations
        best = max(pool, key=lambda o: o.observed_at or "")
        if (best.state == "supported" and best.observed_at is not None
                and now - parse_iso(best.observed_at) > TASK_QUEUE_STALE_AFTER):
            best = _as_stale(best, "observation_expired")
        chosen[name] = best
    return chosen


def _as_stale(observation: TaskQueueObservation, reason: str) -> TaskQueueObservation:
    """Numbers dropped; ``observedAt`` keeps the last successful observation, if any."""
    last_good = observation.observed_at if observation.state in ("supported", "stale") else None
    return TaskQueueObservation.unknown("stale", reason=reason, observed_at=last_good)


def stage_slots(capacity: CapacitySnapshot) -> int | None:
    """The activity slots the preparation stages can use, or None when unknown.

    Each worker's heartbeat counts all of its slots, and ORCHESTRATION_ACTIVITY_SLOTS of
    them belong to its Discover / Apply queue (backend/temporal/worker.py), where no stage
    ever runs: an ETA that divides the stage work by every slot promises 1.5x the pace."""
    if capacity.configured_slots is None:
        return None
    return max(0, capacity.configured_slots - capacity.workers * ORCHESTRATION_ACTIVITY_SLOTS)
