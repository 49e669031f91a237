"""Loopback ports: pick free ones, or say clearly that a chosen one is taken.

A picked port is free when picked and taken only later, by the child that listens on it
(Temporal within a second, the API after its imports). Ports the kernel hands out itself —
``bind(0)`` here, in Temporal's own picks, and the source port of every outgoing connection —
come from the ephemeral range, so a port picked there can be taken by any of those in the
gap. Picks therefore come from below that range, where only a program asking for that very
number could take it, and the ports of one start are held together until all are chosen, so
two never coincide.
"""

from __future__ import annotations

import contextlib
import random
import socket
from pathlib import Path

LOOPBACK = "127.0.0.1"

# IANA's dynamic range: what macOS and Windows hand out. Linux says its own in /proc.
DEFAULT_EPHEMERAL = (49152, 65535)
LINUX_EPHEMERAL = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST_PICK = 20000  # above the ports well-known services usually take
MIN_PICK_RANGE = 2000  # a narrower gap below the ephemeral range: let the kernel choose
ATTEMPTS_PER_PORT = 64


class PortInUseError(RuntimeError):
    def __init__(self, port: int, what: str):
        super().__init__(
            f"Port {port} on {LOOPBACK} ({what}) is already in use, probably by another "
            f"JobCtrl instance or another program. Stop it or choose another port."
        )
        self.port = port


def ephemeral_range(proc_file: Path = LINUX_EPHEMERAL) -> tuple[int, int]:
    try:
        low, high = proc_file.read_text(encoding="ascii").split()
        return int(low), int(high)
    except (OSError, ValueError):
        return DEFAULT_EPHEMERAL


def pick_range(ephemeral: tuple[int, int] | None = None) -> range | None:
    """Where picks come from; None when the ephemeral range leaves too little below it."""
    low = (ephemeral or ephemeral_range())[0]
    return range(LOWEST_PICK, low) if low - LOWEST_PICK >= MIN_PICK_RANGE else None


def _held(port: int) -> socket.socket | None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind((LOOPBACK, port))
    except OSError:
        sock.close()
        return None
    return sock


def _hold_one(candidates: range | None, taken: set[int]) -> socket.socket:
    for _ in range(ATTEMPTS_PER_PORT):
        # the kernel's choice is distinct from the sockets still held, not from ``taken``
        port = random.choice(candidates) if candidates is not None else 0
        if port in taken or (sock := _held(port)) is None:
            continue
        if sock.getsockname()[1] not in taken:
            return sock
        sock.close()
    if candidates is not None:
        return _hold_one(None, taken)
    raise OSError(f"no free port on {LOOPBACK}")


def free_ports(count: int, candidates: range | None = None, *, besides: set[int] = frozenset()
               ) -> list[int]:
    """``count`` distinct ports free on loopback right now (below the ephemeral range),
    none of them in ``besides``."""
    candidates = candidates if candidates is not None else pick_range()
    with contextlib.ExitStack() as held:
        ports: list[int] = []
        for _ in range(count):
            sock = held.enter_context(_hold_one(candidates, set(ports) | set(besides)))
            ports.append(sock.getsockname()[1])
        return ports


def free_port() -> int:
    return free_ports(1)[0]


def ensure_port_free(port: int, what: str) -> int:
    sock = _held(port)
    if sock is None:
        raise PortInUseError(port, what)
    sock.close()
    return port


def settle_ports(wanted: dict[str, int | None]) -> dict[str, int]:
    """One port for each service named: the one asked for if it is free (else
    PortInUseError), or a free pick distinct from every other port of this start."""
    chosen = {what: ensure_port_free(port, what) for what, port in wanted.items() if port}
    unpicked = [what for what, port in wanted.items() if not port]
    picks = free_ports(len(unpicked), besides=set(chosen.values()))
    return {**chosen, **dict(zip(unpicked, picks, strict=True))}
