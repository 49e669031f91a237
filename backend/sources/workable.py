"""Workable accounts (the public careers widget API, no key).

``GET {baseUrl}/api/v1/widget/accounts/{account}?details=true`` -> ``{"name",
"description", "jobs": [{"title", "shortcode", "code", "employment_type", "telecommuting",
"department", "url", "shortlink", "application_url", "published_on", "created_at",
"country", "city", "state", "locations": [{"country", "countryCode", "city", "region",
"hidden"}], "description"}]}``: every published job in one answer (the widget has no
pages). ``telecommuting`` is the remote flag; newer accounts also say ``workplace_type``
(``on_site`` / ``hybrid`` / ``remote``). Pay appears only in the description's own pay
statement.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import SplitResult, quote, urlsplit

from backend.domain.postings import Posting, RemoteMode
from backend.domain.source_config import WorkableSource
from backend.sources.errors import SourcePayloadInvalid
from backend.sources.html_clean import html_text
from backend.sources.http import get_allowed_json
from backend.sources.normalize import (
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


def widget_url(source: WorkableSource) -> str:
    account = quote(source.account, safe="")
    return f"{source.base_url}/api/v1/widget/accounts/{account}?details=true"


async def fetch_workable(source: WorkableSource) -> list[Posting]:
    payload = await get_allowed_json(widget_url(source))
    jobs = payload.get("jobs") if isinstance(payload, dict) else None
    if not isinstance(jobs, list):
        raise SourcePayloadInvalid()
    account_name = clean_text(payload.get("name"))
    company = first_text(source.company_name, account_name, source.account)
    return await collect_off_loop(jobs, lambda job: to_posting(job, company),
                                  family=source.id)


def _place(city: Any, region: Any, country: Any) -> str | None:
    return ", ".join(text for text in (clean_text(city), clean_text(region), clean_text(country))
                     if text) or None


def _locations(job: dict) -> str | None:
    listed = job.get("locations")
    places = [_place(loc.get("city"), loc.get("region"), loc.get("country"))
              for loc in listed if isinstance(loc, dict) and not loc.get("hidden")] if (
        isinstance(listed, list)) else []
    return join_locations(places) or _place(job.get("city"), job.get("state"), job.get("country"))


def _remote(job: dict, location: str | None, title: str | None) -> RemoteMode:
    explicit = remote_from_words(job.get("workplace_type"))
    if explicit:
        return explicit
    if job.get("telecommuting") is True:
        return "remote"
    return infer_remote(location, title)


def to_posting(job: dict, company: str | None) -> Posting:
    title = clean_text(job.get("title"))
    location = _locations(job)
    description = description_html(job.get("description"))
    return build_posting(
        source_key=job.get("shortcode"),
        url=job.get("url") or job.get("shortlink"),
        apply_url=job.get("application_url"),
        title=title,
        company=company,
        location=location,
        remote=_remote(job, location, title),
        salary=salary_from_statement(html_text(description)),
        employment=employment_type(job.get("employment_type")),
        posted_at=iso_utc(job.get("published_on") or job.get("created_at")),
        description=description,
        tags=[job.get("department"), job.get("function")],
    )


_ACCOUNT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
_RESERVED = {"www", "apply", "jobs", "resources", "help", "api"}


def resolve_link(url: SplitResult | str) -> dict | None:
    """``https://apply.workable.com/acme/`` (a job link under it too) or the older
    ``https://acme.workable.com/`` -> the account."""
    parts = urlsplit(url) if isinstance(url, str) else url
    host = (parts.hostname or "").lower()
    segments = [segment for segment in parts.path.split("/") if segment]
    if host == "apply.workable.com" and segments and segments[0] not in ("j", "api") and (
            _ACCOUNT.match(segments[0])):
        return {"kind": "workable", "account": segments[0]}
    if host.endswith(".workable.com") and host.count(".") == 2:
        account = host.split(".")[0]
        if account not in _RESERVED and _ACCOUNT.match(account):
            return {"kind": "workable", "account": account}
    return None
