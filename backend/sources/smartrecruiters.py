"""SmartRecruiters companies (public Posting API, no key).

``GET {baseUrl}/v1/companies/{company}/postings?limit=100&offset=n`` -> ``{"offset",
"limit", "totalFound", "content": [{"id", "name", "refNumber", "company": {"identifier",
"name"}, "releasedDate", "location": {"city", "region", "country", "remote", "hybrid"?,
"fullLocation"}, "department": {"label"}, "typeOfEmployment": {"label"},
"experienceLevel": {"label"}, "ref"}]}``.

``GET {baseUrl}/v1/companies/{company}/postings/{id}`` adds ``"postingUrl"``,
``"applyUrl"`` and ``"jobAd": {"sections": {"companyDescription", "jobDescription",
"qualifications", "additionalInformation"}}`` (each ``{"title", "text"}``, HTML). The
list has no public URL: a posting whose detail is gone is read with the page URL
``https://jobs.smartrecruiters.com/{identifier}/{id}``.
"""

from __future__ import annotations

import html
import re
from typing import Any
from urllib.parse import SplitResult, quote, urlsplit

from backend.domain.postings import Posting, RemoteMode
from backend.domain.source_config import SmartRecruitersSource
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
    salary_from_statement,
)
from backend.sources.paging import offset_pages, with_details

PAGE_SIZE = 100  # the API's largest page
SECTIONS = ("companyDescription", "jobDescription", "qualifications", "additionalInformation")


def postings_url(source: SmartRecruitersSource) -> str:
    return f"{source.base_url}/v1/companies/{quote(source.company, safe='')}/postings"


async def fetch_smartrecruiters(source: SmartRecruitersSource) -> list[Posting]:
    root = postings_url(source)
    async with BoardSession() as session:
        await session.check_robots(root)

        async def page(offset: int) -> tuple[list[Any], int | None]:
            payload = await session.get_json(f"{root}?limit={PAGE_SIZE}&offset={offset}")
            content = payload.get("content") if isinstance(payload, dict) else None
            if not isinstance(content, list):
                raise SourcePayloadInvalid()
            total = payload.get("totalFound")
            return content, total if isinstance(total, int) else None

        listed = await offset_pages(page, page_size=PAGE_SIZE, limit=source.max_postings)
        usable = [item for item in listed if isinstance(item, dict) and item.get("id")]

        async def detail(item: dict) -> Any:
            return await session.get_json(f"{root}/{quote(str(item['id']), safe='')}")

        detailed = await with_details(usable, detail, family=source.id)
    return await collect_off_loop(detailed or listed, lambda pair: to_posting(pair, source),
                                  family=source.id)


def _label(value: Any) -> str | None:
    return clean_text(value.get("label")) if isinstance(value, dict) else None


def _description(detail: dict) -> str | None:
    job_ad = detail.get("jobAd")
    sections = job_ad.get("sections") if isinstance(job_ad, dict) else None
    if not isinstance(sections, dict):
        return None
    parts: list[str] = []
    for key in SECTIONS:
        section = sections.get(key)
        if not isinstance(section, dict) or not clean_text(section.get("text")):
            continue
        heading = clean_text(section.get("title"))
        if heading:
            parts.append(f"<h3>{html.escape(heading)}</h3>")
        parts.append(section["text"])
    return description_html("\n".join(parts)) if parts else None


def _location(location: dict) -> str | None:
    return first_text(location.get("fullLocation"), ", ".join(
        str(part) for part in (location.get("city"), location.get("region"),
                               location.get("country")) if clean_text(part)))


def _remote(location: dict, place: str | None, title: str | None) -> RemoteMode:
    if location.get("remote") is True:
        return "remote"
    if location.get("hybrid") is True:
        return "hybrid"
    return infer_remote(place, title)


def to_posting(pair: Any, source: SmartRecruitersSource) -> Posting:
    item, detail = pair if isinstance(pair, tuple) else (pair, None)
    if not isinstance(item, dict):
        raise SkipPosting()
    detail = detail if isinstance(detail, dict) else {}
    company = item.get("company") if isinstance(item.get("company"), dict) else {}
    location = item.get("location") if isinstance(item.get("location"), dict) else {}
    identifier = clean_text(company.get("identifier")) or source.company
    page = f"https://jobs.smartrecruiters.com/{quote(identifier, safe='')}/{item.get('id')}"
    title = clean_text(item.get("name"))
    place = _location(location)
    description = _description(detail)
    return build_posting(
        source_key=item.get("id"),
        url=detail.get("postingUrl") or page,
        apply_url=detail.get("applyUrl"),
        title=title,
        company=first_text(source.company_name, company.get("name"), source.company),
        location=place,
        remote=_remote(location, place, title),
        salary=salary_from_statement(html_text(description)),
        employment=employment_type(_label(item.get("typeOfEmployment"))),
        posted_at=iso_utc(item.get("releasedDate")),
        description=description,
        tags=[_label(item.get("department")), _label(item.get("function"))],
    )


_HOSTS = ("careers.smartrecruiters.com", "jobs.smartrecruiters.com")
_COMPANY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")


def resolve_link(url: SplitResult | str) -> dict | None:
    """``https://careers.smartrecruiters.com/Acme`` or a job link
    ``https://jobs.smartrecruiters.com/Acme/744000012345-engineer`` -> the company."""
    parts = urlsplit(url) if isinstance(url, str) else url
    segments = [segment for segment in parts.path.split("/") if segment]
    if (parts.hostname or "").lower() in _HOSTS and segments and _COMPANY.match(segments[0]):
        return {"kind": "smartrecruiters", "company": segments[0]}
    return None
