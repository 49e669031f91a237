"""Admission under the daily ceiling: the spend preflight, safe under concurrency.

The spec's preflight fails a workflow once today's ledger meets the ceiling. Checked
alone, that lets fifty preparations that start in the same second all pass before any
of them has spent a cent. So each spendful run also reserves its estimated cost, in the
same transaction as the check: a run is admitted only while ledger + open reservations
+ its own estimate stays within the ceiling. Reservations are released when the run
ends; a run already admitted is never interrupted.

A run is admitted under one provider and model (its *basis*, recorded with the
reservation). When the settings change mid-run, say from the free offline model to a paid
one, the estimate it was admitted at no longer covers what its next call would cost: so a
stage about to call a model other than its run's basis is *re-admitted* first
(:func:`readmit_call`): one call's estimate under the new model, checked and reserved the
same way. If it does not fit, the stage stops with the typed ``budget_exceeded`` before
any call, and the job waits for the budget-resume path. The ledger can then pass the
ceiling by at most the calls already in flight when the settings changed.

One source's share. No single source's jobs may spend more than
``maxSourceShareOfDailyBudget`` of the ceiling (default half): the day's spend is also
kept per source (``llm_spend_by_source``, the source that first found the job), and a
paid stage of a job whose source's spend plus one call would pass its share is refused
before any call with the typed ``source_budget_share_reached`` (:func:`admit_source_call`),
while other sources' jobs are still admitted. Like the ceiling, a source can pass its
share by at most the calls already in flight.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import aiosqlite

from backend.config import AppSettings
from backend.domain.clock import utc_now
from backend.llm.budget import BudgetStatus, budget_status
from backend.llm.rates import RateTable, estimate_llm_cost_usd
from backend.store import spend_reservations as reservations
from backend.store.spend import recent_cost_per_call, source_spent_in, spent_in, utc_day

SOURCE_SHARE_REACHED = "source_budget_share_reached"

# A typical preparation call, used until the ledger has real averages for this model.
TYPICAL_INPUT_TOKENS = 4000
TYPICAL_OUTPUT_TOKENS = 1200


@dataclass(frozen=True)
class Admission:
    admitted: bool
    status: BudgetStatus
    reserved: Decimal
    # ceiling_reached | estimate_exceeds_remaining | source_budget_share_reached
    reason: str | None = None


@dataclass(frozen=True)
class Basis:
    """The provider and model a run is admitted under (what its calls are priced at)."""

    provider: str
    model: str
    offline: bool = False
    local: bool = False

    @classmethod
    def of(cls, provider) -> Basis:
        return cls(provider.name, provider.model, bool(provider.is_offline),
                   bool(getattr(provider, "is_local", False)))


def refusal(status: BudgetStatus, *, reserved: Decimal, estimate: Decimal) -> str | None:
    """Why a new reservation of ``estimate`` does not fit next to today's ledger and the
    open reservations (None: it fits). Pure: the preflight and re-admission share it."""
    if status.exhausted:
        return "ceiling_reached"
    if not status.unlimited and estimate > 0 and (
            status.spent_usd + reserved + estimate > status.ceiling_usd):
        return "estimate_exceeds_remaining"
    return None


def needs_readmission(admitted: reservations.Reservation | None, current: Basis) -> bool:
    """A call under ``current`` is covered by the run's admission only when the run was
    admitted under that very provider and model; offline calls cost nothing. Pure."""
    if current.offline:
        return False
    return admitted is None or (admitted.provider, admitted.model) != (current.provider,
                                                                      current.model)


def readmission_key(run_id: str, job_id: str, stage: str, basis: Basis) -> str:
    """One re-admission per run, job, stage and model: a retried attempt reuses it."""
    return f"{run_id}|{job_id}|{stage}|{basis.provider}|{basis.model}"


async def per_call_estimate(conn: aiosqlite.Connection, settings: AppSettings, rates: RateTable,
                            *, provider: str, model: str, local: bool) -> Decimal:
    """The larger of the model's recent average cost per call and a typical call."""
    typical = estimate_llm_cost_usd(rates, provider, model, TYPICAL_INPUT_TOKENS,
                                    TYPICAL_OUTPUT_TOKENS, local=local)
    return max(typical, await recent_cost_per_call(conn, provider, model))


async def _status(conn: aiosqlite.Connection, settings: AppSettings) -> BudgetStatus:
    now = utc_now()
    return budget_status(await spent_in(conn, utc_day(now)), Decimal(settings.daily_budget_usd),
                         now)


async def check(conn: aiosqlite.Connection, settings: AppSettings,
                estimate: Decimal) -> tuple[BudgetStatus, str | None]:
    """Today's status, and why ``estimate`` would be refused next to the ledger and the
    open reservations (None: it fits). Reads only: for a call made without a run to
    reserve for (the résumé import's "Improve with AI")."""
    status = await _status(conn, settings)
    return status, refusal(status, reserved=await reservations.open_reserved(conn, status.day),
                           estimate=estimate)


async def admit(conn: aiosqlite.Connection, settings: AppSettings, *, run_id: str,
                workflow_id: str, estimate: Decimal, basis: Basis | None = None) -> Admission:
    """Check and reserve in the caller's (write-locked) transaction; idempotent per run.
    ``basis``: the provider and model the estimate was made for."""
    status = await _status(conn, settings)
    existing = await reservations.read_reservation(conn, run_id)
    if existing is not None:
        return Admission(True, status, existing.reserved)
    reason = refusal(status, reserved=await reservations.open_reserved(conn, status.day),
                     estimate=estimate)
    if reason is not None:
        return Admission(False, status, Decimal(0), reason)
    await reservations.insert_reservation(
        conn, key=run_id, workflow_id=workflow_id, day=status.day, reserved=estimate,
        provider=basis.provider if basis else None, model=basis.model if basis else None)
    return Admission(True, status, estimate)


async def readmit_call(conn: aiosqlite.Connection, settings: AppSettings, rates: RateTable, *,
                       run_id: str, workflow_id: str, job_id: str, stage: str,
                       basis: Basis) -> Admission:
    """Before a stage of ``run_id`` calls a model under ``basis``: admitted at once when the
    run was admitted under it (or it is offline); otherwise one call's estimate under it
    is checked and reserved like a preflight (idempotent per run, job, stage and model)."""
    status = await _status(conn, settings)
    if not needs_readmission(await reservations.read_reservation(conn, run_id), basis):
        return Admission(True, status, Decimal(0))
    key = readmission_key(run_id, job_id, stage, basis)
    existing = await reservations.read_reservation(conn, key)
    if existing is not None and not existing.released:
        return Admission(True, status, existing.reserved)
    estimate = await per_call_estimate(conn, settings, rates, provider=basis.provider,
                                       model=basis.model, local=basis.local)
    reason = refusal(status, reserved=await reservations.open_reserved(conn, status.day),
                     estimate=estimate)
    if reason is not None:
        return Admission(False, status, Decimal(0), reason)
    if existing is None:
        await reservations.insert_reservation(
            conn, key=key, workflow_id=workflow_id, day=status.day, reserved=estimate,
            provider=basis.provider, model=basis.model, parent_run_id=run_id)
    return Admission(True, status, estimate)


def source_share(settings: AppSettings) -> float:
    """The share of the ceiling one source may use. A share leaves room for the other
    sources, so with one enabled source (the demo board of a first run, one company's
    board) the ceiling alone applies."""
    enabled = sum(1 for source in settings.sources if source.enabled)
    return settings.max_source_share_of_daily_budget if enabled > 1 else 1.0


def source_share_refusal(status: BudgetStatus, *, share: float, source_spent: Decimal,
                         estimate: Decimal) -> str | None:
    """Why one more call of ``estimate`` for a source that spent ``source_spent`` today does
    not fit its share of the ceiling (None: it fits). Pure. No share without a ceiling,
    and a share of 1 (the whole ceiling) is the ceiling's own check."""
    if status.unlimited or share >= 1:
        return None
    allowed = status.ceiling_usd * Decimal(str(share))
    if source_spent >= allowed or source_spent + max(estimate, Decimal(0)) > allowed:
        return SOURCE_SHARE_REACHED
    return None


async def admit_source_call(conn: aiosqlite.Connection, settings: AppSettings,
                            rates: RateTable, *, source: str | None,
                            basis: Basis) -> Admission:
    """Before a paid call for a job found by ``source``: refused with
    ``source_budget_share_reached`` when that source's spend today plus one call's
    estimate would pass its share of the ceiling. Reads only (the ceiling's own
    reservations hold the money); an offline call or a job of no known source passes."""
    status = await _status(conn, settings)
    if basis.offline or source is None:
        return Admission(True, status, Decimal(0))
    share = source_share(settings)
    if status.unlimited or share >= 1:
        return Admission(True, status, Decimal(0))
    estimate = await per_call_estimate(conn, settings, rates, provider=basis.provider,
                                       model=basis.model, local=basis.local)
    reason = source_share_refusal(status, share=share, estimate=estimate,
                                  source_spent=await source_spent_in(conn, status.day, source))
    return Admission(reason is None, status, Decimal(0), reason)


async def release(conn: aiosqlite.Connection, run_id: str) -> None:
    """The run ended: its reservation and its stages' re-admissions count no more."""
    await reservations.release_run(conn, run_id)
