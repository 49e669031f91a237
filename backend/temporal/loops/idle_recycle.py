"""The worker's idle-recycle loop (the rule and its reasons: ``recycle_rule.py``).

Every ``check_every_s`` it gathers the facts — Temporal's visibility (running executions),
the store (open runs, queued or running stages, the newest event), this worker's activity
slots and its resident size — and once :func:`decide_recycle` says yes, it gathers them
again at once (a command may have landed meanwhile) and only then sets ``stop`` with
``recycle_requested``. The worker then shuts down like on SIGTERM and exits with
``RECYCLE_EXIT_CODE`` (``backend/supervision/recycle.py``); nothing is in flight, so nothing is interrupted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

import psutil

from backend.store.db import Database
from backend.store.open_work import read_open_work
from backend.temporal.interceptors import ActivitySlotTracker
from backend.temporal.loops.recycle_rule import (
    IdleFacts,
    QuietClock,
    RecycleDecision,
    RecyclePolicy,
    decide_recycle,
)

log = logging.getLogger(__name__)

OPEN_WORKFLOWS_QUERY = 'ExecutionStatus = "Running"'
MIB = 1024 * 1024


def resident_mib() -> float:
    return psutil.Process().memory_info().rss / MIB


async def open_workflows(client) -> int | None:
    """Running executions in the namespace, or None when visibility does not answer."""
    try:
        return (await asyncio.wait_for(client.count_workflows(OPEN_WORKFLOWS_QUERY), 10)).count
    except Exception:  # noqa: BLE001 - unknown: the rule refuses
        log.debug("visibility count failed", exc_info=True)
        return None


class IdleRecycler:
    def __init__(self, db: Database, client, tracker: ActivitySlotTracker,
                 policy: RecyclePolicy, *, clock=time.monotonic) -> None:
        self._db, self._client, self._tracker = db, client, tracker
        self._policy, self._clock = policy, clock
        self._quiet = QuietClock(clock())
        self._ready_rss = resident_mib()
        self.recycle_requested = False
        self.last_decision: RecycleDecision | None = None

    async def facts(self) -> IdleFacts:
        work = await read_open_work(self._db)
        workflows = await open_workflows(self._client)
        active = self._tracker.active
        busy = bool(workflows or work.open_runs or work.active_stages or active)
        return IdleFacts(
            open_workflows=workflows, open_runs=work.open_runs,
            active_stages=work.active_stages, active_slots=active,
            quiet_for_s=self._quiet.quiet_for(self._clock(), last_event_id=work.last_event_id,
                                              busy=busy),
            rss_mib=resident_mib(), ready_rss_mib=self._ready_rss)

    async def check(self) -> bool:
        """True once the worker should restart now (checked twice, back to back)."""
        for _ in range(2):
            facts = await self.facts()
            self.last_decision = decide_recycle(facts, self._policy)
            if not self.last_decision.may:
                return False
        log.info("idle for %.0f s with %.0f MiB over the size at start: restarting to give"
                 " the memory back", facts.quiet_for_s, facts.rss_mib - facts.ready_rss_mib)
        return True

    async def run(self, stop: asyncio.Event) -> None:
        if not self._policy.enabled:
            return
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=self._policy.check_every_s)
            if stop.is_set():
                return
            try:
                if await self.check():
                    self.recycle_requested = True
                    stop.set()
                    return
            except Exception:  # noqa: BLE001 - a failed check only postpones a recycle
                log.warning("idle check failed", exc_info=True)
