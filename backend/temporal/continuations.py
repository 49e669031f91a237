"""Dispatching condition-driven preparation from the API.

The profile outbox drain runs at API startup and after every profile save, one drain at a
time per API process. For each open outbox row, oldest first, it either reattaches to an
execution that may already exist (``intended`` / ``started`` rows: start under the same
id with ``USE_EXISTING`` while it runs and ``REJECT_DUPLICATE`` once it closed) and awaits
it, or records the dispatch intent for the newest never-started row (coalescing the older
never-started ones into it) and only then asks Temporal to start it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from temporalio.client import Client, WorkflowFailureError, WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy, WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from backend.config import PREP_TASK_QUEUE, AppPaths
from backend.faults import fault_point
from backend.store import profile_outbox
from backend.store.db import Database
from backend.temporal.activities.continuation import WORKFLOW_TYPE, ContinuationInput

log = logging.getLogger(__name__)

RETRY_AFTER_S = 5.0


def condition_workflow_id(code: str, host: str) -> str:
    """One stable identity per resolved condition (reused by a later episode once the
    earlier run closed)."""
    slug = re.sub(r"[^a-z0-9.]+", "-", host.lower()).strip("-")
    return f"enrich-condition-{code.lower().replace('_', '-')}-{slug}"


@dataclass(frozen=True)
class Dispatched:
    workflow_id: str
    run_id: str
    attached: bool  # an execution under this id was already running


async def start_or_attach(client: Client, workflow_id: str, input: ContinuationInput, *,
                          reuse_closed: bool) -> tuple[WorkflowHandle | None, Dispatched | None]:
    """(handle, what happened); (None, None) when ``reuse_closed`` is False and the id
    already ran to completion, i.e. this exact continuation was delivered before."""
    try:
        handle = await client.start_workflow(
            WORKFLOW_TYPE, input, id=workflow_id, task_queue=PREP_TASK_QUEUE,
            id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
            id_reuse_policy=(WorkflowIDReusePolicy.ALLOW_DUPLICATE if reuse_closed
                             else WorkflowIDReusePolicy.REJECT_DUPLICATE),
        )
    except WorkflowAlreadyStartedError:
        return None, None
    # ``started`` is False when USE_EXISTING handed back a run an earlier start created.
    # The SDK keeps the response only privately; unknown reads as "started by us".
    response = getattr(handle, "_start_workflow_response", None)
    attached = response is not None and not getattr(response, "started", True)
    return handle, Dispatched(workflow_id, handle.result_run_id or "", attached)


class ProfileOutboxDrainer:
    """One background drain at a time; a kick during a drain makes it look again."""

    def __init__(self, db: Database, paths: AppPaths,
                 temporal: Callable[[], Awaitable[Client | None]],
                 heartbeat_timeout_s: Callable[[], int]):
        self._db = db
        self._paths = paths
        self._temporal = temporal
        self._heartbeat_timeout_s = heartbeat_timeout_s
        self._task: asyncio.Task | None = None
        self._again = False

    def kick(self) -> None:
        self._again = True
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._run(), name="profile-outbox-drain")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def idle(self) -> None:
        """Wait for the current drain (tests and shutdown ordering)."""
        while self._task is not None and not self._task.done():
            await asyncio.wait({self._task})

    async def _run(self) -> None:
        while self._again:
            self._again = False
            try:
                await self._drain_once()
            except Exception:  # noqa: BLE001 - Temporal away: rows stay, retried below
                log.exception("profile outbox drain failed; retrying in %.0fs", RETRY_AFTER_S)
                self._again = True
                await asyncio.sleep(RETRY_AFTER_S)

    async def _drain_once(self) -> None:
        client = await self._temporal()
        if client is None:
            raise RuntimeError("Temporal unreachable")
        while True:
            step = profile_outbox.next_drain_step(await profile_outbox.open_rows(self._db))
            if step is None:
                return
            row = step.row
            if step.kind == "dispatch":
                row = await profile_outbox.record_intent(self._db, step)
                # The crash window the outbox exists for: intent committed, nothing started.
                fault_point(self._paths, "profile-outbox-before-start")
            await self._deliver(client, row)

    async def _deliver(self, client: Client, row: profile_outbox.OutboxRow) -> None:
        input = ContinuationInput(trigger="profile", profile_revision=row.revision,
                                  heartbeat_timeout_s=self._heartbeat_timeout_s())
        workflow_id = row.workflow_id or profile_outbox.continuation_workflow_id(row.revision)
        handle, dispatched = await start_or_attach(client, workflow_id, input, reuse_closed=False)
        if handle is None:  # it ran and closed before: delivered
            await profile_outbox.mark_finished(self._db, row.outbox_id)
            return
        await profile_outbox.mark_started(self._db, row.outbox_id, dispatched.run_id)
        # Await it, so a newer revision never runs beside an older one.
        with contextlib.suppress(WorkflowFailureError):
            await handle.result()
        await profile_outbox.mark_finished(self._db, row.outbox_id)
