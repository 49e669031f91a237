"""`jobctrl serve` as a real subprocess, the way a user or a script runs it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil

from backend.config import RuntimeInfo


class ServeProcess:
    """``jobctrl serve`` (or ``command``, e.g. ``desktop`` where it falls back to serve)."""

    def __init__(self, app_dir: Path, *extra: str, command: str = "serve",
                 env: dict[str, str] | None = None):
        self.app_dir = app_dir
        self.stderr_path = app_dir.parent / f"{app_dir.name}-serve-{time.monotonic_ns()}.txt"
        app_dir.mkdir(parents=True, exist_ok=True)
        self._stderr = open(self.stderr_path, "wb")  # noqa: SIM115 - closed in wait()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "backend.cli", "--app-dir", str(app_dir), command,
             "--no-temporal-ui", *extra],
            stdout=subprocess.DEVNULL, stderr=self._stderr,
            env={**os.environ, "PYTHONUNBUFFERED": "1", **(env or {})},
        )

    @property
    def output(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def wait_healthy(self, timeout: float = 90) -> RuntimeInfo:
        runtime_file = self.app_dir / "runtime.json"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"serve exited early:\n{self.output}")
            if runtime_file.exists():
                info = RuntimeInfo.model_validate(json.loads(runtime_file.read_text()))
                try:
                    if httpx.get(f"{info.api_base_url}/v1/health").json()["status"] == "ok":
                        return info
                except (httpx.TransportError, ValueError):
                    pass
            time.sleep(0.2)
        raise AssertionError(f"serve was not healthy within {timeout}s:\n{self.output}")

    def interrupt(self, timeout: float = 60) -> int:
        self.process.send_signal(signal.SIGINT)
        return self.wait(timeout)

    def wait(self, timeout: float = 60) -> int:
        try:
            return self.process.wait(timeout)
        finally:
            self._stderr.close()

    def kill(self) -> None:
        self.process.kill()
        self.wait()


def wait_gone(pids, timeout: float = 20) -> list[int]:
    """Pids still alive after the timeout (zombies count as gone)."""
    deadline = time.monotonic() + timeout
    alive = list(pids)
    while alive and time.monotonic() < deadline:
        alive = [pid for pid in alive if _alive(pid)]
        time.sleep(0.1)
    return alive


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
