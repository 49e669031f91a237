"""Fault injection for the crash-recovery tests: a real process death at a chosen point.

Inert unless the worker runs with ``JOBCTRL_ENABLE_FAULTS=1``; then a test arms one
point by creating ``<app dir>/faults/<point>``, and the next worker to pass that point
removes the file and exits at once, as a kill would, with nothing cleaned up. A stall point
hangs instead, for as long as its file exists."""

from __future__ import annotations

import asyncio
import os

from backend.config import AppPaths

ENABLED = os.environ.get("JOBCTRL_ENABLE_FAULTS") == "1"


def fault_point(paths: AppPaths, point: str) -> None:
    if not ENABLED:
        return
    armed = paths.app_dir / "faults" / point
    try:
        armed.unlink()
    except FileNotFoundError:
        return
    os._exit(137)


async def stall_point(paths: AppPaths, point: str) -> None:
    """While ``<app dir>/faults/<point>`` exists, the caller hangs (a stuck writer, a wedged
    disk): the activity attempt runs past its timeout as a real hang would. Removing the
    file lets the next attempt through."""
    if not ENABLED:
        return
    armed = paths.app_dir / "faults" / point
    while armed.exists():
        await asyncio.sleep(0.2)
