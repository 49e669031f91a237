"""The Temporal-side cancellation requester of a run, recorded by the worker's pass.

Live backfill (:func:`backfill_cancel_requesters`, every reconcile pass): a run someone
asked Temporal to cancel (the ``temporal`` CLI, the UI, another client; JobCtrl's own
request is recorded apart as ``request_intent``) gets a ``WorkflowCancellationRequested``
fact with evidence kind ``temporal_history`` read from its immutable history, once. The
candidates are the canceled runs with no requester recorded yet (each read once per worker
process) and the running runs whose describe says a cancel was requested. A GET never
writes, so this used to happen on ``GET /v1/workflow-runs/{runId}`` and now happens here.

Restoring after a provisional ``reconciled_not_found`` verdict is replaced because the
exact run is found again:

While the run was "not found", no Temporal requester could be read for it. When the
reconciler finds the exact run again, the cancellation requester its history carries is
restored as a ``WorkflowCancellationRequested`` fact with the distinct evidence kind
``recovered_temporal_history``: the timeline says it was restored after the history was
unreachable, never that it is a fresh history read or a JobCtrl request. A requester that
was already recorded (from history or restored earlier) is never recorded twice.
"""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import UTC, timedelta

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from backend.domain import events as ev
from backend.domain.clock import to_iso, utc_now_iso
from backend.projections.workflow_runs import WorkflowRunRow, row_from_record
from backend.store import run_records
from backend.store.db import Database
from backend.store.events import any_recorded

log = logging.getLogger(__name__)

RECOVERED_BOUNDARY = "recovered_temporal_history"
HISTORY_TIMEOUT_S = 8.0


def recovered_dedupe_key(run_id: str) -> str:
    return f"CancelRequested:{RECOVERED_BOUNDARY}:{run_id}"


LIVE_BOUNDARY = "temporal_history"
UNREADABLE_RECHECK_S = 30.0   # an unreadable history is read again after this pause
CANCELED_PER_PASS = 20        # canceled runs whose history one pass reads


def history_dedupe_key(run_id: str) -> str:
    # The key of the live backfill (backfill_cancel_requesters).
    return f"CancelRequested:{LIVE_BOUNDARY}:{run_id}"


async def find_cancel_request(client: Client, row: WorkflowRunRow):
    """The run's WorkflowExecutionCancelRequested history event, or None."""
    handle = client.get_workflow_handle(row.workflow_id, run_id=row.run_id)
    async for event in handle.fetch_history_events(rpc_timeout=timedelta(seconds=5)):
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED:
            return event
    return None


UNREADABLE = object()  # read_cancel_request: the history cannot be read right now


async def read_cancel_request(client: Client, row: WorkflowRunRow):
    """The run's cancel-request history event; None when it has none; ``UNREADABLE`` when
    the history cannot be read now (Temporal away, a timeout): then nothing is recorded."""
    try:
        return await asyncio.wait_for(find_cancel_request(client, row), HISTORY_TIMEOUT_S)
    except Exception as error:  # noqa: BLE001 - history unreadable: retried later
        log.info("history of run %s not readable (%s)", row.run_id, type(error).__name__)
        return UNREADABLE


def cancellation_fact(row: WorkflowRunRow, found,
                      source_boundary: str) -> ev.WorkflowCancellationRequested:
    """The requester fact a history's cancel-request event proves (requester and reason
    bounded; the request time is the event's own, else now)."""
    attributes = found.workflow_execution_cancel_requested_event_attributes
    requested_at = (to_iso(found.event_time.ToDatetime(tzinfo=UTC))
                    if found.HasField("event_time") else utc_now_iso())
    return ev.WorkflowCancellationRequested(
        workflow_id=row.workflow_id, run_id=row.run_id, workflow_type=row.workflow_type,
        requester=(attributes.identity or "unknown")[:200],
        source_boundary=source_boundary,
        reason=attributes.cause[:500] or None,
        requested_at=requested_at,
    )


def _requester_keys(run_id: str) -> tuple[str, str]:
    """A requester read from the history, or restored earlier: either counts."""
    return history_dedupe_key(run_id), recovered_dedupe_key(run_id)


async def restore_cancel_requester(db: Database, client: Client, row: WorkflowRunRow) -> bool:
    """Record the recovered run's Temporal cancellation requester once; True when a fact
    was written. An unreadable history writes nothing (the live backfill may later)."""
    if await any_recorded(db, *_requester_keys(row.run_id)):
        return False
    found = await read_cancel_request(client, row)
    if found is None or found is UNREADABLE:
        return False
    event = cancellation_fact(row, found, RECOVERED_BOUNDARY)
    return await run_records.record_run_fact(
        db, event, job_id=row.job_id, dedupe_key=recovered_dedupe_key(row.run_id),
        unless_recorded=_requester_keys(row.run_id))  # re-checked inside the write


# --- the live backfill -------------------------------------------------------------------


class HistoryChecks:
    """Which runs' histories this process has read without finding a requester: a
    canceled run is read once; an unreadable history again after a pause, so an
    unreachable Temporal cannot slow every pass."""

    def __init__(self) -> None:
        self.checked: dict[str, tuple[str, float, float]] = {}

    def due(self, row: WorkflowRunRow) -> bool:
        seen = self.checked.get(row.run_id)
        if seen is None:
            return True
        status, at, wait_s = seen
        return row.status != status or time.monotonic() - at >= wait_s

    def mark(self, row: WorkflowRunRow, *, failed: bool = False) -> None:
        if len(self.checked) > 10_000:
            self.checked.clear()
        wait_s = UNREADABLE_RECHECK_S if failed else float("inf")
        self.checked[row.run_id] = (row.status, time.monotonic(), wait_s)


WORKER_CHECKS = HistoryChecks()  # the worker process's memory across passes


async def backfill_requester(db: Database, client: Client, row: WorkflowRunRow,
                             checks: HistoryChecks = WORKER_CHECKS) -> bool:
    """Record who asked Temporal to cancel this run, from its history, once; True when a
    fact was written. An unreadable history writes nothing (retried after a pause)."""
    if not checks.due(row) or await any_recorded(db, *_requester_keys(row.run_id)):
        return False
    found = await read_cancel_request(client, row)
    if found is UNREADABLE:
        checks.mark(row, failed=True)
        return False
    if found is None:
        checks.mark(row)
        return False
    event = cancellation_fact(row, found, LIVE_BOUNDARY)
    return await run_records.record_run_fact(
        db, event, job_id=row.job_id, dedupe_key=history_dedupe_key(row.run_id),
        unless_recorded=(recovered_dedupe_key(row.run_id),))  # a restored one counts too


async def canceled_without_requester(db: Database) -> list[WorkflowRunRow]:
    """Canceled runs whose Temporal-side requester is not recorded yet, newest first."""
    records = await run_records.runs_without_fact(
        db, status="canceled", dedupe_keys=_requester_keys)
    return [row_from_record(record) for record in records]


async def backfill_cancel_requesters(db: Database, client: Client, *,
                                     checks: HistoryChecks = WORKER_CHECKS,
                                     limit: int = CANCELED_PER_PASS) -> list[str]:
    """The canceled runs' half of the live backfill (the reconcile pass gives the running
    runs whose describe says a cancel was requested to :func:`backfill_requester`).
    Returns the run ids a requester was recorded for."""
    recorded = []
    due = [row for row in await canceled_without_requester(db) if checks.due(row)]
    for row in due[:limit]:
        if await backfill_requester(db, client, row, checks):
            recorded.append(row.run_id)
    return recorded
