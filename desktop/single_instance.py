"""One desktop per app folder and user: a second launch raises the running window.

The first launch listens on a local socket (``QLocalServer``: a Unix socket, a named pipe
on Windows) whose name is derived from the user and the resolved app folder, so two users,
or one user with two app folders, never meet. A second launch connects, says ``show``,
waits for the first to answer ``ok`` (sent after its window was raised) and exits 0.

The socket is only the fast path for "focus the window". The Supervisor's app-dir lock
stays the authority on who owns the app folder: a launch that finds no listener but a
locked folder is still refused there with a clear message.

Nothing here imports QtNetwork before the first frame (~6-10 ms of the shell's CPU on the
way to it). On POSIX the second launch's check is a plain ``AF_UNIX`` socket connecting to
the path ``QLocalServer`` listens on (:func:`socket_path`); on Windows (named pipes) it is
a ``QLocalSocket``, imported when called. The first launch creates its
:class:`InstanceServer` (which imports QtNetwork) right after its first frame: a second
launch in those few tens of milliseconds finds no listener, as it would during the much
longer imports before them, and is refused by the lock.
"""

from __future__ import annotations

import getpass
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject, Signal

from desktop.qt_compat import emit

if TYPE_CHECKING:
    from PySide6.QtNetwork import QLocalSocket

try:  # the C module hashlib would wrap, without loading OpenSSL first (as ``random`` does)
    from _sha2 import sha256  # Python 3.12+
except ImportError:
    try:
        from _sha256 import sha256  # Python 3.11
    except ImportError:
        from hashlib import sha256

log = logging.getLogger(__name__)

SHOW = b"show\n"
OK = b"ok\n"
CONNECT_TIMEOUT_MS = 1_000
ANSWER_TIMEOUT_MS = 5_000


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no login name (some containers): still per-uid
        import os

        return str(getattr(os, "getuid", lambda: "user")())


def server_name(app_dir: Path, user: str | None = None) -> str:
    """``jobctrl-<16 hex>``: short (Unix socket paths are limited), stable per user + dir."""
    key = f"{user or _user()}\0{Path(app_dir).resolve()}".encode()
    return f"jobctrl-{sha256(key).hexdigest()[:16]}"


def socket_path(name: str) -> str | None:
    """Where ``QLocalServer.listen(name)`` puts its Unix socket: ``QDir.tempPath()/name``,
    QDir.tempPath being ``$TMPDIR`` made absolute and clean (no symlinks resolved), else
    ``/tmp``. None where that is not the rule (Windows: named pipes; macOS without
    ``$TMPDIR``: Qt asks the system) - there ask Qt."""
    if sys.platform == "win32":
        return None
    temp = os.environ.get("TMPDIR", "")
    if not temp:
        if sys.platform == "darwin":
            return None
        temp = "/tmp"
    temp = os.path.normpath(os.path.abspath(temp))
    if temp.startswith("//"):  # POSIX normpath keeps a leading "//", QDir::cleanPath does not
        temp = "/" + temp.lstrip("/")
    return os.path.join(temp, name)


def activate_running_instance(app_dir: Path, *, timeout_ms: int = ANSWER_TIMEOUT_MS) -> bool:
    """True when an instance for ``app_dir`` answered that it raised its window.

    Blocking, with short timeouts: it runs once, before this process shows anything."""
    name = server_name(app_dir)
    path = socket_path(name)
    if path is None:
        return _activate_with_qt(name, timeout_ms)
    return _activate_over_unix_socket(path, timeout_ms)


def _connect_unix(path: str):
    """A socket connected to ``path``, or None: no file, or a file nobody listens on
    (refused at once), or no answer within the connect timeout."""
    import socket

    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(CONNECT_TIMEOUT_MS / 1000)
    try:
        client.connect(path)
    except OSError:  # includes TimeoutError
        client.close()
        return None
    return client


def _activate_over_unix_socket(path: str, timeout_ms: int) -> bool:
    client = _connect_unix(path)
    if client is None:
        return False
    try:
        client.sendall(SHOW)
        client.settimeout(timeout_ms / 1000)  # per read, as QLocalSocket.waitForReadyRead
        answer = b""
        while not answer.endswith(b"\n"):
            chunk = client.recv(64)
            if not chunk:  # the other side closed before answering
                return False
            answer += chunk
        return answer == OK
    except OSError:  # includes TimeoutError: no answer in time
        return False
    finally:
        client.close()


def _activate_with_qt(name: str, timeout_ms: int) -> bool:
    from PySide6.QtNetwork import QLocalSocket

    socket = QLocalSocket()
    socket.connectToServer(name)
    if not socket.waitForConnected(CONNECT_TIMEOUT_MS):
        return False
    try:
        socket.write(SHOW)
        socket.flush()  # may write it all at once; then there is nothing left to wait for
        if socket.bytesToWrite() and not socket.waitForBytesWritten(CONNECT_TIMEOUT_MS):
            return False
        answer = b""
        while not answer.endswith(b"\n"):
            if not socket.waitForReadyRead(timeout_ms):
                return False
            answer += bytes(socket.readAll().data())
        return answer == OK
    finally:
        socket.disconnectFromServer()


def _answers(path: str) -> bool:
    """Whether something accepts connections on the Unix socket at ``path``."""
    probe = _connect_unix(path)
    if probe is None:
        return False
    probe.close()
    return True


class InstanceServer(QObject):
    """The first launch's listener: ``activation_requested`` when a second launch knocks."""

    activation_requested = Signal()

    def __init__(self, app_dir: Path, parent: QObject | None = None):
        super().__init__(parent)
        from PySide6.QtNetwork import QLocalServer

        self.name = server_name(app_dir)
        self._server = QLocalServer(self)
        # Only the user may connect (the socket file/pipe gets user-only permissions).
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self._server.newConnection.connect(self._on_connection)
        self._buffers: dict[QLocalSocket, bytes] = {}

    @property
    def listening(self) -> bool:
        return self._server.isListening()

    def listen(self) -> bool:
        """Start listening. A socket that accepts connections is another launch's, which
        started at the same moment and listened first: it is left alone (the app-dir lock
        decides between the two; Qt would replace it). A socket left by a crashed instance
        is replaced."""
        from PySide6.QtNetwork import QLocalServer

        path = socket_path(self.name)
        if path is not None and _answers(path):
            log.warning("single-instance socket %s: another launch listens on it", path)
            return False
        if self._server.listen(self.name):
            return True
        QLocalServer.removeServer(self.name)
        if self._server.listen(self.name):
            return True
        log.warning("single-instance socket %s unavailable: %s", self.name,
                    self._server.errorString())
        return False

    def close(self) -> None:
        self._server.close()

    def _on_connection(self) -> None:
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            self._buffers[socket] = b""
            socket.readyRead.connect(lambda s=socket: self._on_ready_read(s))
            socket.disconnected.connect(lambda s=socket: self._forget(s))

    def _on_ready_read(self, socket: QLocalSocket) -> None:
        data = self._buffers.get(socket, b"") + bytes(socket.readAll().data())
        self._buffers[socket] = data
        if not data.endswith(b"\n"):
            return
        if data == SHOW:
            emit(self.activation_requested)  # the window raises itself synchronously
            socket.write(OK)
        else:
            socket.write(b"unknown\n")
        socket.flush()
        self._buffers[socket] = b""

    def _forget(self, socket: QLocalSocket) -> None:
        # The socket is the server's child and goes with it; deleting it here while its
        # own signal is being delivered is what crashes, so only forget its buffer.
        self._buffers.pop(socket, None)
