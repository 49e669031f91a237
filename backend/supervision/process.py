"""Process plumbing shared by every ``jobctrl`` entry point: logging, signals, exit.

asyncio is imported by the two helpers that need it: the desktop calls the others
before its first frame, which paints before asyncio is loaded (desktop/app.py)."""

from __future__ import annotations

import contextlib
import logging
import logging.handlers
import os
import shutil
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio

PARENT_POLL_S = 1.0

# Where every process's log goes, decided here and nowhere else:
# - ``<name>.log``: the process's own log records, through a RotatingFileHandler, so its
#   size is bounded by LOG_MAX_BYTES * (1 + LOG_BACKUPS).
# - ``<name>.console.log``: a supervised child's raw stdout/stderr (tracebacks before
#   logging is up, Rust-core panics, the Temporal dev server's own output). The supervisor
#   opens it for the child and rotates it when the child (re)starts, keeping one previous
#   copy, so a crash's output survives the restart that follows it; while the child runs,
#   the supervisor also trims it once over the bound (trim_console_log).
# A supervised child never logs to stderr as well: that stderr IS its console log, and
# every line would be written twice.
LOG_MAX_BYTES = 5_000_000
LOG_BACKUPS = 3
CONSOLE_LOG_BACKUPS = 1
LOG_MAX_BYTES_ENV = "JOBCTRL_LOG_MAX_BYTES"  # a smaller bound, for tests
PARENT_PID_ENV = "JOBCTRL_PARENT_PID"


def child_command(*args: str) -> list[str]:
    """Frozen builds are one executable: the shell starts its children as itself."""
    if getattr(sys, "frozen", False):
        return [sys.executable, *args]
    return [sys.executable, "-m", "backend.cli", *args]


def supervised() -> bool:
    """True in a child started by the supervisor (it passes its pid in the environment)."""
    return bool(os.environ.get(PARENT_PID_ENV))


def log_max_bytes() -> int:
    raw = os.environ.get(LOG_MAX_BYTES_ENV)
    if not raw:
        return LOG_MAX_BYTES
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ValueError(f"{LOG_MAX_BYTES_ENV} must be a positive number of bytes, not {raw!r}")
    return value


def log_file(log_dir: Path, name: str) -> Path:
    return log_dir / f"{name}.log"


def console_log_file(log_dir: Path, name: str) -> Path:
    return log_dir / f"{name}.console.log"


def open_console_log(path: Path, max_bytes: int):
    """The console log a child's stdout/stderr go to, opened for append; first rotated
    (one previous copy kept) if an earlier run left it over ``max_bytes``. The caller
    closes the handle once the child has inherited it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() and path.stat().st_size > max_bytes:
        # delay=True: the handler never opens the file; it only renames it to ``.1``.
        rotator = logging.handlers.RotatingFileHandler(
            path, maxBytes=max_bytes, backupCount=CONSOLE_LOG_BACKUPS, delay=True
        )
        try:
            rotator.doRollover()
        finally:
            rotator.close()
    return open(path, "ab")  # noqa: SIM115 - the caller closes it after Popen


def trim_console_log(path: Path, max_bytes: int) -> bool:
    """Bound a console log while its child still writes to it (the Temporal dev server may
    run for a week without a restart): copy it to ``.1``, then truncate it in place.

    Renaming is no use here: the child's handle would follow the renamed file. Truncating
    works because the handle was opened for append (O_APPEND), so the child's next write
    lands at the new end. A line written between the copy and the truncate is lost.
    POSIX only: a Windows child's inherited handle does not append, it would write at its
    old offset; there the rotation at each (re)start is the bound."""
    if sys.platform == "win32":
        return False
    try:
        if path.stat().st_size <= max_bytes:
            return False
    except FileNotFoundError:
        return False
    shutil.copyfile(path, path.with_name(f"{path.name}.{CONSOLE_LOG_BACKUPS}"))
    os.truncate(path, 0)
    return True


def configure_logging(
    log_dir: Path | None, name: str, *, console: bool, verbose: bool = False
) -> None:
    """``console``: also log to stderr. True for what a user runs in a terminal
    (``jobctrl serve``, the shell); False for a supervised child (see the top of this
    module)."""
    handlers: list[logging.Handler] = []
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
        handlers.append(
            logging.handlers.RotatingFileHandler(
                log_file(log_dir, name), maxBytes=log_max_bytes(), backupCount=LOG_BACKUPS,
                encoding="utf-8",
            )
        )
    if console and sys.stderr is not None:  # windowed frozen builds have no stderr
        handlers.append(logging.StreamHandler())
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format=f"%(asctime)s {name}[%(process)d] %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
        force=True,
    )
    for chatty in ("httpx", "httpcore"):
        logging.getLogger(chatty).setLevel(logging.WARNING)


def stop_on_signals(stop: asyncio.Event) -> None:
    import asyncio

    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # Windows
            loop.add_signal_handler(signum, stop.set)


async def stop_when_parent_dies(stop: asyncio.Event) -> None:
    """Portable backstop to the kernel's parent-death signal (macOS has none)."""
    import asyncio

    parent = os.environ.get(PARENT_PID_ENV)
    if not parent:
        return
    while not stop.is_set():
        if os.getppid() != int(parent):
            logging.getLogger(__name__).warning("parent %s is gone; stopping", parent)
            stop.set()
            return
        await asyncio.sleep(PARENT_POLL_S)


def hard_exit(code: int) -> None:
    """Leave without interpreter finalization: the Temporal SDK's Rust runtime can abort
    there (``PyGILState_Release``, sdk-python issue 300)."""
    logging.shutdown()
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)
