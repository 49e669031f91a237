"""A stand-in child for the log tests, run as a script: it logs the way ``jobctrl worker``
does (``configure_logging`` with ``console=not supervised()``) or writes raw output, then
marks itself ready and waits to be stopped.

    log_probe.py LOG_DIR NAME log COUNT     COUNT log records, then ready
    log_probe.py LOG_DIR NAME raw BYTES     BYTES of raw stdout, then ready
    log_probe.py LOG_DIR NAME crash TEXT    TEXT on stderr before any logging, exit 3
    log_probe.py LOG_DIR NAME fail TEXT     TEXT logged as an ERROR, exit 3 (uvicorn's way
                                            when its port is taken)
    log_probe.py LOG_DIR NAME stream COUNT  ready, then COUNT raw chunks while running, each
                                            once the supervisor has trimmed the last; then
                                            the done marker
"""

from __future__ import annotations

import logging
import os
import sys
import time
from pathlib import Path

from backend.supervision.process import configure_logging, supervised

PADDING = "x" * 60  # records long enough for a tiny bound to rotate many times


def record_text(index: int) -> str:
    return f"probe record {index:06d} {PADDING}"


def ready_marker(log_dir: Path, name: str) -> Path:
    return log_dir / f"{name}.ready"


CHUNK_BYTES = 10_000
GIVE_UP_AFTER_S = 60.0  # a hang guard: without trimming, write on and let the test fail


def chunk_text(index: int) -> str:
    return f"chunk {index:04d} " + "c" * CHUNK_BYTES + "\n"


def done_marker(log_dir: Path, name: str) -> Path:
    return log_dir / f"{name}.done"


def stream(log_dir: Path, name: str, count: int) -> None:
    """Raw output while running, the way the dev server writes for a week."""
    console = log_dir / f"{name}.console.log"
    deadline = time.monotonic() + GIVE_UP_AFTER_S
    for index in range(count):
        os.write(sys.stdout.fileno(), chunk_text(index).encode())  # one write: one chunk
        while console.stat().st_size >= CHUNK_BYTES and time.monotonic() < deadline:
            time.sleep(0.05)
    done_marker(log_dir, name).touch()


def main(log_dir: Path, name: str, mode: str, arg: str) -> int:
    if mode == "crash":
        sys.stderr.write(f"{arg}\n")
        return 3
    if mode == "fail":
        configure_logging(log_dir, name, console=not supervised())
        logging.getLogger("uvicorn.error").error(arg)
        return 3
    if mode == "log":
        configure_logging(log_dir, name, console=not supervised())
        probe = logging.getLogger("probe")
        for index in range(int(arg)):
            probe.info(record_text(index))
    elif mode == "raw":
        sys.stdout.write("r" * int(arg))
        sys.stdout.flush()
    ready_marker(log_dir, name).touch()
    if mode == "stream":
        stream(log_dir, name, int(arg))
    while True:  # until the supervisor stops it (SIGTERM)
        time.sleep(1)


if __name__ == "__main__":
    log_dir, name, mode, arg = sys.argv[1:5]
    sys.exit(main(Path(log_dir), name, mode, arg))
