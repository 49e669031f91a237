"""The built installer, installed on a throwaway home, and its executable run as a user would.

Nothing here imports the app: the frozen executable is started as a subprocess and spoken
to over its API and ``runtime.json``, exactly like a user's desktop or a script would.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import psutil

from backend.config import RuntimeInfo

ROOT = Path(__file__).resolve().parents[2]
HEALTH_TIMEOUT_S = 120.0
STOP_TIMEOUT_S = 60.0


def build_artifact() -> Path:
    """The Linux tarball: an existing one named by JOBCTRL_SMOKE_ARTIFACT, else a fresh build."""
    given = os.environ.get("JOBCTRL_SMOKE_ARTIFACT")
    if given:
        path = Path(given).resolve()
        assert path.is_file(), f"JOBCTRL_SMOKE_ARTIFACT={given} does not exist"
        return path
    dist = ROOT / "dist"
    subprocess.run([sys.executable, str(ROOT / "packaging" / "build.py"), "--dist", str(dist)],
                   check=True, cwd=ROOT)
    report = json.loads((dist / "size-report.json").read_text(encoding="utf-8"))
    return Path(report["artifact"])


def user_env(home: Path, **extra: str) -> dict[str, str]:
    """A fresh user account: its own HOME, no XDG overrides, no JobCtrl variables."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("XDG_", "JOBCTRL_", "PYTHON", "QT_", "DISPLAY", "WAYLAND"))}
    env.update(HOME=str(home), PATH=f"{home}/.local/bin:/usr/bin:/bin", LANG="C.UTF-8", **extra)
    return env


@dataclass
class Installation:
    home: Path
    unpacked: Path  # the extracted tarball's top folder

    @property
    def prefix(self) -> Path:
        return self.home / ".local" / "opt" / "JobCtrl"

    @property
    def executable(self) -> Path:
        return self.prefix / "jobctrl"

    @property
    def command_link(self) -> Path:
        return self.home / ".local" / "bin" / "jobctrl"

    @property
    def desktop_file(self) -> Path:
        return self.home / ".local" / "share" / "applications" / "jobctrl.desktop"

    @property
    def icon_file(self) -> Path:
        return self.home / ".local" / "share" / "icons" / "hicolor" / "256x256" / "apps" / "jobctrl.png"

    @property
    def default_app_dir(self) -> Path:
        return self.home / ".local" / "share" / "JobCtrl"

    @property
    def temporal_cli(self) -> Path:
        return self.prefix / "_internal" / "bin" / "temporal"

    def run_installer(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["sh", str(self.unpacked / "install.sh"), *args], env=user_env(self.home),
                              capture_output=True, text=True, timeout=300)


def unpack(artifact: Path, into: Path) -> Path:
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(artifact) as archive:
        archive.extractall(into, filter="tar")  # keeps modes and the bundle's relative symlinks
    (top,) = [p for p in into.iterdir() if p.is_dir()]
    return top


class FrozenProcess:
    """``jobctrl <args>`` from the installed bundle, with its output in a file."""

    def __init__(self, executable: Path, args: list[str], *, env: dict[str, str], app_dir: Path,
                 output: Path):
        self.app_dir = app_dir
        self.output_path = output
        self._output = open(output, "wb")  # noqa: SIM115 - closed in wait()
        self.started_at = time.monotonic()
        self.process = subprocess.Popen([str(executable), *args], stdin=subprocess.DEVNULL,
                                        stdout=self._output, stderr=subprocess.STDOUT, env=env)
        self.info: RuntimeInfo | None = None

    @property
    def output(self) -> str:
        return self.output_path.read_text(errors="replace")

    def diagnostics(self) -> str:
        logs = self.app_dir / "logs"
        tails = [f"--- output ---\n{self.output[-4000:]}"]
        if logs.is_dir():
            for log in sorted(logs.glob("*.log")):
                tails.append(f"--- {log.name} ---\n{log.read_text(errors='replace')[-2000:]}")
        return "\n".join(tails)

    def wait_healthy(self, timeout: float = HEALTH_TIMEOUT_S) -> RuntimeInfo:
        runtime_file = self.app_dir / "runtime.json"
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                code = self.process.returncode
                raise AssertionError(f"jobctrl exited early ({code}):\n{self.diagnostics()}")
            if runtime_file.exists():
                try:
                    info = RuntimeInfo.model_validate(json.loads(runtime_file.read_text()))
                    if httpx.get(f"{info.api_base_url}/v1/health", timeout=5).json()["status"] == "ok":
                        self.info = info
                        return info
                except (httpx.TransportError, ValueError):
                    pass  # not written completely or not listening yet
            time.sleep(0.2)
        raise AssertionError(f"jobctrl was not healthy within {timeout:.0f}s:\n{self.diagnostics()}")

    def stop(self, sig: int = signal.SIGINT, timeout: float = STOP_TIMEOUT_S) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
            raise AssertionError(
                f"jobctrl did not stop within {timeout:.0f}s:\n{self.diagnostics()}"
            ) from None
        finally:
            self._output.close()


def processes_from(folder: Path) -> list[psutil.Process]:
    """Processes whose executable lives under ``folder`` (the installed bundle)."""
    found = []
    for proc in psutil.process_iter(["exe", "cmdline"]):
        try:
            exe = proc.info["exe"] or ((proc.info["cmdline"] or [""])[0])
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if exe and Path(exe).is_relative_to(folder):
            found.append(proc)
    return found


def kill_all(processes: list[psutil.Process]) -> None:
    for proc in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()
    psutil.wait_procs(processes, timeout=10)
