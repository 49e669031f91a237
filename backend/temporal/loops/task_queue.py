"""Approximate Temporal task-queue observations for the worker heartbeat.

``describe_task_queue`` with ``report_stats`` (the SDK has no high-level API for it) is
asked for the workflow and the activity type of each task queue, at most every 5 s (the
server caches the values about that long anyway). Calls run in a background task with a
timeout, so a slow server never delays a beat. The result is a typed state per queue:
``supported`` with numbers, or ``unsupported`` (UNIMPLEMENTED, or no stats in the reply),
``unavailable`` (any other error or a timeout) and ``stale`` (the last good observation
is too old) without numbers. Unknown is never reported as zero.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, Literal

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.service import RPCError, RPCStatusCode

from backend.domain.clock import parse_iso, to_iso, utc_now
from backend.store.heartbeats import TaskQueueObservation, TaskQueueTypeStats

log = logging.getLogger(__name__)

POLL_INTERVAL_S = 5.0
RPC_TIMEOUT_S = 3.0
STALE_AFTER_S = 20.0  # four missed polls

QueueType = Literal["workflow", "activity"]
_QUEUE_TYPES: dict[QueueType, int] = {
    "workflow": TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    "activity": TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
}


class _Unknown(Exception):
    def __init__(self, state: Literal["unsupported", "unavailable"], reason: str):
        super().__init__(reason)
        self.state = state
        self.reason = reason


class TaskQueueObserver:
    """Polls in the background; ``snapshot()`` is cheap and never awaits the server."""

    def __init__(
        self,
        service: Any,
        *,
        namespace: str,
        task_queues: Sequence[str],
        poll_interval_s: float = POLL_INTERVAL_S,
        rpc_timeout_s: float = RPC_TIMEOUT_S,
        stale_after_s: float = STALE_AFTER_S,
        clock: Callable[[], datetime] = utc_now,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._service = service  # ``client.workflow_service`` (or a test double)
        self._namespace = namespace
        self._queues = tuple(dict.fromkeys(task_queues))
        self._interval = poll_interval_s
        self._timeout = rpc_timeout_s
        self._stale_after = stale_after_s
        self._clock = clock
        self._monotonic = monotonic
        self._last_poll_started: float | None = None
        self._task: asyncio.Task | None = None
        self._latest: dict[str, TaskQueueObservation] = {}
        self._last_supported: dict[str, str] = {}  # queue -> observedAt of the last good one

    # -- background polling ---------------------------------------------------------------

    def maybe_refresh(self) -> None:
        """Start a poll if one is due and none is in flight. Never blocks, never raises."""
        if self._task is not None and not self._task.done():
            return
        now = self._monotonic()
        if self._last_poll_started is not None and now - self._last_poll_started < self._interval:
            return
        self._last_poll_started = now
        self._task = asyncio.create_task(self._poll_guarded(), name="task-queue-observer")

    async def _poll_guarded(self) -> None:
        try:
            await self.poll_once()
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - observation must never take the worker down
            log.warning("task-queue observation failed", exc_info=True)

    async def poll_once(self) -> dict[str, TaskQueueObservation]:
        """Describe every (queue, type) concurrently and record one state per queue."""
        pairs = [(queue, kind) for queue in self._queues for kind in _QUEUE_TYPES]
        results = await asyncio.gather(
            *(self._describe(queue, kind) for queue, kind in pairs), return_exceptions=True
        )
        observed_at = to_iso(self._clock())
        by_queue: dict[str, dict[str, TaskQueueTypeStats | BaseException]] = {}
        for (queue, kind), result in zip(pairs, results, strict=True):
            by_queue.setdefault(queue, {})[kind] = result
        for queue, kinds in by_queue.items():
            observation = _combine(kinds, observed_at)
            self._latest[queue] = observation
            if observation.state == "supported":
                self._last_supported[queue] = observed_at
        return dict(self._latest)

    async def _describe(self, queue: str, kind: QueueType) -> TaskQueueTypeStats:
        request = DescribeTaskQueueRequest(
            namespace=self._namespace,
            task_queue=TaskQueue(name=queue),
            task_queue_type=_QUEUE_TYPES[kind],
            report_stats=True,
        )
        try:
            response = await asyncio.wait_for(
                self._service.describe_task_queue(
                    request, timeout=timedelta(seconds=self._timeout)),
                timeout=self._timeout,
            )
        except TimeoutError:
            raise _Unknown("unavailable", "timeout") from None
        except RPCError as error:
            if error.status == RPCStatusCode.UNIMPLEMENTED:
                raise _Unknown("unsupported", "unimplemented") from None
            if error.status == RPCStatusCode.DEADLINE_EXCEEDED:
                raise _Unknown("unavailable", "timeout") from None
            raise _Unknown("unavailable", _status_reason(error.status)) from None
        if not response.HasField("stats"):
            raise _Unknown("unsupported", "no_stats")
        stats = response.stats
        if stats.HasField("approximate_backlog_age"):
            age = stats.approximate_backlog_age.ToTimedelta().total_seconds()
        elif stats.approximate_backlog_count == 0:
            age = 0.0  # an empty backlog has no age; the server omits the field
        else:
            raise _Unknown("unsupported", "no_stats")
        return TaskQueueTypeStats(
            pollers=len(response.pollers),
            approximate_backlog_count=max(0, int(stats.approximate_backlog_count)),
            approximate_backlog_age_seconds=max(0.0, round(age, 3)),
            tasks_add_rate=max(0.0, round(float(stats.tasks_add_rate), 4)),
            tasks_dispatch_rate=max(0.0, round(float(stats.tasks_dispatch_rate), 4)),
        )

    # -- what a heartbeat reports ---------------------------------------------------------

    def snapshot(self) -> dict[str, TaskQueueObservation]:
        """One observation per queue; a good one older than the stale limit becomes stale."""
        now = self._clock()
        out: dict[str, TaskQueueObservation] = {}
        for queue in self._queues:
            latest = self._latest.get(queue)
            if latest is None:
                out[queue] = TaskQueueObservation.unknown(
                    "unavailable", reason="not_observed_yet", observed_at=None)
                continue
            if latest.state == "supported" and latest.observed_at is not None:
                age = (now - parse_iso(latest.observed_at)).total_seconds()
                if age > self._stale_after:
                    latest = TaskQueueObservation.unknown(
                        "stale", reason="observation_expired", observed_at=latest.observed_at)
            out[queue] = latest
        return out

    async def aclose(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task


def _status_reason(status: RPCStatusCode) -> str:
    try:
        return RPCStatusCode(status).name.lower()
    except ValueError:
        return "rpc_error"


def _combine(
    kinds: dict[str, TaskQueueTypeStats | BaseException], observed_at: str
) -> TaskQueueObservation:
    failures = [result for result in kinds.values() if isinstance(result, BaseException)]
    if not failures:
        return TaskQueueObservation.from_types(
            observed_at=observed_at, workflow=kinds["workflow"], activity=kinds["activity"])
    known = [failure for failure in failures if isinstance(failure, _Unknown)]
    if len(known) < len(failures):  # an unexpected exception: say unavailable, not why
        return TaskQueueObservation.unknown("unavailable", reason="error", observed_at=observed_at)
    unavailable = [failure for failure in known if failure.state == "unavailable"]
    chosen = unavailable[0] if unavailable else known[0]
    return TaskQueueObservation.unknown(chosen.state, reason=chosen.reason, observed_at=observed_at)
