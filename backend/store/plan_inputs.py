"""What the preparation planner reads: each job's stage rows and user status, the jobs a
preparation run is open for, and the backlog a Discover execution sweeps.

Shared by Discover's fan-out (``temporal/activities/discovery.py``) and the worker's
resume passes (``temporal/loops/halted_work.py``), which apply the same planning rule."""

from __future__ import annotations

from collections.abc import Iterable

import aiosqlite

from backend.config import TENANT_ID
from backend.store.db import select_in_chunks

StageState = tuple[str, str, str | None]  # (stage, status, blocked_reason)


async def stage_states(conn: aiosqlite.Connection, job_ids: list[str],
                       tenant_id: str = TENANT_ID) -> dict[str, list[StageState]]:
    """Each job's stage rows; a job without rows is absent."""
    rows = await select_in_chunks(
        conn, "SELECT job_id, stage, status, blocked_reason FROM job_stage_states"
        " WHERE tenant_id = ? AND job_id IN ({marks})", (tenant_id,), job_ids)
    by_job: dict[str, list[StageState]] = {}
    for job_id, stage, status, reason in rows:
        by_job.setdefault(job_id, []).append((stage, status, reason))
    return by_job


async def user_statuses(conn: aiosqlite.Connection, job_ids: list[str]) -> dict[str, str | None]:
    """The user's status of each job that exists (None: not set)."""
    return dict(await select_in_chunks(
        conn, "SELECT job_id, user_status FROM jobs WHERE job_id IN ({marks})", (), job_ids))


async def job_titles(conn: aiosqlite.Connection, job_ids: list[str]) -> dict[str, str]:
    """Each existing job's title."""
    return dict(await select_in_chunks(
        conn, "SELECT job_id, title FROM jobs WHERE job_id IN ({marks})", (), job_ids))


async def running_preparation_jobs(conn: aiosqlite.Connection, workflow_type: str,
                                   tenant_id: str = TENANT_ID) -> set[str]:
    """Jobs with a preparation run open in the run read model (open but not yet holding a
    stage counts: it is active)."""
    cursor = await conn.execute(
        "SELECT job_id FROM workflow_run_projections WHERE tenant_id = ?"
        " AND status = 'running' AND workflow_type = ? AND job_id IS NOT NULL",
        (tenant_id, workflow_type))
    return {row[0] for row in await cursor.fetchall()}


async def backlog_candidates(conn: aiosqlite.Connection, *, tenant_id: str,
                             discover_workflow_id: str, discover_run_id: str,
                             redo_statuses: Iterable[str], lifting_blocks: Iterable[str],
                             limit: int, include_active: bool = False) -> list[str]:
    """Pre-existing jobs with work left in a stage (a redo status, or blocked for a reason
    that lifts now), none active, not user-set and not already in this execution; oldest
    first. ``include_active``: also jobs with a stage queued or running (they may end in
    a redo status before the sweep runs)."""
    redo, lifting = list(redo_statuses), list(lifting_blocks)
    if include_active:
        redo += ["queued", "running"]
    idle = ("" if include_active else
            " AND NOT EXISTS (SELECT 1 FROM job_stage_states a WHERE a.tenant_id = j.tenant_id"
            "   AND a.job_id = j.job_id AND a.status IN ('queued', 'running'))")
    cursor = await conn.execute(
        "SELECT j.job_id FROM jobs j WHERE j.tenant_id = ? AND j.user_status IS NULL"
        " AND NOT EXISTS (SELECT 1 FROM discovery_execution_jobs m"
        "   WHERE m.tenant_id = j.tenant_id AND m.discover_workflow_id = ?"
        "   AND m.discover_run_id = ? AND m.job_id = j.job_id)"
        f"{idle}"
        " AND (NOT EXISTS (SELECT 1 FROM job_stage_states e"
        "        WHERE e.tenant_id = j.tenant_id AND e.job_id = j.job_id)"
        "   OR EXISTS (SELECT 1 FROM job_stage_states s"
        "        WHERE s.tenant_id = j.tenant_id AND s.job_id = j.job_id"
        f"       AND (s.status IN ({','.join('?' * len(redo))})"
        f"            OR (s.status = 'blocked' AND s.blocked_reason IN"
        f"                ({','.join('?' * len(lifting)) or 'NULL'})))))"
        " ORDER BY j.first_seen_at, j.job_id LIMIT ?",
        (tenant_id, discover_workflow_id, discover_run_id, *redo, *lifting, limit),
    )
    return [row[0] for row in await cursor.fetchall()]
