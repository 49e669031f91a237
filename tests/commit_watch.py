"""Proof that a read wrote nothing: SQLite's ``PRAGMA data_version`` on a connection of
its own changes whenever any other connection commits (the API's and the worker's
included), so an unchanged value means no commit happened in between."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def no_commits(database: Path) -> Iterator[None]:
    watcher = sqlite3.connect(database)
    try:
        before = watcher.execute("PRAGMA data_version").fetchone()[0]
        yield
        after = watcher.execute("PRAGMA data_version").fetchone()[0]
        assert after == before, "something committed to the database"
    finally:
        watcher.close()

