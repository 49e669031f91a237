"""RSS 2.0 and Atom feeds of postings, read with feedparser.

The bytes are fetched with our own HTTP client (timeouts, User-Agent, error mapping) and
handed to feedparser as a stream, so feedparser itself never touches the network or disk.
"""

from __future__ import annotations

import asyncio
import io
import logging
from typing import Any

import feedparser
from feedparser.exceptions import CharacterEncodingOverride, NonXMLContentType

from backend.domain.ids import job_id_for_url
from backend.domain.postings import Posting
from backend.sources.config import FeedSource
from backend.sources.errors import SourcePayloadInvalid
from backend.sources.http import FEED_ACCEPT, get
from backend.sources.normalize import (
    MAX_SOURCE_KEY,
    build_posting,
    clean_text,
    collect,
    description_html,
    first_text,
    http_url,
    infer_remote,
    iso_utc,
)

log = logging.getLogger(__name__)


async def fetch_feed(source: FeedSource) -> list[Posting]:
    fetched = await get(source.url, accept=FEED_ACCEPT)
    parsed = await asyncio.to_thread(parse_feed, fetched.body, fetched.url, fetched.content_type)
    return feed_postings(parsed, source)


def parse_feed(body: bytes, url: str, content_type: str | None = None) -> Any:
    # A stream, never a string: feedparser treats a string as a URL or a file name.
    headers = {"content-location": url}
    if content_type:
        headers["content-type"] = content_type
    return feedparser.parse(io.BytesIO(body), response_headers=headers)


# Feeds served as text/html or with a wrong charset are still feeds.
_HARMLESS_BOZO = (CharacterEncodingOverride, NonXMLContentType)


def feed_postings(parsed: Any, source: FeedSource) -> list[Posting]:
    entries = list(parsed.get("entries") or [])
    if not entries:
        broken = parsed.get("bozo") and not isinstance(
            parsed.get("bozo_exception"), _HARMLESS_BOZO
        )
        if broken or not parsed.get("version"):
            log.warning("feed %s: not a readable feed", source.id)
            raise SourcePayloadInvalid()
        return []
    feed_title = clean_text((parsed.get("feed") or {}).get("title"))
    return collect(
        entries, lambda entry: to_posting(entry, source, feed_title), family=f"feed:{source.id}"
    )


def _link(entry: Any) -> str | None:
    if http_url(entry.get("link")):
        return entry.get("link")
    for link in entry.get("links") or []:
        if link.get("rel", "alternate") == "alternate" and http_url(link.get("href")):
            return link.get("href")
    return None


def _body(entry: Any) -> str | None:
    candidates = [
        part.get("value") for part in entry.get("content") or [] if isinstance(part, dict)
    ]
    candidates.append(entry.get("summary"))
    texts = [text for text in candidates if isinstance(text, str) and text.strip()]
    return max(texts, key=len) if texts else None


def to_posting(entry: Any, source: FeedSource, feed_title: str | None) -> Posting:
    link = _link(entry)
    title = clean_text(entry.get("title"))
    tags = [tag.get("term") for tag in entry.get("tags") or [] if hasattr(tag, "get")]
    guid = clean_text(entry.get("id"))
    if link and (not guid or len(guid) > MAX_SOURCE_KEY):
        guid = job_id_for_url(link)
    return build_posting(
        source_key=guid or link,
        url=link,
        title=title,
        company=first_text(source.company_name, entry.get("author"), feed_title),
        location=None,
        remote=infer_remote(None, title, *[t for t in tags if isinstance(t, str)]),
        posted_at=iso_utc(entry.get("published_parsed") or entry.get("updated_parsed")),
        description=description_html(_body(entry)),
        tags=tags,
    )
