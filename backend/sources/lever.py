"""Lever sites (public Postings API, no key).

``GET {baseUrl}/v0/postings/{company}?mode=json`` -> ``[{"id", "text", "hostedUrl",
"applyUrl", "categories": {"location", "commitment", "team", "department", "allLocations"},
"workplaceType", "description", "descriptionPlain", "lists": [{"text", "content"}],
"additional", "salaryRange": {"min", "max", "currency", "interval"}, "createdAt"}]``.
"""

from __future__ import annotations

import html
from typing import Any
from urllib.parse import quote

from backend.domain.postings import Posting, Salary
from backend.sources.config import LeverSource
from backend.sources.errors import SourcePayloadInvalid
from backend.sources.http import get_json
from backend.sources.normalize import (
    build_posting,
    collect,
    description_html,
    employment_type,
    first_text,
    infer_remote,
    iso_utc,
    make_salary,
    parse_salary_text,
    remote_from_explicit,
)


def postings_url(source: LeverSource) -> str:
    return f"{source.base_url}/v0/postings/{quote(source.company, safe='')}?mode=json"


async def fetch_lever(source: LeverSource) -> list[Posting]:
    payload = await get_json(postings_url(source))
    if not isinstance(payload, list):  # an error object, or a page that is not the API
        raise SourcePayloadInvalid()
    company = source.company_name or source.company
    return collect(payload, lambda item: to_posting(item, company), family="lever")


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
        if isinstance(section.get("content"), str):  # bare <li> items
            parts.append(f"<ul>{section['content']}</ul>")
    if isinstance(item.get("additional"), str):
        parts.append(item["additional"])
    merged = "\n".join(parts)
    if merged.strip():
        return description_html(merged)
    return description_html(item.get("descriptionPlain"))


def _location(categories: dict) -> str | None:
    every = categories.get("allLocations")
    joined = (
        "; ".join(loc for loc in every if isinstance(loc, str))
        if isinstance(every, list) else None
    )
    return first_text(categories.get("location"), joined)


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
