"""Stable identities: one posting, wherever and however often it is seen, is one JobId."""

from __future__ import annotations

import hashlib
import re
from typing import Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

# Query parameters that only say how someone arrived at a posting, never which posting.
TRACKING_PARAMS = frozenset(
    {"gh_src", "gh_jid_src", "lever-source", "lever-origin", "ref", "referrer", "source",
     "src", "trk", "fbclid", "gclid", "mc_cid", "mc_eid"}
)


class InvalidPostingUrl(ValueError):
    """A posting URL that is not an absolute http(s) URL."""


def canonical_url(url: str) -> str:
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        raise InvalidPostingUrl(f"not an absolute http(s) URL: {url[:200]!r}")
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"  # IPv6 literal keeps its brackets
    try:
        port = parts.port
    except ValueError:
        raise InvalidPostingUrl(f"invalid port in {url[:200]!r}") from None
    if port and port != {"http": 80, "https": 443}[scheme]:
        host = f"{host}:{port}"
    query = sorted(
        (key, value)
        for key, value in parse_qsl(parts.query, keep_blank_values=True)
        if not key.lower().startswith("utm_") and key.lower() not in TRACKING_PARAMS
    )
    path = parts.path.rstrip("/") or "/"
    return urlunsplit(("https", host, path, urlencode(query), ""))


def job_id_for_url(url: str) -> str:
    digest = hashlib.sha256(canonical_url(url).encode("utf-8")).hexdigest()
    return f"job_{digest[:24]}"


def host_of(url: str) -> str:
    """``host[:port]`` of a URL, lowercase, without user info: an access grant's key."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    return f"{host}:{parts.port}" if parts.port else host


HOST_PATTERN = r"^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?(:[0-9]{1,5})?$"
_HOST = re.compile(HOST_PATTERN)


def normalize_host(value: str) -> str:
    """A user-typed host (or a pasted URL) as ``host[:port]``; ValueError if it is neither."""
    text = value.strip().lower()
    if "://" in text:
        text = host_of(text)
    if not _HOST.match(text):
        raise ValueError("host must look like example.com or example.com:8080")
    return text


ReceiptKind = Literal["accepted", "filtered"]


def receipt_hash(kind: ReceiptKind, *parts: str) -> str:
    """A short, stable digest of what a search-unit receipt stands for (a job id, or the
    raw URL and title of a filtered result): the raw provider values themselves are never
    stored."""
    text = "\x1f".join((kind, *parts))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]
