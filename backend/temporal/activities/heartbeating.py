"""Keeps an activity's heartbeat timeout satisfied while it waits on slow I/O."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

from temporalio import activity

HEARTBEAT_EVERY_S = 2.0


@contextlib.asynccontextmanager
async def heartbeating(
    every_s: float = HEARTBEAT_EVERY_S,
    *details: object,
    heartbeat: Callable[..., None] = activity.heartbeat,
) -> AsyncIterator[None]:
    async def beat() -> None:
        while True:
            heartbeat(*details)
            await asyncio.sleep(every_s)

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
