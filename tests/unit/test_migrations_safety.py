"""The user's database across upgrades and downgrades, on real SQLite files.

A database written by a newer JobCtrl is refused without a byte changing; an existing
database is copied (SQLite backup API) before an upgrade migrates it, the newest three
copies are kept, and a fresh database needs no copy."""

from __future__ import annotations

import hashlib
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from backend.store.backup import (
    KEEP_BACKUPS,
    backup_name,
    backups_dir_for,
    list_backups,
    prune_backups,
)
from backend.store.db import DatabaseTooNewError, _migration_files, migrate

ALL = _migration_files()
NEWEST = ALL[-1][0]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _versions(path: Path) -> list[int]:
    conn = sqlite3.connect(path)
    try:
        return sorted(row[0] for row in conn.execute("SELECT version FROM schema_migrations"))
    finally:
        conn.close()


def _checkpointed(path: Path) -> None:
    """Fold the WAL into the main file so its bytes are the whole database."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()


def _write(path: Path, sql: str, params=()) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute(sql, params)
    finally:
        conn.close()


def _add_user_event(path: Path, note: str) -> None:
    """A row in the oldest table (migration 0001), standing for the user's data."""
    _write(
        path,
        "INSERT INTO job_events (tenant_id, type, payload_json, created_at)"
        " VALUES ('local', 'TestNote', ?, '2025-01-01T00:00:00.000Z')",
        (f'{{"note": "{note}"}}',),
    )


def _older_database(path: Path, drop: int = 2) -> list[int]:
    """A database as an older JobCtrl left it: all migrations but the last ``drop``."""
    return migrate(path, migrations=ALL[:-drop])


# --- a database from a newer JobCtrl ------------------------------------------------------


def test_a_database_from_a_newer_jobctrl_is_refused_and_left_byte_identical(tmp_path):
    path = tmp_path / "jobctrl.db"
    migrate(path)
    _add_user_event(path, "mine")
    _write(path, "INSERT INTO schema_migrations VALUES (9999, '9999_future.sql', "
                 "'2030-01-01T00:00:00.000Z')")
    _checkpointed(path)
    before = _sha256(path)

    with pytest.raises(DatabaseTooNewError) as refused:
        migrate(path)

    error = refused.value
    assert (error.database_version, error.known_version) == (9999, NEWEST)
    message = str(error)
    assert "written by a newer JobCtrl (database version 9999)" in message
    assert f"this JobCtrl knows up to {NEWEST}" in message
    assert "Install the newer version again" in message
    assert "\n" not in message  # one line in a terminal and in the banner
    assert _sha256(path) == before
    assert not (tmp_path / "jobctrl.db-wal").exists() or _wal_is_empty(tmp_path)
    assert list_backups(backups_dir_for(path)) == []  # refusing is not upgrading


def _wal_is_empty(folder: Path) -> bool:
    return (folder / "jobctrl.db-wal").stat().st_size == 0


def test_an_older_build_refuses_a_database_one_version_ahead(tmp_path):
    """The real downgrade: this build minus its newest migration meets today's database."""
    path = tmp_path / "jobctrl.db"
    migrate(path)
    _checkpointed(path)
    before = _sha256(path)
    with pytest.raises(DatabaseTooNewError) as refused:
        migrate(path, migrations=ALL[:-1])
    assert refused.value.database_version == NEWEST
    assert refused.value.known_version == ALL[-2][0]
    assert _sha256(path) == before
    assert _versions(path) == [version for version, _n, _s in ALL]


# --- backups before an upgrade ------------------------------------------------------------


def test_a_fresh_database_is_migrated_without_a_backup(tmp_path):
    path = tmp_path / "jobctrl.db"
    assert migrate(path) == [version for version, _n, _s in ALL]
    assert list_backups(backups_dir_for(path)) == []
    assert not backups_dir_for(path).exists()


def test_upgrading_an_older_database_backs_it_up_first(tmp_path):
    path = tmp_path / "jobctrl.db"
    old_versions = _older_database(path)
    _add_user_event(path, "before the upgrade")

    applied = migrate(path)

    assert applied == [version for version, _n, _s in ALL[-2:]]
    assert _versions(path) == [version for version, _n, _s in ALL]
    [backup] = list_backups(backups_dir_for(path))
    assert backup.parent == tmp_path / "backups"
    assert backup.name.startswith(f"jobctrl-before-v{NEWEST}-")
    copy = sqlite3.connect(f"file:{backup}?mode=ro", uri=True)
    try:
        assert sorted(row[0] for row in copy.execute("SELECT version FROM schema_migrations")) \
            == old_versions
        notes = [row[0] for row in copy.execute("SELECT payload_json FROM job_events")]
        assert notes == ['{"note": "before the upgrade"}']
        assert copy.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert copy.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # one file
    finally:
        copy.close()
    assert not list(backup.parent.glob("*.partial"))


def test_an_up_to_date_database_is_not_backed_up_again(tmp_path):
    path = tmp_path / "jobctrl.db"
    _older_database(path)
    migrate(path)
    assert migrate(path) == []
    assert len(list_backups(backups_dir_for(path))) == 1


def test_a_failing_migration_rolls_back_and_the_backup_stays(tmp_path):
    path = tmp_path / "jobctrl.db"
    old_versions = _older_database(path)
    _add_user_event(path, "keep me")
    broken = (NEWEST + 1, f"{NEWEST + 1:04d}_broken.sql",
              "CREATE TABLE half_done (id INTEGER);\nSELECT * FROM no_such_table;\n")

    with pytest.raises(sqlite3.OperationalError, match="no_such_table"):
        migrate(path, migrations=[*ALL, broken])

    assert _versions(path) == old_versions  # nothing of the upgrade was kept
    conn = sqlite3.connect(path)
    try:
        tables = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    finally:
        conn.close()
    assert "half_done" not in tables
    [backup] = list_backups(backups_dir_for(path))
    assert backup.name.startswith(f"jobctrl-before-v{NEWEST + 1}-")
    assert _versions(backup) == old_versions


def test_successive_upgrades_keep_the_newest_three_backups(tmp_path):
    path = tmp_path / "jobctrl.db"
    migrate(path, migrations=ALL[:-5])
    made = []
    for step in (4, 3, 2, 1, 0):
        migrate(path, migrations=ALL[: len(ALL) - step])
        made.extend(set(list_backups(backups_dir_for(path))) - set(made))
    kept = list_backups(backups_dir_for(path))
    assert len(made) == 5
    assert kept == made[-KEEP_BACKUPS:]
    assert [p.name.split("-")[2] for p in kept] == [f"v{v}" for v, _n, _s in ALL[-3:]]


def test_pruning_orders_by_time_not_by_version_and_spares_other_files(tmp_path):
    folder = tmp_path / "backups"
    folder.mkdir()
    moments = [datetime(2025, 1, day, 12, 0, 0, tzinfo=UTC) for day in (1, 2, 3, 4)]
    # v9 is the newest copy: a version that sorts last as text must not decide the order.
    names = [backup_name(version, moment)
             for version, moment in zip((13, 12, 10, 9), moments, strict=True)]
    for name in names:
        (folder / name).write_bytes(b"x")
    (folder / "my-own-copy.db").write_bytes(b"mine")

    deleted = prune_backups(folder, keep=3)

    assert [p.name for p in deleted] == [names[0]]
    assert sorted(p.name for p in folder.iterdir()) == sorted([*names[1:], "my-own-copy.db"])
