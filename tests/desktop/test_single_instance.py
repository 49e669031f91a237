"""A second launch focuses the running window and exits 0.

The first instance is this test process (an InstanceServer and a hidden MainWindow on the
Qt loop); the second is a real ``jobctrl desktop`` process on the same app folder, which
must raise the window and leave without starting any service."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtNetwork import QLocalServer

from desktop.shell import ShellController
from desktop.single_instance import InstanceServer, activate_running_instance, server_name
from desktop.views.main_window import MainWindow

pytestmark = pytest.mark.desktop

ROOT = Path(__file__).resolve().parents[2]


def second_launch(app_dir: Path) -> subprocess.Popen:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "JOBCTRL_APP_DIR": ""}
    code = "import sys; from backend.cli import main; main(sys.argv[1:])"
    return subprocess.Popen(
        [sys.executable, "-c", code, "--app-dir", str(app_dir), "desktop"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def test_names_are_per_user_and_per_app_folder(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    assert server_name(one, "ann") == server_name(one, "ann")
    assert server_name(one, "ann") != server_name(two, "ann")
    assert server_name(one, "ann") != server_name(one, "bob")
    assert server_name(one, "ann").startswith("jobctrl-") and len(server_name(one, "ann")) == 24


def test_nobody_listening_means_this_launch_is_the_first(qapp, tmp_path):
    assert activate_running_instance(tmp_path, timeout_ms=500) is False


def test_a_second_launch_raises_the_window_and_exits_zero(qtbot, tmp_path):
    window = MainWindow(ShellController(tmp_path))
    qtbot.addWidget(window)
    server = InstanceServer(tmp_path)
    assert server.listen()
    server.activation_requested.connect(window.bring_to_front)
    window.hide()  # e.g. closed to the tray
    raised: list[bool] = []
    server.activation_requested.connect(lambda: raised.append(window.isVisible()))
    process = second_launch(tmp_path)
    try:
        qtbot.waitUntil(lambda: process.poll() is not None, timeout=60_000)
        output = process.stdout.read()
        assert process.returncode == 0, output
        assert "already running" in output
        assert raised == [True]  # raised before the second process was told "ok"
        assert window.isVisible()
        # It started nothing: no runtime file, no database in the app folder.
        assert not (tmp_path / "runtime.json").exists()
        assert not (tmp_path / "jobctrl.db").exists()
    finally:
        if process.poll() is None:  # it did not recognise us and started for real
            process.terminate()  # it stops what it started, in order
            process.wait(timeout=60)
        server.close()


def test_a_socket_left_by_a_crashed_instance_is_taken_over(qapp, tmp_path):
    name = server_name(tmp_path)
    probe = QLocalServer()
    assert probe.listen(name)
    path = probe.fullServerName()
    probe.close()
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(path)  # a socket file nobody listens on, as after a crash
    stale.close()
    assert Path(path).exists()
    assert activate_running_instance(tmp_path, timeout_ms=500) is False
    server = InstanceServer(tmp_path)
    try:
        assert server.listen()
    finally:
        server.close()
