"""``pipeline_step_projections``: execution-owned orchestration steps, folded from the
PipelineStepQueued / Started / Completed / Failed events.

One row per (tenant, Discover run, step kind, item key), describing the newest attempt.
Fold rules (:func:`fold_step`, pure, idempotent under replay):

* a higher attempt replaces the row (its queue / start / result facts start empty);
* a late lower attempt is ignored;
* within one attempt the first terminal result (Completed / Failed) wins;
* Started after a terminal of the same attempt is ignored, and a repeated Started keeps
  the first start; Queued only fills a missing ``queued_at``.

Writers. Native Discover activities and history reconciliation append step events with
:func:`append_step_event` (deduplicated per run / kind / item / attempt / phase). The
projection builder folds each one in the same transaction (fold-at-write: :func:`catch_up`,
registered for the step events, folds every step event after the shared ``operations``
watermark in ``projection_watermarks``) and advances the execution's native coverage
checkpoint when the fold creates a new step key (see backend/store/coverage.py).
Re-folding an event changes nothing; :func:`rebuild_pipeline_steps` rebuilds the whole
table from the log.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, replace
from typing import Any

import aiosqlite
from pydantic import ValidationError

from backend.config import TENANT_ID
from backend.domain import events as ev
from backend.projections import paging
from backend.store import coverage, projection_builder, watermarks
from backend.store.db import Database
from backend.store.events import StoredEvent
from backend.store.read_models import pipeline_steps as step_rows

# The writer of step events lives in the store; it is named here too because every step
# writer (activities, history repair) reaches the projection through this module.
from backend.store.step_events import (  # noqa: F401 - re-exported for the step writers
    COMPLETED,
    FAILED,
    QUEUED,
    STARTED,
    STEP_EVENT_TYPES,
    append_step_event,
    dedupe_key,
)

log = logging.getLogger(__name__)

WATERMARK_PREFIX = "operations"
PAGE_SIZE = 500

STEP_KINDS = (
    "source_planning", "source_family", "enrichment_pass", "preparation_fanout",
    "existing_backlog_sweep", "pdf_render",
)
STATUSES = ("queued", "running", "succeeded", "failed")
TERMINAL_STATUSES = frozenset({"succeeded", "failed"})

COLUMNS = (
    "tenant_id", "discover_workflow_id", "discover_run_id", "step_kind", "item_key", "attempt",
    "status", "queued_at", "started_at", "finished_at", "duration_ms", "error_code",
    "retryable", "counts_json", "last_event_id",
)


@dataclass(frozen=True)
class StepRow:
    tenant_id: str
    discover_workflow_id: str
    discover_run_id: str
    step_kind: str
    item_key: str
    attempt: int
    status: str
    queued_at: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    duration_ms: int | None = None
    error_code: str | None = None
    retryable: bool | None = None
    counts_json: str = "{}"
    last_event_id: int = 0

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES

    @property
    def key(self) -> str:
        return coverage.step_key(self.step_kind, self.item_key)

    @property
    def counts(self) -> dict[str, int]:
        try:
            value = json.loads(self.counts_json or "{}")
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def values(self) -> tuple:
        return tuple(
            (int(value) if column == "retryable" and value is not None else value)
            for column, value in ((c, getattr(self, c)) for c in COLUMNS)
        )


def watermark_name(tenant_id: str = TENANT_ID) -> str:
    return f"{WATERMARK_PREFIX}:{tenant_id}"


# --- the pure fold -----------------------------------------------------------------------


def parse_step_event(event: StoredEvent) -> ev.DomainEvent | None:
    """The validated step event, or None (not a step event, or a malformed payload)."""
    if event.type not in STEP_EVENT_TYPES:
        return None
    try:
        return ev.parse_event(event.type, event.payload_json)
    except (ValueError, ValidationError):
        log.warning("pipeline-step event %s has an invalid payload; skipped", event.id)
        return None


def fold_step(row: StepRow | None, event: StoredEvent, *, tenant_id: str = TENANT_ID
              ) -> StepRow | None:
    """Fold one stored event into its step row (None: no row yet). Anything that is not a
    valid step event for this row's key leaves the row as it is."""
    step = parse_step_event(event)
    if step is None:
        return row
    if row is not None and (row.discover_run_id, row.step_kind, row.item_key) != (
            step.discover_run_id, step.step_kind, step.item_key):
        return row
    if row is not None and step.attempt < row.attempt:
        return row  # a late lower attempt
    if row is None or step.attempt > row.attempt:
        row = StepRow(
            tenant_id=tenant_id, discover_workflow_id=step.discover_workflow_id,
            discover_run_id=step.discover_run_id, step_kind=step.step_kind,
            item_key=step.item_key, attempt=step.attempt, status="queued",
            last_event_id=row.last_event_id if row else 0,
        )
        fresh = True
    else:
        fresh = False
    stamped = {"last_event_id": max(row.last_event_id, event.id)}

    if isinstance(step, ev.PipelineStepQueued):
        if row.queued_at is not None and not fresh:
            return row
        return replace(row, queued_at=row.queued_at or step.queued_at, **stamped)

    if isinstance(step, ev.PipelineStepStarted):
        if row.terminal or (row.status == "running" and not fresh):
            return row  # after a terminal of the same attempt, or a repeated start
        return replace(row, status="running", started_at=step.started_at, **stamped)

    if row.terminal:
        return row  # the first terminal result of an attempt wins
    finished_at = step.occurred_at
    if isinstance(step, ev.PipelineStepCompleted):
        duration = step.duration_ms
        if duration is None:
            duration = paging.duration_ms(row.started_at, finished_at)
        counts = step.counts.model_dump(by_alias=True, exclude_none=True)
        return replace(row, status="succeeded", finished_at=finished_at, duration_ms=duration,
                       error_code=None, retryable=None,
                       counts_json=json.dumps(counts, sort_keys=True, separators=(",", ":")),
                       **stamped)
    return replace(row, status="failed", finished_at=finished_at,
                   duration_ms=paging.duration_ms(row.started_at, finished_at),
                   error_code=step.error_code, retryable=step.retryable, **stamped)


# --- rows --------------------------------------------------------------------------------


def row_from_record(record: Any) -> StepRow:
    values = {column: record[index] for index, column in enumerate(COLUMNS)}
    if values["retryable"] is not None:
        values["retryable"] = bool(values["retryable"])
    return StepRow(**values)


async def load_row(conn, tenant_id: str, run_id: str, step_kind: str, item_key: str
                   ) -> StepRow | None:
    record = await step_rows.read_row(conn, COLUMNS, tenant_id=tenant_id, run_id=run_id,
                                 step_kind=step_kind, item_key=item_key)
    return row_from_record(record) if record else None


async def _upsert(conn: aiosqlite.Connection, steps: list[StepRow]) -> None:
    await step_rows.write_rows(conn, COLUMNS, [step.values() for step in steps])


async def list_steps(db_or_conn, ref) -> list[StepRow]:
    """Every step row of one exact execution, in a stable order."""
    return [row_from_record(record)
            for record in await step_rows.execution_rows(db_or_conn, COLUMNS, ref)]


@dataclass(frozen=True)
class _Ref:
    tenant_id: str
    discover_workflow_id: str
    discover_run_id: str


# --- the builder -------------------------------------------------------------------------


async def read_watermark(db_or_conn, tenant_id: str = TENANT_ID) -> int:
    return await watermarks.read_watermark(db_or_conn, watermark_name(tenant_id))


async def _write_watermark(conn: aiosqlite.Connection, tenant_id: str, event_id: int) -> None:
    await watermarks.write_watermark(conn, watermark_name(tenant_id), event_id)




async def _fold_events(conn: aiosqlite.Connection, tenant_id: str, events: list[StoredEvent],
                       *, prove: bool) -> None:
    """Fold events into their rows; with ``prove``, advance native checkpoints for the
    step keys whose first row this fold created."""
    parsed = [(event, parse_step_event(event)) for event in events]
    keys = {(step.discover_run_id, step.step_kind, step.item_key)
            for _, step in parsed if step is not None}
    rows: dict[tuple[str, str, str], StepRow | None] = {}
    for key in keys:
        rows[key] = await load_row(conn, tenant_id, *key)
    before = dict(rows)
    for event, step in parsed:
        if step is None:
            continue
        key = (step.discover_run_id, step.step_kind, step.item_key)
        rows[key] = fold_step(rows[key], event, tenant_id=tenant_id)
    changed = [row for key, row in rows.items() if row is not None and row != before[key]]
    await _upsert(conn, changed)
    if not prove:
        return
    created: dict[_Ref, list[str]] = {}
    for key, row in rows.items():
        if before[key] is None and row is not None:
            ref = _Ref(tenant_id, row.discover_workflow_id, row.discover_run_id)
            created.setdefault(ref, []).append(row.key)
    for ref, added in created.items():
        await coverage.update_native_checkpoint(conn, ref, added_steps=added)


async def _fold_one_page(conn: aiosqlite.Connection, tenant_id: str, page_size: int, *,
                         prove: bool) -> bool:
    """Fold the next page after the watermark inside the caller's write transaction.
    Returns True when more pages may follow."""
    after = await read_watermark(conn, tenant_id)
    page = await paging.next_page(conn, tenant_id, after, STEP_EVENT_TYPES, page_size)
    await _fold_events(conn, tenant_id, page.events, prove=prove)
    if page.newest > after:
        await _write_watermark(conn, tenant_id, page.newest)
    return page.more


async def catch_up(conn: aiosqlite.Connection, tenant_id: str) -> None:
    """The registered fold: every step event after the watermark, in ``conn``'s
    transaction, advancing native checkpoints for the step keys it creates."""
    await paging.fold_to_end(
        conn, lambda c: _fold_one_page(c, tenant_id, PAGE_SIZE, prove=True))


projection_builder.register("pipeline_steps", STEP_EVENT_TYPES, catch_up)


async def refresh_pipeline_steps(db: Database, *, tenant_id: str = TENANT_ID,
                                 page_size: int = PAGE_SIZE) -> int:
    """Fold every step event after the shared operations watermark; returns the watermark
    afterwards. Cheap when nothing is new (two indexed reads, no write lock)."""
    return await paging.refresh(
        db, tenant_id, watermark_name(tenant_id),
        lambda conn: _fold_one_page(conn, tenant_id, page_size, prove=True))


async def rebuild_pipeline_steps(db: Database, *, tenant_id: str = TENANT_ID,
                                 page_size: int = PAGE_SIZE) -> int:
    """Drop the tenant's rows and fold the whole log again, in one transaction. A rebuild
    restores key sets rather than writing new ones, so it never advances checkpoints
    (a ready proof over the restored rows is valid again by itself)."""
    return await paging.rebuild(db, tenant_id, watermark_name(tenant_id),
                                step_rows.TABLES,
                                lambda conn: _fold_one_page(conn, tenant_id, page_size,
                                                            prove=False))


async def refold_execution(conn: aiosqlite.Connection, ref) -> None:
    """Rebuild one execution's rows from its events (inside the caller's transaction):
    the targeted repair for rows lost behind the builder's back. Never advances the
    checkpoint (the caller judges the proof afterwards)."""
    await step_rows.delete_execution(conn, ref)
    events = await step_rows.run_events(conn, ref.tenant_id, ref.discover_run_id, STEP_EVENT_TYPES)
    events = [event for event in events
              if (step := parse_step_event(event)) is not None
              and step.discover_workflow_id == ref.discover_workflow_id]
    await _fold_events(conn, ref.tenant_id, events, prove=False)
