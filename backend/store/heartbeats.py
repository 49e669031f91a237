"""``worker_runtime_heartbeats``: runtime facts only a live worker can report.

Besides proof of life and exact slot totals, a beat carries bounded, privacy-safe
telemetry (migration 0008): the oldest allowlisted active activities, exact per-stage
counts, completed-duration summaries and approximate Temporal task-queue observations.
The shapes below are the schema both the worker (writer) and the operations reader
validate against; a row whose telemetry does not validate is not trusted for detail.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Annotated, Literal

from pydantic import ConfigDict, Field, TypeAdapter, ValidationError, model_validator

from backend.config import TENANT_ID
from backend.domain.clock import parse_iso, utc_now, utc_now_iso
from backend.domain.model import CamelModel
from backend.domain.stages import STAGE_ACTIVITY
from backend.store.db import Database

log = logging.getLogger(__name__)

TELEMETRY_SCHEMA = 1
MAX_ACTIVE_ITEMS = 20

OperationalStage = Literal["enrich", "score", "tailor", "cover", "pdf", "discover", "preflight"]
OPERATIONAL_STAGES: tuple[OperationalStage, ...] = (
    "discover", "preflight", "enrich", "score", "tailor", "cover", "pdf",
)

AllowlistedActivity = Literal[
    "enrich_job", "score_job", "tailor_resume", "write_cover_letter", "render_pdfs",
    "check_spend_budget", "plan_discovery", "discover_source_family", "plan_preparation",
    "finalize_discovery", "record_family_failure",
]
# The only activity kinds that may appear in heartbeat detail, and their operational stage.
ACTIVITY_STAGE: dict[str, OperationalStage] = {
    **{activity: stage for stage, activity in STAGE_ACTIVITY.items()},
    "check_spend_budget": "preflight",
    "plan_discovery": "discover",
    "discover_source_family": "discover",
    "plan_preparation": "discover",
    "finalize_discovery": "discover",
    "record_family_failure": "discover",
}

# Validated safe references: our own deterministic workflow ids, Temporal's UUID run ids,
# or a non-reversible local ``op_`` hash of anything else.
SAFE_WORKFLOW_ID_PATTERN = r"^(discover-local|prep-job_[0-9a-f]{24}|apply-auto-local)$"
RUN_ID_PATTERN = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
OPAQUE_REF_PATTERN = r"^op_[0-9a-f]{16}$"
_WORKFLOW_REF = (
    r"^(discover-local|prep-job_[0-9a-f]{24}|apply-auto-local|op_[0-9a-f]{16})$"
)
_RUN_REF = (
    r"^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
    r"|op_[0-9a-f]{16})$"
)
_ISO = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$"
_QUEUE_NAME = r"^[A-Za-z0-9._-]{1,200}$"
_REASON = r"^[a-z_]{1,40}$"

IsoTime = Annotated[str, Field(pattern=_ISO)]
QueueName = Annotated[str, Field(pattern=_QUEUE_NAME)]


class _Strict(CamelModel):
    model_config = ConfigDict(extra="forbid")


class ActiveItem(_Strict):
    """One running allowlisted activity: kind, stage and safe references only."""

    activity_type: AllowlistedActivity
    stage: OperationalStage
    workflow_ref: str | None = Field(default=None, pattern=_WORKFLOW_REF)
    run_ref: str | None = Field(default=None, pattern=_RUN_REF)
    attempt: int = Field(ge=1)
    started_at: IsoTime

    @model_validator(mode="after")
    def _stage_matches(self) -> ActiveItem:
        if ACTIVITY_STAGE[self.activity_type] != self.stage:
            raise ValueError(f"{self.activity_type} belongs to {ACTIVITY_STAGE[self.activity_type]}")
        return self


class DurationSummary(_Strict):
    """Successful completions of one activity type over a bounded recent window.

    ``exact`` is False when the reader merged several workers' summaries: then the
    percentiles are upper bounds (the largest per-worker value), never invented averages.
    """

    count: int = Field(ge=1)
    p50_seconds: float = Field(ge=0)
    p90_seconds: float = Field(ge=0)
    max_seconds: float = Field(ge=0)
    exact: bool = True

    @model_validator(mode="after")
    def _ordered(self) -> DurationSummary:
        if not self.p50_seconds <= self.p90_seconds <= self.max_seconds:
            raise ValueError("expected p50 <= p90 <= max")
        return self


TaskQueueState = Literal["supported", "unsupported", "unavailable", "stale"]


class TaskQueueTypeStats(_Strict):
    """Approximate statistics of one task-queue type, as Temporal reported them."""

    pollers: int = Field(ge=0)
    approximate_backlog_count: int = Field(ge=0)
    approximate_backlog_age_seconds: float = Field(ge=0)
    tasks_add_rate: float = Field(ge=0)
    tasks_dispatch_rate: float = Field(ge=0)


class PollerCounts(_Strict):
    workflow: int = Field(ge=0)
    activity: int = Field(ge=0)


class TaskQueueObservation(_Strict):
    """An approximate infrastructure observation, never a job count.

    Numbers are present exactly when ``state`` is ``supported``; every other state carries
    nulls (unknown is never reported as zero). ``observedAt`` is when this state was
    determined; for ``stale`` it is the last successful observation, if any. ``reason`` is a
    bounded code (an RPC status name, ``timeout``, ``no_stats``, ``not_observed_yet``,
    ``observation_expired``, ``worker_not_fresh``), never exception text.
    """

    state: TaskQueueState
    observed_at: IsoTime | None = None
    reason: str | None = Field(default=None, pattern=_REASON)
    pollers: PollerCounts | None = None
    approximate_backlog_count: int | None = Field(default=None, ge=0)
    approximate_backlog_age_seconds: float | None = Field(default=None, ge=0)
    tasks_add_rate: float | None = Field(default=None, ge=0)
    tasks_dispatch_rate: float | None = Field(default=None, ge=0)
    by_type: dict[Literal["workflow", "activity"], TaskQueueTypeStats] | None = None

    @model_validator(mode="after")
    def _numbers_only_when_supported(self) -> TaskQueueObservation:
        numbers = (self.pollers, self.approximate_backlog_count,
                   self.approximate_backlog_age_seconds, self.tasks_add_rate,
                   self.tasks_dispatch_rate, self.by_type)
        if self.state == "supported":
            if any(value is None for value in numbers) or self.observed_at is None:
                raise ValueError("a supported observation carries every number")
        elif any(value is not None for value in numbers):
            raise ValueError(f"a {self.state} observation carries no numbers")
        return self

    @classmethod
    def unknown(
        cls, state: TaskQueueState, *, reason: str | None, observed_at: str | None
    ) -> TaskQueueObservation:
        return cls(state=state, reason=reason, observed_at=observed_at)

    @classmethod
    def from_types(
        cls, *, observed_at: str, workflow: TaskQueueTypeStats, activity: TaskQueueTypeStats
    ) -> TaskQueueObservation:
        return cls(
            state="supported",
            observed_at=observed_at,
            pollers=PollerCounts(workflow=workflow.pollers, activity=activity.pollers),
            approximate_backlog_count=workflow.approximate_backlog_count
            + activity.approximate_backlog_count,
            approximate_backlog_age_seconds=max(workflow.approximate_backlog_age_seconds,
                                                activity.approximate_backlog_age_seconds),
            tasks_add_rate=workflow.tasks_add_rate + activity.tasks_add_rate,
            tasks_dispatch_rate=workflow.tasks_dispatch_rate + activity.tasks_dispatch_rate,
            by_type={"workflow": workflow, "activity": activity},
        )


ActiveItems = TypeAdapter(list[ActiveItem])
StageCounts = TypeAdapter(dict[OperationalStage, Annotated[int, Field(ge=0)]])
DurationSummaries = TypeAdapter(dict[AllowlistedActivity, DurationSummary])
TaskQueueObservations = TypeAdapter(dict[QueueName, TaskQueueObservation])


@dataclass(frozen=True)
class HeartbeatTelemetry:
    """What one beat reports beyond slots. ``task_queues`` None keeps the last stored one."""

    active_items: list[ActiveItem]
    active_items_total: int
    active_items_truncated: bool
    stage_counts: dict[str, int]
    duration_summaries: dict[str, DurationSummary]
    task_queues: dict[str, TaskQueueObservation] | None = None

    def __post_init__(self) -> None:
        if len(self.active_items) > MAX_ACTIVE_ITEMS:
            raise ValueError(f"at most {MAX_ACTIVE_ITEMS} active items")
        if self.active_items_total < len(self.active_items):
            raise ValueError("the total cannot be smaller than the listed items")
        if self.active_items_truncated != (self.active_items_total > len(self.active_items)):
            raise ValueError("truncated must say whether items were left out")
        if sum(self.stage_counts.values()) != self.active_items_total:
            raise ValueError("stage counts must add up to the allowlisted total")


@dataclass(frozen=True)
class WorkerIdentity:
    worker_id: str
    pid: int
    hostname: str
    app_dir: str
    database_path: str
    task_queue: str
    namespace: str
    configured_slots: int
    started_at: str


def _dump(adapter: TypeAdapter, value) -> str:
    return adapter.dump_json(value, by_alias=True).decode("utf-8")


async def write_heartbeat(
    db: Database,
    identity: WorkerIdentity,
    *,
    active_slots: int,
    state: str = "running",
    telemetry: HeartbeatTelemetry | None = None,
) -> None:
    """Upsert this worker's row. Without ``telemetry`` the detail columns are cleared
    (the row is then not trusted for detail) but the last task-queue observation stays,
    so a reader can still show it as stale."""
    if telemetry is None:
        detail = (None, None, None, None, None, None, None)
    else:
        queues = (None if telemetry.task_queues is None
                  else _dump(TaskQueueObservations, telemetry.task_queues))
        detail = (
            TELEMETRY_SCHEMA,
            _dump(ActiveItems, telemetry.active_items),
            telemetry.active_items_total,
            int(telemetry.active_items_truncated),
            json.dumps(telemetry.stage_counts, sort_keys=True),
            _dump(DurationSummaries, telemetry.duration_summaries),
            queues,
        )
    async with db.transaction() as conn:
        await conn.execute(
            "INSERT INTO worker_runtime_heartbeats (worker_id, tenant_id, pid, hostname, app_dir,"
            " database_path, task_queue, namespace, configured_slots, active_slots, state,"
            " started_at, heartbeat_at, telemetry_schema, active_items_json, active_items_total,"
            " active_items_truncated, stage_counts_json, duration_summaries_json, task_queue_json)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (worker_id) DO UPDATE SET active_slots = excluded.active_slots,"
            " state = excluded.state, heartbeat_at = excluded.heartbeat_at,"
            " telemetry_schema = excluded.telemetry_schema,"
            " active_items_json = excluded.active_items_json,"
            " active_items_total = excluded.active_items_total,"
            " active_items_truncated = excluded.active_items_truncated,"
            " stage_counts_json = excluded.stage_counts_json,"
            " duration_summaries_json = excluded.duration_summaries_json,"
            " task_queue_json = COALESCE(excluded.task_queue_json, task_queue_json)",
            (identity.worker_id, TENANT_ID, identity.pid, identity.hostname, identity.app_dir,
             identity.database_path, identity.task_queue, identity.namespace,
             identity.configured_slots, active_slots, state, identity.started_at, utc_now_iso(),
             *detail),
        )


@dataclass(frozen=True)
class HeartbeatRow:
    worker_id: str
    pid: int
    task_queue: str
    configured_slots: int
    active_slots: int
    state: str
    heartbeat_at: str

    def age_seconds(self) -> float:
        return (utc_now() - parse_iso(self.heartbeat_at)).total_seconds()


async def newest_heartbeats(
    db: Database, *, database_path: str, within: timedelta
) -> list[HeartbeatRow]:
    """Heartbeats of workers serving this very database, newest first."""
    since = (utc_now() - within).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    rows = await db.fetchall(
        "SELECT worker_id, pid, task_queue, configured_slots, active_slots, state, heartbeat_at"
        " FROM worker_runtime_heartbeats WHERE tenant_id = ? AND database_path = ?"
        " AND heartbeat_at >= ? ORDER BY heartbeat_at DESC",
        (TENANT_ID, database_path, since),
    )
    return [HeartbeatRow(*row) for row in rows]


# --- the capacity reader's view ------------------------------------------------------------


@dataclass(frozen=True)
class TelemetryRow:
    """A heartbeat with its telemetry parsed. ``telemetry`` is None when the row carries no
    schema-valid detail; ``task_queues`` is parsed on its own (None when absent/invalid)."""

    worker_id: str
    task_queue: str
    configured_slots: int
    active_slots: int
    state: str
    heartbeat_at: str
    telemetry: HeartbeatTelemetry | None
    task_queues: dict[str, TaskQueueObservation] | None

    @property
    def schema_valid(self) -> bool:
        return (self.telemetry is not None
                and 0 <= self.active_slots <= self.configured_slots
                and self.telemetry.active_items_total <= self.active_slots)


_TELEMETRY_COLUMNS = (
    "worker_id, task_queue, configured_slots, active_slots, state, heartbeat_at,"
    " telemetry_schema, active_items_json, active_items_total, active_items_truncated,"
    " stage_counts_json, duration_summaries_json, task_queue_json"
)


def _parse_task_queues(text: str | None) -> dict[str, TaskQueueObservation] | None:
    if text is None:
        return None
    try:
        return TaskQueueObservations.validate_json(text)
    except ValidationError:
        return None


def _parse_telemetry(row) -> HeartbeatTelemetry | None:
    (schema, items, total, truncated, stages, durations) = tuple(row[6:12])
    if schema != TELEMETRY_SCHEMA or None in (items, total, truncated, stages, durations):
        return None
    try:
        return HeartbeatTelemetry(
            active_items=ActiveItems.validate_json(items),
            active_items_total=int(total),
            active_items_truncated=bool(truncated),
            stage_counts=dict(StageCounts.validate_json(stages)),
            duration_summaries=dict(DurationSummaries.validate_json(durations)),
            task_queues=_parse_task_queues(row[12]),
        )
    except (ValidationError, ValueError, TypeError):
        return None


def _telemetry_row(row) -> TelemetryRow:
    return TelemetryRow(
        worker_id=row[0], task_queue=row[1], configured_slots=int(row[2]),
        active_slots=int(row[3]), state=row[4], heartbeat_at=row[5],
        telemetry=_parse_telemetry(row), task_queues=_parse_task_queues(row[12]),
    )


async def newest_identity_heartbeat(
    db: Database, *, database_path: str, app_dir: str
) -> TelemetryRow | None:
    """The newest heartbeat of any worker that served this database from this app dir."""
    row = await db.fetchone(
        f"SELECT {_TELEMETRY_COLUMNS} FROM worker_runtime_heartbeats"
        " WHERE tenant_id = ? AND database_path = ? AND app_dir = ?"
        " ORDER BY heartbeat_at DESC, worker_id LIMIT 1",
        (TENANT_ID, database_path, app_dir),
    )
    return _telemetry_row(row) if row is not None else None


async def queue_heartbeats_since(
    db: Database, *, database_path: str, app_dir: str, task_queue: str, since: str
) -> list[TelemetryRow]:
    """This identity's heartbeats on one task queue at or after ``since``, newest first."""
    rows = await db.fetchall(
        f"SELECT {_TELEMETRY_COLUMNS} FROM worker_runtime_heartbeats"
        " WHERE tenant_id = ? AND database_path = ? AND app_dir = ? AND task_queue = ?"
        " AND heartbeat_at >= ? ORDER BY heartbeat_at DESC, worker_id",
        (TENANT_ID, database_path, app_dir, task_queue, since),
    )
    return [_telemetry_row(row) for row in rows]
