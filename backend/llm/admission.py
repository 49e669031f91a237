"""Admission under the daily ceiling: the spend preflight, safe under concurrency.

The spec's preflight fails a workflow once today's ledger meets the ceiling. Checked
alone, that lets fifty preparations that start in the same second all pass before any
of them has spent a cent. So each spendful run also reserves its estimated cost, in the
same transaction as the check: a run is admitted only while ledger + open reservations
+ its own estimate stays within the ceiling. Reservations are released when the run
ends; a run already admitted is never interrupted.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import aiosqlite

from backend.config import TENANT_ID, AppSettings
from backend.domain.clock import utc_now, utc_now_iso
from backend.llm.budget import BudgetStatus, budget_status
from backend.llm.rates import RateTable, estimate_llm_cost_usd
from backend.store.spend import from_micro_usd, to_micro_usd, utc_day

# A typical preparation call, used until the ledger has real averages for this model.
TYPICAL_INPUT_TOKENS = 4000
TYPICAL_OUTPUT_TOKENS = 1200


@dataclass(frozen=True)
class Admission:
    admitted: bool
    status: BudgetStatus
    reserved: Decimal
    reason: str | None = None  # ceiling_reached | estimate_exceeds_remaining


async def per_call_estimate(conn: aiosqlite.Connection, settings: AppSettings, rates: RateTable,
                            *, provider: str, model: str, local: bool) -> Decimal:
    """The larger of the model's recent average cost per call and a typical call."""
    typical = estimate_llm_cost_usd(rates, provider, model, TYPICAL_INPUT_TOKENS,
                                    TYPICAL_OUTPUT_TOKENS, local=local)
    cursor = await conn.execute(
        "SELECT SUM(cost_micro_usd), SUM(calls) FROM llm_spend"
        " WHERE tenant_id = ? AND provider = ? AND model = ? AND day >= date('now', '-7 days')",
        (TENANT_ID, provider, model),
    )
    total, calls = await cursor.fetchone()
    observed = from_micro_usd(int(total)) / calls if calls else Decimal(0)
    return max(typical, observed)


async def admit(conn: aiosqlite.Connection, settings: AppSettings, *, run_id: str,
                workflow_id: str, estimate: Decimal) -> Admission:
    """Check and reserve in the caller's (write-locked) transaction; idempotent per run."""
    now = utc_now()
    day = utc_day(now)
    spent = await _sum(conn, "SELECT SUM(cost_micro_usd) FROM llm_spend"
                             " WHERE tenant_id = ? AND day = ?", day)
    status = budget_status(spent, Decimal(settings.daily_budget_usd), now)
    existing = await (await conn.execute(
        "SELECT reserved_micro_usd FROM llm_spend_reservations WHERE tenant_id = ? AND run_id = ?",
        (TENANT_ID, run_id))).fetchone()
    if existing is not None:
        return Admission(True, status, from_micro_usd(existing[0]))
    if status.exhausted:
        return Admission(False, status, Decimal(0), "ceiling_reached")
    if not status.unlimited and estimate > 0:
        reserved = await _sum(conn, "SELECT SUM(reserved_micro_usd) FROM llm_spend_reservations"
                                    " WHERE tenant_id = ? AND day = ? AND released_at IS NULL", day)
        if spent + reserved + estimate > Decimal(settings.daily_budget_usd):
            return Admission(False, status, Decimal(0), "estimate_exceeds_remaining")
    await conn.execute(
        "INSERT INTO llm_spend_reservations (tenant_id, run_id, workflow_id, day,"
        " reserved_micro_usd, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        (TENANT_ID, run_id, workflow_id, day, to_micro_usd(estimate), utc_now_iso()),
    )
    return Admission(True, status, estimate)


async def release(conn: aiosqlite.Connection, run_id: str) -> None:
    await conn.execute(
        "UPDATE llm_spend_reservations SET released_at = ? WHERE tenant_id = ? AND run_id = ?"
        " AND released_at IS NULL",
        (utc_now_iso(), TENANT_ID, run_id),
    )


async def _sum(conn: aiosqlite.Connection, sql: str, day: str) -> Decimal:
    row = await (await conn.execute(sql, (TENANT_ID, day))).fetchone()
    return from_micro_usd(int(row[0] or 0))
