"""Lever sites (public Postings API, no key).

``GET {baseUrl}/v0/postings/{company}?mode=json`` -> ``[{"id", "text", "hostedUrl",
"applyUrl", "categories": {"location", "commitment", "team", "department", "allLocations"},
"workplaceType", "description", "descriptionPlain", "lists": [{"text", "content"}],
"additional", "salaryRange": {"min", "max", "currency", "interval"}, "createdAt"}]``.
"""

from __future__ import annotations

import html
import re
from typing import Any
from urllib.parse import quote

from backend.domain.postings import Posting, Salary
from backend.domain.source_config import LeverSource
from backend.sources.errors import SourcePayloadInvalid
from backend.sources.http import get_json
from backend.sources.normalize import (
    build_posting,
    collect_off_loop,
    description_html,
    employment_type,
    infer_remote,
    iso_utc,
    join_locations,
    make_salary,
    parse_salary_text,
    remote_from_explicit,
)

_HOLDS_LIST = re.compile(r"<\s*(?:ul|ol)\b", re.IGNORECASE)


def postings_url(source: LeverSource) -> str:
    return f"{source.base_url}/v0/postings/{quote(source.company, safe='')}?mode=json"


async def fetch_lever(source: LeverSource) -> list[Posting]:
    payload = await get_json(postings_url(source))
    if not isinstance(payload, list):  # an error object, or a page that is not the API
        raise SourcePayloadInvalid()
    company = source.company_name or source.company
    return await collect_off_loop(payload, lambda item: to_posting(item, company), family="lever")


def _description(item: dict) -> str | None:
    parts: list[str] = []
    if isinstance(item.get("description"), str):
        parts.append(item["description"])
    for section in item.get("lists") or []:
        if not isinstance(section, dict):
            continue
        heading = section.get("text")
        if isinstance(heading, str) and heading.strip():
            parts.append(f"<h3>{html.escape(heading.strip())}</h3>")
        content = section.get("content")
        if isinstance(content, str):  # usually bare <li> items, sometimes a whole list
            parts.append(content if _HOLDS_LIST.search(content) else f"<ul>{content}</ul>")
    if isinstance(item.get("additional"), str):
        parts.append(item["additional"])
    merged = "\n".join(parts)
    if merged.strip():
        return description_html(merged)
    return description_html(item.get("descriptionPlain"))


def _location(categories: dict) -> str | None:
    """The primary location first, then every other one of ``allLocations``."""
    every = categories.get("allLocations")
    return join_locations(categories.get("location"), every if isinstance(every, list) else [])


def _salary(item: dict) -> Salary | None:
    salary_range = item.get("salaryRange")
    if isinstance(salary_range, dict):
        salary = make_salary(salary_range.get("min"), salary_range.get("max"),
                             salary_range.get("currency"), salary_range.get("interval"))
        if salary:
            return salary
    return parse_salary_text(item.get("salaryDescriptionPlain"))


def to_posting(item: dict, company: str) -> Posting:
    raw_categories: Any = item.get("categories")
    categories = raw_categories if isinstance(raw_categories, dict) else {}
    location = _location(categories)
    title = item.get("text")
    remote = remote_from_explicit(item.get("workplaceType")) or infer_remote(
        location, title if isinstance(title, str) else None
    )
    return build_posting(
        source_key=item.get("id"),
        url=item.get("hostedUrl"),
        apply_url=item.get("applyUrl"),
        title=title,
        company=company,
        location=location,
        remote=remote,
        salary=_salary(item),
        employment=employment_type(categories.get("commitment")),
        posted_at=iso_utc(item.get("createdAt")),
        description=_description(item),
        tags=[categories.get("department"), categories.get("team")],
    )
