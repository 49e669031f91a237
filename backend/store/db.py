"""The one SQLite database: connection settings, transactions and migrations.

Every process (worker, API, tests) opens it through :class:`Database`. Migrations are
numbered ``.sql`` files applied under ``BEGIN IMMEDIATE``, so two processes starting at
once serialize on SQLite's write lock and the second sees the first one's work.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from importlib import resources
from pathlib import Path
from typing import Any

import aiosqlite

from backend.domain.clock import utc_now_iso
from backend.store import one_hop
from backend.store.backup import backup_before_upgrade, backups_dir_for
from backend.store.data_migrations import DATA_STEPS
from backend.store.schema_version import DatabaseTooNewError

# Three processes share the file (API, worker, migrations at start). A user's command must
# wait out another process's write transaction on a loaded machine, not fail with
# "database is locked"; 30 s is far beyond any transaction we write.
BUSY_TIMEOUT_MS = 30_000
PRAGMAS = (
    "PRAGMA journal_mode=WAL",
    "PRAGMA synchronous=NORMAL",
    "PRAGMA foreign_keys=ON",
    f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}",
)


async def _connect(path: Path) -> aiosqlite.Connection:
    conn = await one_hop.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    conn.row_factory = aiosqlite.Row
    for pragma in PRAGMAS:
        await conn.execute(pragma)
    return conn


def _migration_files() -> list[tuple[int, str, str]]:
    folder = resources.files("backend.store") / "migrations"
    found = []
    for entry in folder.iterdir():
        if entry.name.endswith(".sql"):
            version = int(entry.name.split("_", 1)[0])
            found.append((version, entry.name, entry.read_text(encoding="utf-8")))
    return sorted(found)


def _split_statements(script: str) -> Iterable[str]:
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                yield buffer
            buffer = ""
    if buffer.strip():
        raise ValueError("migration ends with an incomplete statement")


def _apply_pragmas_waiting(conn: sqlite3.Connection) -> None:
    """Switching a brand-new file to WAL does not wait on the busy handler when another
    process holds the write lock; retry until the busy timeout instead of failing."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            for pragma in PRAGMAS:
                conn.execute(pragma)
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() >= deadline:
                raise
            time.sleep(0.05)


Migration = tuple[int, str, str]  # (version, file name, SQL script)


def migrate(
    path: Path,
    *,
    migrations: list[Migration] | None = None,
    backups_dir: Path | None = None,
) -> list[int]:
    """Apply missing migrations; returns the versions this call applied.

    Refuses a database that has versions this build does not know (a newer JobCtrl wrote
    it) with :class:`DatabaseTooNewError`, changing nothing. Before migrating a database
    that already has a schema, takes a backup (``backend.store.backup``) so an upgrade can
    be undone; a failing migration rolls back and the backup stays. ``migrations``
    (default: the packaged files) lets tests build a database at an older version."""
    known = sorted(migrations if migrations is not None else _migration_files())
    conn = sqlite3.connect(path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        _apply_pragmas_waiting(conn)
        conn.execute("BEGIN IMMEDIATE")  # decide and apply under one write lock
        try:
            applied = _apply_missing(conn, path, known, backups_dir or backups_dir_for(path))
            conn.execute("COMMIT")
            return applied
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    finally:
        conn.close()


def _applied_versions(conn: sqlite3.Connection) -> set[int] | None:
    """The versions recorded in ``schema_migrations``; None for a fresh database."""
    exists = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    ).fetchone()
    if not exists:
        return None
    return {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}


def _apply_missing(
    conn: sqlite3.Connection, path: Path, known: list[Migration], backups_dir: Path
) -> list[int]:
    done = _applied_versions(conn)
    known_versions = {version for version, _name, _script in known}
    unknown = (done or set()) - known_versions
    if unknown:
        raise DatabaseTooNewError(max(unknown), max(known_versions, default=0), path)
    pending = [entry for entry in known if done is None or entry[0] not in done]
    if not pending:
        return []
    if done:  # an existing database with data: keep a way back before changing its schema
        backup_before_upgrade(path, backups_dir, new_version=pending[-1][0])
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
    )
    for version, name, script in pending:
        for statement in _split_statements(script):
            conn.execute(statement)
        data_step = DATA_STEPS.get(version)
        if data_step is not None:
            data_step(conn)
        conn.execute(
            "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
            (version, name, utc_now_iso()),
        )
    return [version for version, _name, _script in pending]


# Set while the current task is inside ``Database.transaction``: its reads go through the
# writer, so they see what the transaction wrote so far.
_in_transaction: ContextVar[bool] = ContextVar("jobctrl_db_in_transaction", default=False)


class Database:
    """Two aiosqlite connections, a writer and a reader, plus a lock that keeps this
    process's writes serial.

    Write transactions take SQLite's write lock up front (``BEGIN IMMEDIATE``) so a
    canonical row and its events always commit together or not at all. Reads outside a
    transaction use the reader: an aiosqlite connection runs one statement at a time on its
    own thread, so a write waiting out another process's lock (up to the busy timeout)
    would otherwise hold up every read of this process; in WAL mode a reader never waits.

    ``inline_writes`` (the worker): the statements of a write transaction run on the
    event loop's thread instead of one trip each to the writer's thread (``one_hop``: a
    trip costs ~10x a small statement; a stage activity makes ~100 of them per job). Not
    for the API: a long transaction there would hold up its event stream for its length.
    """

    def __init__(self, conn: aiosqlite.Connection, path: Path,
                 reader: aiosqlite.Connection | None = None, *, inline_writes: bool = False):
        self._conn = conn
        self._reader = reader or conn
        self.path = path
        self._write_lock = asyncio.Lock()
        self._read_lock = asyncio.Lock() if reader is not None else self._write_lock
        # Only with a reader of its own: reads outside a transaction never touch the writer.
        self._inline_writes = inline_writes and reader is not None and hasattr(conn, "inline")

    @classmethod
    async def open(cls, path: Path, *, run_migrations: bool = True,
                   inline_writes: bool = False) -> Database:
        if run_migrations:
            await asyncio.to_thread(migrate, path)
        return cls(await _connect(path), path, reader=await _connect(path),
                   inline_writes=inline_writes)

    async def close(self) -> None:
        await self._conn.close()
        if self._reader is not self._conn:
            await self._reader.close()

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[aiosqlite.Connection]:
        async with self._write_lock:
            await self._begin_immediate()
            token = _in_transaction.set(True)
            self._conn.inline = self._inline_writes  # the write lock is ours: see one_hop
            try:
                yield self._conn
            except BaseException:
                self._conn.inline = False
                await self._conn.execute("ROLLBACK")
                raise
            finally:
                self._conn.inline = False
                _in_transaction.reset(token)
            await self._conn.execute("COMMIT")

    def _reads(self) -> aiosqlite.Connection:
        return self._conn if _in_transaction.get() else self._reader

    async def _begin_immediate(self) -> None:
        """``BEGIN IMMEDIATE``, retried while SQLite answers "locked" without waiting.

        Coroutines share this connection: when another one's read statement is still
        pending, the connection holds a read snapshot, and once another process has
        committed, upgrading that stale snapshot fails at once (SQLITE_BUSY_SNAPSHOT)
        instead of going through the busy handler. The pending read ends within moments;
        then the write lock is taken normally."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        delay = 0.005
        while True:
            try:
                await self._conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.25)

    @asynccontextmanager
    async def read_snapshot(self) -> AsyncIterator[aiosqlite.Connection]:
        """Several reads from one consistent snapshot without taking SQLite's write lock:
        a deferred transaction in WAL mode never waits for another process's writer (a
        read under ``BEGIN IMMEDIATE`` can time out with "database is locked" while the
        worker writes hard)."""
        async with self._read_lock:  # one snapshot at a time on the reader
            await self._reader.execute("BEGIN")
            try:
                yield self._reader
            finally:
                await self._reader.execute("ROLLBACK")

    async def release_memory(self) -> None:
        """Hand back what SQLite caches for each connection (its page cache: up to
        ``cache_size``, 2 MiB, per connection once a burst has read that much). Safe inside
        an open transaction (only clean pages go); the next reads fill it again. The
        writer's turn waits for the write lock (unless this task holds it): with
        ``inline_writes`` a transaction's statements run on the event loop's thread, and
        the writer's own thread must not run this meanwhile."""
        await self._reader.execute("PRAGMA shrink_memory")
        if self._conn is self._reader:
            return
        if _in_transaction.get():
            await self._conn.execute("PRAGMA shrink_memory")
            return
        async with self._write_lock:
            await self._conn.execute("PRAGMA shrink_memory")

    async def fetchall(self, sql: str, params: Iterable[Any] = ()) -> list[aiosqlite.Row]:
        async with self._reads().execute(sql, tuple(params)) as cursor:
            return list(await cursor.fetchall())

    async def fetchone(self, sql: str, params: Iterable[Any] = ()) -> aiosqlite.Row | None:
        async with self._reads().execute(sql, tuple(params)) as cursor:
            return await cursor.fetchone()

    async def data_version(self) -> int:
        """Changes whenever another connection commits (this process's writer included):
        our cheap change detector."""
        rows = await self._reader.execute_fetchall("PRAGMA data_version")  # one thread hop
        return int(rows[0][0])


async def fetch_rows(reader: Database | aiosqlite.Connection, sql: str,
                     params: Iterable[Any] = ()) -> list:
    """Every row of ``sql`` from the database (its reader) or, inside a transaction, the
    connection the caller holds: the repositories' one helper for both."""
    if isinstance(reader, Database):
        return await reader.fetchall(sql, params)
    async with reader.execute(sql, tuple(params)) as cursor:
        return list(await cursor.fetchall())


IN_CHUNK = 500  # ids per "IN (...)": well under SQLite's variable limit


async def select_in_chunks(conn: aiosqlite.Connection, sql: str, prefix: tuple,
                           ids: list[str]) -> list:
    """Rows of ``sql`` (with ``{marks}`` where the ids' placeholders go) over ``ids`` in
    chunks, after the ``prefix`` parameters."""
    found = []
    for start in range(0, len(ids), IN_CHUNK):
        chunk = ids[start : start + IN_CHUNK]
        cursor = await conn.execute(sql.format(marks=",".join("?" * len(chunk))),
                                    (*prefix, *chunk))
        found.extend(await cursor.fetchall())
    return found
