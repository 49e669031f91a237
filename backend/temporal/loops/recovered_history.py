"""Restoring Temporal-history facts for a run whose provisional ``reconciled_not_found``
verdict is replaced because the exact run is found again.

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
from datetime import UTC, timedelta

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from backend.domain import events as ev
from backend.domain.clock import to_iso, utc_now_iso
from backend.projections.workflow_runs import WorkflowRunRow
from backend.store import run_records
from backend.store.db import Database
from backend.store.events import any_recorded

log = logging.getLogger(__name__)

RECOVERED_BOUNDARY = "recovered_temporal_history"
HISTORY_TIMEOUT_S = 8.0


def recovered_dedupe_key(run_id: str) -> str:
    return f"CancelRequested:{RECOVERED_BOUNDARY}:{run_id}"


def history_dedupe_key(run_id: str) -> str:
    # The key the API's live history backfill uses (backend/api/routers/workflow_runs.py).
    return f"CancelRequested:temporal_history:{run_id}"


async def find_cancel_request(client: Client, row: WorkflowRunRow):
    """The run's WorkflowExecutionCancelRequested history event, or None."""
    handle = client.get_workflow_handle(row.workflow_id, run_id=row.run_id)
    async for event in handle.fetch_history_events(rpc_timeout=timedelta(seconds=5)):
        if event.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED:
            return event
    return None


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
    was written. An unreadable history writes nothing (the API backfill may later)."""
    if await any_recorded(db, *_requester_keys(row.run_id)):
        return False
    try:
        found = await asyncio.wait_for(find_cancel_request(client, row), HISTORY_TIMEOUT_S)
    except Exception as error:  # noqa: BLE001 - history unreadable: nothing to restore
        log.info("recovered run %s: history not readable (%s)", row.run_id,
                 type(error).__name__)
        return False
    if found is None:
        return False
    event = cancellation_fact(row, found, RECOVERED_BOUNDARY)
    return await run_records.record_run_fact(
        db, event, job_id=row.job_id, dedupe_key=recovered_dedupe_key(row.run_id),
        unless_recorded=_requester_keys(row.run_id))  # re-checked inside the write
