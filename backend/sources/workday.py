"""Workday career sites: the public CXS JSON behind every ``*.myworkdayjobs.com`` site.

``POST https://{host}/wday/cxs/{tenant}/{site}/jobs`` with ``{"appliedFacets": {},
"limit": 20, "offset": n, "searchText": ""}`` -> ``{"total", "jobPostings": [{"title",
"externalPath", "locationsText", "postedOn", "bulletFields": [reqId]}]}``. ``total`` is
reported on the first page only (later pages say 0); 20 is the largest page Workday serves.

``GET https://{host}/wday/cxs/{tenant}/{site}{externalPath}`` -> ``{"jobPostingInfo":
{"id", "title", "jobDescription" (HTML), "location", "additionalLocations", "timeType",
"remoteType"?, "startDate", "postedOn", "jobReqId", "externalUrl"}, "hiringOrganization":
{"name"}}``. Pay appears only in the description's own pay statement, when the employer
writes one.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import SplitResult, quote, urlsplit

from backend.domain.postings import Posting
from backend.domain.source_config import WorkdaySource
from backend.sources.errors import SourcePayloadInvalid
from backend.sources.html_clean import html_text
from backend.sources.http import BoardSession
from backend.sources.normalize import (
    SkipPosting,
    build_posting,
    clean_text,
    collect_off_loop,
    description_html,
    employment_type,
    first_text,
    infer_remote,
    iso_utc,
    join_locations,
    remote_from_words,
    salary_from_statement,
)
from backend.sources.paging import offset_pages, with_details

PAGE_SIZE = 20
_SUMMARY_LOCATION = re.compile(r"^\d+\s+locations?$", re.IGNORECASE)  # "2 Locations"
_DAYS_AGO = re.compile(r"(\d+)\+?\s+days?\s+ago", re.IGNORECASE)


def site_root(source: WorkdaySource) -> str:
    base = source.base_url or f"https://{source.host}"
    return f"{base}/wday/cxs/{quote(source.tenant, safe='')}/{quote(source.site, safe='')}"


def public_root(source: WorkdaySource) -> str:
    """Where a person opens the site: ``https://{host}/{site}``."""
    return f"https://{source.host}/{quote(source.site, safe='')}"


async def fetch_workday(source: WorkdaySource) -> list[Posting]:
    root = site_root(source)
    async with BoardSession() as session:
        await session.check_robots(f"{root}/jobs")

        async def page(offset: int) -> tuple[list[Any], int | None]:
            payload = await session.post_json(f"{root}/jobs", {
                "appliedFacets": {}, "limit": PAGE_SIZE, "offset": offset, "searchText": ""})
            postings = payload.get("jobPostings") if isinstance(payload, dict) else None
            if not isinstance(postings, list):
                raise SourcePayloadInvalid()
            total = payload.get("total")
            return postings, total if isinstance(total, int) else None

        listed = await offset_pages(page, page_size=PAGE_SIZE, limit=source.max_postings)
        usable = [item for item in listed
                  if isinstance(item, dict) and isinstance(item.get("externalPath"), str)]

        async def detail(item: dict) -> Any:
            return await session.get_json(root + item["externalPath"])

        detailed = await with_details(usable, detail, family=source.id)
    now = datetime.now(UTC)
    # Entries without an externalPath stay in the list so collect() counts them as skipped.
    return await collect_off_loop(detailed or listed, lambda pair: to_posting(pair, source, now),
                                  family=source.id)


def posted_at(info: dict, item: dict, now: datetime) -> str | None:
    """``startDate`` when given; else the list's relative words ("Posted Today",
    "Posted 3 Days Ago"). "30+ Days Ago" says no day: unknown, not a guess."""
    exact = iso_utc(info.get("startDate"))
    if exact:
        return exact
    words = clean_text(info.get("postedOn") or item.get("postedOn")) or ""
    if "30+" in words:
        return None
    lowered = words.lower()
    days = 0 if "today" in lowered else 1 if "yesterday" in lowered else None
    match = _DAYS_AGO.search(words)
    if days is None and match:
        days = int(match.group(1))
    if days is None:
        return None
    day = (now - timedelta(days=days)).date()
    return iso_utc(day)


def _info(detail: Any) -> tuple[dict, dict]:
    if not isinstance(detail, dict):
        return {}, {}
    info = detail.get("jobPostingInfo")
    organization = detail.get("hiringOrganization")
    return (info if isinstance(info, dict) else {},
            organization if isinstance(organization, dict) else {})


def to_posting(pair: Any, source: WorkdaySource, now: datetime) -> Posting:
    item, detail = pair if isinstance(pair, tuple) else (pair, None)
    if not isinstance(item, dict):
        raise SkipPosting()
    info, organization = _info(detail)
    summary = clean_text(item.get("locationsText"))
    others = info.get("additionalLocations")
    location = join_locations(info.get("location"), others if isinstance(others, list) else [])
    if not location and summary and not _SUMMARY_LOCATION.match(summary):
        location = summary
    title = clean_text(info.get("title") or item.get("title"))
    url = info.get("externalUrl") or public_root(source) + str(item.get("externalPath"))
    description = description_html(info.get("jobDescription"))
    bullets = item.get("bulletFields")
    req_id = info.get("jobReqId") or (bullets[0] if isinstance(bullets, list) and bullets
                                      else None)
    return build_posting(
        source_key=req_id or item.get("externalPath"),
        url=url,
        apply_url=f"{url}/apply" if isinstance(url, str) else None,
        title=title,
        company=first_text(source.company_name, organization.get("name"), source.tenant),
        location=location,
        remote=remote_from_words(info.get("remoteType")) or infer_remote(location, title),
        salary=salary_from_statement(html_text(description)),
        employment=employment_type(info.get("timeType")),
        posted_at=posted_at(info, item, now),
        description=description,
    )


_WORKDAY_HOST = re.compile(r"^(?P<tenant>[a-z0-9-]+)\.(?P<pod>wd\d+)\.myworkdayjobs\.com$")
_WORKDAY_SITE_HOST = re.compile(r"^(?:[a-z0-9-]+\.)?wd\d+\.myworkdaysite\.com$")
_LOCALE = re.compile(r"^[a-z]{2}(?:-[A-Za-z]{2})?$")


def resolve_link(url: SplitResult | str) -> dict | None:
    """Source settings for a Workday careers link, or None when it is not one:
    ``https://acme.wd5.myworkdayjobs.com/en-US/External`` (a job link under it too) and
    ``https://wd3.myworkdaysite.com/recruiting/acme/External``."""
    parts = urlsplit(url) if isinstance(url, str) else url
    host = (parts.hostname or "").lower()
    segments = [segment for segment in parts.path.split("/") if segment]
    if segments and _LOCALE.match(segments[0]):
        segments = segments[1:]
    match = _WORKDAY_HOST.match(host)
    if match and segments and segments[0] not in ("wday", "job"):
        return {"kind": "workday", "host": host, "tenant": match.group("tenant"),
                "site": segments[0]}
    if _WORKDAY_SITE_HOST.match(host) and len(segments) >= 3 and segments[0] == "recruiting":
        return {"kind": "workday", "host": host, "tenant": segments[1], "site": segments[2]}
    return None
