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
