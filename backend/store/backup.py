"""Copies of the database taken before an upgrade migrates it, so an upgrade can be undone.

The copy goes through SQLite's online backup API (``sqlite3.Connection.backup``), which
reads one consistent snapshot including pages still in the WAL; copying the file bytes
could catch a half-written page or miss the WAL. Files are named
``jobctrl-before-v<new version>-<UTC timestamp>.db`` in ``<app dir>/backups/``; only the
newest :data:`KEEP_BACKUPS` are kept.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
from datetime import datetime
from pathlib import Path

from backend.domain.clock import utc_now

BACKUPS_DIR_NAME = "backups"
KEEP_BACKUPS = 3
# Microseconds in the stamp: two upgrades within one second (tests, a retried start) must
# not overwrite each other's copy.
_STAMP_FORMAT = "%Y%m%dT%H%M%S%fZ"
_BACKUP_NAME = re.compile(r"^jobctrl-before-v(\d+)-(\d{8}T\d{12}Z)\.db$")


def backups_dir_for(database: Path) -> Path:
    """The database lives at the top of the app dir, so its backups sit beside it."""
    return database.parent / BACKUPS_DIR_NAME


def backup_name(new_version: int, moment: datetime) -> str:
    return f"jobctrl-before-v{new_version}-{moment.strftime(_STAMP_FORMAT)}.db"


def backup_before_upgrade(database: Path, backups_dir: Path, new_version: int) -> Path:
    """Copy ``database`` to a new backup file, then prune old backups.

    Called while the migrating connection holds the write lock (``BEGIN IMMEDIATE``,
    nothing written yet): SQLite's backup refuses a source connection inside a write
    transaction, so the copy reads through its own connection, and the held lock
    guarantees nobody commits between this copy and the migration. The copy is written
    under a temporary name and renamed when complete, so a crash mid-copy never leaves a
    partial file that pruning would count as a backup."""
    backups_dir.mkdir(parents=True, exist_ok=True)
    final = backups_dir / backup_name(new_version, utc_now())
    partial = final.with_name(final.name + ".partial")
    source = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)
    target = sqlite3.connect(partial, isolation_level=None)
    try:
        source.backup(target)
        # The copied header says WAL; a backup is one self-contained file to copy around.
        target.execute("PRAGMA journal_mode=DELETE")
    finally:
        target.close()
        source.close()
    os.replace(partial, final)
    prune_backups(backups_dir, keep=KEEP_BACKUPS)
    return final


def list_backups(backups_dir: Path) -> list[Path]:
    """Upgrade backups in ``backups_dir``, oldest first (by the stamp in the name, since
    the version number in front would sort v9 after v13)."""
    if not backups_dir.is_dir():
        return []
    found = []
    for entry in backups_dir.iterdir():
        match = _BACKUP_NAME.match(entry.name)
        if match and entry.is_file():
            found.append((match.group(2), entry))
    return [entry for _stamp, entry in sorted(found)]


def prune_backups(backups_dir: Path, *, keep: int) -> list[Path]:
    """Delete all but the newest ``keep`` upgrade backups; returns the deleted files.
    Files that do not follow the backup name (a user's own copy) are never touched."""
    backups = list_backups(backups_dir)
    doomed = backups[: max(len(backups) - keep, 0)]
    for path in doomed:
        with contextlib.suppress(FileNotFoundError):  # another process pruned it first
            path.unlink()
    return doomed
