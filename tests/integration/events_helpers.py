"""Collecting SSE events with a deadline, so a missing event fails instead of hanging."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

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

    def keep(event: StreamedEvent) -> bool:
        received.append(event)
        return stop_when(event)

    await asyncio.wait_for(follow(api, last_event_id, keep, live=started), timeout=timeout)
    return received


async def follow(api: ApiClient, last_event_id: int | None,
                 on_event: Callable[[StreamedEvent], bool], *,
                 live: asyncio.Event | None = None) -> None:
    """Stream events to ``on_event`` until it returns True; ``live`` is set once the
    stream is live."""

    def on_state(state: str) -> None:
        if state == "live" and live is not None:
            live.set()

    stream = api.events(last_event_id, on_state=on_state)
    async with contextlib.aclosing(stream):
        async for event in stream:
            if on_event(event):
                return


def run_finished(run_id: str) -> Callable[[StreamedEvent], bool]:
    def finished(event: StreamedEvent) -> bool:
        # The workflow's terminal event is appended right after the run's terminal event.
        return (
            event.type in ("WorkflowCompleted", "WorkflowFailed", "WorkflowCanceled")
            and event.payload.get("runId") == run_id
        )

    return finished


async def start_and_watch(
    api: ApiClient,
    start: Callable[[], Awaitable[dict]],
    *,
    timeout: float = 180,
    live_timeout: float = 10,
) -> tuple[dict, list[StreamedEvent]]:
    """Subscribe (from now on), call ``start``, and collect until the workflow execution
    it names (``firstExecutionRunId``) ends. A quick run can end before ``start`` returns:
    every event is kept and matched once the id is known, so that end is never missed."""
    live = asyncio.Event()
    arrived = asyncio.Event()
    received: list[StreamedEvent] = []

    def keep(event: StreamedEvent) -> bool:
        received.append(event)
        arrived.set()
        return False

    async def until_finished(finished: Callable[[StreamedEvent], bool]) -> list[StreamedEvent]:
        scanned = 0
        while True:
            arrived.clear()
            for index in range(scanned, len(received)):
                if finished(received[index]):
                    return received[: index + 1]
            scanned = len(received)
            await arrived.wait()

    pumping = asyncio.create_task(follow(api, None, keep, live=live))
    try:
        await asyncio.wait_for(_first_of(live.wait(), pumping), live_timeout)
        accepted = await start()
        finished = run_finished(accepted["firstExecutionRunId"])
        events = await asyncio.wait_for(_first_of(until_finished(finished), pumping), timeout)
        return accepted, events
    finally:
        pumping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pumping


async def _first_of(wanted: Awaitable, pumping: asyncio.Task):
    """``wanted``'s result, or the stream's own error if the stream ends first."""
    waiting = asyncio.ensure_future(wanted)
    try:
        await asyncio.wait({waiting, pumping}, return_when=asyncio.FIRST_COMPLETED)
        if not waiting.done():
            pumping.result()  # raises the stream's error
            raise RuntimeError("the event stream ended before the awaited event")
        return waiting.result()
    finally:
        waiting.cancel()
