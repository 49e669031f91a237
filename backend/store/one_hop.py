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
    @contextmanager
    async def execute(self, sql: str, parameters: Iterable[Any] | None = None) -> aiosqlite.Cursor:
        cursor, rows, more = await self._execute(
            _execute_prefetching, self._conn, sql, [] if parameters is None else parameters)
        return PrefetchedCursor(self, cursor, rows, more)


def connect(path: Path, **kwargs: Any) -> OneHopConnection:
    """``aiosqlite.connect`` with the one-trip ``execute``."""
    return OneHopConnection(lambda: sqlite3.connect(str(path), **kwargs), 64)
