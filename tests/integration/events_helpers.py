"""Collecting SSE events with a deadline, so a missing event fails instead of hanging."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from desktop.client import ApiClient, StreamedEvent


async def collect_until(
    api: ApiClient,
    stop_when: Callable[[StreamedEvent], bool],
    *,
    last_event_id: int | None,
    timeout: float = 180,
    started: asyncio.Event | None = None,
) -> list[StreamedEvent]:
    received: list[StreamedEvent] = []

    def on_state(state: str) -> None:
        if state == "live" and started is not None:
            started.set()

    async def run() -> None:
        stream = api.events(last_event_id, on_state=on_state)
        async with contextlib.aclosing(stream):
            async for event in stream:
                received.append(event)
                if stop_when(event):
                    return

    await asyncio.wait_for(run(), timeout=timeout)
    return received


def run_finished(run_id: str) -> Callable[[StreamedEvent], bool]:
    def finished(event: StreamedEvent) -> bool:
        # The workflow's terminal event is appended right after the run's terminal event.
        return (
            event.type in ("WorkflowCompleted", "WorkflowFailed", "WorkflowCanceled")
            and event.payload.get("runId") == run_id
        )

    return finished
