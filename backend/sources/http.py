"""The one way source families talk HTTP: bounded, identified, and mapped to SourceError.

* 429 (and 503 with Retry-After) -> retried here with backoff (tenacity), honouring
  Retry-After; still limited after that -> SourceUnavailable (retryable)
* connect errors, timeouts, 408 and 5xx -> SourceUnavailable (retryable)
* 400/401/403/404/410 and other 4xx, bad URLs -> SourceMisconfigured (a wrong token or slug)
* a body that is not JSON (get_json), too large, or undecodable -> SourcePayloadInvalid

Error codes never carry exception text or payload; details go to our log only.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit

import httpx
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential_jitter,
)

from backend.sources.errors import (
    SourceError,
    SourceMisconfigured,
    SourcePayloadInvalid,
    SourceUnavailable,
)
from backend.sources.net_guard import AddressPolicy, PrivateAddressRefused, guarded_client
from backend.sources.page_fetch import EnrichRejected, EnrichUnavailable, RobotsCache

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


def _check_status(url: str, status: int, retry_after: str | None = None) -> None:
    if 200 <= status < 300:
        return
    log.warning("%s answered HTTP %d", _where(url), status)
    wait = retry_after_seconds(retry_after)
    if status == 429 or (status == 503 and wait is not None):
        raise RateLimited(wait)
    if status == 408 or status >= 500:
        raise SourceUnavailable()
    if 400 <= status < 500:
        raise SourceMisconfigured()
    raise SourceUnavailable()  # 1xx / an unfollowable 3xx: the server is not serving us


@dataclass(frozen=True)
class Fetched:
    body: bytes
    content_type: str | None
    url: str  # after redirects


class RateLimited(SourceUnavailable):
    """429 (or 503 with Retry-After): retried here with backoff before it surfaces."""

    def __init__(self, retry_after: float | None = None):
        super().__init__()
        self.retry_after = retry_after


class RobotsDisallowed(SourceMisconfigured):
    """robots.txt of the board's host disallows our user agent on the API path."""


@dataclass(frozen=True)
class RateLimitRetry:
    """How often and how long a rate-limited request is retried. ``Retry-After`` is
    honoured up to ``max_wait``; without it the wait grows exponentially with jitter."""

    attempts: int = 4
    first_wait: float = 1.0
    max_wait: float = 30.0


RATE_LIMIT_RETRY = RateLimitRetry()


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """``Retry-After`` as seconds: delta-seconds or an HTTP date; None when unreadable."""
    text = (value or "").strip()
    if not text:
        return None
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def _rate_limit_wait(policy: RateLimitRetry):
    exponential = wait_exponential_jitter(multiplier=policy.first_wait, max=policy.max_wait)

    def wait(retry_state: RetryCallState) -> float:
        error = retry_state.outcome.exception() if retry_state.outcome else None
        told = getattr(error, "retry_after", None)
        if told is not None:
            return min(float(told), policy.max_wait)
        return exponential(retry_state)

    return wait


class BoardSession:
    """One HTTP client for one board's crawl: pages and details share connections, a
    429 waits and retries (tenacity), and robots.txt is read once per origin.

    Every URL a board adapter asks for is built from the user's source settings, so its
    origin is trusted as configured; a redirect elsewhere passes the private-address guard.
    """

    def __init__(self, *, timeout: float = DEFAULT_TIMEOUT,
                 retry: RateLimitRetry | None = None, robots: RobotsCache | None = None):
        self._timeout = timeout
        self._retry = retry or RATE_LIMIT_RETRY
        self._robots = robots
        self._client: httpx.AsyncClient | None = None
        self._configured = AddressPolicy()

    async def __aenter__(self) -> BoardSession:
        self._client = guarded_client(
            self._configured, headers={"User-Agent": USER_AGENT}, follow_redirects=True,
            max_redirects=MAX_REDIRECTS, timeout=httpx.Timeout(self._timeout),
        )
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        if self._client is not None:
            await self._client.aclose()

    async def check_robots(self, url: str) -> None:
        """RobotsDisallowed when the host's robots.txt keeps us off ``url``."""
        assert self._client is not None, "use the session in an async with block"
        robots = self._robots or shared_robots()
        self._configured.allow_url(url)
        try:
            allowed = await robots.allowed(self._client, url)
        except EnrichUnavailable as exc:
            raise SourceUnavailable() from exc
        except (EnrichRejected, PrivateAddressRefused) as exc:
            raise SourceMisconfigured() from exc
        if not allowed:
            log.warning("robots.txt disallows %s for our user agent", _where(url))
            raise RobotsDisallowed()

    async def fetch(self, method: str, url: str, *, accept: str = "*/*",
                    json_body: Any = None) -> Fetched:
        async for attempt in AsyncRetrying(
            stop=stop_after_attempt(self._retry.attempts),
            wait=_rate_limit_wait(self._retry),
            retry=retry_if_exception_type(RateLimited),
            reraise=True,
        ):
            with attempt:
                return await self._once(method, url, accept=accept, json_body=json_body)
        raise SourceUnavailable()  # pragma: no cover - tenacity re-raises the last error

    async def get_json(self, url: str) -> Any:
        return _json(await self.fetch("GET", url, accept=JSON_ACCEPT), url)

    async def post_json(self, url: str, body: Any) -> Any:
        return _json(await self.fetch("POST", url, accept=JSON_ACCEPT, json_body=body), url)

    async def _once(self, method: str, url: str, *, accept: str, json_body: Any) -> Fetched:
        assert self._client is not None, "use the session in an async with block"
        headers = {"Accept": accept}
        self._configured.allow_url(url)
        try:
            async with (
                asyncio.timeout(self._timeout),
                self._client.stream(method, url, headers=headers, json=json_body) as response,
            ):
                _check_status(url, response.status_code, response.headers.get("retry-after"))
                declared = response.headers.get("content-length", "")
                if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
                    raise SourcePayloadInvalid()
                chunks: list[bytes] = []
                size = 0
                async for chunk in response.aiter_bytes():
                    size += len(chunk)
                    if size > MAX_BODY_BYTES:
                        log.warning("%s %s: body over %d bytes", method, _where(url),
                                    MAX_BODY_BYTES)
                        raise SourcePayloadInvalid()
                    chunks.append(chunk)
                return Fetched(b"".join(chunks), response.headers.get("content-type"),
                               str(response.url))
        except SourceError:
            raise
        except TimeoutError as exc:
            log.warning("%s %s timed out after %ss", method, _where(url), self._timeout)
            raise SourceUnavailable() from exc
        except (httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
            raise SourceMisconfigured() from exc
        except PrivateAddressRefused as exc:
            log.warning("%s %s redirected into a private network: not followed", method, _where(url))
            raise SourceMisconfigured() from exc
        except httpx.DecodingError as exc:
            raise SourcePayloadInvalid() from exc
        except httpx.HTTPError as exc:  # connect/read errors, timeouts, too many redirects
            log.warning("%s %s failed: %s", method, _where(url), type(exc).__name__)
            raise SourceUnavailable() from exc


_robots: RobotsCache | None = None


def shared_robots() -> RobotsCache:
    """robots.txt rules per origin for the whole worker process (kept a day)."""
    global _robots
    if _robots is None:
        _robots = RobotsCache(user_agent=USER_AGENT)
    return _robots


def _json(fetched: Fetched, url: str) -> Any:
    try:
        return json.loads(fetched.body)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError
        log.warning("%s: body is not JSON", _where(url))
        raise SourcePayloadInvalid() from exc


async def get_allowed(url: str, *, accept: str = JSON_ACCEPT) -> Fetched:
    """One GET of a board's public document, once its host's robots.txt allows it."""
    async with BoardSession() as session:
        await session.check_robots(url)
        return await session.fetch("GET", url, accept=accept)


async def get_allowed_json(url: str) -> Any:
    return _json(await get_allowed(url), url)


async def get_bytes(url: str, *, timeout: float = DEFAULT_TIMEOUT, accept: str = "*/*") -> bytes:
    """The body of a GET, following redirects, within ``timeout`` seconds overall."""
    return (await get(url, timeout=timeout, accept=accept)).body


async def get(url: str, *, timeout: float = DEFAULT_TIMEOUT, accept: str = "*/*") -> Fetched:
    """Body, content type and final URL of a GET (see get_bytes)."""
    async with BoardSession(timeout=timeout) as session:
        return await session.fetch("GET", url, accept=accept)


async def get_json(url: str, *, timeout: float = DEFAULT_TIMEOUT) -> Any:
    return _json(await get(url, timeout=timeout, accept=JSON_ACCEPT), url)
