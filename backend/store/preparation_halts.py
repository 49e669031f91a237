"""Preparations that ended before their work did: the newest JobPreparationWorkflow run of a
job failed (the daily ceiling halted it, or an infrastructure fault ended it), no newer or
open preparation run exists, and the job's stage rows may still hold work. The resume passes
(backend/temporal/loops/budget_resume.py, interrupted_resume.py) and the operations snapshot read
them here."""

from __future__ import annotations

from dataclasses import dataclass

from backend.config import TENANT_ID
from backend.store.db import Database

PREPARATION_WORKFLOW = "JobPreparationWorkflow"
# Codes a preparation run ends with when the machinery, not the job, failed.
INFRASTRUCTURE_CODES = ("activity_timeout", "timed_out")
# What the spend admission halts work with: the day's ceiling, or one source's share of it
# (``maxSourceShareOfDailyBudget``). The budget-resume pass starts both again.
BUDGET_HALT_CODES = ("budget_exceeded", "source_budget_share_reached")


@dataclass(frozen=True)
class FailedPreparation:
    job_id: str
    run_id: str
    started_event_id: int  # the failed run's WorkflowStarted
    error_code: str
    closed_at: str = ""  # when it failed (the resume passes go oldest first)


def _newest_failed_sql(error_codes: tuple[str, ...]) -> str:
    marks = ", ".join("?" for _ in error_codes)
    return (
        " FROM workflow_run_projections w WHERE w.tenant_id = ? AND w.workflow_type = ?"
        f" AND w.job_id IS NOT NULL AND w.status = 'failed' AND w.error_code IN ({marks})"
        " AND NOT EXISTS (SELECT 1 FROM workflow_run_projections n"
        "   WHERE n.tenant_id = w.tenant_id AND n.workflow_type = w.workflow_type"
        "   AND n.job_id = w.job_id AND n.run_id != w.run_id"
        "   AND (n.started_at > w.started_at OR n.status NOT IN ('completed', 'failed',"
        "        'canceled')))")


async def newest_failed_preparations(db: Database, error_codes: tuple[str, ...], *,
                                     limit: int) -> list[FailedPreparation]:
    """Jobs whose newest preparation run failed with one of ``error_codes`` and none is
    open, oldest failure first."""
    rows = await db.fetchall(
        "SELECT w.job_id, w.run_id, (SELECT e.id FROM job_events e WHERE e.tenant_id ="
        "   w.tenant_id AND e.dedupe_key = 'WorkflowStarted:' || w.run_id), w.error_code,"
        " w.closed_at" + _newest_failed_sql(error_codes) + " ORDER BY w.closed_at, w.job_id"
        " LIMIT ?", (TENANT_ID, PREPARATION_WORKFLOW, *error_codes, limit))
    return [FailedPreparation(job_id, run_id, int(started or 0), code, closed or "")
            for job_id, run_id, started, code, closed in rows]


async def count_halted_with_pending_work(db: Database, error_codes: tuple[str, ...]) -> int:
    """Jobs whose newest preparation ended with one of ``error_codes`` while stages still
    wait with no owner: work a resume pass will start again (the snapshot says so)."""
    row = await db.fetchone(
        "SELECT COUNT(*)" + _newest_failed_sql(error_codes)
        + " AND EXISTS (SELECT 1 FROM job_stage_states s WHERE s.tenant_id = w.tenant_id"
        "   AND s.job_id = w.job_id AND s.status = 'pending' AND s.owner_run_id IS NULL)",
        (TENANT_ID, PREPARATION_WORKFLOW, *error_codes))
    return int(row[0]) if row else 0


async def count_interrupted_with_pending_work(db: Database) -> int:
    """Jobs an infrastructure fault stopped: the interrupted-preparation pass restarts them."""
    return await count_halted_with_pending_work(db, INFRASTRUCTURE_CODES)


async def count_budget_halted_with_pending_work(db: Database) -> int:
    """Jobs the daily ceiling refused (the budget left could not cover them, used up or not):
    the budget-resume pass starts them once the day resets or the ceiling is raised."""
    return await count_halted_with_pending_work(db, BUDGET_HALT_CODES)


async def has_event(db: Database, dedupe_key: str) -> bool:
    return await db.fetchone("SELECT 1 FROM job_events WHERE tenant_id = ? AND dedupe_key = ?",
                             (TENANT_ID, dedupe_key)) is not None


async def count_job_events(db: Database, job_id: str, event_type: str) -> int:
    row = await db.fetchone(
        "SELECT COUNT(*) FROM job_events WHERE tenant_id = ? AND job_id = ? AND type = ?",
        (TENANT_ID, job_id, event_type))
    return int(row[0]) if row else 0
