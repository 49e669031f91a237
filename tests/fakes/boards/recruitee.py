"""Recruitee Careers Site API payloads for three companies (shape: README.md here).

``GET https://{company}.recruitee.com/api/offers/`` -> ``{"offers": [...]}``. The
loopback server serves each company under ``/{company}/api/offers/`` (one host for all).
"""

from __future__ import annotations

from typing import Any

from tests.fakes.job_boards import JobBoards


def _offer(company: str, company_name: str, offer_id: int, slug: str, title: str, *,
           remote: bool, hybrid: bool, on_site: bool, employment: str,
           locations: list[dict[str, Any]], salary: dict[str, Any], published: str,
           description: str, requirements: str, department: str,
           status: str = "published") -> dict[str, Any]:
    first = locations[0] if locations else {}
    url = f"https://{company}.recruitee.com/o/{slug}"
    return {
        "id": offer_id, "slug": slug, "title": title, "status": status,
        "description": description, "requirements": requirements,
        "location": ", ".join(v for v in (first.get("city"), first.get("country")) if v),
        "city": first.get("city", ""), "state_name": first.get("state", ""),
        "country": first.get("country", ""), "country_code": first.get("country_code", ""),
        "locations": locations, "remote": remote, "hybrid": hybrid, "on_site": on_site,
        "careers_url": url, "careers_apply_url": f"{url}/c/new",
        "company_name": company_name, "department": department,
        "employment_type_code": employment, "category_code": "it",
        "published_at": published, "created_at": published, "salary": salary,
        "min_hours": 32, "max_hours": 40, "tags": ["Python"] if "Engineer" in title else [],
        "options_cv": "required", "options_cover_letter": "optional",
    }


def _salary(low: str | None, high: str | None, currency: str | None = "EUR",
            period: str | None = "year") -> dict[str, Any]:
    return {"min": low, "max": high, "currency": currency, "period": period}


def _loc(city: str, country: str, code: str, state: str = "") -> dict[str, Any]:
    return {"city": city, "country": country, "country_code": code, "state": state}


COMPANIES: dict[str, dict[str, Any]] = {
    "lucerne": {"offers": [
        _offer("lucerne", "Lucerne Publishing", 1001, "python-engineer", "Python Engineer",
               remote=True, hybrid=False, on_site=False, employment="fulltime_permanent",
               locations=[_loc("Amsterdam", "Netherlands", "NL")],
               salary=_salary("60000.0", "75000.0"), published="2026-10-02 09:15:22 UTC",
               description="<p>Ship our editorial tools.</p>",
               requirements="<ul><li>Django</li></ul>", department="Engineering"),
        _offer("lucerne", "Lucerne Publishing", 1002, "editor-in-chief", "Editor in Chief",
               remote=True, hybrid=False, on_site=True, employment="fulltime",
               locations=[_loc("Utrecht", "Netherlands", "NL"), _loc("Ghent", "Belgium", "BE")],
               salary=_salary(None, None, None, None), published="2026-09-30 12:00:00 UTC",
               description="<p>Lead the newsroom.</p>", requirements="",
               department="Editorial"),
        _offer("lucerne", "Lucerne Publishing", 1003, "draft-role", "Draft Role",
               remote=False, hybrid=False, on_site=True, employment="fulltime",
               locations=[], salary=_salary(None, None), published="2026-09-30 12:00:00 UTC",
               description="<p>Not public yet.</p>", requirements="", department="",
               status="draft"),
    ]},
    "proseware": {"offers": [
        _offer("proseware", "Proseware", 2001, "warehouse-lead", "Warehouse Lead",
               remote=False, hybrid=False, on_site=True, employment="parttime",
               locations=[_loc("Hamburg", "Germany", "DE", "Hamburg")],
               salary=_salary("18", "21", "EUR", "hour"), published="2026-10-03 07:00:00 UTC",
               description="<p>Lead the early shift.</p>", requirements="",
               department="Logistics"),
    ]},
    "woodgrove": {"offers": [
        _offer("woodgrove", "Woodgrove Bank", 3001, "risk-analyst", "Risk Analyst",
               remote=False, hybrid=True, on_site=False, employment="contract",
               locations=[_loc("Warsaw", "Poland", "PL")],
               salary=_salary(None, None), published="2026-10-04 10:30:00 UTC",
               description="<p>Model credit risk.</p>", requirements="<p>SQL.</p>",
               department="Risk"),
    ]},
}


def offers_path(company: str) -> str:
    return f"/{company}/api/offers/"


def serve(boards: JobBoards) -> None:
    for company, payload in COMPANIES.items():
        boards.serve_json(offers_path(company), payload)
