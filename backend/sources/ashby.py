"""Ashby job boards (public Job Postings API, no key).

``GET {baseUrl}/posting-api/job-board/{name}?includeCompensation=true`` ->
``{"apiVersion": "1", "jobs": [{"id", "title", "department", "team", "employmentType",
"location", "isListed", "isRemote", "workplaceType", "publishedAt", "jobUrl", "applyUrl",
"descriptionHtml", "descriptionPlain", "secondaryLocations": [{"location"}],
"shouldDisplayCompensationOnJobPostings", "compensation": {"summaryComponents",
"compensationTiers": [{"components"}], "scrapeableCompensationSalarySummary"}}]}``.

A board that opts out of showing pay (``shouldDisplayCompensationOnJobPostings: false``)
still sends the numbers with ``includeCompensation``: they are never read.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from backend.domain.postings import Posting, RemoteMode, Salary
from backend.domain.source_config import AshbySource
from backend.sources.http import get_json
from backend.sources.normalize import (
    build_posting,
    collect_off_loop,
    description_html,
    employment_type,
    infer_remote,
    iso_utc,
    jobs_list,
    join_locations,
    make_salary,
    parse_salary_text,
    remote_from_explicit,
)


def board_url(source: AshbySource) -> str:
    name = quote(source.board_name, safe="")
    return f"{source.base_url}/posting-api/job-board/{name}?includeCompensation=true"


async def fetch_ashby(source: AshbySource) -> list[Posting]:
    payload = await get_json(board_url(source))
    jobs = jobs_list(payload)
    listed = [job for job in jobs if not (isinstance(job, dict) and job.get("isListed") is False)]
    company = source.company_name or source.board_name
    return await collect_off_loop(listed, lambda job: to_posting(job, company), family="ashby")


def _salary_component(components: Any) -> Salary | None:
    if not isinstance(components, list):
        return None
    for component in components:
        if isinstance(component, dict) and component.get("compensationType") == "Salary":
            salary = make_salary(component.get("minValue"), component.get("maxValue"),
                                 component.get("currencyCode"), component.get("interval"))
            if salary:
                return salary
    return None


def _salary(job: dict) -> Salary | None:
    if job.get("shouldDisplayCompensationOnJobPostings") is False:
        return None  # the employer keeps the range off its postings
    compensation = job.get("compensation")
    if not isinstance(compensation, dict):
        return None
    salary = _salary_component(compensation.get("summaryComponents"))
    tiers = compensation.get("compensationTiers")
    for tier in tiers if isinstance(tiers, list) else []:
        if salary:
            break
        if isinstance(tier, dict):
            salary = _salary_component(tier.get("components"))
    return salary or parse_salary_text(compensation.get("scrapeableCompensationSalarySummary"))


def _remote(job: dict, location: str | None, title: str | None) -> RemoteMode:
    explicit = remote_from_explicit(job.get("workplaceType"))
    if explicit:
        return explicit
    if job.get("isRemote") is True:
        return "remote"
    return infer_remote(location, title)


def _locations(job: dict) -> str | None:
    secondary = job.get("secondaryLocations")
    others = [item.get("location") for item in secondary if isinstance(item, dict)] if (
        isinstance(secondary, list)) else []
    return join_locations(job.get("location"), others)


def to_posting(job: dict, company: str) -> Posting:
    location = _locations(job)
    title = job.get("title") if isinstance(job.get("title"), str) else None
    return build_posting(
        source_key=job.get("id"),
        url=job.get("jobUrl"),
        apply_url=job.get("applyUrl"),
        title=title,
        company=company,
        location=location,
        remote=_remote(job, location, title),
        salary=_salary(job),
        employment=employment_type(job.get("employmentType")),
        posted_at=iso_utc(job.get("publishedAt")),
        description=description_html(job.get("descriptionHtml"))
        or description_html(job.get("descriptionPlain")),
        tags=[job.get("department"), job.get("team")],
    )
