"""Can Qt open a window here? Asked in a child process before the desktop starts.

When Qt's platform plugin cannot load (on a bare Linux desktop, typically
``libxcb-cursor0`` and friends are missing) Qt prints "Could not load the Qt platform
plugin" and aborts the whole process, so the question is asked of a short-lived child
(``jobctrl probe-display``) that creates a ``QGuiApplication`` and exits. When it fails,
``ldd`` on the plugin names the missing libraries, and the launcher tells the user which
system packages to install and runs headless (``jobctrl serve``) instead.

Qt prints its "xcb-cursor0 is needed" hint on every xcb failure, also when only the
display is unreachable, so that hint alone never decides what is missing.

A probe that passed is remembered in the app dir (``display-probe.json``) with what it
depended on — the display variables, ``LD_LIBRARY_PATH`` and the platform plugin file —
and the next launches with the same ones skip it: the child costs a Python interpreter and
a Qt start on every launch, and what it checks (installed system libraries) does not
change between two launches. Anything it depended on changing probes again.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

log = logging.getLogger(__name__)

PROBE_COMMAND = "probe-display"
PASSED_FILE = "display-probe.json"
PROBE_TIMEOUT_S = 30.0
NO_DISPLAY_MARK = "could not connect to display"

# soname -> (Debian / Ubuntu package, Fedora package) for what Qt 6's xcb plugin loads.
PACKAGES: dict[str, tuple[str, str]] = {
    "libxcb-cursor.so.0": ("libxcb-cursor0", "xcb-util-cursor"),
    "libxcb-icccm.so.4": ("libxcb-icccm4", "xcb-util-wm"),
    "libxcb-keysyms.so.1": ("libxcb-keysyms1", "xcb-util-keysyms"),
    "libxcb-image.so.0": ("libxcb-image0", "xcb-util-image"),
    "libxcb-render-util.so.0": ("libxcb-render-util0", "xcb-util-renderutil"),
    "libxkbcommon-x11.so.0": ("libxkbcommon-x11-0", "libxkbcommon-x11"),
    "libxkbcommon.so.0": ("libxkbcommon0", "libxkbcommon"),
    "libX11-xcb.so.1": ("libx11-xcb1", "libX11-xcb"),
    "libX11.so.6": ("libx11-6", "libX11"),
    "libxcb.so.1": ("libxcb1", "libxcb"),
    "libxcb-randr.so.0": ("libxcb-randr0", "libxcb"),
    "libxcb-shape.so.0": ("libxcb-shape0", "libxcb"),
    "libxcb-shm.so.0": ("libxcb-shm0", "libxcb"),
    "libxcb-sync.so.1": ("libxcb-sync1", "libxcb"),
    "libxcb-xfixes.so.0": ("libxcb-xfixes0", "libxcb"),
    "libxcb-xkb.so.1": ("libxcb-xkb1", "libxcb"),
    "libxcb-render.so.0": ("libxcb-render0", "libxcb"),
    "libxcb-xinerama.so.0": ("libxcb-xinerama0", "libxcb"),
    "libxcb-xinput.so.0": ("libxcb-xinput0", "libxcb"),
    "libSM.so.6": ("libsm6", "libSM"),
    "libICE.so.6": ("libice6", "libICE"),
    "libEGL.so.1": ("libegl1", "libglvnd-egl"),
    "libGL.so.1": ("libgl1", "libglvnd-glx"),
    "libOpenGL.so.0": ("libopengl0", "libglvnd-opengl"),
    "libfontconfig.so.1": ("libfontconfig1", "fontconfig"),
    "libfreetype.so.6": ("libfreetype6", "freetype"),
    "libdbus-1.so.3": ("libdbus-1-3", "dbus-libs"),
    "libglib-2.0.so.0": ("libglib2.0-0", "glib2"),
}
# What a bare Debian machine lacks (PLATFORM-NOTES): the list to offer when the missing
# libraries cannot be named (no ldd, or the plugin failed for another reason).
USUAL_MISSING = ("libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1",
                 "libxkbcommon-x11.so.0")

# "libfoo.so.1 => not found" and "...: error while loading shared libraries: /x/libfoo.so.1:
# file too short" (a broken copy earlier on the search path).
_NOT_FOUND = re.compile(r"^\s*(\S+\.so[.\d]*)\s+=>\s+not found", re.MULTILINE)
_LOAD_ERROR = re.compile(r"error while loading shared libraries: (?:\S*/)?(\S+\.so[.\d]*):")


@dataclass(frozen=True)
class DisplayProblem:
    kind: Literal["no_display", "missing_libraries", "plugin_failed"]
    missing: tuple[str, ...] = ()  # sonames, when ldd could name them
    detail: str = ""               # Qt's own last lines, for the log


class DisplayProbe:
    """The probe child, started at once; ``result()`` waits for its answer. The desktop
    starts it first and imports Qt and its window meanwhile (importing Qt touches no
    display), so the probe costs the launch almost nothing."""

    def __init__(self, env: dict[str, str] | None = None, timeout_s: float = PROBE_TIMEOUT_S):
        import subprocess  # here: the launches that skip the probe never need it

        from backend.supervision.process import child_command

        self._env = {**os.environ, **(env or {})}
        self._timeout_s = timeout_s
        self._started = time.monotonic()
        self._process = subprocess.Popen(
            child_command(PROBE_COMMAND), env=self._env, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")

    def result(self) -> DisplayProblem | None:
        """None when the child could create a QGuiApplication; else why not.

        A child that does not answer in time is not taken as a failure: the desktop starts
        and Qt reports for itself (a slow first import must not send a user headless)."""
        import subprocess

        remaining = max(0.0, self._timeout_s - (time.monotonic() - self._started))
        try:
            _, stderr = self._process.communicate(timeout=remaining)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.communicate()
            log.warning("the display probe did not answer within %.0f s; starting anyway",
                        self._timeout_s)
            return None
        if self._process.returncode == 0:
            return None
        return classify_failure(stderr, missing_libraries(self._env))


def probe_conditions(env: dict[str, str] | None = None) -> dict:
    """What a passed probe depended on (compared before the next launch skips it)."""
    environment = os.environ if env is None else env
    plugin = xcb_plugin_path()
    stat = plugin.stat() if plugin is not None else None
    return {
        "version": 1,
        **{name: environment.get(name) for name in
           ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM", "LD_LIBRARY_PATH")},
        "plugin": str(plugin) if plugin else None,
        "pluginSize": stat.st_size if stat else None,
        "pluginMtimeNs": stat.st_mtime_ns if stat else None,
    }


def passed_before(app_dir: Path) -> bool:
    try:
        saved = json.loads((app_dir / PASSED_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return saved == probe_conditions()


def remember_passed(app_dir: Path) -> None:
    from backend.paths import write_private_json

    try:
        write_private_json(app_dir / PASSED_FILE, probe_conditions())
    except OSError:
        log.warning("could not remember the display probe's answer", exc_info=True)


def probe_display(env: dict[str, str] | None = None,
                  timeout_s: float = PROBE_TIMEOUT_S) -> DisplayProblem | None:
    """Start the probe and wait for its answer (see DisplayProbe)."""
    return DisplayProbe(env, timeout_s).result()


def classify_failure(stderr: str, missing: tuple[str, ...]) -> DisplayProblem:
    detail = "\n".join(stderr.strip().splitlines()[-6:])
    if NO_DISPLAY_MARK in stderr:
        return DisplayProblem("no_display", detail=detail)
    if missing:
        return DisplayProblem("missing_libraries", missing, detail)
    return DisplayProblem("plugin_failed", detail=detail)


def xcb_plugin_path() -> Path | None:
    """Qt's xcb platform plugin inside the installed PySide6, found without importing Qt."""
    spec = importlib.util.find_spec("PySide6")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        plugin = Path(root) / "Qt" / "plugins" / "platforms" / "libqxcb.so"
        if plugin.is_file():
            return plugin
    return None


def missing_libraries(env: dict[str, str]) -> tuple[str, ...]:
    """The shared libraries the xcb plugin needs that the dynamic loader cannot load,
    as ``ldd`` (which follows ``LD_LIBRARY_PATH`` like the loader) reports them."""
    import subprocess

    plugin, ldd = xcb_plugin_path(), shutil.which("ldd")
    if plugin is None or ldd is None:
        return ()
    try:
        done = subprocess.run([ldd, str(plugin)], env=env, capture_output=True, text=True,
                              errors="replace", timeout=15, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    return parse_ldd(done.stdout + done.stderr)


def parse_ldd(output: str) -> tuple[str, ...]:
    names = _NOT_FOUND.findall(output) + _LOAD_ERROR.findall(output)
    return tuple(dict.fromkeys(names))  # once each, in ldd's order


def install_commands(sonames: tuple[str, ...]) -> list[str]:
    """``Debian/Ubuntu: sudo apt install ...`` and ``Fedora: sudo dnf install ...``."""
    known = [PACKAGES[name] for name in sonames if name in PACKAGES]
    debian = list(dict.fromkeys(pair[0] for pair in known))
    fedora = list(dict.fromkeys(pair[1] for pair in known))
    if not debian:
        return []
    return [f"  Debian/Ubuntu:  sudo apt install {' '.join(debian)}",
            f"  Fedora:         sudo dnf install {' '.join(fedora)}"]


def advice(problem: DisplayProblem) -> str:
    """What the launcher prints before it runs headless."""
    if problem.kind == "no_display":
        return ("JobCtrl could not open its window: no display answered"
                f" (DISPLAY={os.environ.get('DISPLAY') or 'not set'}).")
    if problem.kind == "missing_libraries":
        lines = ["JobCtrl could not open its window: Qt's display plugin needs system"
                 f" libraries that are not installed ({', '.join(problem.missing)}).",
                 "Install them, then start JobCtrl again:"]
        commands = install_commands(problem.missing)
        unnamed = [name for name in problem.missing if name not in PACKAGES]
        if unnamed:
            lines.append(f"  (find the package that provides {', '.join(unnamed)})")
        return "\n".join(lines + commands)
    return "\n".join([
        "JobCtrl could not open its window: Qt's display plugin did not load.",
        "On a fresh Linux desktop these system packages are usually missing:",
        *install_commands(USUAL_MISSING),
        "Qt said:", *(f"  {line}" for line in problem.detail.splitlines())])


def run_probe_child() -> None:
    """``jobctrl probe-display``: exit 0 when Qt can create its GUI application here.
    If it cannot, Qt aborts this process with its message on stderr."""
    import resource

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # an expected abort leaves no core file
    from PySide6.QtGui import QGuiApplication

    app = QGuiApplication(["jobctrl"])
    print(app.platformName(), flush=True)
