"""The one way source families talk HTTP: bounded, identified, and mapped to SourceError.

* connect errors, timeouts, 408/429 and 5xx -> SourceUnavailable (retryable)
* 400/401/403/404/410 and other 4xx, bad URLs -> SourceMisconfigured (a wrong token or slug)
* a body that is not JSON (get_json), too large, or undecodable -> SourcePayloadInvalid

Error codes never carry exception text or payload; details go to our log only.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpx

from backend.sources.errors import (
    SourceError,
    SourceMisconfigured,
    SourcePayloadInvalid,
    SourceUnavailable,
)

log = logging.getLogger(__name__)

USER_AGENT = "JobCtrl-Desktop/0.1 (+local job search; one request per board per run)"
DEFAULT_TIMEOUT = 20.0
MAX_BODY_BYTES = 25 * 1024 * 1024
MAX_REDIRECTS = 5
JSON_ACCEPT = "application/json"
FEED_ACCEPT = (
    "application/rss+xml, application/atom+xml, application/xml;q=0.9, text/xml;q=0.9, */*;q=0.5"
)


def _where(url: str) -> str:
    """Scheme, host and path for logs: never the query string."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}{parts.path}"


def _check_status(url: str, status: int) -> None:
    if 200 <= status < 300:
        return
    log.warning("GET %s answered HTTP %d", _where(url), status)
    if status in (408, 429) or status >= 500:
        raise SourceUnavailable()
    if 400 <= status < 500:
        raise SourceMisconfigured()
    raise SourceUnavailable()  # 1xx / an unfollowable 3xx: the server is not serving us


@dataclass(frozen=True)
class Fetched:
    body: bytes
    content_type: str | None
    url: str  # after redirects


async def get_bytes(url: str, *, timeout: float = DEFAULT_TIMEOUT, accept: str = "*/*") -> bytes:
    """The body of a GET, following redirects, within ``timeout`` seconds overall."""
    return (await get(url, timeout=timeout, accept=accept)).body


async def get(url: str, *, timeout: float = DEFAULT_TIMEOUT, accept: str = "*/*") -> Fetched:
    """Body, content type and final URL of a GET (see get_bytes)."""
    headers = {"User-Agent": USER_AGENT, "Accept": accept}
    try:
        async with (
            asyncio.timeout(timeout),
            httpx.AsyncClient(
                headers=headers, follow_redirects=True, max_redirects=MAX_REDIRECTS,
                timeout=httpx.Timeout(timeout),
            ) as client,
            client.stream("GET", url) as response,
        ):
            _check_status(url, response.status_code)
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
                raise SourcePayloadInvalid()
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    log.warning("GET %s: body over %d bytes", _where(url), MAX_BODY_BYTES)
                    raise SourcePayloadInvalid()
                chunks.append(chunk)
            return Fetched(b"".join(chunks), response.headers.get("content-type"),
                           str(response.url))
    except SourceError:
        raise
    except TimeoutError as exc:
        log.warning("GET %s timed out after %ss", _where(url), timeout)
        raise SourceUnavailable() from exc
    except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
        raise SourceMisconfigured() from exc
    except httpx.DecodingError as exc:
        raise SourcePayloadInvalid() from exc
    except httpx.HTTPError as exc:  # connect/read errors, timeouts, too many redirects
        log.warning("GET %s failed: %s", _where(url), type(exc).__name__)
        raise SourceUnavailable() from exc


async def get_json(url: str, *, timeout: float = DEFAULT_TIMEOUT) -> Any:
    body = await get_bytes(url, timeout=timeout, accept=JSON_ACCEPT)
    try:
        return json.loads(body)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError
        log.warning("GET %s: body is not JSON", _where(url))
        raise SourcePayloadInvalid() from exc
