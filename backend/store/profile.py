"""The candidate profile, one revision-numbered row per tenant."""

from __future__ import annotations

import aiosqlite

from backend.config import TENANT_ID
from backend.domain import events as ev
from backend.domain.clock import utc_now_iso
from backend.domain.profile import CandidateProfile
from backend.store import profile_outbox
from backend.store.events import append_event


async def read_profile(conn: aiosqlite.Connection) -> tuple[int, CandidateProfile] | None:
    cursor = await conn.execute(
        "SELECT revision, profile_json FROM candidate_profiles WHERE tenant_id = ?", (TENANT_ID,)
    )
    row = await cursor.fetchone()
    if row is None:
        return None
    return int(row[0]), CandidateProfile.model_validate_json(row[1])


async def profile_revision(conn: aiosqlite.Connection) -> int:
    """The saved revision, 0 before any profile."""
    cursor = await conn.execute(
        "SELECT revision FROM candidate_profiles WHERE tenant_id = ?", (TENANT_ID,))
    row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def save_profile(conn: aiosqlite.Connection, profile: CandidateProfile) -> tuple[int, bool]:
    """Store a new revision unless nothing changed after normalization.
    Returns (revision, changed); the change event commits with the row, and so does the
    outbox row of a change that preparation reads (a style / template-only save, e.g.
    JSON Resume ``meta``, stores a revision but resumes nothing)."""
    current = await read_profile(conn)
    if current is not None and current[1] == profile:
        return current[0], False
    revision = (current[0] if current else 0) + 1
    await conn.execute(
        "INSERT INTO candidate_profiles (tenant_id, revision, profile_json, updated_at)"
        " VALUES (?, ?, ?, ?) ON CONFLICT (tenant_id) DO UPDATE SET revision = excluded.revision,"
        " profile_json = excluded.profile_json, updated_at = excluded.updated_at",
        (TENANT_ID, revision, profile.model_dump_json(by_alias=True), utc_now_iso()),
    )
    await append_event(conn, ev.CandidateProfileUpdated(revision=revision),
                       dedupe_key=f"CandidateProfileUpdated:{revision}")
    if profile_outbox.is_preparation_change(current[1] if current else None, profile):
        await profile_outbox.enqueue(conn, revision)
    return revision, True
