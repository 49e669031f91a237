"""The writer of the PipelineStep* events of a Discover execution.

One event per (run, stepKind, itemKey, attempt, phase): :func:`append_step_event` appends
it with that dedupe key, so a retried activity or a repeated history merge changes
nothing. The projection builder folds it into ``pipeline_step_projections`` in the same
transaction (``backend.projections.pipeline_steps``).
"""

from __future__ import annotations

import aiosqlite

from backend.config import TENANT_ID
from backend.domain import events as ev
from backend.store.events import append_event

QUEUED, STARTED = "PipelineStepQueued", "PipelineStepStarted"
COMPLETED, FAILED = "PipelineStepCompleted", "PipelineStepFailed"
STEP_EVENT_TYPES = (QUEUED, STARTED, COMPLETED, FAILED)
PHASES = {QUEUED: "queued", STARTED: "started", COMPLETED: "terminal", FAILED: "terminal"}


def dedupe_key(event: ev.DomainEvent) -> str:
    """One event per (run, stepKind, itemKey, attempt, phase); Completed and Failed share
    the ``terminal`` phase, so an attempt has at most one terminal fact in the log."""
    return (f"PipelineStep:{event.discover_run_id}:{event.step_kind}:{event.item_key}:"
            f"{event.attempt}:{PHASES[event.event_type]}")


async def append_step_event(conn: aiosqlite.Connection, event: ev.DomainEvent, *,
                            tenant_id: str = TENANT_ID) -> int | None:
    """Append one PipelineStep* event inside the caller's transaction (deduplicated, see
    :func:`dedupe_key`). Returns the event id, or None for a repeat."""
    if event.event_type not in STEP_EVENT_TYPES:
        raise ValueError(f"not a pipeline-step event: {event.event_type}")
    return await append_event(
        conn, event, workflow_id=event.discover_workflow_id, run_id=event.discover_run_id,
        dedupe_key=dedupe_key(event), tenant_id=tenant_id,
    )


async def running_step_kinds(conn: aiosqlite.Connection, ref, kinds: tuple[str, ...]
                             ) -> list[str]:
    """The step kinds among ``kinds`` whose projected row of ``ref`` is running."""
    marks = ",".join("?" * len(kinds))
    cursor = await conn.execute(
        "SELECT step_kind FROM pipeline_step_projections WHERE tenant_id = ?"
        " AND discover_workflow_id = ? AND discover_run_id = ? AND status = 'running'"
        f" AND step_kind IN ({marks}) ORDER BY step_kind",
        (ref.tenant_id, ref.discover_workflow_id, ref.discover_run_id, *kinds))
    return [row[0] for row in await cursor.fetchall()]
