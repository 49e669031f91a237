"""Which jobs a resolved condition resumes, and the user's host grants.

Shared by the API (to count and record the resolution) and the continuation's selection
activity (to pick the exact jobs when it runs)."""

from __future__ import annotations

import aiosqlite

from backend.config import TENANT_ID
from backend.domain import events as ev
from backend.domain.clock import utc_now_iso
from backend.domain.ids import host_of
from backend.domain.stages import PROFILE_MISSING, UPSTREAM_NOT_SUCCEEDED
from backend.store.db import Database
from backend.store.events import append_event

_NOT_BUSY = (" AND NOT EXISTS (SELECT 1 FROM job_stage_states a WHERE a.job_id = j.job_id"
             " AND a.status IN ('queued', 'running'))")


async def jobs_awaiting_profile(db: Database) -> list[str]:
    """Enriched jobs whose Score, Tailor or Cover is still to do (pending, retryable, or
    blocked only for want of a profile / upstream result). Succeeded stages are not in
    the set's reason: the continuation reuses them instead of rescoring."""
    rows = await db.fetchall(
        "SELECT j.job_id FROM jobs j JOIN job_stage_states e ON e.job_id = j.job_id"
        " AND e.stage = 'enrich' AND e.status = 'succeeded'"
        " WHERE j.tenant_id = ? AND j.user_status IS NULL"
        " AND EXISTS (SELECT 1 FROM job_stage_states s WHERE s.job_id = j.job_id"
        "   AND s.stage IN ('score', 'tailor', 'cover')"
        "   AND (s.status IN ('pending', 'failed', 'exhausted', 'canceled')"
        "        OR (s.status = 'blocked' AND s.blocked_reason IN (?, ?))))"
        + _NOT_BUSY + " ORDER BY j.job_id",
        (TENANT_ID, PROFILE_MISSING, UPSTREAM_NOT_SUCCEEDED),
    )
    return [row[0] for row in rows]


async def jobs_blocked_by(db: Database, code: str, host: str) -> list[str]:
    """Jobs whose Enrich is blocked with exactly ``code`` and whose posting is on
    ``host``. Legacy rows without a stage reason fall back to the enrichment row's."""
    rows = await db.fetchall(
        "SELECT j.job_id, j.url FROM jobs j JOIN job_stage_states e ON e.job_id = j.job_id"
        " AND e.stage = 'enrich' LEFT JOIN job_enrichments en ON en.job_id = j.job_id"
        " WHERE j.tenant_id = ? AND j.user_status IS NULL AND e.status = 'blocked'"
        " AND (e.blocked_reason = ? OR (e.blocked_reason IS NULL AND en.blocked_reason = ?))"
        + _NOT_BUSY + " ORDER BY j.job_id",
        (TENANT_ID, code, code),
    )
    return [row[0] for row in rows if host_of(row[1]) == host]


async def grant_host(conn: aiosqlite.Connection, host: str, code: str) -> None:
    await conn.execute(
        "INSERT INTO enrich_access_grants (tenant_id, host, code, granted_at)"
        " VALUES (?, ?, ?, ?) ON CONFLICT (tenant_id, host) DO NOTHING",
        (TENANT_ID, host, code, utc_now_iso()),
    )


async def record_condition_resolved(db: Database, *, code: str, host: str, workflow_id: str,
                                    job_count: int) -> None:
    """The user's grant for ``host`` and the resolution fact, in one transaction."""
    async with db.transaction() as conn:
        await grant_host(conn, host, code)
        await append_event(conn, ev.EnrichConditionResolved(
            code=code, host=host, workflow_id=workflow_id, job_count=job_count),
            workflow_id=workflow_id)


async def granted_hosts(conn: aiosqlite.Connection) -> frozenset[str]:
    cursor = await conn.execute(
        "SELECT host FROM enrich_access_grants WHERE tenant_id = ?", (TENANT_ID,))
    return frozenset(row[0] for row in await cursor.fetchall())
