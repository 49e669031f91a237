"""Everything JobCtrl writes is private to the user: 0700 folders, 0600 files.

The app dir holds the résumé, the profile, letters and the job history (``jobctrl.db``
and its WAL), settings, logs, backups, PDFs and Temporal's history. Two levers:

* :func:`restrict_umask` at process start, so every file and folder is created private
  (children inherit the umask, and SQLite gives ``-wal`` / ``-shm`` the database's mode);
* :func:`make_private` at start, which repairs what older versions made 0644 / 0755.

Both are no-ops on Windows, where the per-user app-data folder carries the ACLs.
"""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

PRIVATE_UMASK = 0o077
PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
_GROUP_OTHER_BITS = 0o077


def _posix() -> bool:
    return os.name == "posix"


def restrict_umask() -> None:
    """New files 0600 and folders 0700 in this process and every child it starts."""
    if _posix():
        os.umask(PRIVATE_UMASK)


def _tighten(path: Path, private_mode: int) -> bool:
    """Drop group/other bits from ``path`` (never following a symlink); True if changed."""
    mode = stat.S_IMODE(path.lstat().st_mode)
    wanted = (mode & ~_GROUP_OTHER_BITS) | private_mode
    if mode == wanted:
        return False
    os.chmod(path, wanted)
    return True


def make_private(app_dir: Path) -> list[Path]:
    """Make ``app_dir`` and everything below it private; the paths it had to repair.
    Symlinks are left alone (their target may be anything, e.g. a shared folder)."""
    if not _posix() or not app_dir.is_dir():
        return []
    repaired = [app_dir] if _tighten(app_dir, PRIVATE_DIR_MODE) else []
    for root, dirs, files in os.walk(app_dir, followlinks=False):
        base = Path(root)
        for name in dirs:
            path = base / name
            if not path.is_symlink() and _tighten(path, PRIVATE_DIR_MODE):
                repaired.append(path)
        for name in files:
            path = base / name
            try:
                if not path.is_symlink() and _tighten(path, PRIVATE_FILE_MODE):
                    repaired.append(path)
            except FileNotFoundError:  # a temp file a child removed meanwhile
                continue
    if repaired:
        log.info("made %d paths in %s private (0700 folders, 0600 files)", len(repaired), app_dir)
    return repaired
