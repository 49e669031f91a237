"""``projection_watermarks``: how far each projection has folded the event log."""

from __future__ import annotations

import aiosqlite

from backend.store.db import Database


async def read_watermark(db_or_conn: Database | aiosqlite.Connection, name: str) -> int:
    sql = "SELECT last_event_id FROM projection_watermarks WHERE name = ?"
    if isinstance(db_or_conn, Database):
        row = await db_or_conn.fetchone(sql, (name,))
    else:
        async with db_or_conn.execute(sql, (name,)) as cursor:
            row = await cursor.fetchone()
    return int(row[0]) if row else 0


async def write_watermark(conn: aiosqlite.Connection, name: str, event_id: int) -> None:
    await conn.execute(
        "INSERT INTO projection_watermarks (name, last_event_id) VALUES (?, ?)"
        " ON CONFLICT (name) DO UPDATE SET last_event_id = excluded.last_event_id",
        (name, event_id),
    )
