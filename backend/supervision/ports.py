"""Loopback ports: pick a free one, or say clearly that a chosen one is taken."""

from __future__ import annotations

import socket

LOOPBACK = "127.0.0.1"


class PortInUseError(RuntimeError):
    def __init__(self, port: int, what: str):
        super().__init__(
            f"Port {port} on {LOOPBACK} ({what}) is already in use, probably by another "
            f"JobCtrl instance or another program. Stop it or choose another port."
        )
        self.port = port


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def ensure_port_free(port: int, what: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((LOOPBACK, port))
        except OSError:
            raise PortInUseError(port, what) from None
    return port


def port_or_free(port: int | None, what: str) -> int:
    return ensure_port_free(port, what) if port else free_port()
