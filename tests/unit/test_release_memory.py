"""Caches handed back after a burst (issue 18): SQLite's page cache of each connection,
then the heap; an open transaction keeps its work, a failing release stops no trim."""

from __future__ import annotations

import logging

from backend.process import heap_trim
from backend.store.db import Database


async def test_each_connection_shrinks_its_cache_and_an_open_transaction_keeps_its_write(tmp_path):
    db = await Database.open(tmp_path / "jobctrl.db")
    statements: dict[str, list[str]] = {"writer": [], "reader": []}
    try:
        # The store's two connections (writes; reads outside a transaction).
        await db._conn.set_trace_callback(statements["writer"].append)
        await db._reader.set_trace_callback(statements["reader"].append)
        async with db.transaction() as conn:
            await conn.execute("CREATE TABLE t (n INTEGER)")
        async with db.transaction() as conn:
            await conn.execute("INSERT INTO t VALUES (1)")
            await db.release_memory()  # from the trim loop, while another task writes
            await conn.execute("INSERT INTO t VALUES (2)")
        assert [row[0] for row in await db.fetchall("SELECT n FROM t ORDER BY n")] == [1, 2]
        assert statements["writer"].count("PRAGMA shrink_memory") == 1
        assert statements["reader"].count("PRAGMA shrink_memory") == 1
    finally:
        await db.close()


async def test_a_trim_releases_the_caches_first_and_survives_a_release_that_fails(caplog):
    calls = []

    async def release() -> None:
        calls.append("released")

    async def broken() -> None:
        raise OSError("disk I/O error")

    await heap_trim.trim_now(release)
    assert calls == ["released"]
    with caplog.at_level(logging.WARNING, logger=heap_trim.__name__):
        await heap_trim.trim_now(broken)  # the heap is trimmed all the same
    assert "releasing caches before the heap trim failed" in caplog.text
