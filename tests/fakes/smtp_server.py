"""A real loopback SMTP server (aiosmtpd) that keeps every message it accepted.

Plain SMTP on 127.0.0.1 with optional AUTH (any password in ``accept_passwords``), so the
apply sender talks to it exactly as to a real provider with ``security: none``."""

from __future__ import annotations

import email
import threading
from dataclasses import dataclass
from email.message import Message

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


@dataclass(frozen=True)
class Received:
    mail_from: str
    recipients: list[str]
    message: Message

    @property
    def attachment_names(self) -> list[str]:
        return [part.get_filename() for part in self.message.walk() if part.get_filename()]


class _Handler:
    def __init__(self, server: FakeSmtpServer):
        self._server = server

    async def handle_DATA(self, server, session, envelope):  # noqa: N802 - aiosmtpd hook
        message = email.message_from_bytes(envelope.original_content or envelope.content)
        with self._server._lock:
            self._server._received.append(
                Received(envelope.mail_from, list(envelope.rcpt_tos), message))
        return "250 Message accepted for delivery"


class _EphemeralController(Controller):
    """Listens on port 0, so the kernel picks a free port as it binds (no gap in which
    another socket could take a port picked beforehand), then says which one it got."""

    def _trigger_server(self):
        self.port = self.server.sockets[0].getsockname()[1]
        super()._trigger_server()


class FakeSmtpServer:
    def __init__(self, *, username: str | None = None, password: str | None = None):
        self._lock = threading.Lock()
        self._received: list[Received] = []
        self.username = username
        self.password = password
        self.port: int | None = None  # known once started
        self._controller: Controller | None = None

    def _authenticate(self, server, session, envelope, mechanism, auth_data):
        ok = (isinstance(auth_data, LoginPassword)
              and auth_data.login.decode() == self.username
              and auth_data.password.decode() == self.password)
        return AuthResult(success=ok, handled=False)

    def start(self) -> FakeSmtpServer:
        auth = {}
        if self.username is not None:
            auth = {"authenticator": self._authenticate, "auth_require_tls": False}
        # ready_timeout: a hang guard (aiosmtpd's 5 s default is what a quiet machine needs).
        self._controller = _EphemeralController(_Handler(self), hostname="127.0.0.1", port=0,
                                                ready_timeout=60, **auth)
        self._controller.start()
        self.port = self._controller.port
        return self

    def stop(self) -> None:
        if self._controller is not None:
            self._controller.stop()

    @property
    def received(self) -> list[Received]:
        with self._lock:
            return list(self._received)

    @property
    def count(self) -> int:
        with self._lock:
            return len(self._received)

    def smtp_settings(self, from_address: str = "ada@example.org") -> dict:
        """The camelCase ``smtp`` settings block pointing at this server."""
        settings = {"host": "127.0.0.1", "port": self.port, "security": "none",
                    "fromAddress": from_address}
        if self.username is not None:
            settings["username"] = self.username
        return settings
