"""Counts activity slots in use without ever reading activity arguments."""

from __future__ import annotations

from typing import Any

from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
)


class ActivitySlotTracker(Interceptor):
    def __init__(self) -> None:
        self.active = 0

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _CountingInbound(next, self)


class _CountingInbound(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, tracker: ActivitySlotTracker):
        super().__init__(next)
        self._tracker = tracker

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        self._tracker.active += 1
        try:
            return await self.next.execute_activity(input)
        finally:
            self._tracker.active -= 1
