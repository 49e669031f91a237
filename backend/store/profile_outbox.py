"""The profile outbox: genuine profile changes waiting to resume condition-driven
preparation, and the rules for draining them.

A row is written in the transaction that stores the profile revision. Before the API asks
Temporal to start anything it commits the dispatch intent (``intended`` plus a
``ProfileContinuationIntended`` event). So a row still ``pending`` provably never started
and may be coalesced into a newer one; an ``intended`` or ``started`` row may have
started, so the drain reattaches to (and awaits) that exact workflow id instead.
"""

from __future__ import annotations

from dataclasses import dataclass

import aiosqlite

from backend.config import TENANT_ID
from backend.domain import events as ev
from backend.domain.clock import utc_now_iso
from backend.domain.profile import CandidateProfile
from backend.store.db import Database
from backend.store.events import append_event

OPEN_STATUSES = ("pending", "intended", "started")


def continuation_workflow_id(revision: int) -> str:
    """One deterministic Temporal identity per delivered profile event."""
    return f"profile-continuation-{revision}"


def preparation_view(profile: CandidateProfile) -> dict:
    """What Score, Tailor and Cover read from a profile. JSON Resume's ``meta`` (theme,
    version, lastModified) is presentation only: a save that changes just that is a
    style / template save and resumes nothing."""
    data = profile.model_dump(mode="json", exclude={"imported_from"})
    data["resume"] = {k: v for k, v in data["resume"].items() if k != "meta"}
    return data


def is_preparation_change(old: CandidateProfile | None, new: CandidateProfile) -> bool:
    """A genuine change: what preparation reads differs after normalization. A first
    profile counts only if it has something to measure against."""
    if old is None:
        return not new.is_empty()
    return preparation_view(old) != preparation_view(new)


@dataclass(frozen=True)
class OutboxRow:
    outbox_id: int
    revision: int
    status: str
    workflow_id: str | None
    run_id: str | None


async def enqueue(conn: aiosqlite.Connection, revision: int) -> int:
    """Inside the caller's profile transaction."""
    cursor = await conn.execute(
        "INSERT INTO profile_outbox (tenant_id, revision, created_at) VALUES (?, ?, ?)",
        (TENANT_ID, revision, utc_now_iso()),
    )
    return int(cursor.lastrowid)


async def open_rows(db: Database) -> list[OutboxRow]:
    rows = await db.fetchall(
        "SELECT outbox_id, revision, status, workflow_id, run_id FROM profile_outbox"
        f" WHERE tenant_id = ? AND status IN ({', '.join('?' * len(OPEN_STATUSES))})"
        " ORDER BY outbox_id",
        (TENANT_ID, *OPEN_STATUSES),
    )
    return [OutboxRow(*row) for row in rows]


@dataclass(frozen=True)
class DrainStep:
    """What the drain does next: reattach to an older execution that may have started,
    or dispatch the newest never-started row, folding the older never-started ones in."""

    kind: str  # "reattach" | "dispatch"
    row: OutboxRow
    coalesced: tuple[OutboxRow, ...] = ()


def next_drain_step(rows: list[OutboxRow]) -> DrainStep | None:
    """Oldest first: every row with a dispatch intent is reattached (and awaited) before
    anything newer starts. Then only ``pending`` rows remain, none of which ever started,
    so one continuation for the newest covers them all."""
    for row in rows:
        if row.status in ("intended", "started"):
            return DrainStep("reattach", row)
    pending = [row for row in rows if row.status == "pending"]
    if not pending:
        return None
    return DrainStep("dispatch", pending[-1], tuple(pending[:-1]))


async def record_intent(db: Database, step: DrainStep) -> OutboxRow:
    """The durable dispatch-intent fact, committed before the Temporal start."""
    row = step.row
    workflow_id = continuation_workflow_id(row.revision)
    now = utc_now_iso()
    async with db.transaction() as conn:
        for older in step.coalesced:
            await conn.execute(
                "UPDATE profile_outbox SET status = 'coalesced', coalesced_into = ?,"
                " finished_at = ? WHERE outbox_id = ? AND status = 'pending'",
                (row.outbox_id, now, older.outbox_id),
            )
        await conn.execute(
            "UPDATE profile_outbox SET status = 'intended', workflow_id = ?, intended_at = ?"
            " WHERE outbox_id = ? AND status = 'pending'",
            (workflow_id, now, row.outbox_id),
        )
        await append_event(conn, ev.ProfileContinuationIntended(
            revision=row.revision, outbox_id=row.outbox_id, workflow_id=workflow_id,
            coalesced_revisions=[older.revision for older in step.coalesced],
        ), workflow_id=workflow_id, dedupe_key=f"ProfileContinuationIntended:{row.outbox_id}")
    return OutboxRow(row.outbox_id, row.revision, "intended", workflow_id, None)


async def mark_started(db: Database, outbox_id: int, run_id: str) -> None:
    async with db.transaction() as conn:
        await conn.execute(
            "UPDATE profile_outbox SET status = 'started', run_id = ?,"
            " started_at = COALESCE(started_at, ?) WHERE outbox_id = ? AND status IN"
            " ('intended', 'started')",
            (run_id, utc_now_iso(), outbox_id),
        )


async def mark_finished(db: Database, outbox_id: int) -> None:
    async with db.transaction() as conn:
        await conn.execute(
            "UPDATE profile_outbox SET status = 'finished', finished_at = ?"
            " WHERE outbox_id = ? AND status IN ('intended', 'started')",
            (utc_now_iso(), outbox_id),
        )
