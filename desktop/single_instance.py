"""One desktop per app folder and user: a second launch raises the running window.

The first launch listens on a local socket (``QLocalServer``: a Unix socket, a named pipe
on Windows) whose name is derived from the user and the resolved app folder, so two users,
or one user with two app folders, never meet. A second launch connects, says ``show``,
waits for the first to answer ``ok`` (sent after its window was raised) and exits 0.

The socket is only the fast path for "focus the window". The Supervisor's app-dir lock
stays the authority on who owns the app folder: a launch that finds no listener but a
locked folder is still refused there with a clear message.
"""

from __future__ import annotations

import getpass
import hashlib
import logging
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from desktop.qt_compat import emit

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
    return f"jobctrl-{hashlib.sha256(key).hexdigest()[:16]}"


def activate_running_instance(app_dir: Path, *, timeout_ms: int = ANSWER_TIMEOUT_MS) -> bool:
    """True when an instance for ``app_dir`` answered that it raised its window.

    Blocking, with short timeouts: it runs once, before this process shows anything."""
    socket = QLocalSocket()
    socket.connectToServer(server_name(app_dir))
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


class InstanceServer(QObject):
    """The first launch's listener: ``activation_requested`` when a second launch knocks."""

    activation_requested = Signal()

    def __init__(self, app_dir: Path, parent: QObject | None = None):
        super().__init__(parent)
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
        """Start listening. A socket left by a crashed instance is removed first (callers
        only get here after ``activate_running_instance`` found nobody answering)."""
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
