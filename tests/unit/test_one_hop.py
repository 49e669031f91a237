"""The one-trip ``execute``: the same answers as aiosqlite's cursor, in one trip, also
for a result longer than the prefetch."""

from backend.store import one_hop


async def _trips(conn) -> list[int]:
    counted = [0]
    real = conn._execute

    async def counting(fn, *args, **kwargs):
        counted[0] += 1
        return await real(fn, *args, **kwargs)

    conn._execute = counting
    return counted


async def test_a_short_read_is_one_trip_and_reads_like_a_cursor(tmp_path):
    conn = await one_hop.connect(tmp_path / "t.db", isolation_level=None)
    try:
        await conn.execute("CREATE TABLE t (n INTEGER)")
        await conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(5)])
        trips = await _trips(conn)
        async with conn.execute("SELECT n FROM t ORDER BY n") as cursor:
            assert (await cursor.fetchone())[0] == 0
            assert [r[0] for r in await cursor.fetchmany(2)] == [1, 2]
            assert [r[0] for r in await cursor.fetchall()] == [3, 4]
            assert await cursor.fetchone() is None
        assert trips[0] == 1
        cursor = await conn.execute("UPDATE t SET n = n + 1 WHERE n < 2")
        assert cursor.rowcount == 2
        assert await cursor.fetchall() == []
    finally:
        await conn.close()


async def test_a_long_result_reads_the_rest_from_the_real_cursor(tmp_path):
    conn = await one_hop.connect(tmp_path / "t.db", isolation_level=None)
    total = one_hop.PREFETCH_ROWS * 2 + 7
    try:
        await conn.execute("CREATE TABLE t (n INTEGER)")
        await conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(total)])
        cursor = await conn.execute("SELECT n FROM t ORDER BY n")
        assert [row[0] async for row in cursor] == list(range(total))
        await cursor.close()
        async with conn.execute("SELECT n FROM t ORDER BY n") as cursor:
            first = await cursor.fetchone()
        assert first[0] == 0  # closed early: the unread rest is dropped with the statement
    finally:
        await conn.close()


async def _thread_of_statements(db) -> tuple[int, int]:
    """(thread a statement ran on inside a write transaction, outside one on the writer)."""
    import threading

    for conn in (db._conn, db._reader):  # which thread runs the SQL, as SQLite sees it
        await conn.create_function("tid", 0, threading.get_ident)
    async with db.transaction() as conn:
        inside = (await (await conn.execute("SELECT tid()")).fetchone())[0]
    outside = (await (await db._conn.execute("SELECT tid()")).fetchone())[0]
    return inside, outside


async def test_inline_writes_run_a_transaction_on_the_callers_thread_and_commit_or_roll_back(
        tmp_path):
    import threading

    import pytest

    from backend.store.db import Database

    db = await Database.open(tmp_path / "t.db", run_migrations=False, inline_writes=True)
    plain = await Database.open(tmp_path / "t.db", run_migrations=False)
    try:
        inside, outside = await _thread_of_statements(db)
        assert inside == threading.get_ident()  # no trip to the writer's thread
        assert outside != threading.get_ident()  # BEGIN / COMMIT and any use outside: trips
        plain_inside, _ = await _thread_of_statements(plain)
        assert plain_inside != threading.get_ident()  # not asked for: every statement a trip
        async with db.transaction() as conn:
            await conn.execute("CREATE TABLE t (n INTEGER)")
            await conn.executemany("INSERT INTO t VALUES (?)", [(1,), (2,)])
        with pytest.raises(RuntimeError):
            async with db.transaction() as conn:
                await conn.execute("INSERT INTO t VALUES (3)")
                raise RuntimeError("rolled back")
        assert db._conn.inline is False  # off again after the transaction
        assert [row[0] for row in await plain.fetchall("SELECT n FROM t ORDER BY n")] == [1, 2]
        await db.release_memory()  # the writer's turn under the write lock: no deadlock
    finally:
        await db.close()
        await plain.close()
