"""This build's schema version against the one a database records, read with the standard
library only: the supervisor refuses a newer JobCtrl's data folder before it spawns any
service (the services themselves migrate, ``backend.store.db.migrate``)."""

from __future__ import annotations

import sqlite3
from importlib import resources
from pathlib import Path


class DatabaseTooNewError(RuntimeError):
    """The database was written by a newer JobCtrl: its schema is unknown to this build.

    Raised before anything is written, so reinstalling the newer version finds the data
    exactly as it left it."""

    def __init__(self, database_version: int, known_version: int, path: Path):
        self.database_version = database_version
        self.known_version = known_version
        self.path = path
        super().__init__(
            f"This data folder was written by a newer JobCtrl (database version "
            f"{database_version}); this JobCtrl knows up to {known_version}. "
            f"Install the newer version again. (Data folder: {path.parent})"
        )


def packaged_versions() -> set[int]:
    """The versions of the migration files this build carries."""
    folder = resources.files("backend.store") / "migrations"
    return {int(entry.name.split("_", 1)[0]) for entry in folder.iterdir()
            if entry.name.endswith(".sql")}


def refuse_newer_database(path: Path) -> None:
    """Raise DatabaseTooNewError when ``path`` records a version this build lacks."""
    if not path.exists():
        return
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=30)
    try:
        has_table = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table'"
                                 " AND name = 'schema_migrations'").fetchone()
        recorded = ({row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
                    if has_table else set())
    finally:
        conn.close()
    known = packaged_versions()
    unknown = recorded - known
    if unknown:
        raise DatabaseTooNewError(max(unknown), max(known, default=0), path)
