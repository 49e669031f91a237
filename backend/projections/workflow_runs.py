"""``workflow_run_projections``: one row per exact Temporal run, folded from the Workflow*
lifecycle events.

Fold rules (pure, attempt-safe, idempotent under replay):

* ``WorkflowStarted`` creates a ``running`` row, or fills a row's missing start facts;
  it never reopens a terminal row and never replaces an earlier start's input summary.
* The first terminal event (``WorkflowCompleted`` / ``WorkflowFailed`` /
  ``WorkflowCanceled``) wins; later terminal events for the same run are ignored.
* ``WorkflowCancellationRequested`` only stamps ``cancel_requested_at`` (the earliest
  request time seen); it never changes the status. Accepting a cancellation is not the
  same thing as observing terminal ``canceled``.

Kept by the projection builder (fold-at-write): :func:`catch_up` is registered for the
Workflow* events and folds, inside the appending transaction, every such event after the
watermark in bounded pages. :func:`refresh_workflow_runs` is the repair pass (start-up and
the worker's reconcile loop): when the table holds fewer started rows than there are
distinct ``WorkflowStarted`` runs at or below the watermark (rows were lost behind the
builder's back), it rebuilds from event 0; otherwise it only catches up.
"""

from __future__ import annotations

import json
import logging
import weakref
from dataclasses import dataclass, replace
from typing import Any

import aiosqlite

from backend.config import TENANT_ID
from backend.domain.clock import parse_iso
from backend.projections import paging
from backend.store import projection_builder, watermarks
from backend.store.db import Database
from backend.store.events import StoredEvent
from backend.store.read_models import workflow_runs as run_rows

log = logging.getLogger(__name__)

WATERMARK_PREFIX = "workflow_runs"
PAGE_SIZE = 500

STARTED = "WorkflowStarted"
CANCEL_REQUESTED = "WorkflowCancellationRequested"
RECONCILED = "WorkflowReconciled"
NOT_FOUND_STATUS = "reconciled_not_found"
TERMINAL_EVENTS = {
    "WorkflowCompleted": "completed",
    "WorkflowFailed": "failed",
    "WorkflowCanceled": "canceled",
}
WORKFLOW_EVENT_TYPES = (STARTED, *TERMINAL_EVENTS, CANCEL_REQUESTED, RECONCILED)
TERMINAL_STATUSES = frozenset(TERMINAL_EVENTS.values())
STATUSES = ("running", *TERMINAL_EVENTS.values(), NOT_FOUND_STATUS)
UNKNOWN_TYPE = "unknown"

COLUMNS = (
    "tenant_id", "run_id", "workflow_id", "workflow_type", "status", "job_id", "started_at",
    "closed_at", "duration_ms", "error_code", "input_summary_json", "cancel_requested_at",
    "last_event_id",
)


@dataclass(frozen=True)
class WorkflowRunRow:
    tenant_id: str
    run_id: str
    workflow_id: str
    workflow_type: str
    status: str
    job_id: str | None = None
    started_at: str | None = None
    closed_at: str | None = None
    duration_ms: int | None = None
    error_code: str | None = None
    input_summary_json: str = "{}"
    cancel_requested_at: str | None = None
    last_event_id: int = 0

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES

    @property
    def input_summary(self) -> dict[str, Any]:
        try:
            value = json.loads(self.input_summary_json or "{}")
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {}

    def values(self) -> tuple:
        return tuple(getattr(self, column) for column in COLUMNS)


def watermark_name(tenant_id: str = TENANT_ID) -> str:
    return f"{WATERMARK_PREFIX}:{tenant_id}"


# --- the pure fold -----------------------------------------------------------------------


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def related_job_id(input_summary: dict[str, Any]) -> str | None:
    """The one canonical jobId an input summary names (``jobId``, or a one-element
    ``jobIds``); None when it names none or several."""
    job_id = _text(input_summary.get("jobId"))
    if job_id:
        return job_id
    job_ids = input_summary.get("jobIds")
    if isinstance(job_ids, list) and len(job_ids) == 1:
        return _text(job_ids[0])
    return None


def _earliest(current: str | None, candidate: str | None) -> str | None:
    if not current:
        return candidate
    if not candidate:
        return current
    try:
        return candidate if parse_iso(candidate) < parse_iso(current) else current
    except ValueError:
        return current


def fold_workflow_event(
    row: WorkflowRunRow | None, event: StoredEvent, *, tenant_id: str = TENANT_ID
) -> WorkflowRunRow | None:
    """Fold one stored event into the run's row (None: no row yet). Events that are not
    Workflow* lifecycle events, or that name no run, leave the row as it is."""
    if event.type not in WORKFLOW_EVENT_TYPES:
        return row
    payload = paging.payload_dict(event)
    run_id = _text(payload.get("runId")) or event.run_id
    if not run_id or (row is not None and row.run_id != run_id):
        return row
    occurred_at = _text(payload.get("occurredAt")) or event.created_at
    workflow_id = _text(payload.get("workflowId")) or event.workflow_id
    workflow_type = _text(payload.get("workflowType"))
    if row is None:
        row = WorkflowRunRow(
            tenant_id=tenant_id, run_id=run_id, workflow_id=workflow_id or "",
            workflow_type=workflow_type or UNKNOWN_TYPE, status="running", last_event_id=0,
        )

    if event.type == STARTED:
        if row.started_at is not None:
            return row  # a repeated start: the first one's facts stand
        summary = payload.get("inputSummary")
        summary = summary if isinstance(summary, dict) else {}
        return replace(
            row,
            workflow_id=row.workflow_id or workflow_id or "",
            workflow_type=workflow_type if row.workflow_type == UNKNOWN_TYPE and workflow_type
            else row.workflow_type,
            started_at=occurred_at,
            input_summary_json=json.dumps(summary, sort_keys=True, separators=(",", ":")),
            job_id=row.job_id or related_job_id(summary),
            duration_ms=paging.duration_ms(occurred_at, row.closed_at),
            last_event_id=max(row.last_event_id, event.id),
        )

    if event.type in TERMINAL_EVENTS:
        if row.terminal:
            return row  # the first terminal result wins
        status = TERMINAL_EVENTS[event.type]
        error_code = None
        if status == "failed":
            error_code = _text(payload.get("errorCode")) or "workflow_failed"
        return replace(
            row, status=status, closed_at=occurred_at, error_code=error_code,
            duration_ms=paging.duration_ms(row.started_at, occurred_at),
            last_event_id=max(row.last_event_id, event.id),
        )

    if event.type == RECONCILED:
        # Provisional, never terminal: a recovered run goes back to running and its
        # real outcome folds in as an ordinary terminal event.
        if row.terminal:
            return row
        verdict = payload.get("verdict")
        status = NOT_FOUND_STATUS if verdict == NOT_FOUND_STATUS else "running"
        return replace(row, status=status, last_event_id=max(row.last_event_id, event.id))

    # WorkflowCancellationRequested: a timeline fact that only stamps the request time.
    requested_at = _text(payload.get("requestedAt")) or occurred_at
    stamped = _earliest(row.cancel_requested_at, requested_at)
    if stamped == row.cancel_requested_at:
        return row
    return replace(row, cancel_requested_at=stamped,
                   last_event_id=max(row.last_event_id, event.id))


# --- the builder -------------------------------------------------------------------------


async def read_watermark(db_or_conn, tenant_id: str = TENANT_ID) -> int:
    return await watermarks.read_watermark(db_or_conn, watermark_name(tenant_id))


async def _write_watermark(conn: aiosqlite.Connection, tenant_id: str, event_id: int) -> None:
    await watermarks.write_watermark(conn, watermark_name(tenant_id), event_id)


def row_from_record(record: Any) -> WorkflowRunRow:
    return WorkflowRunRow(**{column: record[column] for column in COLUMNS})


async def _load_rows(conn: aiosqlite.Connection, tenant_id: str,
                     run_ids: set[str]) -> dict[str, WorkflowRunRow]:
    records = await run_rows.read_rows(conn, COLUMNS, tenant_id, run_ids)
    return {record["run_id"]: row_from_record(record) for record in records}


async def _fold_one_page(conn: aiosqlite.Connection, tenant_id: str, page_size: int) -> bool:
    """Fold the next page after the watermark inside the caller's write transaction.
    Returns True when more pages may follow."""
    after = await read_watermark(conn, tenant_id)
    page = await paging.next_page(conn, tenant_id, after, WORKFLOW_EVENT_TYPES, page_size)
    events = page.events
    run_ids = {rid for rid in (_text(paging.payload_dict(e).get("runId")) or e.run_id for e in events) if rid}
    rows: dict[str, WorkflowRunRow | None] = dict(await _load_rows(conn, tenant_id, run_ids))
    before = dict(rows)
    for event in events:
        run_id = _text(paging.payload_dict(event).get("runId")) or event.run_id
        if not run_id:
            log.warning("workflow event %s names no run; skipped", event.id)
            continue
        rows[run_id] = fold_workflow_event(rows.get(run_id), event, tenant_id=tenant_id)
    changed = [row for run_id, row in rows.items() if row is not None and row != before.get(run_id)]
    await run_rows.write_rows(conn, COLUMNS, [row.values() for row in changed])
    if page.newest > after:
        await _write_watermark(conn, tenant_id, page.newest)
    return page.more


async def catch_up(conn: aiosqlite.Connection, tenant_id: str) -> None:
    """The registered fold: every Workflow* event after the watermark, in ``conn``'s
    transaction."""
    await paging.fold_to_end(conn, lambda c: _fold_one_page(c, tenant_id, PAGE_SIZE))


projection_builder.register(WATERMARK_PREFIX, WORKFLOW_EVENT_TYPES, catch_up)


# (database path, tenant) -> the watermark at which a rebuild could not restore every row.
_UNFIXABLE: dict[tuple[str, str], int] = {}


# Per open database (one connection to one file) and tenant: (watermark, distinct
# WorkflowStarted runs at or below it). The log is append-only (ids only grow, nothing is
# deleted), so the count at a higher watermark is this count plus the runs first started
# in between: the lost-rows check reads only the new start events, not every run's again.
_STARTED_RUNS: weakref.WeakKeyDictionary[Database, dict[str, tuple[int, int]]] = (
    weakref.WeakKeyDictionary())


async def _started_runs(db: Database, tenant_id: str, watermark: int) -> int:
    memo = _STARTED_RUNS.setdefault(db, {})
    known = memo.get(tenant_id)
    if known and known[0] == watermark:
        return known[1]
    if known and known[0] < watermark:
        count = known[1] + await run_rows.started_runs_between(
            db, tenant_id, STARTED, after=known[0], upto=watermark)
    else:
        count = await run_rows.started_runs_upto(db, tenant_id, STARTED, watermark)
    memo[tenant_id] = (watermark, count)
    return count


async def _rows_lost(db: Database, tenant_id: str, watermark: int) -> bool:
    expected = await _started_runs(db, tenant_id, watermark)
    return await run_rows.started_row_count(db, tenant_id) < expected


async def refresh_workflow_runs(
    db: Database, *, tenant_id: str = TENANT_ID, page_size: int = PAGE_SIZE
) -> int:
    """The repair pass: rebuild when rows were lost, else fold anything new since the
    watermark (normally nothing: appends fold themselves); returns the watermark.

    Cheap when nothing is new (indexed reads, no write lock; the started-run count is
    kept per watermark, see ``_started_runs``). Rebuilds from event 0
    when rows were lost behind the builder's back."""
    watermark = await read_watermark(db, tenant_id)
    unfixable = (str(db.path), tenant_id)
    if (watermark and _UNFIXABLE.get(unfixable) != watermark
            and await _rows_lost(db, tenant_id, watermark)):
        log.warning("workflow_run_projections is missing rows below watermark %s; rebuilding",
                    watermark)
        rebuilt = await rebuild_workflow_runs(db, tenant_id=tenant_id, page_size=page_size)
        if await _rows_lost(db, tenant_id, rebuilt):
            # Unfoldable start events: rebuilding again cannot help until the log grows.
            log.error("workflow_run_projections is still short after a rebuild at %s", rebuilt)
            _UNFIXABLE[unfixable] = rebuilt
        return rebuilt
    return await paging.refresh(db, tenant_id, watermark_name(tenant_id),
                                lambda conn: _fold_one_page(conn, tenant_id, page_size))


async def rebuild_workflow_runs(
    db: Database, *, tenant_id: str = TENANT_ID, page_size: int = PAGE_SIZE
) -> int:
    """Drop the tenant's rows and fold the whole log again from event 0, in one
    transaction, so no reader of another connection sees a half-built table."""
    return await paging.rebuild(db, tenant_id, watermark_name(tenant_id),
                                run_rows.TABLES,
                                lambda conn: _fold_one_page(conn, tenant_id, page_size))


# --- reads -------------------------------------------------------------------------------


async def get_run(db: Database, run_id: str, *, tenant_id: str = TENANT_ID
                  ) -> WorkflowRunRow | None:
    record = await run_rows.read_row(db, COLUMNS, tenant_id, run_id)
    return row_from_record(record) if record else None

