"""Reads of the budget-resume pass: the selected batches and contact research the daily
ceiling halted, and the resume intents it committed (halted preparations are read in
``preparation_halts``; ``backend/temporal/loops/budget_resume.py`` decides what to do)."""

from __future__ import annotations

from dataclasses import dataclass

import aiosqlite

from backend.config import TENANT_ID
from backend.store.db import Database
from backend.store.preparation_halts import BUDGET_HALT_CODES

BATCH_TYPE = "BatchStageWorkflow"
CLOSED = ("completed", "failed", "canceled", "reconciled_not_found")


@dataclass(frozen=True)
class RunRow:
    """One run of ``workflow_run_projections`` as the pass needs it."""

    workflow_id: str
    run_id: str
    status: str
    error_code: str | None
    started_at: str | None
    closed_at: str | None
    input_summary_json: str
    started_event_id: int  # its WorkflowStarted (0 when missing)


@dataclass(frozen=True)
class RefusedItem:
    """A selected batch's job whose stage was refused by the ceiling mid-run (the stage
    row still failed ``budget_exceeded`` and owned by that batch run)."""

    run_id: str
    stage: str
    job_id: str


@dataclass(frozen=True)
class TaskRow:
    """The newest contact research task of a job, halted by the ceiling or (``queued``) a
    resume whose start may have been lost."""

    task_id: str
    job_id: str
    workflow_id: str
    run_id: str | None
    status: str
    finished_at: str | None
    started_event_id: int


_STARTED_ID = ("(SELECT e.id FROM job_events e WHERE e.tenant_id = {t}.tenant_id"
               " AND e.dedupe_key = 'WorkflowStarted:' || {t}.run_id)")


async def batch_runs(db: Database, limit: int) -> list[RunRow]:
    """The newest ``limit`` selected-batch runs, newest first (lineages are told apart by
    the caller)."""
    rows = await db.fetchall(
        "SELECT w.workflow_id, w.run_id, w.status, w.error_code, w.started_at, w.closed_at,"
        f" w.input_summary_json, {_STARTED_ID.format(t='w')}"
        " FROM workflow_run_projections w WHERE w.tenant_id = ? AND w.workflow_type = ?"
        " ORDER BY w.started_at DESC LIMIT ?", (TENANT_ID, BATCH_TYPE, limit))
    return [RunRow(*row[:7], int(row[7] or 0)) for row in rows]


async def refused_batch_items(db: Database, limit: int) -> list[RefusedItem]:
    """Stage rows a closed selected-batch run left failed ``budget_exceeded`` (or
    ``source_budget_share_reached``: the job's source used its share of the day)."""
    rows = await db.fetchall(
        "SELECT s.owner_run_id, s.stage, s.job_id FROM job_stage_states s"
        " JOIN workflow_run_projections w ON w.tenant_id = s.tenant_id"
        "  AND w.run_id = s.owner_run_id"
        " WHERE s.tenant_id = ? AND s.status = 'failed'"
        f" AND s.error_code IN ({', '.join('?' for _ in BUDGET_HALT_CODES)})"
        f" AND w.workflow_type = ? AND w.status IN ({', '.join('?' for _ in CLOSED)})"
        " ORDER BY s.owner_run_id, s.stage, s.job_id LIMIT ?",
        (TENANT_ID, *BUDGET_HALT_CODES, BATCH_TYPE, *CLOSED, limit))
    return [RefusedItem(*row) for row in rows]


async def halted_contact_tasks(db: Database, intent_type: str, limit: int) -> list[TaskRow]:
    """Each job's newest contact research task when it failed ``budget_exceeded``, or when
    it is a queued task a resume intent (``intent_type``) created and no run has taken
    yet; oldest first."""
    rows = await db.fetchall(
        "SELECT t.task_id, t.job_id, t.workflow_id, t.run_id, t.status, t.finished_at,"
        f" {_STARTED_ID.format(t='t')} FROM contact_research_tasks t WHERE t.tenant_id = ?"
        " AND ((t.status = 'failed' AND t.failure_code = 'budget_exceeded')"
        "   OR (t.status = 'queued' AND t.run_id IS NULL AND EXISTS (SELECT 1 FROM job_events i"
        "     WHERE i.tenant_id = t.tenant_id AND i.job_id = t.job_id AND i.type = ?"
        "     AND json_extract(i.payload_json, '$.taskId') = t.task_id)))"
        " AND NOT EXISTS (SELECT 1 FROM contact_research_tasks n WHERE n.tenant_id = t.tenant_id"
        "   AND n.job_id = t.job_id AND n.seq > t.seq)"
        " ORDER BY COALESCE(t.finished_at, t.requested_at), t.job_id LIMIT ?",
        (TENANT_ID, intent_type, limit))
    return [TaskRow(*row[:6], int(row[6] or 0)) for row in rows]


async def event_id_by_dedupe_key(db: Database, key: str) -> int | None:
    row = await db.fetchone(
        "SELECT id FROM job_events WHERE tenant_id = ? AND dedupe_key = ?", (TENANT_ID, key))
    return int(row[0]) if row else None


async def intent_task_id(conn: aiosqlite.Connection, key: str) -> str | None:
    """The task a contact research resume intent created (read in the caller's
    transaction, which then requests the task itself when there is none)."""
    cursor = await conn.execute(
        "SELECT json_extract(payload_json, '$.taskId') FROM job_events WHERE tenant_id = ?"
        " AND dedupe_key = ?", (TENANT_ID, key))
    row = await cursor.fetchone()
    return row[0] if row else None


async def succeeded_since(db: Database, stage: str, job_ids: list[str], since: str) -> set[str]:
    """Of ``job_ids``, those whose ``stage`` succeeded after ``since`` (another run did
    the work after the halt)."""
    marks = ", ".join("?" for _ in job_ids)
    rows = await db.fetchall(
        "SELECT job_id FROM job_stage_states WHERE tenant_id = ? AND stage = ?"
        f" AND status = 'succeeded' AND finished_at > ? AND job_id IN ({marks})",
        (TENANT_ID, stage, since, *job_ids))
    return {row[0] for row in rows}
