"""The revalidating read of an execution's coverage checkpoint (``projectionCoverage``),
and the repair pass's half of it that persists what the read only reports.

The checkpoint rows, the key sets and the digest are the store's
(:mod:`backend.store.coverage`); this is the read-model side that judges a stored proof
against the current rows. The read (:func:`read_coverage`, behind
``GET /v1/pipeline/operations``) writes nothing: a stale ready row *reads* as
``recovering``. The worker's history-repair pass (:func:`persist_stale_verdicts`) refolds
the step rows the projection lost, downgrades a proof that still fails under the write
lock, and so selects it for repair in the same pass.
"""

from __future__ import annotations

import dataclasses

from backend.projections import pipeline_steps
from backend.store import coverage as checkpoints
from backend.store import discovery as runs
from backend.store.coverage import CHECKPOINT_MISSING, PROOF_MISMATCH, Coverage
from backend.store.db import Database

REVALIDATED_PER_PASS = 20  # the newest ready checkpoints (the operations view reads those)


async def read_coverage(db: Database, ref) -> Coverage:
    """The execution's checkpoint, revalidated against the current durable rows (the step
    projection is current: appends fold themselves). Reads only.

    A ready row whose counts or digest no longer match, or whose step rows no longer cover
    the logged step keys, is answered ``recovering`` with ``proof_mismatch`` and
    ``downgraded`` set; the stored row stays as it is until the worker's repair pass
    (:func:`persist_stale_verdicts`) judges it again and persists the verdict. Without a
    row the result is ``recovering`` with ``checkpoint_missing`` and mode None: the
    reconciler has not reached that execution yet."""
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
    # One consistent snapshot: a native write landing between two of the key-set reads
    # must not look like a broken proof.
    async with db.read_snapshot() as conn:
        stored = await checkpoints.read_checkpoint(conn, ref)
        members = await checkpoints.member_keys(conn, ref)
        steps = await checkpoints.projected_step_keys(conn, ref)
        logged = await checkpoints.event_step_keys(conn, ref)
    if stored.status != "ready" or checkpoints.still_proven(stored, members, steps, logged):
        return stored
    return dataclasses.replace(stored, status="recovering", error_code=PROOF_MISMATCH,
                               persisted_members=len(members), persisted_steps=len(steps),
                               downgraded=True)


async def persist_stale_verdict(db: Database, ref) -> Coverage | None:
    """Judge a ready checkpoint under the write lock and persist the verdict: step rows
    the projection lost are refolded from the log first (then the proof may hold again);
    a proof that still fails is downgraded ``ready → recovering`` (``proof_mismatch``),
    which selects the execution for history repair."""
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
        return await checkpoints.read_checkpoint(conn, ref)


async def persist_stale_verdicts(db: Database, *, limit: int = REVALIDATED_PER_PASS
                                 ) -> dict[str, str]:
    """The repair pass's revalidation of the newest ready checkpoints: each is judged
    without the write lock first (as a read would), and only a stale one is judged again
    and persisted. Returns run id → resulting status for the ones it touched."""
    touched = {}
    for key in await runs.ready_checkpoints(db, limit=limit):
        if (await read_coverage(db, key)).downgraded:
            result = await persist_stale_verdict(db, key)
            touched[key.discover_run_id] = result.status if result else "missing"
    return touched

