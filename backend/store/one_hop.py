"""An aiosqlite connection whose ``execute`` costs one trip to the database thread.

aiosqlite runs every call on the connection's own thread, and each call is a round trip
(queue, thread wake-up, ``call_soon_threadsafe``, event-loop wake-up). The store's reads
are ``execute`` then ``fetchone``/``fetchall`` then the cursor's close: three trips for
one statement. A stage activity makes ~15 transactions and ~240 trips per job; the trips,
not the SQL, were most of the worker's database time (bench/README.md, throughput).

Here ``execute`` runs the statement and fetches up to ``PREFETCH_ROWS`` rows in the same
trip, and closes the statement when it has no more rows. The returned cursor answers
``fetchone``/``fetchmany``/``fetchall`` and iteration from those rows without a trip; a
result longer than the prefetch falls back to the real cursor for the rest. Everything
else (``rowcount``, ``lastrowid``, ``description``, ``executemany``) is aiosqlite's own.
A fully read statement also ends at once, so it holds no read snapshot open.

**Inline while the write lock is held.** Even one trip costs ~0.12 ms of CPU (two thread
switches and an event-loop wake-up) against ~0.01 ms for a small statement itself. While
``inline`` is set, ``execute`` and ``executemany`` run on the calling thread, no trip.
:class:`~backend.store.db.Database` sets it only between its ``BEGIN IMMEDIATE`` and the
``COMMIT``/``ROLLBACK`` (both still on the connection's thread), in a process that asked
for it (the worker): holding SQLite's write lock, a statement never waits for another
process (WAL readers never block a writer), so it cannot stall the event loop on a lock;
it only takes the statement's own microseconds. The connection is opened with
``check_same_thread=False`` for that, and ``Database`` keeps every other use of the writer
(its one thread-side call outside transactions, ``release_memory``) behind the same write
lock, so the two threads never use the connection at once.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import aiosqlite
from aiosqlite.context import contextmanager

PREFETCH_ROWS = 256


def _execute_prefetching(conn: sqlite3.Connection, sql: str, parameters: Iterable[Any]):
    cursor = conn.execute(sql, parameters)
    if cursor.description is None:  # not a query: nothing to fetch
        return cursor, [], False
    rows = cursor.fetchmany(PREFETCH_ROWS)
    more = len(rows) == PREFETCH_ROWS
    if not more:
        cursor.close()  # the statement is done: no trip later to close it
    return cursor, rows, more


class PrefetchedCursor(aiosqlite.Cursor):
    def __init__(self, conn: aiosqlite.Connection, cursor: sqlite3.Cursor,
                 rows: list, more: bool) -> None:
        super().__init__(conn, cursor)
        self._rows = rows
        self._more = more

    async def _rest(self) -> None:
        if self._more:
            self._rows.extend(await super().fetchall())
            self._more = False

    async def fetchone(self):
        if not self._rows:
            await self._rest()
        return self._rows.pop(0) if self._rows else None

    async def fetchmany(self, size: int | None = None):
        size = size or self.arraysize
        if len(self._rows) < size:
            await self._rest()
        taken, self._rows = self._rows[:size], self._rows[size:]
        return taken

    async def fetchall(self):
        await self._rest()
        taken, self._rows = self._rows, []
        return taken

    async def close(self) -> None:
        self._rows = []
        if self._more:
            self._more = False
            await super().close()


class OneHopConnection(aiosqlite.Connection):
    inline = False  # run statements on the caller's thread (see the module docstring)

    @contextmanager
    async def execute(self, sql: str, parameters: Iterable[Any] | None = None) -> aiosqlite.Cursor:
        parameters = [] if parameters is None else parameters
        if self.inline:
            cursor, rows, more = _execute_prefetching(self._conn, sql, parameters)
        else:
            cursor, rows, more = await self._execute(_execute_prefetching, self._conn, sql,
                                                     parameters)
        return PrefetchedCursor(self, cursor, rows, more)

    @contextmanager
    async def executemany(self, sql: str, parameters: Iterable[Iterable[Any]]) -> aiosqlite.Cursor:
        if self.inline:
            return aiosqlite.Cursor(self, self._conn.executemany(sql, parameters))
        return aiosqlite.Cursor(self, await self._execute(self._conn.executemany, sql, parameters))


def connect(path: Path, **kwargs: Any) -> OneHopConnection:
    """``aiosqlite.connect`` with the one-trip ``execute`` (usable inline: any thread)."""
    return OneHopConnection(
        lambda: sqlite3.connect(str(path), check_same_thread=False, **kwargs), 64)
