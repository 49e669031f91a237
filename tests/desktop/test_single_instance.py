"""A second launch focuses the running window and exits 0.

The first instance is this test process (an InstanceServer and a hidden MainWindow on the
Qt loop); the second is a real ``jobctrl desktop`` process on the same app folder, which
must raise the window and leave without starting any service."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from PySide6.QtNetwork import QLocalServer

from desktop.shell import ShellController
from desktop.single_instance import (
    InstanceServer,
    activate_running_instance,
    server_name,
    socket_path,
)
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


def _listening_path(name: str) -> str:
    """Where Qt itself puts the socket for ``name`` (the truth socket_path must match)."""
    probe = QLocalServer()
    assert probe.listen(name), probe.errorString()
    try:
        return probe.fullServerName()
    finally:
        probe.close()


@pytest.mark.parametrize("tmpdir", [None, "link", "link/", "real/./", "relative"])
def test_the_plain_socket_path_is_the_one_qt_listens_on(qapp, tmp_path, monkeypatch, tmpdir):
    """QDir.tempPath(): $TMPDIR made absolute and clean (a symlink kept as it is), else /tmp."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    if tmpdir is None:
        monkeypatch.delenv("TMPDIR", raising=False)
    elif tmpdir == "relative":
        monkeypatch.chdir(tmp_path)
        monkeypatch.setenv("TMPDIR", "real")
    else:
        monkeypatch.setenv("TMPDIR", str(tmp_path / tmpdir))
    name = server_name(tmp_path / "app")
    path = socket_path(name)
    if path is None:  # named pipes (Windows), or macOS without $TMPDIR: the check asks Qt
        assert sys.platform == "win32" or (sys.platform == "darwin" and tmpdir is None)
    else:
        assert path == _listening_path(name)


def _activate_in_a_thread(app_dir: Path, timeout_ms: int = 5_000) -> tuple[threading.Thread, list]:
    """The second launch's blocking check, off the Qt thread so the server can answer."""
    answers: list[bool] = []
    thread = threading.Thread(
        target=lambda: answers.append(activate_running_instance(app_dir, timeout_ms=timeout_ms)),
        daemon=True)
    thread.start()
    return thread, answers


def _assert_a_second_launch_activates(qtbot, server, app_dir: Path) -> None:
    """A second launch's check, answered ``ok`` by ``server`` after it raised the window."""
    with qtbot.waitSignal(server.activation_requested, timeout=10_000):
        thread, answers = _activate_in_a_thread(app_dir)
    qtbot.waitUntil(lambda: not thread.is_alive(), timeout=10_000)
    assert answers == [True]


def test_the_plain_socket_check_reaches_a_real_instance_server(qtbot, tmp_path):
    server = InstanceServer(tmp_path)
    assert server.listen()
    try:
        _assert_a_second_launch_activates(qtbot, server, tmp_path)
        # Another app folder's launch does not reach this server.
        assert activate_running_instance(tmp_path / "other", timeout_ms=500) is False
    finally:
        server.close()


def test_the_qt_check_used_where_there_is_no_plain_path_reaches_it_too(qtbot, tmp_path):
    """Windows (and macOS without $TMPDIR) ask QLocalSocket; the same code runs here, in a
    second process as there."""
    server = InstanceServer(tmp_path)
    assert server.listen()
    raised: list[bool] = []
    server.activation_requested.connect(lambda: raised.append(True))
    code = ("import sys; from desktop.single_instance import _activate_with_qt, server_name\n"
            "print(_activate_with_qt(sys.argv[1], 5000),"
            " _activate_with_qt(server_name(sys.argv[2]), 500))")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-c", code, server.name, str(tmp_path / "other")], cwd=ROOT, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        qtbot.waitUntil(lambda: process.poll() is not None, timeout=60_000)
        output = process.stdout.read()
        assert process.returncode == 0, output
        assert output.split() == ["True", "False"], output
        assert raised == [True]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        server.close()


def test_a_server_that_does_not_answer_ok_is_not_taken_for_an_instance(qtbot, tmp_path):
    """Something else on the socket: its answer is not ``ok``, so this launch goes on."""
    name = server_name(tmp_path)
    path = _listening_path(name)
    other = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    other.bind(path)
    other.listen(1)
    try:
        def answer_wrongly() -> None:
            conn, _ = other.accept()
            with conn:
                conn.recv(64)
                conn.sendall(b"no\n")

        responder = threading.Thread(target=answer_wrongly, daemon=True)
        responder.start()
        assert activate_running_instance(tmp_path, timeout_ms=2_000) is False
        responder.join(timeout=5)
    finally:
        other.close()
        Path(path).unlink(missing_ok=True)


def test_a_stale_socket_is_replaced_and_the_new_server_answers(qtbot, tmp_path):
    path = _listening_path(server_name(tmp_path))
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(path)  # a socket file nobody listens on, as after a crash
    stale.close()
    assert activate_running_instance(tmp_path, timeout_ms=500) is False  # refused at once
    server = InstanceServer(tmp_path)
    try:
        assert server.listen()
        _assert_a_second_launch_activates(qtbot, server, tmp_path)
    finally:
        server.close()


def test_a_listening_instance_is_not_displaced_by_a_launch_at_the_same_moment(qtbot, tmp_path):
    """Two launches that both found nobody: the later one's listen fails and leaves the
    first one's socket in place (the app-dir lock decides between them)."""
    first = InstanceServer(tmp_path)
    assert first.listen()
    second = InstanceServer(tmp_path)
    try:
        assert second.listen() is False
        _assert_a_second_launch_activates(qtbot, first, tmp_path)
    finally:
        second.close()
        first.close()


def test_nothing_before_the_first_frame_imports_qtnetwork_or_the_check_style():
    code = ("import sys\n"
            "from desktop.single_instance import activate_running_instance\n"
            "import desktop.app\n"
            "from pathlib import Path\n"
            "activate_running_instance(Path(sys.argv[1]), timeout_ms=200)\n"
            "print(sorted(name for name in ('PySide6.QtNetwork', 'desktop.readable_checks')"
            " if name in sys.modules))")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", code, str(ROOT / "no-such-app-dir")],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    expected = "['PySide6.QtNetwork']" if sys.platform == "win32" else "[]"
    assert result.stdout.strip() == expected
