"""GET /v1/discovery-schedule: the setting, what Temporal actually has, and the next runs.

A settings save that changes ``discoverySchedule`` reconciles the Temporal Schedule at
once (:func:`reconcile_after_settings_save`); the worker's reconcile pass is the backstop
when Temporal did not answer at save time."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Literal

from fastapi import APIRouter, Depends, Request

from backend.api.errors import error_responses
from backend.api.security import require_token
from backend.config import AppSettings
from backend.domain.model import CamelModel
from backend.temporal.schedule import (
    SCHEDULE_ID,
    read_schedule_status,
    reconcile_discovery_schedule,
)

log = logging.getLogger(__name__)

router = APIRouter(tags=["schedule"], dependencies=[Depends(require_token)])


class DiscoveryScheduleView(CamelModel):
    enabled: bool
    cron: str
    time_zone: str = "UTC"
    schedule_id: str = SCHEDULE_ID
    state: Literal["active", "absent", "unknown"]
    reason: str | None = None
    next_run_times: list[datetime] | None = None
    paused: bool | None = None
    running_runs: int | None = None


def _reason(enabled: bool, cron: str, status) -> str | None:
    """Why what Temporal has differs from the setting (the worker will reconcile it)."""
    if status.state == "unknown":
        return status.reason
    if enabled and status.state == "absent":
        return "not_reconciled"
    if not enabled and status.state == "active":
        return "not_reconciled"
    if enabled and status.configured_cron not in (None, cron):
        return "not_reconciled"
    if status.paused:
        return "paused"
    return None


@router.get("/v1/discovery-schedule", response_model=DiscoveryScheduleView,
            responses=error_responses(401))
async def get_discovery_schedule(request: Request) -> DiscoveryScheduleView:
    context = request.app.state.context
    wanted = context.settings.discovery_schedule
    status = await read_schedule_status(await context.temporal())
    return DiscoveryScheduleView(
        enabled=wanted.enabled, cron=wanted.cron, state=status.state,
        reason=_reason(wanted.enabled, wanted.cron, status),
        next_run_times=status.next_run_times, paused=status.paused, running_runs=status.running,
    )


async def reconcile_after_settings_save(context, before: AppSettings, after: AppSettings) -> None:
    """Apply a changed schedule setting now. Never fails the save: the setting is stored,
    and the worker's next reconcile pass applies it if Temporal does not answer here."""
    if before.discovery_schedule == after.discovery_schedule:
        return
    client = await context.temporal()
    if client is None:
        return
    try:
        outcome = await reconcile_discovery_schedule(client, after.discovery_schedule)
        log.info("discovery schedule reconciled after a settings save: %s", outcome)
    except Exception:  # noqa: BLE001 - the worker's pass retries
        log.exception("discovery schedule reconcile after save failed")
