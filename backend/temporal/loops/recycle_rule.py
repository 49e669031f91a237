"""Recycling an idle worker: the rule (plain functions; the loop: ``idle_recycle.py``).

A week-long session grows the worker (the workflow cache, the SDK's and Python's heaps
after a 1,000-job run: ~100 MiB over its empty size, bench/README.md) and no allocator
knob gave that back. A process restarted while nothing runs comes back at its empty
size and loses nothing: every piece of work is durable in Temporal and the store.

The worker holds the facts (its Temporal client, its activity slots, the store), so it
decides: every ``CHECK_EVERY_S`` it gathers :class:`IdleFacts` and asks
:func:`decide_recycle`. Once the answer is yes it checks again at once, stops polling,
writes its last heartbeat as ``recycling`` and exits with :data:`RECYCLE_EXIT_CODE`. The
supervisor restarts a child that exits with that code
(``backend/supervision/recycle.py``) at once, without backoff and
without reporting it as a crash (``ManagedService``); ``/v1/health`` and the operations
snapshot say ``planned_restart`` while it is down, and a command waits for it instead of
failing (``ApiContext.require_runtime``).

Tuning (for tests and benchmarks): ``JOBCTRL_RECYCLE_QUIET_S`` (0 turns recycling off),
``JOBCTRL_RECYCLE_GROWN_MIB``, ``JOBCTRL_RECYCLE_CHECK_S``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

QUIET_S = 180.0      # nothing happened (no event, no open work) for this long
GROWN_MIB = 48.0     # and the worker holds at least this much more than when it was ready
CHECK_EVERY_S = 30.0

QUIET_ENV, GROWN_ENV, CHECK_ENV = ("JOBCTRL_RECYCLE_QUIET_S", "JOBCTRL_RECYCLE_GROWN_MIB",
                                   "JOBCTRL_RECYCLE_CHECK_S")


@dataclass(frozen=True)
class RecyclePolicy:
    quiet_s: float = QUIET_S
    grown_mib: float = GROWN_MIB
    check_every_s: float = CHECK_EVERY_S

    @property
    def enabled(self) -> bool:
        return self.quiet_s > 0

    @classmethod
    def from_env(cls, *, supervised: bool) -> RecyclePolicy:
        """The policy of this process; off unless a supervisor started it (nobody else
        would start it again)."""
        if not supervised:
            return cls(quiet_s=0)

        def number(name: str, default: float) -> float:
            return float(os.environ.get(name) or default)

        return cls(number(QUIET_ENV, QUIET_S), number(GROWN_ENV, GROWN_MIB),
                   number(CHECK_ENV, CHECK_EVERY_S))


@dataclass(frozen=True)
class IdleFacts:
    open_workflows: int | None  # Temporal's visibility: running executions (None: unknown)
    open_runs: int              # the store: runs without a terminal outcome
    active_stages: int          # the store: stage rows queued or running
    active_slots: int           # this worker: activities executing now
    quiet_for_s: float          # since the last event or the last open work
    rss_mib: float
    ready_rss_mib: float        # this worker's size when it became ready


@dataclass(frozen=True)
class RecycleDecision:
    may: bool
    reason: str  # "idle_and_grown", or what stands in the way


def decide_recycle(facts: IdleFacts, policy: RecyclePolicy) -> RecycleDecision:
    """May the worker restart now? Only when nothing at all is open or running, nothing
    happened for the quiet period, and a restart gives back enough memory to pay."""
    if not policy.enabled:
        return RecycleDecision(False, "disabled")
    if facts.open_workflows is None:
        return RecycleDecision(False, "visibility_unknown")  # unknown is never "idle"
    for count, reason in ((facts.open_workflows, "workflow_open"),
                          (facts.open_runs, "run_open"),
                          (facts.active_stages, "stage_active"),
                          (facts.active_slots, "activity_running")):
        if count > 0:
            return RecycleDecision(False, reason)
    if facts.quiet_for_s < policy.quiet_s:
        return RecycleDecision(False, "not_quiet_long_enough")
    if facts.rss_mib - facts.ready_rss_mib < policy.grown_mib:
        return RecycleDecision(False, "not_grown")
    return RecycleDecision(True, "idle_and_grown")


class QuietClock:
    """How long nothing has happened: restarts whenever the newest event changes or any
    work is open."""

    def __init__(self, now: float) -> None:
        self._since = now
        self._last_event_id: int | None = None

    def quiet_for(self, now: float, *, last_event_id: int, busy: bool) -> float:
        if busy or last_event_id != self._last_event_id:
            self._since = now
            self._last_event_id = last_event_id
        return now - self._since
