"""The API's event tail polls the database only while a stream listens, and a stream
still wakes on another connection's commit."""

import asyncio
import sqlite3

from backend.api.sse import EventTail


def _commit_elsewhere(path) -> None:
    with sqlite3.connect(path) as conn:  # another connection: data_version moves
        conn.execute("CREATE TABLE IF NOT EXISTS tail_probe (n INTEGER)")
        conn.execute("INSERT INTO tail_probe VALUES (1)")


async def test_the_tail_polls_only_while_a_stream_listens(db):
    tail = EventTail(db.path, poll_interval=0.002)
    await tail.start()
    polls = 0
    real_version = tail._db.data_version

    async def counted() -> int:
        nonlocal polls
        polls += 1
        return await real_version()

    tail._db.data_version = counted
    try:
        await asyncio.sleep(0.1)
        assert polls == 0, "nobody listens: nothing is polled"
        with tail.listening():
            marker = tail.marker()
            await asyncio.wait_for(marker.wait(), timeout=5)  # the wake-up on resume
            marker = tail.marker()
            _commit_elsewhere(db.path)
            await asyncio.wait_for(marker.wait(), timeout=5)
            assert polls >= 2
        await asyncio.sleep(0.05)  # the poll in flight ends
        settled = polls
        await asyncio.sleep(0.1)
        assert polls == settled, "the last stream left: polling stops"
    finally:
        await tail.stop()
