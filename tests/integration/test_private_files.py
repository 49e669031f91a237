"""Everything a real run writes is private (0700 folders, 0600 files), and an app dir
left readable by an older version is repaired at start."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from backend.supervision.supervisor import Supervisor
from tests.api_http import api_http
from tests.app_db import connect_db
from tests.integration.conftest import write_settings

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session"),
              pytest.mark.skipif(os.name != "posix", reason="POSIX modes only")]


def readable_by_others(app_dir: Path) -> list[str]:
    """Every path under ``app_dir`` (itself included) with a group or other bit."""
    found = []
    for path in [app_dir, *app_dir.rglob("*")]:
        if path.is_symlink():
            continue
        try:
            mode = stat.S_IMODE(path.lstat().st_mode)
        except FileNotFoundError:  # a temp file removed while we looked
            continue
        if mode & 0o077:
            found.append(f"{path.relative_to(app_dir.parent)} {mode:o}")
    return found


async def run_and_write(app_dir: Path) -> list[str]:
    """Start a real Supervisor, make the API write the database, look while it runs and
    again after it stopped."""
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    try:
        info = supervisor.info
        async with api_http(info) as http:
            saved = await http.put("/v1/profile", json={"targetTitles": ["Backend Engineer"]})
            assert saved.status_code == 200, saved.text
        running = readable_by_others(app_dir)
    finally:
        await supervisor.stop()
    return running + readable_by_others(app_dir)


async def test_a_fresh_app_dir_has_no_group_or_other_bits_anywhere(tmp_path):
    app_dir = tmp_path / "fresh"
    write_settings(app_dir)
    os.chmod(app_dir, 0o700)
    os.chmod(app_dir / "settings.json", 0o600)  # what the app itself would have made
    previous = os.umask(0o022)  # the usual umask: the app must not depend on its caller's
    try:
        assert await run_and_write(app_dir) == []
    finally:
        os.umask(previous)
    assert (app_dir / "jobctrl.db").exists() and (app_dir / "logs").is_dir()
    assert (app_dir / "temporal").is_dir()


async def test_an_old_readable_app_dir_is_repaired_at_start(tmp_path):
    app_dir = tmp_path / "old"
    write_settings(app_dir)
    for folder in ("logs", "backups", "artifacts/job-1", "temporal"):
        (app_dir / folder).mkdir(parents=True, exist_ok=True)
    old_files = [app_dir / "logs" / "api.log", app_dir / "backups" / "jobctrl-1.db",
                 app_dir / "artifacts" / "job-1" / "Resume.pdf", app_dir / "runtime.json.old"]
    for path in old_files:
        path.write_bytes(b"old")
    connect_db(app_dir / "jobctrl.db").close()
    for path in [app_dir, *app_dir.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    assert readable_by_others(app_dir)

    assert await run_and_write(app_dir) == []
