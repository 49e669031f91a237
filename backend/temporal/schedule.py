"""The discovery schedule: one Temporal Schedule, ``jobctrl-discovery-local``, that starts
``DiscoverWorkflow`` (``discover-local``) on the user's cron with ``SKIP`` overlap.

The spec reconciles it only at worker startup and calls that a gotcha. Here the same
idempotent reconcile runs at worker startup, on every worker reconcile pass, and right
after a settings save that changes ``discoverySchedule``, so no restart is needed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleAlreadyRunningError,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleSpec,
    ScheduleState,
    ScheduleUpdate,
    ScheduleUpdateInput,
)
from temporalio.service import RPCError, RPCStatusCode

from backend.config import TASK_QUEUE, AppPaths, DiscoveryScheduleSettings, load_settings
from backend.temporal.contracts import DiscoverInput
from backend.temporal.start_contracts import DISCOVER_WORKFLOW_ID
from backend.temporal.start_signing import signing_interceptor

log = logging.getLogger(__name__)

SCHEDULE_ID = "jobctrl-discovery-local"
NEXT_RUNS_SHOWN = 5
# The note carries what we configured: describe() returns the cron converted to
# calendars, so the note is how a reconcile pass knows nothing changed.
NOTE_PREFIX = "jobctrl discovery schedule; cron="

ReconcileOutcome = Literal["created", "updated", "unchanged", "deleted", "absent"]


def schedule_note(cron: str) -> str:
    return NOTE_PREFIX + cron


def cron_of_note(note: str | None) -> str | None:
    if note and note.startswith(NOTE_PREFIX):
        return note[len(NOTE_PREFIX):]
    return None


def build_schedule(cron: str) -> Schedule:
    return Schedule(
        action=ScheduleActionStartWorkflow(
            "DiscoverWorkflow", DiscoverInput(), id=DISCOVER_WORKFLOW_ID, task_queue=TASK_QUEUE,
        ),
        spec=ScheduleSpec(cron_expressions=[cron]),
        # A slow run never overlaps the next tick: that tick is skipped.
        policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP),
        state=ScheduleState(note=schedule_note(cron)),
    )


def _not_found(error: RPCError) -> bool:
    return error.status == RPCStatusCode.NOT_FOUND


async def _configured_cron(client: Client) -> tuple[bool, str | None]:
    """(exists, the cron our note says it runs). A schedule whose start action is not
    signed by this app dir's key (made before starts were signed, or under another key)
    reads as having no cron, so the reconcile replaces its action: the worker refuses
    unsigned runs (start_signing)."""
    try:
        description = await client.get_schedule_handle(SCHEDULE_ID).describe()
    except RPCError as error:
        if _not_found(error):
            return False, None
        raise
    signer = signing_interceptor(client)
    if signer is not None and not signer.schedule_action_signed(description.schedule.action):
        return True, None
    return True, cron_of_note(description.schedule.state.note)


async def reconcile_discovery_schedule(
    client: Client, settings: DiscoveryScheduleSettings
) -> ReconcileOutcome:
    """Make Temporal match the settings. Idempotent: a second call changes nothing."""
    handle = client.get_schedule_handle(SCHEDULE_ID)
    exists, cron = await _configured_cron(client)
    if not settings.enabled:
        if not exists:
            return "absent"
        try:
            await handle.delete()
        except RPCError as error:
            if not _not_found(error):  # deleted by a concurrent pass: the same outcome
                raise
        return "deleted"
    if exists and cron == settings.cron:
        return "unchanged"
    if not exists:
        try:
            await client.create_schedule(SCHEDULE_ID, build_schedule(settings.cron))
            return "created"
        except ScheduleAlreadyRunningError:
            pass  # a concurrent pass created it; make sure it carries our cron
    wanted = build_schedule(settings.cron)

    def replace(current: ScheduleUpdateInput) -> ScheduleUpdate:
        # Keep a user's pause in the Temporal UI; replace what settings own.
        state = current.description.schedule.state
        wanted.state = ScheduleState(note=schedule_note(settings.cron), paused=state.paused)
        return ScheduleUpdate(schedule=wanted)

    await handle.update(replace)
    return "updated"


async def reconcile_from_settings_file(paths: AppPaths, client: Client) -> ReconcileOutcome | None:
    """The worker's pass: re-read settings (the API may have just saved them). A failure
    is logged and retried on the next pass."""
    try:
        settings = load_settings(paths)
        return await reconcile_discovery_schedule(client, settings.discovery_schedule)
    except Exception:  # noqa: BLE001 - the next pass retries
        log.exception("discovery schedule reconcile failed")
        return None


@dataclass(frozen=True)
class ScheduleStatus:
    """What Temporal says about the schedule. ``state`` is ``unknown`` (with a reason)
    when Temporal cannot be asked; then nothing else is claimed."""

    state: Literal["active", "absent", "unknown"]
    reason: str | None = None
    next_run_times: list[datetime] | None = None
    paused: bool | None = None
    running: int | None = None
    configured_cron: str | None = None


async def read_schedule_status(client: Client | None) -> ScheduleStatus:
    if client is None:
        return ScheduleStatus("unknown", "temporal_unavailable")
    try:
        description = await client.get_schedule_handle(SCHEDULE_ID).describe()
    except RPCError as error:
        if _not_found(error):
            return ScheduleStatus("absent", next_run_times=[])
        return ScheduleStatus("unknown", "temporal_unavailable")
    except Exception:  # noqa: BLE001 - connection errors: unknown, never "absent"
        return ScheduleStatus("unknown", "temporal_unavailable")
    info = description.info
    state = description.schedule.state
    return ScheduleStatus(
        "active",
        next_run_times=list(info.next_action_times[:NEXT_RUNS_SHOWN]),
        paused=state.paused,
        running=len(info.running_actions),
        configured_cron=cron_of_note(state.note),
    )


RECONCILE_EVERY_S = 15.0


async def schedule_reconcile_loop(paths: AppPaths, client: Client, stop) -> None:
    """The worker's backstop after its startup reconcile: a pass every
    ``RECONCILE_EVERY_S`` until ``stop`` (an asyncio.Event) is set."""
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=RECONCILE_EVERY_S)
        if not stop.is_set():
            await reconcile_from_settings_file(paths, client)
