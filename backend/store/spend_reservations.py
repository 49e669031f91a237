"""``llm_spend_reservations``: what admitted, unfinished runs may still spend today.

A run's own row is written by its spend preflight (keyed by the exact run id) with the
provider and model it was admitted under. A stage that is about to call a different model
adds a *re-admission* row (keyed by run, job, stage and model; ``parent_run_id`` names the
run). Every open row counts against the ceiling until the run ends and releases them all."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import aiosqlite

from backend.config import TENANT_ID
from backend.domain.clock import utc_now_iso
from backend.store.spend import from_micro_usd, to_micro_usd


@dataclass(frozen=True)
class Reservation:
    key: str  # the run id, or a re-admission's key
    reserved: Decimal
    provider: str | None  # None: admitted before the basis was recorded
    model: str | None
    released: bool


async def read_reservation(conn: aiosqlite.Connection, key: str) -> Reservation | None:
    row = await (await conn.execute(
        "SELECT reserved_micro_usd, provider, model, released_at FROM llm_spend_reservations"
        " WHERE tenant_id = ? AND run_id = ?", (TENANT_ID, key))).fetchone()
    if row is None:
        return None
    return Reservation(key, from_micro_usd(row[0]), row[1], row[2], row[3] is not None)


async def insert_reservation(conn: aiosqlite.Connection, *, key: str, workflow_id: str, day: str,
                             reserved: Decimal, provider: str, model: str,
                             parent_run_id: str | None = None) -> None:
    await conn.execute(
        "INSERT INTO llm_spend_reservations (tenant_id, run_id, workflow_id, day,"
        " reserved_micro_usd, created_at, provider, model, parent_run_id)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (TENANT_ID, key, workflow_id, day, to_micro_usd(reserved), utc_now_iso(), provider,
         model, parent_run_id),
    )


async def open_reserved(conn: aiosqlite.Connection, day: str) -> Decimal:
    """Every open reservation of the spend day (runs and re-admissions)."""
    row = await (await conn.execute(
        "SELECT SUM(reserved_micro_usd) FROM llm_spend_reservations WHERE tenant_id = ?"
        " AND day = ? AND released_at IS NULL", (TENANT_ID, day))).fetchone()
    return from_micro_usd(int(row[0] or 0))


async def release_run(conn: aiosqlite.Connection, run_id: str) -> None:
    """A run ended: its own reservation and every re-admission of its stages."""
    await conn.execute(
        "UPDATE llm_spend_reservations SET released_at = ? WHERE tenant_id = ?"
        " AND (run_id = ? OR parent_run_id = ?) AND released_at IS NULL",
        (utc_now_iso(), TENANT_ID, run_id, run_id),
    )
