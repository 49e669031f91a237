"""Server-Sent Events over the durable event log.

One :class:`EventTail` per API process watches the database for commits by any other
connection (``PRAGMA data_version``, a few microseconds a poll) and wakes every stream.
It polls only while at least one stream listens: with no client (``jobctrl serve`` used
by scripts, the desktop between sessions) the API spends no CPU on a 5 ms poll that
nobody reads (it was ~8 % of a core, competing with the worker for the laptop's cores).
Each stream then reads the rows after its own last id, one bounded page at a time: the
database is the buffer, so a slow client holds at most one page in memory.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from sse_starlette import ServerSentEvent

from backend.store.db import Database
from backend.store.events import read_events_after

PAGE_SIZE = 200
POLL_INTERVAL_S = 0.005
RETRY_MS = 2000


class EventTail:
    def __init__(self, database: Path, poll_interval: float = POLL_INTERVAL_S):
        self._database = database
        self._poll_interval = poll_interval
        self._changed = asyncio.Event()
        self._listeners = 0
        self._listened = asyncio.Event()  # set while at least one stream listens
        self._task: asyncio.Task | None = None
        self._db: Database | None = None

    async def start(self) -> None:
        self._db = await Database.open(self._database, run_migrations=False)
        self._task = asyncio.create_task(self._watch(), name="event-tail")

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._db:
            await self._db.close()

    def marker(self) -> asyncio.Event:
        """Take this before reading; it is set by the first commit after that moment."""
        return self._changed

    @contextlib.contextmanager
    def listening(self):
        """Held by each open stream: the tail polls only while one is held."""
        self._listeners += 1
        self._listened.set()
        try:
            yield
        finally:
            self._listeners -= 1
            if self._listeners == 0:
                self._listened.clear()

    def notify(self) -> None:
        """Wake streams now (used after this process's own commits)."""
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def _watch(self) -> None:
        while True:
            await self._listened.wait()
            version = await self._db.data_version()
            # A commit may have landed between a new stream's first read and this
            # baseline: wake the streams once, they re-read (cheap, from their own id).
            self.notify()
            while self._listened.is_set():
                await asyncio.sleep(self._poll_interval)
                current = await self._db.data_version()
                if current != version:
                    version = current
                    self.notify()


async def event_stream(
    db: Database, tail: EventTail, after_id: int, *, wait_timeout: float = 15.0
) -> AsyncIterator[ServerSentEvent]:
    yield ServerSentEvent(comment="connected", retry=RETRY_MS)
    last_id = after_id
    with tail.listening():
        while True:
            marker = tail.marker()
            page = await read_events_after(db, last_id, PAGE_SIZE)
            for event in page:
                yield ServerSentEvent(data=event.payload_json, event=event.type, id=str(event.id))
                last_id = event.id
            if len(page) < PAGE_SIZE:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(marker.wait(), timeout=wait_timeout)
