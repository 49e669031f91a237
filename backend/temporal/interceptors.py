"""Counts activity slots in use and keeps bounded, privacy-safe runtime detail.

The interceptor never reads activity arguments: it hands the input to the next layer
untouched and learns everything from ``activity.info()``. Per running activity it keeps
only an allowlisted activity kind (others count in slots but are not listed), validated
safe workflow / run references (anything else becomes a non-reversible local ``op_``
hash, an HMAC under a per-process random key), the attempt and the start time. Successful
completions feed bounded per-type duration windows.
"""

from __future__ import annotations

import asyncio
import errno
import hashlib
import hmac
import itertools
import logging
import math
import re
import secrets
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import temporalio.exceptions
from temporalio import activity
from temporalio.exceptions import ApplicationError
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)

from backend.domain.clock import to_iso, utc_now
from backend.domain.errors import TypedFailure
from backend.store.heartbeats import (
    ACTIVITY_STAGE,
    MAX_ACTIVE_ITEMS,
    OPERATIONAL_STAGES,
    RUN_ID_PATTERN,
    SAFE_WORKFLOW_ID_PATTERN,
    ActiveItem,
    DurationSummary,
    HeartbeatTelemetry,
)

log = logging.getLogger(__name__)

DURATION_WINDOW = 50  # recent successful completions kept per activity type

_SAFE_WORKFLOW_ID = re.compile(SAFE_WORKFLOW_ID_PATTERN)
_RUN_ID = re.compile(RUN_ID_PATTERN)
_PROCESS_KEY = secrets.token_bytes(32)  # never stored, never logged: hashes die with us


def opaque_ref(kind: str, value: str, *, key: bytes = _PROCESS_KEY) -> str:
    """A stable-within-this-process, non-reversible local identifier."""
    digest = hmac.new(key, f"{kind}\x00{value}".encode(), hashlib.sha256).hexdigest()
    return f"op_{digest[:16]}"


def safe_workflow_ref(workflow_id: str | None, *, key: bytes = _PROCESS_KEY) -> str | None:
    if not workflow_id:
        return None
    if _SAFE_WORKFLOW_ID.fullmatch(workflow_id):
        return workflow_id
    return opaque_ref("workflow", workflow_id, key=key)


def safe_run_ref(run_id: str | None, *, key: bytes = _PROCESS_KEY) -> str | None:
    if not run_id:
        return None
    if _RUN_ID.fullmatch(run_id):
        return run_id.lower()
    return opaque_ref("run", run_id, key=key)


def nearest_rank(sorted_values: list[float], quantile: float) -> float:
    """The conservative (nearest-rank) percentile of an ascending, non-empty list."""
    index = max(0, math.ceil(quantile * len(sorted_values)) - 1)
    return sorted_values[index]


@dataclass(frozen=True)
class _Running:
    seq: int
    activity_type: str
    workflow_ref: str | None
    run_ref: str | None
    attempt: int
    started_at: datetime
    started_monotonic: float


class ActivitySlotTracker(Interceptor):
    """Shared by every Worker in the process; read by the heartbeat loop on the same loop."""

    def __init__(
        self,
        *,
        duration_window: int = DURATION_WINDOW,
        info: Callable[[], activity.Info] = activity.info,
        clock: Callable[[], datetime] = utc_now,
        monotonic: Callable[[], float] = time.monotonic,
        key: bytes = _PROCESS_KEY,
    ) -> None:
        self.active = 0  # every activity, allowlisted or not
        self._info = info
        self._clock = clock
        self._monotonic = monotonic
        self._key = key
        self._window = duration_window
        self._seq = itertools.count()
        self._running: dict[int, _Running] = {}
        self._durations: dict[str, deque[float]] = {}

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _CountingInbound(next, self)

    # -- bookkeeping (never raises into the activity) ---------------------------------------

    def _begin(self) -> tuple[bool, int | None]:
        """(whether it holds one of the worker's activity slots, its telemetry seq).

        A local activity runs inside its workflow's task, outside ``max_concurrent_activities``:
        it holds no slot, so it is not listed either (the inventory is a view of the slots:
        activeItemsTotal never exceeds activeSlots)."""
        try:
            info = self._info()
        except Exception:  # noqa: BLE001 - telemetry must never fail an activity
            log.warning("activity telemetry unavailable for one activity", exc_info=True)
            self.active += 1
            return True, None
        if info.is_local:
            return False, None
        self.active += 1
        return True, self._track(info)

    def _track(self, info: activity.Info) -> int | None:
        try:
            if info.activity_type not in ACTIVITY_STAGE:
                return None
            seq = next(self._seq)
            self._running[seq] = _Running(
                seq=seq,
                activity_type=info.activity_type,
                workflow_ref=safe_workflow_ref(info.workflow_id, key=self._key),
                run_ref=safe_run_ref(info.workflow_run_id, key=self._key),
                attempt=max(1, int(info.attempt)),
                started_at=self._clock(),
                started_monotonic=self._monotonic(),
            )
            return seq
        except Exception:  # noqa: BLE001 - telemetry must never fail an activity
            log.warning("activity telemetry unavailable for one activity", exc_info=True)
            return None

    def _end(self, seq: int | None, *, succeeded: bool, holds_slot: bool = True) -> None:
        self.active -= holds_slot
        if seq is None:
            return
        try:
            running = self._running.pop(seq)
            if succeeded:
                window = self._durations.setdefault(
                    running.activity_type, deque(maxlen=self._window))
                window.append(max(0.0, self._monotonic() - running.started_monotonic))
        except Exception:  # noqa: BLE001
            log.warning("activity telemetry bookkeeping failed", exc_info=True)

    # -- what a heartbeat reports -----------------------------------------------------------

    def active_items(self) -> list[_Running]:
        return sorted(self._running.values(), key=lambda item: (item.started_at, item.seq))

    def duration_summaries(self) -> dict[str, DurationSummary]:
        summaries = {}
        for activity_type, window in sorted(self._durations.items()):
            if not window:
                continue
            values = sorted(window)
            summaries[activity_type] = DurationSummary(
                count=len(values),
                p50_seconds=round(nearest_rank(values, 0.5), 3),
                p90_seconds=round(nearest_rank(values, 0.9), 3),
                max_seconds=round(values[-1], 3),
            )
        return summaries

    def snapshot(self) -> HeartbeatTelemetry:
        """Oldest 20 allowlisted items, the exact allowlisted total and stage counts."""
        running = self.active_items()
        stages = Counter(ACTIVITY_STAGE[item.activity_type] for item in running)
        listed = [
            ActiveItem(
                activity_type=item.activity_type,
                stage=ACTIVITY_STAGE[item.activity_type],
                workflow_ref=item.workflow_ref,
                run_ref=item.run_ref,
                attempt=item.attempt,
                started_at=to_iso(item.started_at),
            )
            for item in running[:MAX_ACTIVE_ITEMS]
        ]
        return HeartbeatTelemetry(
            active_items=listed,
            active_items_total=len(running),
            active_items_truncated=len(running) > len(listed),
            stage_counts={stage: stages.get(stage, 0) for stage in OPERATIONAL_STAGES},
            duration_summaries=self.duration_summaries(),
        )


class _CountingInbound(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, tracker: ActivitySlotTracker):
        super().__init__(next)
        self._tracker = tracker

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        # ``input`` is passed on as is: its arguments, headers and function are never read.
        holds_slot, seq = self._tracker._begin()
        succeeded = False
        try:
            result = await self.next.execute_activity(input)
            succeeded = True
            return result
        finally:
            self._tracker._end(seq, succeeded=succeeded, holds_slot=holds_slot)


# -- failures: codes in the Temporal history, detail in the local log only ----------------

BOUNDED_FAILURE_CODE = re.compile(r"[A-Za-z][A-Za-z0-9_.:-]{0,63}")
UNTYPED_FAILURE = "activity_failed"

# A local file that could not be read or written (a full disk, a folder the user may not
# write, a name the file system refuses): its own codes, never the path.
OS_ERROR_CODES: dict[int, tuple[str, bool]] = {
    errno.ENOSPC: ("disk_full", True),
    getattr(errno, "EDQUOT", errno.ENOSPC): ("disk_full", True),  # no EDQUOT on Windows
    errno.EACCES: ("file_permission_denied", True),
    errno.EPERM: ("file_permission_denied", True),
    errno.EROFS: ("file_permission_denied", True),
    errno.ENAMETOOLONG: ("file_name_too_long", False),
}
FILE_ERROR = "file_io_failed"

# Failure codes a sanitised failure may carry besides the ones activities raise themselves.
SANITISED_CODES = frozenset({UNTYPED_FAILURE, FILE_ERROR,
                             *(code for code, _retry in OS_ERROR_CODES.values())})

# Not failures: Temporal's own control flow, passed on untouched.
_PASS_THROUGH = (asyncio.CancelledError, temporalio.exceptions.CancelledError)


@dataclass(frozen=True)
class FailureCode:
    code: str
    retryable: bool
    retry_after: timedelta | None = None


def _bounded(code: str | None) -> str | None:
    return code if code and BOUNDED_FAILURE_CODE.fullmatch(code) else None


def failure_code_of(error: BaseException) -> FailureCode:
    """The bounded code, retryability and retry delay of any exception an activity raised.
    Only typed attributes are read (an ``ApplicationError``'s type, a TypedFailure's code,
    an ``OSError``'s errno), never the exception's text."""
    if isinstance(error, ApplicationError):
        return FailureCode(_bounded(error.type) or UNTYPED_FAILURE, not error.non_retryable,
                           error.next_retry_delay)
    if isinstance(error, TypedFailure):
        retry_after = getattr(error, "retry_after_s", None)
        delay = timedelta(seconds=retry_after) if retry_after and error.retryable else None
        return FailureCode(_bounded(error.code) or UNTYPED_FAILURE, bool(error.retryable), delay)
    if isinstance(error, OSError):
        code, retryable = OS_ERROR_CODES.get(error.errno or 0, (FILE_ERROR, True))
        return FailureCode(code, retryable)
    return FailureCode(UNTYPED_FAILURE, True)


def sanitized_failure(error: BaseException) -> ApplicationError:
    """The failure Temporal records for ``error``: message and type are the bounded code;
    no details, no cause chain, no exception text."""
    failure = failure_code_of(error)
    return ApplicationError(failure.code, type=failure.code, non_retryable=not failure.retryable,
                            next_retry_delay=failure.retry_after)


class FailureSanitizer(Interceptor):
    """Every activity's failure leaves the worker as :func:`sanitized_failure`; the local
    log keeps the original (with its traceback) under the same code."""

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _SanitizingInbound(next)


class _SanitizingInbound(ActivityInboundInterceptor):
    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        try:
            return await self.next.execute_activity(input)
        except _PASS_THROUGH:
            raise
        except Exception as error:
            if type(error).__name__ == "_CompleteAsyncError":  # activity.raise_complete_async()
                raise
            sanitized = sanitized_failure(error)
            if _is_clean(error, sanitized):
                raise
            # An activity's own ApplicationError is expected (a typed outcome): no warning.
            level = logging.DEBUG if isinstance(error, ApplicationError) else logging.WARNING
            log.log(level, "activity failed (%s); the Temporal history records the code only",
                    sanitized.type, exc_info=error)
        raise sanitized from None


def _is_clean(error: Exception, sanitized: ApplicationError) -> bool:
    """Already exactly what would be recorded (an activity's own bounded failure): raise it
    as it is, so its log line is Temporal's own."""
    return (isinstance(error, ApplicationError) and error.message == sanitized.type
            and error.type == sanitized.type and not error.details
            and error.__cause__ is None
            and (error.__suppress_context__ or error.__context__ is None))
