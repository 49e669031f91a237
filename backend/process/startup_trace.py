"""Start-up milestones: logged for everyone, and written for a benchmark that asks.

``milestone("first_paint")`` logs how long after the process was created it was reached
(the desktop's log then says when its window appeared and when its services were ready).
With ``JOBCTRL_STARTUP_TRACE`` naming a file, each milestone is also appended to it as a
JSON line with ``time.perf_counter()`` — the system-wide monotonic clock on Linux, macOS
and Windows — so a benchmark in another process can compare it with its own launch time
(bench/desktop_latency.py). Stdlib and psutil only: it runs before the heavy imports.
"""

from __future__ import annotations

import logging
import os
import time

TRACE_ENV = "JOBCTRL_STARTUP_TRACE"

log = logging.getLogger(__name__)


def _seconds_since_process_start() -> float | None:
    try:
        import psutil

        return time.time() - psutil.Process().create_time()
    except Exception:  # noqa: BLE001 - a log detail, never worth failing for
        return None


def milestone(name: str) -> None:
    now = time.perf_counter()
    since = _seconds_since_process_start()
    log.info("start-up: %s after %s", name.replace("_", " "),
             "unknown time" if since is None else f"{since:.2f} s")
    path = os.environ.get(TRACE_ENV)
    if not path:
        return
    import json

    try:
        with open(path, "a", encoding="utf-8") as trace:
            trace.write(json.dumps({"milestone": name, "perf_counter": now,
                                    "pid": os.getpid()}) + "\n")
    except OSError:
        log.warning("could not write the start-up trace to %s", path, exc_info=True)
