"""Search-unit checkpoints for broad-board discovery (table ``search_units``) and their
durable receipts (``search_unit_receipts``).

One unit is one query x location x board of one source family in one Discover run. The
family activity claims a unit for its Temporal attempt (``owner_attempt``), scrapes it,
then commits the accepted jobs, their receipts and ``done`` in one transaction that is
fenced on the owner: a late write from an older attempt changes nothing. Counts always
come from the receipts, so a resumed crawl never double-counts.

Every function runs inside the caller's transaction (``Database.transaction``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import aiosqlite

from backend.config import TENANT_ID
from backend.domain.clock import utc_now_iso
from backend.domain.ids import ReceiptKind

UnitStatus = Literal["pending", "running", "done", "failed", "canceled"]
PlanState = Literal["created", "resumed", "incompatible"]
ClaimResult = Literal["claimed", "recovered", "finished", "fenced"]

TERMINAL: frozenset[str] = frozenset({"done", "failed"})
"""Units a later attempt never touches again (canceled ones may still be resumed)."""

_KEY = "discover_run_id = ? AND family = ? AND unit_key = ?"


@dataclass(frozen=True)
class PlannedUnit:
    unit_key: str
    label: str


@dataclass(frozen=True)
class UnitRow:
    unit_key: str
    label: str
    status: str
    owner_attempt: int | None
    attempts: int
    recoveries: int
    accepted_new: int
    accepted_existing: int
    filtered: int
    error_code: str | None


@dataclass(frozen=True)
class FamilyCounts:
    new_jobs: int
    existing_jobs: int
    filtered_jobs: int
    total_units: int
    completed_units: int
    failed_units: int
    canceled_units: int
    recovered_units: int


# --------------------------------------------------------------------------- the plan


async def ensure_plan(
    conn: aiosqlite.Connection,
    *,
    run_id: str,
    family: str,
    units: Sequence[PlannedUnit],
    tenant_id: str = TENANT_ID,
) -> PlanState:
    """Record the unit plan on the first attempt; a retry finds the same plan.

    ``incompatible`` means this run already has a different unit set for the family
    (the configuration or the unit keys changed underneath it): nothing is written and
    the caller must fail instead of silently starting over."""
    cursor = await conn.execute(
        "SELECT unit_key FROM search_units WHERE discover_run_id = ? AND family = ?",
        (run_id, family),
    )
    existing = {row[0] for row in await cursor.fetchall()}
    wanted = {unit.unit_key for unit in units}
    if existing:
        return "resumed" if existing == wanted else "incompatible"
    await conn.executemany(
        "INSERT INTO search_units (tenant_id, discover_run_id, family, unit_key, label)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        [(tenant_id, run_id, family, unit.unit_key, unit.label) for unit in units],
    )
    return "created"


# --------------------------------------------------------------------------- ownership


async def _newest_owner(conn: aiosqlite.Connection, *, run_id: str, family: str) -> int:
    cursor = await conn.execute(
        "SELECT COALESCE(MAX(owner_attempt), 0) FROM search_units"
        " WHERE discover_run_id = ? AND family = ?",
        (run_id, family),
    )
    return int((await cursor.fetchone())[0])


async def claim_unit(
    conn: aiosqlite.Connection, *, run_id: str, family: str, unit_key: str, attempt: int
) -> ClaimResult:
    """Make ``attempt`` the owner of one unit.

    - ``finished``: done or failed already; skip it.
    - ``fenced``: a newer attempt owns this unit or any unit of the family; this attempt
      is stale and must stop.
    - ``recovered``: an older attempt had started it and never finished (the worker died,
      or the attempt timed out or was canceled); this attempt takes it over.
    - ``claimed``: a fresh (or cleanly released) unit."""
    if await _newest_owner(conn, run_id=run_id, family=family) > attempt:
        return "fenced"
    cursor = await conn.execute(
        f"SELECT status, owner_attempt FROM search_units WHERE {_KEY}", (run_id, family, unit_key)
    )
    row = await cursor.fetchone()
    if row is None:
        raise LookupError("search unit not planned")
    status, owner = row[0], row[1]
    if status in TERMINAL:
        return "finished"
    if status == "running" and owner == attempt:
        return "claimed"  # a repeat claim by the owner changes nothing
    recovered = status in ("running", "canceled") and owner is not None and owner < attempt
    await conn.execute(
        "UPDATE search_units SET status = 'running', owner_attempt = ?, attempts = attempts + 1,"
        " recoveries = recoveries + ?, error_code = NULL, started_at = ?, finished_at = NULL"
        f" WHERE {_KEY}",
        (attempt, int(recovered), utc_now_iso(), run_id, family, unit_key),
    )
    return "recovered" if recovered else "claimed"


async def owns_unit(
    conn: aiosqlite.Connection, *, run_id: str, family: str, unit_key: str, attempt: int
) -> bool:
    """The fence: is this attempt still the running owner? Check it first thing inside the
    transaction that writes the unit's results (``BEGIN IMMEDIATE`` holds the write lock,
    so the answer cannot change before the commit)."""
    cursor = await conn.execute(
        f"SELECT 1 FROM search_units WHERE {_KEY} AND status = 'running' AND owner_attempt = ?",
        (run_id, family, unit_key, attempt),
    )
    return await cursor.fetchone() is not None


# --------------------------------------------------------------------------- receipts


async def add_receipt(
    conn: aiosqlite.Connection,
    *,
    run_id: str,
    family: str,
    unit_key: str,
    digest: str,
    kind: ReceiptKind,
    job_id: str | None = None,
    is_new: bool | None = None,
) -> bool:
    """Returns False when the unit already holds this receipt (a repeat in one result page)."""
    if (kind == "accepted") != (job_id is not None):
        raise ValueError("accepted receipts need a job id; filtered ones must not have one")
    cursor = await conn.execute(
        "INSERT INTO search_unit_receipts (discover_run_id, family, unit_key, receipt_hash, kind,"
        " job_id, is_new, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        (run_id, family, unit_key, digest, kind, job_id,
         None if is_new is None else int(is_new), utc_now_iso()),
    )
    return cursor.rowcount == 1


# --------------------------------------------------------------------------- outcomes


async def finish_unit(
    conn: aiosqlite.Connection, *, run_id: str, family: str, unit_key: str, attempt: int
) -> bool:
    """Mark the unit done with its counts taken from its receipts (fenced on the owner)."""
    cursor = await conn.execute(
        "UPDATE search_units SET status = 'done', finished_at = ?, error_code = NULL,"
        " accepted_new = (SELECT COUNT(*) FROM search_unit_receipts r WHERE r.discover_run_id ="
        "   search_units.discover_run_id AND r.family = search_units.family AND r.unit_key ="
        "   search_units.unit_key AND r.kind = 'accepted' AND r.is_new = 1),"
        " accepted_existing = (SELECT COUNT(*) FROM search_unit_receipts r WHERE r.discover_run_id"
        "   = search_units.discover_run_id AND r.family = search_units.family AND r.unit_key ="
        "   search_units.unit_key AND r.kind = 'accepted' AND r.is_new = 0),"
        " filtered = (SELECT COUNT(*) FROM search_unit_receipts r WHERE r.discover_run_id ="
        "   search_units.discover_run_id AND r.family = search_units.family AND r.unit_key ="
        "   search_units.unit_key AND r.kind = 'filtered')"
        f" WHERE {_KEY} AND status = 'running' AND owner_attempt = ?",
        (utc_now_iso(), run_id, family, unit_key, attempt),
    )
    return cursor.rowcount == 1


async def fail_unit(
    conn: aiosqlite.Connection, *, run_id: str, family: str, unit_key: str, attempt: int,
    error_code: str,
) -> bool:
    """Terminal: the unit's parameters cannot work (a bounded code, never a message)."""
    cursor = await conn.execute(
        "UPDATE search_units SET status = 'failed', error_code = ?, finished_at = ?"
        f" WHERE {_KEY} AND status = 'running' AND owner_attempt = ?",
        (error_code, utc_now_iso(), run_id, family, unit_key, attempt),
    )
    return cursor.rowcount == 1


async def release_unit(
    conn: aiosqlite.Connection, *, run_id: str, family: str, unit_key: str, attempt: int,
    error_code: str,
) -> bool:
    """Back to pending after a retryable failure: the next attempt scrapes it again
    without counting it as recovered."""
    cursor = await conn.execute(
        "UPDATE search_units SET status = 'pending', owner_attempt = NULL, error_code = ?,"
        f" finished_at = NULL WHERE {_KEY} AND status = 'running' AND owner_attempt = ?",
        (error_code, run_id, family, unit_key, attempt),
    )
    return cursor.rowcount == 1


async def cancel_units(
    conn: aiosqlite.Connection, *, run_id: str, family: str, attempt: int
) -> int:
    """Cancellation terminalizes units: this attempt's running units and every unit not
    yet started become ``canceled``. A stale attempt (a newer one owns units of this
    family) changes nothing."""
    if await _newest_owner(conn, run_id=run_id, family=family) > attempt:
        return 0
    cursor = await conn.execute(
        "UPDATE search_units SET status = 'canceled', error_code = 'canceled', finished_at = ?"
        " WHERE discover_run_id = ? AND family = ?"
        " AND ((status = 'running' AND owner_attempt = ?)"
        "   OR (status = 'pending' AND (owner_attempt IS NULL OR owner_attempt <= ?)))",
        (utc_now_iso(), run_id, family, attempt, attempt),
    )
    return cursor.rowcount


# --------------------------------------------------------------------------- reads


async def family_counts(conn: aiosqlite.Connection, *, run_id: str, family: str) -> FamilyCounts:
    """Family totals from the receipts: a job accepted by several units counts once, as
    new if any receipt created it."""
    cursor = await conn.execute(
        "SELECT COUNT(DISTINCT CASE WHEN kind = 'accepted' AND is_new = 1 THEN job_id END),"
        " COUNT(DISTINCT CASE WHEN kind = 'accepted' THEN job_id END),"
        " COUNT(DISTINCT CASE WHEN kind = 'filtered' THEN receipt_hash END)"
        " FROM search_unit_receipts WHERE discover_run_id = ? AND family = ?",
        (run_id, family),
    )
    new, accepted, filtered = await cursor.fetchone()
    cursor = await conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(status = 'done'), 0), COALESCE(SUM(status = 'failed'), 0),"
        " COALESCE(SUM(status = 'canceled'), 0), COALESCE(SUM(recoveries > 0), 0)"
        " FROM search_units WHERE discover_run_id = ? AND family = ?",
        (run_id, family),
    )
    total, done, failed, canceled, recovered = await cursor.fetchone()
    return FamilyCounts(
        new_jobs=int(new), existing_jobs=int(accepted) - int(new), filtered_jobs=int(filtered),
        total_units=int(total), completed_units=int(done), failed_units=int(failed),
        canceled_units=int(canceled), recovered_units=int(recovered),
    )


async def accepted_job_ids(conn: aiosqlite.Connection, *, run_id: str, family: str) -> list[str]:
    """Every job the family accepted, once each, in the order they were first committed."""
    cursor = await conn.execute(
        "SELECT job_id FROM search_unit_receipts"
        " WHERE discover_run_id = ? AND family = ? AND kind = 'accepted'"
        " GROUP BY job_id ORDER BY MIN(rowid)",
        (run_id, family),
    )
    return [row[0] for row in await cursor.fetchall()]


async def list_units(conn: aiosqlite.Connection, *, run_id: str, family: str) -> list[UnitRow]:
    cursor = await conn.execute(
        "SELECT unit_key, label, status, owner_attempt, attempts, recoveries, accepted_new,"
        " accepted_existing, filtered, error_code FROM search_units"
        " WHERE discover_run_id = ? AND family = ? ORDER BY rowid",
        (run_id, family),
    )
    return [UnitRow(*row) for row in await cursor.fetchall()]
