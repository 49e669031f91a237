"""``contact_research_task_projections`` and ``contact_projections``: the rows of
``backend/projections/contacts.py``."""

from __future__ import annotations

from collections.abc import Sequence

import aiosqlite

from backend.store.db import Database

TABLES = ("contact_projections", "contact_research_task_projections")


async def read_task(conn: aiosqlite.Connection, tenant_id: str, task_id: str,
                    columns: Sequence[str]):
    """The task's row (``columns``, in order), or None."""
    async with conn.execute(
            f"SELECT {', '.join(columns)} FROM contact_research_task_projections"
            " WHERE tenant_id = ? AND task_id = ?", (tenant_id, task_id)) as cursor:
        return await cursor.fetchone()


async def write_task(conn: aiosqlite.Connection, tenant_id: str,
                     values: dict[str, object]) -> None:
    """Insert or replace the task row: ``values`` by column name."""
    columns = tuple(values)
    await conn.execute(
        f"INSERT OR REPLACE INTO contact_research_task_projections (tenant_id,"
        f" {', '.join(columns)}) VALUES (?, {','.join('?' * len(columns))})",
        (tenant_id, *values.values()))


async def upsert_candidate(conn: aiosqlite.Connection, tenant_id: str, *, job_id: str,
                           contact_id: str, candidate_id: str, task_id: str,
                           name: str | None, title: str | None, email: str | None,
                           source_url: str | None, confidence: float, evidence: str,
                           found_at: str, event_id: int) -> None:
    """One contact of a job, kept from the newest event that named it."""
    await conn.execute(
        "INSERT INTO contact_projections (tenant_id, job_id, contact_id, candidate_id, task_id,"
        " name, title, email, source_url, confidence, evidence, found_at, last_event_id)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (tenant_id, job_id, contact_id) DO UPDATE SET"
        " candidate_id = excluded.candidate_id, task_id = excluded.task_id,"
        " name = excluded.name, title = excluded.title, email = excluded.email,"
        " source_url = excluded.source_url, confidence = excluded.confidence,"
        " evidence = excluded.evidence, found_at = excluded.found_at,"
        " last_event_id = excluded.last_event_id"
        " WHERE excluded.last_event_id > contact_projections.last_event_id",
        (tenant_id, job_id, contact_id, candidate_id, task_id, name, title, email, source_url,
         confidence, evidence, found_at, event_id))


async def job_tasks(db: Database, tenant_id: str, job_id: str) -> list:
    """The job's research tasks, newest first."""
    return await db.fetchall(
        "SELECT task_id, workflow_id, run_id, status, requested_at, started_at, finished_at,"
        " source_attempts_json, candidate_count, provider, model, failure_code"
        " FROM contact_research_task_projections WHERE tenant_id = ? AND job_id = ?"
        " ORDER BY requested_at DESC, task_id DESC", (tenant_id, job_id))


async def job_candidates(db: Database, tenant_id: str, job_id: str) -> list:
    """The job's contacts, the most confident first."""
    return await db.fetchall(
        "SELECT candidate_id, contact_id, task_id, name, title, email, source_url, confidence,"
        " evidence, found_at FROM contact_projections WHERE tenant_id = ? AND job_id = ?"
        " ORDER BY confidence DESC, COALESCE(name, email)", (tenant_id, job_id))
