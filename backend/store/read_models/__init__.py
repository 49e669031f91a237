"""The projections' own tables, one module per table: the SQL the folds in
``backend/projections/`` run (read a row, write a row, read the events a rebuild folds,
replace a tenant's rows). The folds themselves stay plain functions in projections/."""

from __future__ import annotations

from collections.abc import Sequence

import aiosqlite


async def insert_or_replace(conn: aiosqlite.Connection, table: str, columns: Sequence[str],
                            rows: Sequence[tuple]) -> None:
    """Insert or replace each row (``columns``, in order) of a projection table (named by
    its module, never by a caller's input)."""
    if rows:
        await conn.executemany(
            f"INSERT OR REPLACE INTO {table} ({', '.join(columns)})"
            f" VALUES ({','.join('?' * len(columns))})", rows)
