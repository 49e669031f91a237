"""Give memory back to the system after a burst of work (glibc's ``malloc_trim``).

After a burst (a Discover run preparing hundreds of jobs, a page of 10,000 rows) CPython
frees its objects, but glibc keeps the freed heap pages mapped, so a process that worked
hard once holds its peak resident size for days. ``malloc_trim(0)`` hands the free pages
back. ``trim_after_bursts`` runs in every JobCtrl process (worker, API, the desktop
shell): it wakes every ``every_s``, and trims once the process used at least
``burst_cpu_s`` of CPU since the last trim and then went quiet (under ``idle_share`` of a
core over the last interval) — so an idle process is never touched twice and a busy one
is not interrupted. A trim costs a few milliseconds. Without glibc (macOS, Windows, musl)
it does nothing. ``JOBCTRL_HEAP_TRIM=0`` turns it off (for measuring it).

``release``: a process's own caches to empty first, at the same moment (the API and the
worker: SQLite's page cache of each connection, ``Database.release_memory``), so the heap
trim can hand those pages back too.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where awaited: the desktop imports this before asyncio
    import asyncio

log = logging.getLogger(__name__)

TRIM_ENV = "JOBCTRL_HEAP_TRIM"
EVERY_S = 10.0
BURST_CPU_S = 2.0
IDLE_SHARE = 0.05


@cache
def _malloc_trim():
    if not sys.platform.startswith("linux"):
        return None
    # Imported here: the desktop imports this module before its first frame, and ctypes
    # (with ctypes.util) is ~10 ms of it. glibc's soname first: find_library runs ldconfig.
    import ctypes
    import ctypes.util

    try:
        try:
            libc = ctypes.CDLL("libc.so.6")
        except OSError:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


def trim_heap() -> bool:
    """Return the free heap pages to the system now; False where that is not possible."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def enabled() -> bool:
    return os.environ.get(TRIM_ENV, "1") != "0" and _malloc_trim() is not None


class BurstDetector:
    """Decides, from this process's CPU time, when a burst of work has just ended."""

    def __init__(self, *, burst_cpu_s: float = BURST_CPU_S, idle_share: float = IDLE_SHARE,
                 clock=time.monotonic, cpu=time.process_time):
        self._burst_cpu_s = burst_cpu_s
        self._idle_share = idle_share
        self._clock, self._cpu = clock, cpu
        self._since_trim = cpu()
        self._last_cpu, self._last_at = cpu(), clock()

    def burst_ended(self) -> bool:
        now, used = self._clock(), self._cpu()
        share = (used - self._last_cpu) / max(now - self._last_at, 1e-6)
        self._last_cpu, self._last_at = used, now
        if used - self._since_trim >= self._burst_cpu_s and share < self._idle_share:
            self._since_trim = used
            return True
        return False


async def trim_after_bursts(stop: asyncio.Event | None = None, *, every_s: float = EVERY_S,
                            detector: BurstDetector | None = None,
                            release: Callable[[], Awaitable[None]] | None = None) -> None:
    """Runs until cancelled (or ``stop`` is set); see the module docstring."""
    import asyncio

    if not enabled():
        return
    detector = detector or BurstDetector()
    stop = stop or asyncio.Event()
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=every_s)
        if detector.burst_ended():
            await trim_now(release)


async def trim_now(release: Callable[[], Awaitable[None]] | None = None) -> None:
    """Empty the process's own caches (``release``), then trim the heap."""
    started = time.perf_counter()
    if release is not None:
        try:
            await release()
        except Exception:  # noqa: BLE001 - a cache that cannot be emptied now is kept
            log.warning("releasing caches before the heap trim failed", exc_info=True)
    trim_heap()
    log.debug("caches released and heap trimmed after a burst in %.1f ms",
              (time.perf_counter() - started) * 1000)
