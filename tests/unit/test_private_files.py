"""The start-time repair of an app dir made readable by an older version."""

from __future__ import annotations

import os
import stat

import pytest

from backend.supervision.private_files import make_private

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX modes only")


def mode(path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_make_private_tightens_every_folder_and_file_and_leaves_symlinks(tmp_path):
    app_dir = tmp_path / "app"
    (app_dir / "logs").mkdir(parents=True)
    db = app_dir / "jobctrl.db"
    db.write_bytes(b"")
    log = app_dir / "logs" / "api.log"
    log.write_text("x")
    outside = tmp_path / "shared.txt"
    outside.write_text("not ours")
    os.chmod(outside, 0o644)
    (app_dir / "link").symlink_to(outside)
    for path, wanted in ((app_dir, 0o755), (app_dir / "logs", 0o775), (db, 0o644), (log, 0o666)):
        os.chmod(path, wanted)

    repaired = make_private(app_dir)

    assert set(repaired) == {app_dir, app_dir / "logs", db, log}
    assert (mode(app_dir), mode(app_dir / "logs"), mode(db), mode(log)) == (0o700, 0o700, 0o600, 0o600)
    assert mode(outside) == 0o644  # a symlink's target is not ours to change
    assert make_private(app_dir) == []  # idempotent
