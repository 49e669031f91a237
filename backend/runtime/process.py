"""Process plumbing shared by every ``jobctrl`` entry point: logging, signals, exit."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import logging.handlers
import os
import signal
import sys
from pathlib import Path

PARENT_POLL_S = 1.0


def configure_logging(log_dir: Path | None, name: str, *, verbose: bool = False) -> None:
    handlers: list[logging.Handler] = []
    if log_dir is not None:
        log_dir.mkdir(parents=True, exist_ok=True)
        handlers.append(
            logging.handlers.RotatingFileHandler(
                log_dir / f"{name}.log", maxBytes=5_000_000, backupCount=3, encoding="utf-8"
            )
        )
    if sys.stderr is not None:  # windowed frozen builds have no stderr
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
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # Windows
            loop.add_signal_handler(signum, stop.set)


async def stop_when_parent_dies(stop: asyncio.Event) -> None:
    """Portable backstop to the kernel's parent-death signal (macOS has none)."""
    parent = os.environ.get("JOBCTRL_PARENT_PID")
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
