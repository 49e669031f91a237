"""Greenhouse job boards (public Job Board API, no key).

``GET {baseUrl}/v1/boards/{token}/jobs?content=true`` ->
``{"jobs": [{"id", "title", "absolute_url", "location": {"name"}, "content", "updated_at",
"first_published"?, "departments", "offices", "metadata"}], "meta": {"total"}}``.
``content`` is entity-escaped HTML (``&lt;p&gt;``): unescaped, then sanitized.

Each job carries its own ``company_name`` (the board token is only a slug). Many boards
say the workplace in a custom metadata field ("Workplace Type": "Remote") while the
location is just a country ("Canada"): that field wins over the location text.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from backend.domain.postings import Posting, RemoteMode, Salary
from backend.domain.source_config import GreenhouseSource
from backend.sources.html_clean import html_text
from backend.sources.http import get_json
from backend.sources.normalize import (
    build_posting,
    collect_off_loop,
    description_html,
    employment_type,
    first_text,
    infer_remote,
    iso_utc,
    jobs_list,
    make_salary,
    parse_salary_text,
    remote_from_words,
    salary_from_statement,
)

_SALARY_FIELD = re.compile(r"salary|compensation|pay\b|pay range|wage", re.IGNORECASE)
_EMPLOYMENT_FIELD = re.compile(r"employment|job type|commitment|time type", re.IGNORECASE)
_WORKPLACE_FIELD = re.compile(
    r"workplace|work place|remote|location type|work (?:type|arrangement|model|setting)|"
    r"office (?:type|policy)", re.IGNORECASE,
)


def jobs_url(source: GreenhouseSource) -> str:
    return f"{source.base_url}/v1/boards/{quote(source.board_token, safe='')}/jobs?content=true"


async def fetch_greenhouse(source: GreenhouseSource) -> list[Posting]:
    payload = await get_json(jobs_url(source))
    jobs = jobs_list(payload)
    return await collect_off_loop(jobs, lambda job: to_posting(job, source), family="greenhouse")


def _names(items: Any) -> list[str]:
    if not isinstance(items, list):
        return []
    return [item["name"] for item in items if isinstance(item, dict)
            and isinstance(item.get("name"), str)]


def _metadata(job: dict) -> list[dict]:
    items = job.get("metadata")
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def _salary(job: dict) -> Salary | None:
    for field in _metadata(job):
        if not _SALARY_FIELD.search(str(field.get("name") or "")):
            continue
        value = field.get("value")
        if isinstance(value, dict):  # value_type "currency_range"
            # The field does not say per what; the name sometimes does ("Hourly pay").
            salary = make_salary(value.get("min_value"), value.get("max_value"),
                                 value.get("unit") or value.get("currency"),
                                 "hourly" if "hour" in str(field.get("name")).lower() else None)
        elif isinstance(value, str):
            salary = parse_salary_text(value)
        else:
            salary = None
        if salary:
            return salary
    return None


def _employment(job: dict) -> str | None:
    for field in _metadata(job):
        if _EMPLOYMENT_FIELD.search(str(field.get("name") or "")):
            kind = employment_type(field.get("value"))
            if kind:
                return kind
    return None


def _metadata_text(value: Any) -> str | None:
    if isinstance(value, list):
        return next((v for v in value if isinstance(v, str)), None)
    return value if isinstance(value, str) else None


def _workplace(job: dict) -> RemoteMode | None:
    for field in _metadata(job):
        if _WORKPLACE_FIELD.search(str(field.get("name") or "")):
            mode = remote_from_words(_metadata_text(field.get("value")))
            if mode:
                return mode
    return None


def to_posting(job: dict, source: GreenhouseSource) -> Posting:
    location = job.get("location")
    location_name = location.get("name") if isinstance(location, dict) else None
    offices = _names(job.get("offices"))
    title = job.get("title")
    remote = _workplace(job) or infer_remote(
        location_name, title if isinstance(title, str) else None, *offices)
    description = description_html(job.get("content"), escaped=True)
    return build_posting(
        source_key=job.get("id"),
        url=job.get("absolute_url"),
        title=title,
        company=first_text(source.company_name, job.get("company_name"), source.board_token),
        location=location_name,
        remote=remote,
        # The pay field first; else the pay-transparency block the board writes into the
        # description ("Pay range $128,000 - $160,000 USD"), when the employer shows one.
        salary=_salary(job) or salary_from_statement(html_text(description)),
        employment=_employment(job),
        posted_at=iso_utc(job.get("first_published") or job.get("updated_at")),
        description=description,
        tags=_names(job.get("departments")),
    )
