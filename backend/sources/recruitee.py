"""Recruitee careers sites (public Careers Site API, no key).

``GET https://{company}.recruitee.com/api/offers/`` -> ``{"offers": [{"id", "slug",
"title", "description", "requirements" (HTML), "location", "city", "state_name",
"country", "locations": [{"city", "state", "country"}], "remote", "hybrid", "on_site",
"careers_url", "careers_apply_url", "company_name", "department",
"employment_type_code", "published_at": "2026-10-02 09:15:22 UTC", "salary": {"min",
"max", "currency", "period"}, "status"}]}``: every published offer in one answer. A
salary whose amounts are null is one the employer does not show.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import SplitResult, quote, urlsplit

from backend.domain.postings import Posting, RemoteMode, Salary
from backend.domain.source_config import RecruiteeSource
from backend.sources.errors import SourcePayloadInvalid
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
    make_salary,
)


def site_base(source: RecruiteeSource) -> str:
    return source.base_url or f"https://{quote(source.company, safe='')}.recruitee.com"


async def fetch_recruitee(source: RecruiteeSource) -> list[Posting]:
    payload = await get_allowed_json(f"{site_base(source)}/api/offers/")
    offers = payload.get("offers") if isinstance(payload, dict) else None
    if not isinstance(offers, list):
        raise SourcePayloadInvalid()
    published = [offer for offer in offers
                 if not (isinstance(offer, dict) and offer.get("status") not in (None,
                                                                                "published"))]
    return await collect_off_loop(published, lambda offer: to_posting(offer, source),
                                  family=source.id)


def _place(*parts: Any) -> str | None:
    return ", ".join(text for part in parts if (text := clean_text(part))) or None


def _locations(offer: dict) -> str | None:
    listed = offer.get("locations")
    places = [_place(loc.get("city"), loc.get("state"), loc.get("country"))
              for loc in listed if isinstance(loc, dict)] if isinstance(listed, list) else []
    return join_locations(places) or first_text(offer.get("location"), _place(
        offer.get("city"), offer.get("state_name"), offer.get("country")))


def _remote(offer: dict, location: str | None, title: str | None) -> RemoteMode:
    # The three flags are the employer's own answer; a remote-or-on-site offer is hybrid.
    if offer.get("hybrid") is True or (offer.get("remote") is True
                                       and offer.get("on_site") is True):
        return "hybrid"
    if offer.get("remote") is True:
        return "remote"
    if offer.get("on_site") is True:
        return "onsite"
    return infer_remote(location, title)


def _salary(offer: dict) -> Salary | None:
    salary = offer.get("salary")
    if not isinstance(salary, dict):
        return None
    return make_salary(salary.get("min"), salary.get("max"), salary.get("currency"),
                       salary.get("period"))


def to_posting(offer: dict, source: RecruiteeSource) -> Posting:
    title = clean_text(offer.get("title"))
    location = _locations(offer)
    parts = [offer.get(key) for key in ("description", "requirements")
             if isinstance(offer.get(key), str) and offer.get(key).strip()]
    return build_posting(
        source_key=offer.get("id"),
        url=offer.get("careers_url"),
        apply_url=offer.get("careers_apply_url"),
        title=title,
        company=first_text(source.company_name, offer.get("company_name"), source.company),
        location=location,
        remote=_remote(offer, location, title),
        salary=_salary(offer),
        employment=employment_type(offer.get("employment_type_code")),
        posted_at=iso_utc(offer.get("published_at") or offer.get("created_at")),
        description=description_html("\n".join(parts)) if parts else None,
        tags=[offer.get("department"), *(offer.get("tags") or [])],
    )


_HOST = re.compile(r"^(?P<company>[a-z0-9][a-z0-9-]{0,62})\.recruitee\.com$")


def resolve_link(url: SplitResult | str) -> dict | None:
    """``https://acme.recruitee.com/`` (an offer link under it too) -> the company."""
    parts = urlsplit(url) if isinstance(url, str) else url
    match = _HOST.match((parts.hostname or "").lower())
    if match and match.group("company") not in ("www", "app", "api", "support"):
        return {"kind": "recruitee", "company": match.group("company")}
    return None
