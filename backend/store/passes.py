"""The ``enrichment_pass`` and ``pdf_render`` pipeline steps of a Discover execution.

Per-job Enrich and PDF work is recorded on canonical ``job_stage_states`` rows; these two
steps record the execution-level boundary around it, as the spec asks: "terminal
reconciliation owns the persisted enrichment-pass boundary". When membership closes (the
Discover run finalizes as completed / completed_with_issues) both passes are queued and
started for the execution; they settle (``PipelineStepCompleted`` with bounded counts)
once every planned member that requires the stage has settled it:

* its row is terminal (succeeded / failed / exhausted / blocked / skipped / canceled), or
* its row is still pending but the member's preparation workflow has closed since the
  member was planned, so nothing will move it any more (``notReachedCount``).

Settling is idempotent (the terminal event is deduplicated per run / kind / item /
attempt), so the preparation lifecycle and the reconciler may both try at any time.
"""

from __future__ import annotations

import aiosqlite

from backend.domain import events as ev
from backend.domain.clock import utc_now_iso
from backend.store import step_events

PASS_STAGES = {"enrichment_pass": "enrich", "pdf_render": "pdf"}
_TERMINALS = "'WorkflowCompleted', 'WorkflowFailed', 'WorkflowCanceled'"
SETTLED_BUCKETS = {
    "succeeded": "succeeded_count", "failed": "failed_count", "exhausted": "failed_count",
    "canceled": "failed_count", "blocked": "blocked_count", "skipped": "skipped_count",
}


def _ids(ref, kind: str) -> dict:
    return {"discover_workflow_id": ref.discover_workflow_id,
            "discover_run_id": ref.discover_run_id, "step_kind": kind, "item_key": kind,
            "attempt": 1}


async def open_passes(conn: aiosqlite.Connection, ref) -> None:
    """Membership is closed: queue and start both passes, then settle what already can."""
    now = utc_now_iso()
    for kind in PASS_STAGES:
        await step_events.append_step_event(conn, ev.PipelineStepQueued(**_ids(ref, kind),
                                                                  queued_at=now),
                                      tenant_id=ref.tenant_id)
        await step_events.append_step_event(conn, ev.PipelineStepStarted(**_ids(ref, kind),
                                                                   started_at=now),
                                      tenant_id=ref.tenant_id)
    await settle_passes(conn, ref)


async def member_settlement(conn: aiosqlite.Connection, ref, stage: str) -> dict[str, int] | None:
    """Counts of how the execution's planned members settled ``stage``, or None while any
    of them may still move."""
    cursor = await conn.execute(
        "SELECT m.job_id, s.status,"
        # Read from the event log, which the lifecycle writes in the same transaction as
        # the terminal fact (the run projection is folded later).
        " EXISTS (SELECT 1 FROM job_events t WHERE t.tenant_id = m.tenant_id"
        "   AND t.workflow_id = m.preparation_workflow_id AND t.type IN"
        f"   ({_TERMINALS}) AND t.created_at >= m.planned_at) AS closed_since_planned,"
        " EXISTS (SELECT 1 FROM job_events b WHERE b.tenant_id = m.tenant_id"
        "   AND b.workflow_id = m.preparation_workflow_id AND b.type = 'WorkflowStarted'"
        "   AND NOT EXISTS (SELECT 1 FROM job_events t WHERE t.tenant_id = b.tenant_id"
        f"     AND t.run_id = b.run_id AND t.type IN ({_TERMINALS}))) AS running"
        " FROM discovery_execution_jobs m LEFT JOIN job_stage_states s"
        "   ON s.job_id = m.job_id AND s.stage = ?"
        " WHERE m.tenant_id = ? AND m.discover_workflow_id = ? AND m.discover_run_id = ?"
        " AND m.plan_state = 'planned'"
        " AND EXISTS (SELECT 1 FROM json_each(m.required_steps_json) r WHERE r.value = ?)",
        (stage, ref.tenant_id, ref.discover_workflow_id, ref.discover_run_id, stage),
    )
    counts = {"target_count": 0}
    for _job_id, status, closed_since_planned, running in await cursor.fetchall():
        counts["target_count"] += 1
        bucket = SETTLED_BUCKETS.get(status or "")
        if bucket is None:
            if running or not closed_since_planned:
                return None  # pending / queued / running work that may still move
            bucket = "not_reached_count"
        counts[bucket] = counts.get(bucket, 0) + 1
    return counts


async def settle_passes(conn: aiosqlite.Connection, ref) -> list[str]:
    """Complete each running pass of ``ref`` whose members have all settled. Returns the
    kinds completed now."""
    completed = []
    for kind in await step_events.running_step_kinds(conn, ref, tuple(PASS_STAGES)):
        counts = await member_settlement(conn, ref, PASS_STAGES[kind])
        if counts is None:
            continue
        await step_events.append_step_event(conn, ev.PipelineStepCompleted(
            **_ids(ref, kind), counts=ev.PipelineStepCounts(**counts)),
            tenant_id=ref.tenant_id)
        completed.append(kind)
    return completed


async def settle_open_passes(conn: aiosqlite.Connection) -> int:
    """Settle every execution that still has a running pass (the reconciler's and the
    preparation lifecycle's entry point). Returns how many passes completed."""
    cursor = await conn.execute(
        "SELECT DISTINCT tenant_id, discover_workflow_id, discover_run_id"
        " FROM pipeline_step_projections WHERE status = 'running'"
        " AND step_kind IN ('enrichment_pass', 'pdf_render')")
    done = 0
    for tenant_id, workflow_id, run_id in await cursor.fetchall():
        ref = _Ref(tenant_id, workflow_id, run_id)
        done += len(await settle_passes(conn, ref))
    return done


class _Ref:
    def __init__(self, tenant_id: str, discover_workflow_id: str, discover_run_id: str):
        self.tenant_id = tenant_id
        self.discover_workflow_id = discover_workflow_id
        self.discover_run_id = discover_run_id
