"""GET /v1/spend: today's budget status and the estimated-cost ledger."""

from __future__ import annotations

import logging

from fastapi import APIRouter, Depends, Request

from backend.api.errors import error_responses
from backend.api.security import require_token
from backend.config import load_settings
from backend.domain.model import CamelModel, Usd
from backend.llm.budget import BudgetStatus, read_spend_budget_status
from backend.store.spend import ledger_by_day, ledger_by_model

log = logging.getLogger(__name__)
router = APIRouter(tags=["spend"], dependencies=[Depends(require_token)])

LEDGER_DAYS = 30


class SpendDay(CamelModel):
    day: str
    cost_usd: Usd
    calls: int
    input_tokens: int
    output_tokens: int


class SpendModel(CamelModel):
    provider: str
    model: str
    cost_usd: Usd
    calls: int
    input_tokens: int
    output_tokens: int


class SpendOverview(CamelModel):
    today: BudgetStatus
    by_day: list[SpendDay]  # days with recorded spend among the last 30, newest first
    by_model: list[SpendModel]  # today's rows, most expensive first


@router.get("/v1/spend", response_model=SpendOverview, responses=error_responses(401))
async def get_spend(request: Request) -> SpendOverview:
    context = request.app.state.context
    try:
        settings = load_settings(context.paths)  # the ceiling may have changed on disk
    except Exception as error:  # noqa: BLE001 - fall back to the settings loaded at start
        log.warning("settings unreadable, using the ones loaded at start: %s",
                    type(error).__name__)
        settings = context.settings
    today = await read_spend_budget_status(context.db, settings)
    days = await ledger_by_day(context.db, LEDGER_DAYS, today=today.day)
    models = await ledger_by_model(context.db, today.day)
    return SpendOverview(
        today=today,
        by_day=[SpendDay(day=d.day, cost_usd=d.cost_usd, calls=d.calls,
                         input_tokens=d.input_tokens, output_tokens=d.output_tokens)
                for d in days],
        by_model=[SpendModel(provider=m.provider, model=m.model, cost_usd=m.cost_usd,
                             calls=m.calls, input_tokens=m.input_tokens,
                             output_tokens=m.output_tokens)
                  for m in models],
    )
