"""Opening links that came from untrusted input without reaching the user's own network.

A posting's URL, a redirect it answers with and a contact page's address are chosen by
whoever wrote the posting. Fetched naively, ``http://192.168.1.1/admin?op=reset`` or
``http://127.0.0.1:8233`` (the Temporal Web UI) is requested from inside the user's
machine and its answer is stored and sent on in model prompts (server-side request
forgery). The guard sits where connections are opened, so it holds for the first request,
every redirect hop and DNS answers that change between lookups (rebinding): the host is
resolved once, every address it resolves to must be public, and the connection goes to
the address that was checked (TLS still verifies the host's name).

Origins the user configured (a board's API root, a contact page, hosts listed under
"addresses on your own network", robots grants) stay reachable as they are: the user
chose them, and tests reach their loopback stand-ins the same way.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from urllib.parse import urlsplit

import anyio
import httpcore
import httpx
from httpcore._backends.auto import AutoBackend

_DEFAULT_PORTS = {"http": 80, "https": 443}


class PrivateAddressRefused(Exception):
    """A link from untrusted input leads to this machine or a private network. Carries
    no address or URL: callers map it to their own bounded code."""


def origin_key(url: str) -> str | None:
    """``host:port`` of an http(s) URL (lower case, default port filled in); None when the
    URL has no usable host."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    return f"{parts.hostname.lower()}:{port or _DEFAULT_PORTS[scheme]}"


def is_public_address(address: str) -> bool:
    """True for an address on the public internet: not loopback, private, link-local
    (cloud metadata lives there), shared, reserved, unspecified or multicast, also when an
    IPv6 address wraps one of those IPv4 addresses."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address):
        wrapped = ip.ipv4_mapped or ip.sixtofour
        if wrapped is not None:
            ip = wrapped
    return ip.is_global and not ip.is_multicast


class AddressPolicy:
    """Which origins may be opened whatever their address. Entries are ``host:port`` or a
    bare ``host`` (any port: what a user types when they allow a host)."""

    def __init__(self, allowed: Iterable[str] = ()) -> None:
        self._allowed: set[str] = {entry.strip().lower() for entry in allowed if entry.strip()}

    def allow_url(self, url: str) -> None:
        """Trust the origin of a URL the user configured (not one read from a posting)."""
        key = origin_key(url)
        if key is not None:
            self._allowed.add(key)

    def trusts(self, host: str, port: int) -> bool:
        host = host.lower().strip("[]")
        return host in self._allowed or f"{host}:{port}" in self._allowed


class _GuardedBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend with the address check in front of every connect."""

    def __init__(self, policy: AddressPolicy) -> None:
        self._policy = policy
        self._inner = AutoBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None, socket_options=None):
        target = host
        if not self._policy.trusts(host, port):
            target = await _checked_address(host, port)
        return await self._inner.connect_tcp(target, port, timeout=timeout,
                                             local_address=local_address,
                                             socket_options=socket_options)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options=None):
        raise PrivateAddressRefused()

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


async def _checked_address(host: str, port: int) -> str:
    """The address to connect to, once every address ``host`` resolves to is public."""
    try:
        answers = await anyio.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise httpcore.ConnectError(str(exc)) from exc
    addresses = [str(answer[4][0]) for answer in answers]
    if not addresses or not all(is_public_address(address) for address in addresses):
        raise PrivateAddressRefused()
    return addresses[0]


def guarded_client(policy: AddressPolicy, **client_options) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` whose every connection passes the address check. It never
    uses proxies from the environment: a proxy would connect on our behalf, unchecked."""
    transport = httpx.AsyncHTTPTransport()
    # httpx has no public hook for the network backend; the pool keeps it here. The tests
    # in tests/security/test_private_addresses.py fail if that ever stops being true.
    transport._pool._network_backend = _GuardedBackend(policy)
    return httpx.AsyncClient(transport=transport, **client_options)
