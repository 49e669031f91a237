"""When the desktop's client sends a request again (desktop/client.py ``_send``): a refused
connection never reached a server, so any request goes again once something listens; a
connection that a server accepted and dropped may have carried a command, so a command
is never sent twice, even during a planned restart — only a read is. Real loopback
sockets: a listener that counts what reaches it."""

from __future__ import annotations

import asyncio
import contextlib

import httpx
import pytest

from backend.supervision.ports import free_port
from desktop.client import ApiClient

pytestmark = pytest.mark.asyncio(loop_scope="session")

ANSWER = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"


async def counting_server(port: int, *, answer: bool) -> tuple[asyncio.Server, list[bytes]]:
    """Counts each request line that reaches it; answers it, or drops the connection."""
    seen: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(OSError, asyncio.IncompleteReadError):
            head = await reader.readuntil(b"\r\n\r\n")
            seen.append(head.split(b"\r\n", 1)[0])
            if b"content-length:" in head.lower():  # read the small body before answering
                await reader.read(1024)
            if answer:
                writer.write(ANSWER)
                await writer.drain()
        writer.close()

    return await asyncio.start_server(serve, "127.0.0.1", port), seen


async def test_a_command_waits_for_a_server_that_listens_again():
    port = free_port()
    client = ApiClient(f"http://127.0.0.1:{port}", "token")
    client.planned_restart.note("recycling")  # the supervisor stops the API on purpose
    servers: list[asyncio.Server] = []

    async def come_back() -> list[bytes]:
        await asyncio.sleep(0.3)  # refused meanwhile: nothing listens on the port
        server, seen = await counting_server(port, answer=True)
        servers.append(server)
        client.planned_restart.note("ready")
        return seen

    back = asyncio.ensure_future(come_back())
    try:
        assert await client.patch_settings(minFitScore=40) == {}
        assert [line.split(b" ")[0] for line in await back] == [b"PATCH"]  # sent once
    finally:
        await client.close()
        for server in servers:
            server.close()


async def test_a_dropped_command_is_not_sent_again_but_a_read_is():
    port = free_port()
    server, seen = await counting_server(port, answer=False)
    client = ApiClient(f"http://127.0.0.1:{port}", "token")
    client.planned_restart.note("recycling")
    try:
        with pytest.raises(httpx.RemoteProtocolError):
            await client.patch_settings(minFitScore=40)
        assert len(seen) == 1, "a command that reached a server was sent again"
        # A read goes again once the API is back (still dropped here: then it fails).
        asyncio.get_running_loop().call_later(0.2, client.planned_restart.note, "ready")
        with pytest.raises(httpx.RemoteProtocolError):
            await client.jobs()
        assert [line.split(b" ")[0] for line in seen] == [b"PATCH", b"GET", b"GET"]
    finally:
        await client.close()
        server.close()


async def test_without_a_planned_restart_a_refused_call_fails_within_a_short_bound(monkeypatch):
    monkeypatch.setattr("desktop.client.REFUSED_RETRY_S", 0.4)
    client = ApiClient(f"http://127.0.0.1:{free_port()}", "token")
    loop = asyncio.get_running_loop()
    started = loop.time()
    try:
        with pytest.raises(httpx.ConnectError):
            await client.jobs()
    finally:
        await client.close()
    assert 0.3 < loop.time() - started < 3  # REFUSED_RETRY_S, then the error
