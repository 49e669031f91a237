"""Keeps an activity's heartbeat timeout satisfied while it waits on slow I/O."""

from __future__ import annotations

import asyncio
import contextlib

from temporalio import activity

HEARTBEAT_EVERY_S = 2.0


@contextlib.asynccontextmanager
async def heartbeating(every_s: float = HEARTBEAT_EVERY_S):
    async def beat() -> None:
        while True:
            activity.heartbeat()
            await asyncio.sleep(every_s)

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
