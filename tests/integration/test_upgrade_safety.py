"""`jobctrl serve` meeting a database from another JobCtrl version, as a user would.

A database written by a newer JobCtrl (the user went back to an older install) stops the
start with one readable line and a non-zero exit, before any service starts; a database
from an older JobCtrl is backed up, upgraded, and its data is served."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import psutil
import pytest

from backend.config import TENANT_ID
from backend.store.backup import backups_dir_for, list_backups
from backend.store.db import _migration_files, migrate
from desktop.client import ApiClient
from tests.app_db import connect_db
from tests.integration.serve_process import ServeProcess, wait_gone

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

ALL = _migration_files()


def _processes_using(app_dir: Path) -> list[int]:
    """Every live process whose command line names the app dir (supervisor, worker, API,
    and the Temporal dev server through its history file)."""
    found = []
    for proc in psutil.process_iter(["pid", "cmdline"]):
        try:
            if any(str(app_dir) in part for part in proc.info["cmdline"] or ()):
                found.append(proc.info["pid"])
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return found


def _database_from_a_newer_jobctrl(app_dir: Path) -> Path:
    app_dir.mkdir(parents=True)
    database = app_dir / "jobctrl.db"
    migrate(database)
    conn = connect_db(database, isolation_level=None)
    try:
        conn.execute("INSERT INTO schema_migrations VALUES (9999, '9999_future.sql',"
                     " '2030-01-01T00:00:00.000Z')")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    return database


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


async def test_serve_refuses_a_database_from_a_newer_jobctrl(tmp_path):
    app_dir = tmp_path / "app"
    database = _database_from_a_newer_jobctrl(app_dir)
    before = _sha256(database)

    serve = ServeProcess(app_dir)
    try:
        code = serve.wait(timeout=60)
    except subprocess.TimeoutExpired:  # it started instead of refusing: stop it, then fail
        serve.interrupt()
        raise

    assert code != 0
    output = serve.output
    expected = (
        f"JobCtrl could not start: This data folder was written by a newer JobCtrl "
        f"(database version 9999); this JobCtrl knows up to {ALL[-1][0]}. "
        "Install the newer version again."
    )
    assert expected in output
    assert "Traceback" not in output
    assert _sha256(database) == before
    assert list_backups(backups_dir_for(database)) == []
    assert not (app_dir / "runtime.json").exists()
    assert wait_gone(_processes_using(app_dir)) == []
    assert not (app_dir / "temporal" / "history.db").exists()  # stopped before Temporal


def _database_from_an_older_jobctrl(app_dir: Path) -> list[int]:
    """Two migrations behind, holding one job the user already had."""
    app_dir.mkdir(parents=True)
    database = app_dir / "jobctrl.db"
    old_versions = migrate(database, migrations=ALL[:-2])
    conn = connect_db(database, isolation_level=None)
    try:
        conn.execute(
            "INSERT INTO jobs (job_id, tenant_id, canonical_url, url, title, company,"
            " first_source, first_seen_at, last_seen_at) VALUES"
            " ('job-kept', ?, 'https://kept.example/jobs/1', 'https://kept.example/jobs/1',"
            " 'Kept Engineer', 'Kept Co', 'demo_board', '2025-01-01T00:00:00.000Z',"
            " '2025-01-01T00:00:00.000Z')",
            (TENANT_ID,),
        )
    finally:
        conn.close()
    return old_versions


async def test_serve_backs_up_and_upgrades_a_database_from_an_older_jobctrl(tmp_path):
    app_dir = tmp_path / "app"
    old_versions = _database_from_an_older_jobctrl(app_dir)

    serve = ServeProcess(app_dir)
    try:
        info = serve.wait_healthy()
        api = ApiClient.from_runtime(info)
        try:
            jobs = await api.jobs()
        finally:
            await api.close()
    finally:
        code = serve.interrupt()
    assert code == 0
    assert [job["title"] for job in jobs["items"]] == ["Kept Engineer"]

    [backup] = list_backups(backups_dir_for(app_dir / "jobctrl.db"))
    assert backup.name.startswith(f"jobctrl-before-v{ALL[-1][0]}-")
    copy = connect_db(f"file:{backup}?mode=ro", uri=True)
    try:
        versions = sorted(row[0] for row in copy.execute("SELECT version FROM schema_migrations"))
        titles = [row[0] for row in copy.execute("SELECT title FROM jobs")]
    finally:
        copy.close()
    assert versions == old_versions
    assert titles == ["Kept Engineer"]
