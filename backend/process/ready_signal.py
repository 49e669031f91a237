"""Readiness signalled by the child, instead of the supervisor polling for it.

The supervisor listens on a loopback port for the lifetime of its services and passes its
address and a per-launch secret to every child (``JOBCTRL_READY_ADDRESS``,
``JOBCTRL_READY_SECRET``). A child that is ready to serve — the worker once its first
heartbeat is written, the API once uvicorn listens — connects and sends one line,
``<secret> <service> <pid>``. The supervisor then runs the service's readiness check once
(which can trust the signal) and reports it ready. A child started without these
variables (by hand, or by an older supervisor) signals nothing; the supervisor's slow
fallback check still finds it.

Stdlib only: the children import this before their heavy modules are loaded.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import logging
import os
import secrets
import socket

log = logging.getLogger(__name__)

READY_ADDRESS_ENV = "JOBCTRL_READY_ADDRESS"
READY_SECRET_ENV = "JOBCTRL_READY_SECRET"
LOOPBACK = "127.0.0.1"
SIGNAL_TIMEOUT_S = 2.0
MAX_LINE = 256


class ReadyListener:
    """The supervisor's end: one loopback listener, one event per (service, pid)."""

    def __init__(self) -> None:
        self.secret = secrets.token_hex(16)
        self._server: asyncio.AbstractServer | None = None
        self._events: dict[tuple[str, int], asyncio.Event] = {}
        self.address: str | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._on_connection, LOOPBACK, 0)
        port = self._server.sockets[0].getsockname()[1]
        self.address = f"{LOOPBACK}:{port}"

    def child_env(self) -> dict[str, str]:
        if self.address is None:
            return {}
        return {READY_ADDRESS_ENV: self.address, READY_SECRET_ENV: self.secret}

    def _event(self, service: str, pid: int) -> asyncio.Event:
        return self._events.setdefault((service, pid), asyncio.Event())

    def signalled(self, service: str, pid: int) -> bool:
        return self._event(service, pid).is_set()

    async def wait(self, service: str, pid: int) -> None:
        """Returns once that process has signalled (at once if it already has)."""
        await self._event(service, pid).wait()

    async def _on_connection(self, reader: asyncio.StreamReader,
                             writer: asyncio.StreamWriter) -> None:
        try:
            line = await asyncio.wait_for(reader.readline(), SIGNAL_TIMEOUT_S)
            self._accept(line[:MAX_LINE].decode("ascii", errors="replace").split())
        except (TimeoutError, OSError):
            pass  # a half-open connection signals nothing; the fallback check remains
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    def _accept(self, parts: list[str]) -> None:
        if len(parts) != 3 or not parts[2].isdigit():
            return
        secret, service, pid = parts
        if not hmac.compare_digest(secret, self.secret):
            log.warning("ignored a readiness signal with a wrong secret")
            return
        self._event(service, int(pid)).set()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(OSError):
                await self._server.wait_closed()
            self._server = None


def signal_ready(service: str) -> bool:
    """The child's end: tell the supervisor this process is ready. False when there is no
    supervisor to tell, or it could not be reached (it then finds out by its own check)."""
    address = os.environ.get(READY_ADDRESS_ENV)
    secret = os.environ.get(READY_SECRET_ENV)
    if not address or not secret:
        return False
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=SIGNAL_TIMEOUT_S) as conn:
            conn.sendall(f"{secret} {service} {os.getpid()}\n".encode("ascii"))
    except (OSError, ValueError):
        log.warning("could not signal readiness to %s", address, exc_info=True)
        return False
    return True
