"""The built installer, installed on a throwaway account, and its executable run as a user would.

Nothing here imports the app: the frozen executable is started as a subprocess and spoken
to over its API and ``runtime.json``, exactly like a user's desktop or a script would.

One class per platform says how its installer is run and where things land, so
``test_frozen_smoke.py`` is the same test on Linux (tarball + ``install.sh``, run here),
Windows (Inno Setup ``setup.exe``, silent) and macOS (``.dmg``, the app copied to an
Applications folder) — see ``packaging/release.yml`` for the runners that build and test the
last two.
"""

from __future__ import annotations

import abc
import contextlib
import json
import os
import plistlib
import shutil
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
INSTALL_TIMEOUT_S = 300
WINDOWS_APP_ID = "{6F1C4B52-3E0A-4C8B-9A77-2B1D5E0F7C31}"  # packaging/windows/jobctrl.iss


def build_artifact() -> Path:
    """This platform's installer: an existing one named by JOBCTRL_SMOKE_ARTIFACT, else a
    fresh build (``packaging/build.py``: a tarball, a setup .exe or a .dmg)."""
    given = os.environ.get("JOBCTRL_SMOKE_ARTIFACT")
    if given:
        path = Path(given).resolve()
        assert path.is_file(), f"JOBCTRL_SMOKE_ARTIFACT={given} does not exist"
        return path
    dist = ROOT / "dist"
    subprocess.run([sys.executable, str(ROOT / "packaging" / "build.py"), "--dist", str(dist)],
                   check=True, cwd=ROOT)
    report = json.loads((dist / "size-report.json").read_text(encoding="utf-8"))
    assert report.get("artifact"), f"the build wrote no installer for {sys.platform}: {report}"
    return Path(report["artifact"])


def user_env(home: Path, **extra: str) -> dict[str, str]:
    """A fresh user account: its own HOME, no XDG overrides, no JobCtrl variables."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("XDG_", "JOBCTRL_", "PYTHON", "QT_", "DISPLAY", "WAYLAND"))}
    env.update(HOME=str(home), PATH=f"{home}/.local/bin:/usr/bin:/bin", LANG="C.UTF-8", **extra)
    return env


def windows_user_env(**extra: str) -> dict[str, str]:
    """Windows keeps the runner's account: its folders come from the shell's known-folder
    API, not from the environment, so a fake HOME would change nothing but break Python."""
    env = {key: value for key, value in os.environ.items()
           if not key.upper().startswith(("JOBCTRL_", "PYTHON", "QT_"))}
    env.update(extra)
    return env


def completed(args: list[str], steps: list[subprocess.CompletedProcess]) -> subprocess.CompletedProcess:
    """Several commands reported as one: the first failure's code, every output."""
    code = next((step.returncode for step in steps if step.returncode), 0)
    return subprocess.CompletedProcess(args, code, "".join(s.stdout or "" for s in steps),
                                       "".join(s.stderr or "" for s in steps))


@dataclass
class Installation(abc.ABC):
    """What every platform's installation answers; the subclasses say where and how."""

    home: Path
    artifact: Path = Path()  # the installer this installation was made from
    stops_gracefully = True  # a signal asks the app to stop, and it exits 0
    secret_store_words = "OS keyring"  # what the app reports as where provider keys go

    @property
    @abc.abstractmethod
    def prefix(self) -> Path:  # the program folder
        """Where it is on this platform."""

    @property
    @abc.abstractmethod
    def executable(self) -> Path:
        """Where it is on this platform."""

    @property
    def command_link(self) -> Path:  # what a user types in a terminal
        return self.executable

    @property
    def library_dir(self) -> Path:  # replaced whole on upgrade
        return self.prefix / "_internal"

    @property
    def temporal_cli(self) -> Path:
        return self.library_dir / "bin" / "temporal"

    @property
    @abc.abstractmethod
    def default_app_dir(self) -> Path:
        """Where it is on this platform."""

    def env(self, **extra: str) -> dict[str, str]:
        return user_env(self.home, **extra)

    @abc.abstractmethod
    def run_installer(self) -> subprocess.CompletedProcess:
        """The platform's installer, run as its user would (install or upgrade)."""

    @abc.abstractmethod
    def launcher_problems(self) -> list[str]:
        """What a user would miss to start JobCtrl the platform's way (empty: nothing)."""

    def stop(self, process: FrozenProcess, sig: int) -> int:
        return process.stop(sig)

    @classmethod
    def from_artifact(cls, artifact: Path, root: Path) -> Installation:
        """A fresh account's home under the scratch folder ``root``."""
        home = root / "home"
        home.mkdir()
        return cls(home=home, artifact=artifact)


@dataclass
class LinuxInstallation(Installation):
    """The tarball, unpacked, and its ``install.sh`` run by the user (freedesktop folders)."""

    unpacked: Path = Path()  # the extracted tarball's top folder
    secret_store_words = "0600"  # a headless account has no keyring: a private file

    @classmethod
    def from_artifact(cls, artifact: Path, root: Path) -> LinuxInstallation:
        installed = super().from_artifact(artifact, root)
        installed.unpacked = unpack(artifact, root / "unpacked")
        return installed

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

    def run_installer(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["sh", str(self.unpacked / "install.sh"), *args], env=self.env(),
                              capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)

    def launcher_problems(self) -> list[str]:
        problems = []
        entry = self.desktop_file
        lines = entry.read_text(encoding="utf-8").splitlines() if entry.is_file() else []
        for wanted in (f'Exec="{self.executable}" desktop', f"TryExec={self.executable}", "Icon=jobctrl"):
            if wanted not in lines:
                problems.append(f"{self.desktop_file} lacks {wanted!r}")
        if not self.icon_file.is_file() or self.icon_file.read_bytes()[:8] != b"\x89PNG\r\n\x1a\n":
            problems.append(f"no PNG icon at {self.icon_file}")
        if self.command_link.resolve() != self.executable.resolve():
            problems.append(f"{self.command_link} does not lead to {self.executable}")
        return problems


@dataclass
class WindowsInstallation(Installation):
    """The Inno Setup ``setup.exe`` run silently for the current user (no admin prompt),
    into a folder of the test's choosing; the data folder is the account's real
    ``%LOCALAPPDATA%\\JobCtrl`` (a fresh CI runner has none)."""

    # A windowed Windows app gets no console signal: the way to end it from outside is
    # TerminateProcess; the Job Object then ends its children, and the next start must
    # cope with the stale runtime.json.
    stops_gracefully = False

    @property
    def prefix(self) -> Path:
        return self.home / "Programs" / "JobCtrl"

    @property
    def executable(self) -> Path:
        return self.prefix / "jobctrl.exe"

    @property
    def temporal_cli(self) -> Path:
        return self.library_dir / "bin" / "temporal.exe"

    @property
    def default_app_dir(self) -> Path:
        return Path(os.environ["LOCALAPPDATA"]) / "JobCtrl"

    def env(self, **extra: str) -> dict[str, str]:
        return windows_user_env(**extra)

    def run_installer(self) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(self.artifact), "/VERYSILENT", "/SUPPRESSMSGBOXES", "/NORESTART", "/CURRENTUSER",
             f"/DIR={self.prefix}", "/MERGETASKS=!desktopicon", f"/LOG={self.home / 'setup.log'}"],
            env=self.env(), capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S,
        )

    def launcher_problems(self) -> list[str]:
        import winreg  # Windows only

        problems = []
        start_menu = Path(os.environ["APPDATA"]) / "Microsoft" / "Windows" / "Start Menu"
        shortcut = start_menu / "Programs" / "JobCtrl.lnk"
        if not shortcut.is_file():
            problems.append(f"no Start-menu shortcut at {shortcut}")
        if not (self.prefix / "unins000.exe").is_file():
            problems.append("no uninstaller in the program folder")
        key = rf"Software\Microsoft\Windows\CurrentVersion\Uninstall\{WINDOWS_APP_ID}_is1"
        try:
            with winreg.OpenKey(winreg.HKEY_CURRENT_USER, key) as entry:
                location = winreg.QueryValueEx(entry, "InstallLocation")[0]
        except OSError:
            problems.append(f"not listed under Installed apps (HKCU\\{key})")
        else:
            if Path(location).resolve() != self.prefix.resolve():
                problems.append(f"Installed apps points at {location}, not {self.prefix}")
        return problems

    def stop(self, process: FrozenProcess, sig: int) -> int:
        return process.stop(None)


@dataclass
class MacInstallation(Installation):
    """The ``.dmg`` mounted and ``JobCtrl.app`` copied to ``~/Applications`` (what a user's
    drag does; an upgrade replaces the bundle whole), then the volume detached."""


    @property
    def prefix(self) -> Path:
        return self.home / "Applications" / "JobCtrl.app"

    @property
    def executable(self) -> Path:
        return self.prefix / "Contents" / "MacOS" / "jobctrl"

    @property
    def library_dir(self) -> Path:  # PyInstaller's sys._MEIPASS inside an app bundle
        return self.prefix / "Contents" / "Frameworks"

    @property
    def default_app_dir(self) -> Path:
        return self.home / "Library" / "Application Support" / "JobCtrl"

    def run_installer(self) -> subprocess.CompletedProcess:
        mount = self.home / "JobCtrl-volume"
        args = [str(self.artifact)]
        steps = [subprocess.run(["hdiutil", "attach", "-nobrowse", "-readonly", "-noautoopen",
                                 "-mountpoint", str(mount), str(self.artifact)],
                                capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S)]
        if steps[0].returncode == 0:
            try:
                shutil.rmtree(self.prefix, ignore_errors=True)
                self.prefix.parent.mkdir(parents=True, exist_ok=True)
                steps.append(subprocess.run(["ditto", str(mount / "JobCtrl.app"), str(self.prefix)],
                                            capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S))
                if not (mount / "Applications").is_symlink():
                    lacking = "the volume has no Applications link\n"
                    steps.append(subprocess.CompletedProcess(args, 1, "", lacking))
            finally:
                steps.append(subprocess.run(["hdiutil", "detach", str(mount)], capture_output=True,
                                            text=True, timeout=INSTALL_TIMEOUT_S))
        return completed(args, steps)

    def launcher_problems(self) -> list[str]:
        info_file = self.prefix / "Contents" / "Info.plist"
        if not info_file.is_file():
            return [f"no {info_file}"]
        info = plistlib.loads(info_file.read_bytes())
        problems = []
        if info.get("CFBundleExecutable") != self.executable.name or not os.access(self.executable, os.X_OK):
            problems.append(f"CFBundleExecutable {info.get('CFBundleExecutable')!r} is not {self.executable}")
        if info.get("LSUIElement") not in (False, None):
            problems.append("LSUIElement hides the app from the Dock")
        return problems


def installation_for(artifact: Path, root: Path) -> Installation:
    """This platform's installation of ``artifact`` under the scratch folder ``root``."""
    if sys.platform.startswith("linux"):
        return LinuxInstallation.from_artifact(artifact, root)
    if sys.platform == "win32":
        return WindowsInstallation.from_artifact(artifact, root)
    if sys.platform == "darwin":
        return MacInstallation.from_artifact(artifact, root)
    raise RuntimeError(f"no installer recipe for {sys.platform}")


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

    def stop(self, sig: int | None = signal.SIGINT, timeout: float = STOP_TIMEOUT_S) -> int:
        """``sig`` None: end it from outside (TerminateProcess on Windows, SIGKILL elsewhere)."""
        if self.process.poll() is None:
            if sig is None and sys.platform == "win32":
                self.process.terminate()
            elif sig is None:
                self.process.kill()
            else:
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
