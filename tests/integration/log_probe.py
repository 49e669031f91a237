"""A stand-in child for the log tests, run as a script: it logs the way ``jobctrl worker``
does (``configure_logging`` with ``console=not supervised()``) or writes raw output, then
marks itself ready and waits to be stopped.

    log_probe.py LOG_DIR NAME log COUNT     COUNT log records, then ready
    log_probe.py LOG_DIR NAME raw BYTES     BYTES of raw stdout, then ready
    log_probe.py LOG_DIR NAME crash TEXT    TEXT on stderr before any logging, exit 3
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

from backend.runtime.process import configure_logging, supervised

PADDING = "x" * 60  # records long enough for a tiny bound to rotate many times


def record_text(index: int) -> str:
    return f"probe record {index:06d} {PADDING}"


def ready_marker(log_dir: Path, name: str) -> Path:
    return log_dir / f"{name}.ready"


def main(log_dir: Path, name: str, mode: str, arg: str) -> int:
    if mode == "crash":
        sys.stderr.write(f"{arg}\n")
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
    while True:  # until the supervisor stops it (SIGTERM)
        time.sleep(1)


if __name__ == "__main__":
    log_dir, name, mode, arg = sys.argv[1:5]
    sys.exit(main(Path(log_dir), name, mode, arg))
