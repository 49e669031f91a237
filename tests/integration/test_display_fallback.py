"""First launch on a bare Linux desktop: when Qt's platform plugin cannot load, the
launcher names the system packages to install and runs headless with the API address,
instead of Qt's raw abort.

Honest on a machine that has the libraries: an empty ``libxcb-cursor.so.0`` first on
``LD_LIBRARY_PATH`` makes the dynamic loader fail on it exactly as on a machine without
the package ("file too short" instead of "not found"), for the probe child, for ``ldd``
and for a plain Qt start alike; an unset ``DISPLAY`` with ``QT_QPA_PLATFORM=xcb`` is a
machine with the libraries and no display.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from backend.supervision.display_probe import (
    DisplayProblem,
    advice,
    classify_failure,
    install_commands,
    parse_ldd,
    probe_display,
    xcb_plugin_path,
)
from tests.integration.serve_process import ServeProcess

pytestmark = pytest.mark.integration

QT_START = "from PySide6.QtGui import QGuiApplication; QGuiApplication(['x'])"


@pytest.fixture
def shadowed_cursor_lib(tmp_path) -> dict[str, str]:
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "libxcb-cursor.so.0").write_bytes(b"")
    return {"QT_QPA_PLATFORM": "xcb", "LD_LIBRARY_PATH": str(shadow), "DISPLAY": ":0"}


def test_the_shadowed_library_really_breaks_a_plain_qt_start(shadowed_cursor_lib):
    """The condition the launcher guards against: Qt aborts with its raw message."""
    done = subprocess.run([sys.executable, "-c", QT_START], capture_output=True, text=True,
                          env={**os.environ, **shadowed_cursor_lib}, check=False)
    assert done.returncode != 0
    assert "Could not load the Qt platform plugin" in done.stderr


def test_the_probe_names_the_missing_library(shadowed_cursor_lib):
    problem = probe_display(shadowed_cursor_lib)
    assert problem is not None and problem.kind == "missing_libraries"
    assert problem.missing == ("libxcb-cursor.so.0",)
    words = advice(problem)
    assert "sudo apt install libxcb-cursor0" in words
    assert "sudo dnf install xcb-util-cursor" in words


def test_no_display_is_told_apart_from_missing_libraries():
    # Qt prints its "xcb-cursor0 is needed" hint here too: it must not decide the advice.
    problem = probe_display({"QT_QPA_PLATFORM": "xcb", "DISPLAY": ""})
    assert problem is not None and problem.kind == "no_display"
    assert "apt install" not in advice(problem)


def test_a_working_platform_passes_the_probe():
    assert probe_display({"QT_QPA_PLATFORM": "offscreen"}) is None


def test_ldd_output_is_read_for_both_ways_a_library_is_missing():
    assert xcb_plugin_path() is not None
    output = ("\tlibxcb-icccm.so.4 => not found\n\tlibc.so.6 => /lib/libc.so.6 (0x1)\n"
              "\tlibxcb-keysyms.so.1 => not found\n"
              "ldd: /x/libqxcb.so: error while loading shared libraries: "
              "/tmp/s/libxcb-cursor.so.0: file too short\n")
    assert parse_ldd(output) == ("libxcb-icccm.so.4", "libxcb-keysyms.so.1",
                                 "libxcb-cursor.so.0")
    assert install_commands(("libxcb-icccm.so.4", "libxcb-xkb.so.1", "libxcb-shape.so.0")) == [
        "  Debian/Ubuntu:  sudo apt install libxcb-icccm4 libxcb-xkb1 libxcb-shape0",
        "  Fedora:         sudo dnf install xcb-util-wm libxcb"]


def test_an_unexplained_failure_offers_the_usual_packages_and_qt_words():
    problem = classify_failure("qt.qpa.plugin: Could not load the Qt platform plugin \"xcb\"\n",
                               missing=())
    assert problem == DisplayProblem("plugin_failed", detail=problem.detail)
    words = advice(problem)
    assert "libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxkbcommon-x11-0" in words
    assert "xcb-util-cursor xcb-util-wm xcb-util-keysyms libxkbcommon-x11" in words
    assert 'Could not load the Qt platform plugin "xcb"' in words


def test_desktop_falls_back_to_serve_with_the_packages_and_the_url(tmp_path,
                                                                  shadowed_cursor_lib):
    launcher = ServeProcess(tmp_path / "app", command="desktop", env=shadowed_cursor_lib)
    try:
        info = launcher.wait_healthy()
        url_line = f"API          {info.api_base_url}"
        deadline = time.monotonic() + 30  # serve prints the addresses once start() returns
        while url_line not in launcher.output and time.monotonic() < deadline:
            time.sleep(0.1)
        output = launcher.output
    finally:
        assert launcher.interrupt() == 0
    assert "sudo apt install libxcb-cursor0" in output
    assert "sudo dnf install xcb-util-cursor" in output
    assert "Running headless instead" in output
    assert url_line in output
    assert "This application failed to start" not in output  # no raw Qt abort
