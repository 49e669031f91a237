"""The tests' own connections to an app's SQLite file, often while its services write to it.

Python's sqlite3 waits 5 s for another connection's lock by default. The API and the worker
wait ``BUSY_TIMEOUT_MS`` (30 s; backend/store/db.py) because on a loaded machine another
process's write can hold the lock longer: a test that reads or seeds a live database waits
as long as they do, instead of failing with "database is locked".
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from backend.store.db import BUSY_TIMEOUT_MS


def connect_db(database: Path | str, **options) -> sqlite3.Connection:
    return sqlite3.connect(database, timeout=BUSY_TIMEOUT_MS / 1000, **options)
