"""RSS 2.0 and Atom feeds of postings, read with feedparser.

The bytes are fetched with our own HTTP client (timeouts, User-Agent, error mapping) and
handed to feedparser as a stream, so feedparser itself never touches the network or disk.

Decoding is ours and strict: the BOM, else the server's charset, else the XML
declaration, else UTF-8. A body that does not decode in it is SourcePayloadInvalid
(feedparser would silently re-read the whole feed as windows-1252: mojibake everywhere).

Job feeds of the "Company: Title" kind (every or nearly every item titled that way, no
author) give each item its own company; a ``<region>`` element is the location.
"""

from __future__ import annotations

import asyncio
import codecs
import io
import logging
import re
from typing import Any

from backend.domain.ids import job_id_for_url
from backend.domain.postings import Posting
from backend.domain.source_config import FeedSource
from backend.sources.errors import SourcePayloadInvalid
from backend.sources.http import FEED_ACCEPT, Fetched, get
from backend.sources.normalize import (
    MAX_SOURCE_KEY,
    build_posting,
    clean_text,
    collect,
    description_html,
    employment_type,
    first_text,
    http_url,
    infer_remote,
    iso_utc,
)

log = logging.getLogger(__name__)


async def fetch_feed(source: FeedSource) -> list[Posting]:
    fetched = await get(source.url, accept=FEED_ACCEPT)
    return await asyncio.to_thread(_read_feed, fetched, source)


def _read_feed(fetched: Fetched, source: FeedSource) -> list[Posting]:
    return feed_postings(parse_feed(fetched.body, fetched.url, fetched.content_type), source)


_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF32_LE, "utf-32"),
         (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF16_LE, "utf-16"),
         (codecs.BOM_UTF16_BE, "utf-16"))
_XML_DECLARATION = re.compile(rb"""^\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._:-]+)["']""")
_CHARSET = re.compile(r"charset\s*=\s*[\"']?([A-Za-z0-9._:-]+)", re.IGNORECASE)


def declared_encoding(body: bytes, content_type: str | None) -> str:
    for bom, encoding in _BOMS:
        if body.startswith(bom):
            return encoding
    header = _CHARSET.search(content_type or "")
    if header:
        return header.group(1)
    declaration = _XML_DECLARATION.match(body[:512])
    return declaration.group(1).decode("ascii") if declaration else "utf-8"


def decode_feed(body: bytes, content_type: str | None) -> str:
    """The feed's text in its declared encoding; SourcePayloadInvalid when it does not
    decode (one stray byte must not turn every item into mojibake)."""
    encoding = declared_encoding(body, content_type)
    try:
        return body.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        log.warning("feed body does not decode as %s", encoding)
        raise SourcePayloadInvalid() from exc


def parse_feed(body: bytes, url: str, content_type: str | None = None) -> Any:
    text = decode_feed(body, content_type)
    # Re-encoded as UTF-8 and said so, in the header and the declaration alike, so
    # feedparser has nothing left to guess. A stream, never a string: feedparser treats a
    # string as a URL or a file name.
    text = re.sub(r"""^(\s*<\?xml[^>]*?encoding\s*=\s*["'])[A-Za-z0-9._:-]+""", r"\1utf-8",
                  text.lstrip("\ufeff"), count=1)
    media_type = (content_type or "application/xml").split(";")[0].strip() or "application/xml"
    headers = {"content-location": url, "content-type": f"{media_type}; charset=utf-8"}
    # feedparser's own (pure Python) sanitizer is off: every description goes through
    # our allowlist cleaner anyway, and feedparser's costs more than the rest of parsing.
    import feedparser  # with the first feed: every worker and API start imports this module

    return feedparser.parse(io.BytesIO(text.encode("utf-8")), response_headers=headers,
                            sanitize_html=False, resolve_relative_uris=False)


def _harmless_bozo() -> tuple[type[Exception], ...]:
    """Feeds served as text/html or with a wrong charset are still feeds."""
    from feedparser.exceptions import CharacterEncodingOverride, NonXMLContentType

    return (CharacterEncodingOverride, NonXMLContentType)


def feed_postings(parsed: Any, source: FeedSource) -> list[Posting]:
    entries = list(parsed.get("entries") or [])
    if not entries:
        broken = parsed.get("bozo") and not isinstance(
            parsed.get("bozo_exception"), _harmless_bozo()
        )
        if broken or not parsed.get("version"):
            log.warning("feed %s: not a readable feed", source.id)
            raise SourcePayloadInvalid()
        return []
    feed_title = clean_text((parsed.get("feed") or {}).get("title"))
    split = not source.company_name and titles_name_companies(entries)
    return collect(
        entries, lambda entry: to_posting(entry, source, feed_title, split_title=split),
        family=f"feed:{source.id}",
    )


_COMPANY_TITLE = re.compile(r"^(?P<company>[^:]{1,120}?)\s*:\s+(?P<title>\S.*)$")
COMPANY_TITLE_SHARE = 0.8  # this share of titled items must read "Company: Title"


def split_company_title(title: str | None) -> tuple[str, str] | None:
    match = _COMPANY_TITLE.match(title or "")
    return (match.group("company").strip(), match.group("title").strip()) if match else None


def titles_name_companies(entries: list[Any]) -> bool:
    """A "Company: Title" feed: items carry no author and nearly all titles split.
    Judged per feed, so one "Engineer: Payments" title in a company's feed splits nothing."""
    titles = [clean_text(entry.get("title")) for entry in entries
              if hasattr(entry, "get") and not clean_text(entry.get("author"))]
    titles = [title for title in titles if title]
    if len(titles) < 2:
        return False
    splits = sum(1 for title in titles if split_company_title(title))
    return splits >= COMPANY_TITLE_SHARE * len(titles)


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


def to_posting(entry: Any, source: FeedSource, feed_title: str | None, *,
               split_title: bool = False) -> Posting:
    link = _link(entry)
    title = clean_text(entry.get("title"))
    company = None
    parts = split_company_title(title) if split_title else None
    if parts:
        company, title = parts
    tags = [tag.get("term") for tag in entry.get("tags") or [] if hasattr(tag, "get")]
    guid = clean_text(entry.get("id"))
    if link and (not guid or len(guid) > MAX_SOURCE_KEY):
        guid = job_id_for_url(link)
    region = first_text(entry.get("region"), entry.get("location"))
    # A feed's region ("USA Only") names where applicants may live, not an office: it
    # never makes a posting on-site by itself, so it is a hint like the title.
    hints = [region, title, *[t for t in tags if isinstance(t, str)], entry.get("type"),
             feed_title]
    return build_posting(
        source_key=guid or link,
        url=link,
        title=title,
        company=first_text(source.company_name, entry.get("author"), company, feed_title),
        location=region,
        remote=infer_remote(None, *hints),
        posted_at=iso_utc(entry.get("published_parsed") or entry.get("updated_parsed")),
        employment=employment_type(entry.get("type")),
        description=description_html(_body(entry)),
        tags=tags,
    )
