"""Environment overrides for the private Supervisors some integration modules start
(their child processes inherit os.environ when they start)."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path


def override_environ(**overrides: str) -> Callable[[], None]:
    """Set ``overrides`` in os.environ; the returned function puts back what was there
    (unset variables are unset again)."""
    saved = {key: os.environ.get(key) for key in overrides}
    os.environ.update(overrides)

    def restore() -> None:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    return restore


@contextlib.contextmanager
def bare_dev_server(history_file: Path) -> Iterator[str]:
    """A Temporal dev server of its own (headless, no worker, no JobCtrl services) for a
    test that needs a cluster to itself; yields its address and stops it afterwards."""
    from backend.supervision.embedded_temporal import dev_server_argv, temporal_binary
    from backend.supervision.ports import free_port

    port = free_port()
    server = subprocess.Popen(
        dev_server_argv(temporal_binary(), history_file=history_file, port=port, ui_port=None),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(15)
