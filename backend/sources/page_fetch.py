"""Fetching a posting page politely: robots.txt (RFC 9309, cached per origin), capped
bodies, bounded redirects, and typed failures with bounded codes (never raw exception
text or payloads). Used by Enrich (``backend/pipeline/enrich.py``, which extracts the
description) and by the board adapters' HTTP helpers (``backend/sources/http.py``), so it
sits with the sources: HTTP only, no store, no Temporal.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from urllib.parse import urljoin, urlsplit
from urllib.robotparser import RobotFileParser, RuleLine

import httpx

from backend.domain.errors import TypedFailure
from backend.sources.net_guard import PrivateAddressRefused

USER_AGENT = "JobCtrl/0.1 (+local job-search assistant)"

MAX_PAGE_BYTES = 3 * 1024 * 1024
"""Posting pages larger than this are truncated (never rejected)."""

MAX_ROBOTS_BYTES = 512 * 1024
"""RFC 9309 asks crawlers to parse at least 500 KiB of robots.txt."""

MAX_REDIRECTS = 5

PAGE_DEADLINE_S = 60.0
"""All of one page fetch (robots.txt, redirects, the body) ends within this. The client's
timeout bounds each read; a server dripping a byte just inside it would otherwise hold a
worker slot for as long as it likes."""


# --------------------------------------------------------------------------- errors


class EnrichError(TypedFailure):
    """Base of every Enrich failure. ``str(exc)`` is the bounded code, never a payload."""

    code = "ENRICH_FAILED"
    retryable = True

    def __init__(self) -> None:
        super().__init__(self.code)


class EnrichBlocked(EnrichError):
    """robots.txt disallows our user agent for this URL: a typed block, not a failure."""

    code = "ENRICH_ROBOTS_DISALLOWED"
    retryable = False


class EnrichUnavailable(EnrichError):
    """Timeout, connection error, 5xx, 429, or robots.txt temporarily unreachable."""

    code = "ENRICH_FETCH_UNAVAILABLE"
    retryable = True


class EnrichGone(EnrichError):
    """The posting page answered 404/410."""

    code = "ENRICH_POSTING_GONE"
    retryable = False


class EnrichNotHtml(EnrichError):
    """The URL serves something other than an HTML page (PDF, image, JSON...)."""

    code = "ENRICH_NOT_HTML"
    retryable = False


class EnrichRejected(EnrichError):
    """Not fetchable for a reason retrying will not fix: a non-http(s) URL, a redirect
    loop, or another 4xx answer (400, 401, 403, 451...)."""

    code = "ENRICH_FETCH_REJECTED"
    retryable = False


class EnrichPrivateAddress(EnrichRejected):
    """The link (or a redirect) leads to this computer or a private network: not opened."""

    code = "ENRICH_PRIVATE_ADDRESS"


BOUNDED_ENRICH_CODES: frozenset[str] = frozenset(
    cls.code
    for cls in (
        EnrichError,
        EnrichBlocked,
        EnrichUnavailable,
        EnrichGone,
        EnrichNotHtml,
        EnrichRejected,
        EnrichPrivateAddress,
    )
)


# --------------------------------------------------------------------------- robots.txt


def _origin(url: str) -> str:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise EnrichRejected()
    host = parts.hostname.lower()
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    default_port = 80 if scheme == "http" else 443
    try:
        port = parts.port
    except ValueError as exc:
        raise EnrichRejected() from exc
    if port is None or port == default_port:
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"


class _PatternRule(RuleLine):
    """RFC 9309 path matching: ``*`` wildcards and a ``$`` end anchor (the stdlib parser
    compares plain prefixes only)."""

    def __init__(self, rule: RuleLine) -> None:
        self.path = rule.path
        self.allowance = rule.allowance
        pattern = rule.path.replace("%2A", "*")
        anchored = pattern.endswith("%24")
        if anchored:
            pattern = pattern[: -len("%24")]
        self._pattern = pattern
        regex = ".*".join(re.escape(part) for part in pattern.split("*"))
        self._regex = re.compile(regex + (r"\Z" if anchored else ""))

    def applies_to(self, filename: str) -> bool:
        return self._regex.match(filename) is not None

    @property
    def specificity(self) -> int:
        return len(self._pattern)


def _longest_match_first(parser: RobotFileParser) -> None:
    """The stdlib answers with the first rule that matches; RFC 9309 wants the most
    specific (longest) one, with Allow winning a tie. Sorting the rules gives that."""
    entries = list(parser.entries)
    if parser.default_entry is not None:
        entries.append(parser.default_entry)
    for entry in entries:
        rules = [_PatternRule(rule) for rule in entry.rulelines]
        rules.sort(key=lambda rule: (-rule.specificity, not rule.allowance))
        entry.rulelines = rules


def _rules_for(status: int, text: str | None) -> RobotFileParser:
    parser = RobotFileParser()
    if text is not None:
        parser.parse(text.splitlines())
        _longest_match_first(parser)
    elif status in (401, 403):
        parser.disallow_all = True
    else:
        parser.allow_all = True
    parser.modified()
    return parser


class RobotsCache:
    """Per-origin robots.txt rules, fetched once per origin and kept for ``ttl_seconds``.

    * 2xx → parsed rules (first 512 KiB);
    * 401/403 → everything disallowed (the robots exclusion standard);
    * any other 4xx (404, 410...) → everything allowed;
    * 5xx, 429, timeout or connection error → :class:`EnrichUnavailable` and nothing is
      cached, so the Temporal retry asks again.

    One in-flight fetch per origin: concurrent callers for the same origin share it.
    """

    def __init__(
        self,
        *,
        user_agent: str = USER_AGENT,
        ttl_seconds: float = 24 * 3600,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.user_agent = user_agent
        self._ttl = ttl_seconds
        self._clock = clock
        self._rules: dict[str, tuple[float, RobotFileParser]] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def __len__(self) -> int:
        return len(self._rules)

    def clear(self) -> None:
        self._rules.clear()

    async def allowed(self, client: httpx.AsyncClient, url: str) -> bool:
        origin = _origin(url)
        parser = await self._parser_for(client, origin)
        return parser.can_fetch(self.user_agent, url)

    async def _parser_for(self, client: httpx.AsyncClient, origin: str) -> RobotFileParser:
        cached = self._fresh(origin)
        if cached is not None:
            return cached
        lock = self._locks.setdefault(origin, asyncio.Lock())
        async with lock:
            cached = self._fresh(origin)
            if cached is not None:
                return cached
            parser = await self._fetch(client, origin)
            self._rules[origin] = (self._clock(), parser)
            return parser

    def _fresh(self, origin: str) -> RobotFileParser | None:
        entry = self._rules.get(origin)
        if entry is None:
            return None
        fetched_at, parser = entry
        if self._clock() - fetched_at > self._ttl:
            del self._rules[origin]
            return None
        return parser

    async def _fetch(self, client: httpx.AsyncClient, origin: str) -> RobotFileParser:
        url = f"{origin}/robots.txt"
        headers = {"User-Agent": self.user_agent, "Accept": "text/plain, */*;q=0.5"}
        try:
            # RFC 9309: follow at least five redirects for robots.txt.
            for _ in range(MAX_REDIRECTS + 1):
                async with client.stream("GET", url, headers=headers, follow_redirects=False) as response:
                    status = response.status_code
                    if response.is_redirect and "location" in response.headers:
                        url = urljoin(url, response.headers["location"])
                        if urlsplit(url).scheme.lower() not in ("http", "https"):
                            return _rules_for(404, None)
                        continue
                    if 200 <= status < 300:
                        body = await _read_capped(response, MAX_ROBOTS_BYTES)
                        return _rules_for(status, body.decode("utf-8", errors="replace"))
                    if status == 429 or status >= 500:
                        raise EnrichUnavailable()
                    # 3xx without Location, 401/403 and the remaining 4xx.
                    return _rules_for(status, None)
            # A robots.txt redirect loop counts as "unavailable" (RFC 9309 §2.3.1.2).
            return _rules_for(404, None)
        except httpx.TransportError as exc:  # timeouts, refused, reset, protocol errors
            raise EnrichUnavailable() from exc


# --------------------------------------------------------------------------- fetching

_HTML_TYPES = ("text/html", "application/xhtml+xml")
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9._:-]+)""", re.I)


async def _read_capped(response: httpx.Response, limit: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        room = limit - size
        if len(chunk) >= room:
            chunks.append(chunk[:room])
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _decode_html(body: bytes, header_charset: str | None) -> str:
    candidates: list[str] = []
    if header_charset:
        candidates.append(header_charset)
    if body.startswith(b"\xef\xbb\xbf"):
        candidates.insert(0, "utf-8-sig")
    match = _META_CHARSET.search(body[:4096])
    if match:
        candidates.append(match.group(1).decode("ascii", errors="ignore"))
    candidates.append("utf-8")
    for encoding in candidates:
        try:
            return body.decode(encoding, errors="replace")
        except LookupError:
            continue
    return body.decode("utf-8", errors="replace")  # pragma: no cover - utf-8 always exists


def _looks_like_html(prefix: bytes) -> bool:
    head = prefix.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith((b"<!doctype html", b"<html", b"<head", b"<body", b"<!--", b"<div"))


def _raise_for_status(status: int) -> None:
    if status in (404, 410):
        raise EnrichGone()
    if status in (408, 425, 429) or status >= 500:
        raise EnrichUnavailable()
    if status >= 400:
        raise EnrichRejected()


async def fetch_posting_page(
    url: str,
    *,
    client: httpx.AsyncClient,
    robots: RobotsCache,
    deadline_s: float = PAGE_DEADLINE_S,
) -> str:
    """Fetch ``url`` (following redirects) and return its HTML text.

    robots.txt is consulted before the first request and again for every redirect hop,
    so a redirect into a disallowed path or onto another origin is checked against that
    origin's rules before it is requested. Bodies beyond 3 MB are truncated; the whole
    fetch ends within ``deadline_s`` (EnrichUnavailable after that). A client made by
    ``net_guard.guarded_client`` refuses private addresses (EnrichPrivateAddress).
    """
    try:
        async with asyncio.timeout(deadline_s):
            return await _fetch_page(url, client=client, robots=robots)
    except TimeoutError as exc:
        raise EnrichUnavailable() from exc
    except PrivateAddressRefused as exc:
        raise EnrichPrivateAddress() from exc


async def _fetch_page(url: str, *, client: httpx.AsyncClient, robots: RobotsCache) -> str:
    current = url
    headers = {
        "User-Agent": robots.user_agent,
        "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5",
    }
    try:
        for _ in range(MAX_REDIRECTS + 1):
            if not await robots.allowed(client, current):
                raise EnrichBlocked()
            async with client.stream("GET", current, headers=headers, follow_redirects=False) as response:
                if response.is_redirect and "location" in response.headers:
                    current = urljoin(current, response.headers["location"])
                    _origin(current)  # rejects non-http(s) redirect targets
                    continue
                _raise_for_status(response.status_code)
                if not 200 <= response.status_code < 300:
                    raise EnrichRejected()  # 1xx/3xx without a usable Location
                media_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
                if media_type and media_type not in _HTML_TYPES:
                    raise EnrichNotHtml()
                body = await _read_capped(response, MAX_PAGE_BYTES)
                if not media_type and not _looks_like_html(body[:512]):
                    raise EnrichNotHtml()
                return _decode_html(body, response.charset_encoding)
        raise EnrichRejected()  # too many redirects
    except httpx.UnsupportedProtocol as exc:
        raise EnrichRejected() from exc
    except httpx.InvalidURL as exc:
        raise EnrichRejected() from exc
    except httpx.TransportError as exc:
        raise EnrichUnavailable() from exc
