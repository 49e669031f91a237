"""The daily spend ceiling: today's ledger against ``dailyBudgetUsd`` (0 = unlimited).

The ceiling is a preflight gate per spendful workflow (``check_spend_budget``), not a
mid-call interrupt."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from decimal import Decimal

from backend.config import AppSettings
from backend.domain.clock import to_iso, utc_now
from backend.domain.model import CamelModel, Usd
from backend.llm.base import LlmError
from backend.store.db import Database
from backend.store.spend import spent_on, utc_day


class BudgetStatus(CamelModel):
    day: str  # the UTC spend day, 'YYYY-MM-DD'
    spent_usd: Usd
    ceiling_usd: Usd  # as configured; 0 when unlimited
    remaining_usd: Usd | None  # None when unlimited
    unlimited: bool
    exhausted: bool
    resets_at: str  # next UTC midnight, ISO-8601


class BudgetExceededError(LlmError):
    code = "budget_exceeded"
    retryable = False

    def __init__(self, status: BudgetStatus):
        super().__init__(
            f"daily spend ceiling reached: ${status.spent_usd:.2f} of "
            f"${status.ceiling_usd:.2f} spent on {status.day} (UTC); resets at {status.resets_at}"
        )
        self.budget = status


class SourceShareReachedError(BudgetExceededError):
    """The job's source has used its share of today's ceiling
    (``maxSourceShareOfDailyBudget``); other sources' jobs may still spend. The job waits
    like a budget halt, under its own code so it says why."""

    code = "source_budget_share_reached"

    def __init__(self, status: BudgetStatus, share: float):
        LlmError.__init__(
            self,
            f"this source's jobs used their share ({share:.0%}) of the daily spend ceiling"
            f" on {status.day} (UTC); resets at {status.resets_at}")
        self.budget = status
        self.share = share


def next_utc_midnight(now: datetime) -> datetime:
    today = now.astimezone(UTC).date()
    return datetime.combine(today + timedelta(days=1), time(0), tzinfo=UTC)


def budget_status(spent: Decimal, ceiling: Decimal, now: datetime) -> BudgetStatus:
    unlimited = ceiling <= 0
    return BudgetStatus(
        day=utc_day(now),
        spent_usd=spent,
        ceiling_usd=ceiling,
        remaining_usd=None if unlimited else max(ceiling - spent, Decimal(0)),
        unlimited=unlimited,
        exhausted=not unlimited and spent >= ceiling,
        resets_at=to_iso(next_utc_midnight(now)),
    )


async def read_spend_budget_status(
    db: Database, settings: AppSettings, now: datetime | None = None
) -> BudgetStatus:
    moment = now or utc_now()
    spent = await spent_on(db, utc_day(moment))
    return budget_status(spent, Decimal(settings.daily_budget_usd), moment)


async def ensure_budget_available(
    db: Database, settings: AppSettings, now: datetime | None = None
) -> BudgetStatus:
    """The status, or BudgetExceededError when today's ledger meets the ceiling."""
    status = await read_spend_budget_status(db, settings, now)
    if status.exhausted:
        raise BudgetExceededError(status)
    return status
