"""``llm_spend``: the UPSERT ledger of estimated LLM cost per UTC day, provider and model.

Money is integer micro-dollars in SQLite and Decimal in code, never float sums."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal

import aiosqlite

from backend.config import TENANT_ID
from backend.domain.clock import utc_now, utc_now_iso
from backend.store.db import Database

MICRO = Decimal(1_000_000)


def utc_day(moment: datetime | None = None) -> str:
    """The spend day: the UTC calendar date, 'YYYY-MM-DD'."""
    return (moment or utc_now()).astimezone(UTC).strftime("%Y-%m-%d")


def to_micro_usd(cost: Decimal) -> int:
    """Dollars to integer micro-dollars, rounding half up."""
    return int((Decimal(cost) * MICRO).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def from_micro_usd(micro: int) -> Decimal:
    return Decimal(int(micro)) / MICRO


async def record_spend(
    conn: aiosqlite.Connection, *, day: str, provider: str, model: str,
    input_tokens: int, output_tokens: int, cost: Decimal, calls: int = 1,
) -> None:
    """Add one call (or ``calls`` calls) to the day's row, inside the caller's transaction."""
    await conn.execute(
        "INSERT INTO llm_spend (tenant_id, day, provider, model, calls, input_tokens,"
        " output_tokens, cost_micro_usd, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (tenant_id, day, provider, model) DO UPDATE SET"
        " calls = calls + excluded.calls,"
        " input_tokens = input_tokens + excluded.input_tokens,"
        " output_tokens = output_tokens + excluded.output_tokens,"
        " cost_micro_usd = cost_micro_usd + excluded.cost_micro_usd,"
        " updated_at = excluded.updated_at",
        (TENANT_ID, day, provider, model, calls, max(input_tokens, 0), max(output_tokens, 0),
         max(to_micro_usd(cost), 0), utc_now_iso()),
    )


async def record_source_spend(conn: aiosqlite.Connection, *, day: str, source: str,
                              cost: Decimal, calls: int = 1) -> None:
    """Add one paid call of a job from ``source`` to the day's per-source row, inside the
    caller's transaction (the one that records the call in ``llm_spend``)."""
    await conn.execute(
        "INSERT INTO llm_spend_by_source (tenant_id, day, source, calls, cost_micro_usd,"
        " updated_at) VALUES (?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (tenant_id, day, source) DO UPDATE SET calls = calls + excluded.calls,"
        " cost_micro_usd = cost_micro_usd + excluded.cost_micro_usd,"
        " updated_at = excluded.updated_at",
        (TENANT_ID, day, source, calls, max(to_micro_usd(cost), 0), utc_now_iso()),
    )


async def source_spent_in(conn: aiosqlite.Connection, day: str, source: str) -> Decimal:
    """What the jobs of one source cost on ``day``, inside the caller's transaction."""
    row = await (await conn.execute(
        "SELECT cost_micro_usd FROM llm_spend_by_source WHERE tenant_id = ? AND day = ?"
        " AND source = ?", (TENANT_ID, day, source))).fetchone()
    return from_micro_usd(int(row[0])) if row else Decimal(0)


async def job_source(conn: aiosqlite.Connection, job_id: str) -> str | None:
    """The source a job's spend counts against: the one that first found it."""
    row = await (await conn.execute(
        "SELECT first_source FROM jobs WHERE tenant_id = ? AND job_id = ?",
        (TENANT_ID, job_id))).fetchone()
    return row[0] if row else None


async def spent_on(db: Database, day: str) -> Decimal:
    row = await db.fetchone(
        "SELECT COALESCE(SUM(cost_micro_usd), 0) FROM llm_spend WHERE tenant_id = ? AND day = ?",
        (TENANT_ID, day),
    )
    return from_micro_usd(row[0])


@dataclass(frozen=True)
class SpendByDay:
    day: str
    cost_usd: Decimal
    calls: int
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class SpendByModel:
    provider: str
    model: str
    cost_usd: Decimal
    calls: int
    input_tokens: int
    output_tokens: int


async def ledger_by_day(db: Database, days: int, *, today: str | None = None) -> list[SpendByDay]:
    """Totals for each day with recorded spend among the last ``days`` UTC days (today
    included), newest first. Days without rows are absent, not zero-filled."""
    end = today or utc_day()
    start = (datetime.strptime(end, "%Y-%m-%d") - timedelta(days=max(days, 1) - 1)).strftime(
        "%Y-%m-%d"
    )
    rows = await db.fetchall(
        "SELECT day, SUM(cost_micro_usd), SUM(calls), SUM(input_tokens), SUM(output_tokens)"
        " FROM llm_spend WHERE tenant_id = ? AND day BETWEEN ? AND ?"
        " GROUP BY day ORDER BY day DESC",
        (TENANT_ID, start, end),
    )
    return [
        SpendByDay(day=row[0], cost_usd=from_micro_usd(row[1]), calls=int(row[2]),
                   input_tokens=int(row[3]), output_tokens=int(row[4]))
        for row in rows
    ]


async def ledger_by_model(db: Database, day: str) -> list[SpendByModel]:
    """One row per provider and model for ``day``, most expensive first."""
    rows = await db.fetchall(
        "SELECT provider, model, cost_micro_usd, calls, input_tokens, output_tokens"
        " FROM llm_spend WHERE tenant_id = ? AND day = ?"
        " ORDER BY cost_micro_usd DESC, calls DESC, provider, model",
        (TENANT_ID, day),
    )
    return [
        SpendByModel(provider=row[0], model=row[1], cost_usd=from_micro_usd(row[2]),
                     calls=int(row[3]), input_tokens=int(row[4]), output_tokens=int(row[5]))
        for row in rows
    ]


async def spent_in(conn: aiosqlite.Connection, day: str) -> Decimal:
    """Today's ledger total inside the caller's transaction."""
    row = await (await conn.execute(
        "SELECT SUM(cost_micro_usd) FROM llm_spend WHERE tenant_id = ? AND day = ?",
        (TENANT_ID, day))).fetchone()
    return from_micro_usd(int(row[0] or 0))


async def recent_cost_per_call(conn: aiosqlite.Connection, provider: str, model: str) -> Decimal:
    """The model's average recorded cost per call over the last 7 days (0 without calls)."""
    total, calls = await (await conn.execute(
        "SELECT SUM(cost_micro_usd), SUM(calls) FROM llm_spend"
        " WHERE tenant_id = ? AND provider = ? AND model = ? AND day >= date('now', '-7 days')",
        (TENANT_ID, provider, model))).fetchone()
    return from_micro_usd(int(total)) / calls if calls else Decimal(0)
