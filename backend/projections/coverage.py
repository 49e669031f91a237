"""The revalidating read of an execution's coverage checkpoint (``projectionCoverage``).

The checkpoint rows, the key sets and the digest are the store's
(:mod:`backend.store.coverage`); this is the read-model side that judges a stored proof
against the current rows and, for step rows the projection lost, refolds them from the
log (:func:`backend.projections.pipeline_steps.refold_execution`) before judging.
"""

from __future__ import annotations

from backend.projections import pipeline_steps
from backend.store import coverage as checkpoints
from backend.store.coverage import CHECKPOINT_MISSING, Coverage
from backend.store.db import Database


async def read_coverage(db: Database, ref) -> Coverage:
    """The execution's checkpoint, revalidated against the current durable rows (the step
    projection is current: appends fold themselves).

    A ready row whose counts or digest no longer match is downgraded to ``recovering``
    (persisted, error code ``proof_mismatch``, so the worker's repair selects it) under
    the write lock, after refolding any step rows the projection lost. Without a row the
    result is ``recovering`` with ``checkpoint_missing`` and mode None: nothing is
    persisted, the reconciler has not reached that execution yet."""
    stored = await checkpoints.read_checkpoint(db, ref)
    if stored is None:
        return Coverage(
            tenant_id=ref.tenant_id, discover_workflow_id=ref.discover_workflow_id,
            discover_run_id=ref.discover_run_id, status="recovering", mode=None,
            decoder_version=None, history_event_watermark=0, expected_members=0,
            persisted_members=await checkpoints.member_count(db, ref), expected_steps=0,
            persisted_steps=await checkpoints.step_count(db, ref), digest=None,
            error_code=CHECKPOINT_MISSING, checked_at=None,
        )
    if stored.status != "ready":
        return stored
    # Optimistic check without the write lock; a mismatch is judged again under it.
    if checkpoints.still_proven(stored, await checkpoints.member_keys(db, ref),
                                await checkpoints.projected_step_keys(db, ref),
                                await checkpoints.event_step_keys(db, ref)):
        return stored
    async with db.transaction() as conn:
        stored = await checkpoints.read_checkpoint(conn, ref)
        if stored is None or stored.status != "ready":
            return stored
        logged = await checkpoints.event_step_keys(conn, ref)
        steps = await checkpoints.projected_step_keys(conn, ref)
        if not logged <= steps:  # projection rows lost behind the builder's back
            await pipeline_steps.refold_execution(conn, ref)
            steps = await checkpoints.projected_step_keys(conn, ref)
        members = await checkpoints.member_keys(conn, ref)
        if checkpoints.still_proven(stored, members, steps, logged):
            return stored
        await checkpoints.downgrade(conn, ref, stored, members=len(members), steps=len(steps))
        downgraded = await checkpoints.read_checkpoint(conn, ref)
    return checkpoints.coverage_from_record(
        tuple(getattr(downgraded, column) for column in checkpoints.COLUMNS), downgraded=True)
