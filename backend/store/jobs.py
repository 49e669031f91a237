"""Canonical job rows and the source observations that link them to discovery runs."""

from __future__ import annotations

import json
from dataclasses import dataclass

import aiosqlite

from backend.config import TENANT_ID
from backend.domain import events as ev
from backend.domain.clock import utc_now_iso
from backend.domain.ids import canonical_url, job_id_for_url
from backend.domain.postings import Posting
from backend.store.db import select_in_chunks
from backend.store.events import append_event


@dataclass(frozen=True)
class ObservedJob:
    job_id: str
    is_new: bool


async def observe_posting(
    conn: aiosqlite.Connection, posting: Posting, *, source_family: str, discover_run_id: str
) -> ObservedJob:
    """Insert the job if it is new, refresh ``last_seen_at`` otherwise, and record the
    observation. Runs inside the caller's transaction."""
    job_id = job_id_for_url(posting.url)
    now = utc_now_iso()
    salary = posting.salary
    cursor = await conn.execute(
        "INSERT INTO jobs (job_id, tenant_id, canonical_url, url, apply_url, title, company,"
        " location, remote, salary_min, salary_max, salary_currency, salary_period,"
        " employment_type, posted_at, description_html, tags_json, first_source,"
        " first_seen_at, last_seen_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (job_id) DO NOTHING",
        (job_id, TENANT_ID, canonical_url(posting.url), posting.url, posting.apply_url,
         posting.title, posting.company, posting.location, posting.remote,
         salary.min if salary else None, salary.max if salary else None,
         salary.currency if salary else None, salary.period if salary else None,
         posting.employment_type, posting.posted_at, posting.description_html,
         json.dumps(posting.tags), source_family, now, now),
    )
    is_new = cursor.rowcount == 1
    if not is_new:
        await conn.execute("UPDATE jobs SET last_seen_at = ? WHERE job_id = ?", (now, job_id))
    await conn.execute(
        "INSERT INTO source_observations (tenant_id, job_id, source_family, source_key,"
        " discover_run_id, first_observation, observed_at) VALUES (?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT DO NOTHING",
        (TENANT_ID, job_id, source_family, posting.source_key, discover_run_id, int(is_new), now),
    )
    return ObservedJob(job_id=job_id, is_new=is_new)


async def observe_discovered_posting(
    conn: aiosqlite.Connection, posting: Posting, *, source_family: str,
    discover_workflow_id: str, discover_run_id: str,
) -> ObservedJob:
    """:func:`observe_posting`, plus ``JobDiscovered`` (once per job) when it is new."""
    observed = await observe_posting(conn, posting, source_family=source_family,
                                     discover_run_id=discover_run_id)
    if observed.is_new:
        await append_event(
            conn,
            ev.JobDiscovered(
                discover_workflow_id=discover_workflow_id, discover_run_id=discover_run_id,
                job_id=observed.job_id, title=posting.title, company=posting.company,
                location=posting.location, remote=posting.remote, source_family=source_family,
            ),
            job_id=observed.job_id, workflow_id=discover_workflow_id, run_id=discover_run_id,
            dedupe_key=f"JobDiscovered:{observed.job_id}",
        )
    return observed


async def mark_prepare_anyway(conn: aiosqlite.Connection, job_id: str) -> None:
    """The user wants materials for this job whatever its fit (kept until they mark it)."""
    await conn.execute(
        "UPDATE jobs SET prepare_anyway_at = COALESCE(prepare_anyway_at, ?)"
        " WHERE tenant_id = ? AND job_id = ?", (utc_now_iso(), TENANT_ID, job_id))


async def read_job(conn: aiosqlite.Connection, job_id: str,
                   columns: tuple[str, ...] | None = None) -> dict | None:
    """One job row as a dict (``columns``, or every column); None for an unknown job."""
    selected = ", ".join(columns) if columns else "*"
    cursor = await conn.execute(f"SELECT {selected} FROM jobs WHERE job_id = ?", (job_id,))
    row = await cursor.fetchone()
    if row is None:
        return None
    return dict(zip([d[0] for d in cursor.description], row, strict=True))


async def job_exists(db, job_id: str) -> bool:
    """Is there a job with this id (read outside a transaction)?"""
    return await db.fetchone("SELECT 1 FROM jobs WHERE tenant_id = ? AND job_id = ?",
                             (TENANT_ID, job_id)) is not None


async def existing_job_ids(conn: aiosqlite.Connection, tenant_id: str,
                           job_ids: list[str]) -> set[str]:
    """Which of ``job_ids`` have a row in the canonical jobs table."""
    rows = await select_in_chunks(
        conn, "SELECT job_id FROM jobs WHERE tenant_id = ? AND job_id IN ({marks})",
        (tenant_id,), job_ids)
    return {row[0] for row in rows}
