"""Personio job pages (the public XML feed of a company's job page, no key).

``GET https://{company}.jobs.personio.de/xml?language=en`` ->
``<workzag-jobs><position><id/><subcompany/><office/><additionalOffices><office/>
</additionalOffices><department/><recruitingCategory/><name/><jobDescriptions>
<jobDescription><name/><value>HTML</value></jobDescription></jobDescriptions>
<employmentType/><seniority/><schedule/><yearsOfExperience/><keywords/><occupation/>
<occupationCategory/><createdAt/></position></workzag-jobs>``: every published position
in one answer. The feed has no pay field and no workplace field: pay comes only from a
pay statement in the text, remote work only from office names ("Remote", "Home Office").
The XML is read without DTDs, entities or network access.
"""

from __future__ import annotations

import asyncio
import html
import re
from typing import Any
from urllib.parse import SplitResult, quote, urlsplit

from lxml import etree

from backend.domain.postings import Posting
from backend.domain.source_config import PersonioSource
from backend.sources.errors import SourcePayloadInvalid
from backend.sources.html_clean import html_text
from backend.sources.http import get_allowed
from backend.sources.normalize import (
    build_posting,
    clean_text,
    collect,
    description_html,
    employment_type,
    first_text,
    infer_remote,
    iso_utc,
    join_locations,
    salary_from_statement,
)

ROOT_TAG = "workzag-jobs"


def site_base(source: PersonioSource) -> str:
    return source.base_url or f"https://{quote(source.company, safe='')}.jobs.personio.de"


async def fetch_personio(source: PersonioSource) -> list[Posting]:
    url = f"{site_base(source)}/xml?language={source.language}"
    fetched = await get_allowed(url, accept="application/xml, text/xml;q=0.9")
    return await asyncio.to_thread(_read, fetched.body, source)


def _read(body: bytes, source: PersonioSource) -> list[Posting]:
    positions = parse_positions(body)
    return collect(positions, lambda position: to_posting(position, source), family=source.id)


def parse_positions(body: bytes) -> list[dict[str, Any]]:
    """Each ``<position>`` as a dict of its child texts (``additionalOffices`` and
    ``jobDescriptions`` as lists). Not the feed's XML: SourcePayloadInvalid."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                             dtd_validation=False, huge_tree=False, remove_comments=True)
    try:
        root = etree.fromstring(body, parser)
    except (etree.XMLSyntaxError, ValueError) as exc:
        raise SourcePayloadInvalid() from exc
    if root is None or root.tag != ROOT_TAG:
        raise SourcePayloadInvalid()
    return [_position(element) for element in root.iterchildren("position")]


def _text(element: Any) -> str | None:
    return element.text if element is not None and isinstance(element.text, str) else None


def _position(element: Any) -> dict[str, Any]:
    position: dict[str, Any] = {}
    for child in element.iterchildren():
        if not isinstance(child.tag, str):
            continue
        if child.tag == "additionalOffices":
            position["additionalOffices"] = [_text(office) for office in child]
        elif child.tag == "jobDescriptions":
            position["jobDescriptions"] = [
                (_text(part.find("name")), _text(part.find("value"))) for part in child]
        else:
            position[child.tag] = _text(child)
    return position


def _description(position: dict) -> str | None:
    parts: list[str] = []
    for name, value in position.get("jobDescriptions") or []:
        if not clean_text(value):
            continue
        if clean_text(name):
            parts.append(f"<h3>{html.escape(clean_text(name) or '')}</h3>")
        parts.append(value)
    return description_html("\n".join(parts)) if parts else None


def to_posting(position: dict, source: PersonioSource) -> Posting:
    title = clean_text(position.get("name"))
    location = join_locations(position.get("office"), position.get("additionalOffices") or [])
    description = _description(position)
    job_id = clean_text(position.get("id"))
    url = f"{site_base(source)}/job/{quote(job_id or '', safe='')}?language={source.language}"
    return build_posting(
        source_key=job_id,
        url=url if job_id else None,
        apply_url=f"{url}#apply" if job_id else None,
        title=title,
        company=first_text(source.company_name, position.get("subcompany"), source.company),
        location=location,
        remote=infer_remote(location, title),
        salary=salary_from_statement(html_text(description)),
        employment=employment_type([position.get("schedule"), position.get("employmentType")]),
        posted_at=iso_utc(position.get("createdAt")),
        description=description,
        tags=[position.get("department"), position.get("recruitingCategory")],
    )


_HOST = re.compile(r"^(?P<company>[a-z0-9][a-z0-9-]{0,62})\.jobs\.personio\.(?P<tld>de|com)$")


def resolve_link(url: SplitResult | str) -> dict | None:
    """``https://acme.jobs.personio.de/`` (or ``.com``, a job link under it too)."""
    parts = urlsplit(url) if isinstance(url, str) else url
    match = _HOST.match((parts.hostname or "").lower())
    if not match:
        return None
    params = {"kind": "personio", "company": match.group("company")}
    if match.group("tld") == "com":
        params["baseUrl"] = f"https://{match.group('company')}.jobs.personio.com"
    return params
