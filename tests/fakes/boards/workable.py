"""Workable widget API payloads for three accounts (shape: README.md in this folder).

``GET /api/v1/widget/accounts/{account}?details=true`` -> ``{"name", "description",
"jobs"}``, every published job in one answer.
"""

from __future__ import annotations

from typing import Any

from tests.fakes.job_boards import JobBoards


def _job(account: str, shortcode: str, title: str, *, employment: str, remote: bool,
         department: str, published: str, locations: list[dict[str, Any]],
         description: str, workplace: str | None = None) -> dict[str, Any]:
    first = locations[0] if locations else {}
    job: dict[str, Any] = {
        "title": title, "shortcode": shortcode, "code": "", "employment_type": employment,
        "telecommuting": remote, "department": department,
        "url": f"https://apply.workable.com/j/{shortcode}",
        "shortlink": f"https://apply.workable.com/j/{shortcode}",
        "application_url": f"https://apply.workable.com/j/{shortcode}/apply",
        "published_on": published, "created_at": published,
        "country": first.get("country", ""), "city": first.get("city", ""),
        "state": first.get("region", ""), "education": "", "experience": "Mid-Senior level",
        "function": "Engineering", "industry": "Computer Software", "locations": locations,
        "description": description,
    }
    if workplace is not None:
        job["workplace_type"] = workplace
    return job


def _loc(city: str, region: str, country: str, code: str, hidden: bool = False) -> dict:
    return {"country": country, "countryCode": code, "city": city, "region": region,
            "hidden": hidden}


ACCOUNTS: dict[str, dict[str, Any]] = {
    "tailspin": {
        "name": "Tailspin Toys", "description": "<p>Toys that fly.</p>",
        "jobs": [
            _job("tailspin", "A1B2C3D4E5", "Backend Engineer (Go)", employment="Full-time",
                 remote=True, department="Engineering", published="2026-10-02",
                 locations=[_loc("Athens", "Attica", "Greece", "GR")],
                 description="<p>Own our order APIs.</p><p>Salary range: \u20ac55,000 -"
                             " \u20ac70,000 per year.</p>"),
            _job("tailspin", "F6G7H8I9J0", "Store Manager", employment="Full-time",
                 remote=False, department="Retail", published="2026-09-29",
                 locations=[_loc("Thessaloniki", "Central Macedonia", "Greece", "GR"),
                            _loc("Patras", "Western Greece", "Greece", "GR"),
                            _loc("Secret Depot", "Attica", "Greece", "GR", hidden=True)],
                 description="<p>Run our flagship stores.</p>"),
        ],
    },
    "wingtip": {
        "name": "Wingtip Studio",
        "jobs": [
            _job("wingtip", "K1L2M3N4O5", "UX Researcher", employment="Contract",
                 remote=False, department="Design", published="2026-10-04",
                 locations=[_loc("Lisbon", "Lisbon", "Portugal", "PT")],
                 description="<p>Interview our users.</p>", workplace="hybrid"),
        ],
    },
    "adventureworks": {
        "name": "Adventure Works",
        "jobs": [
            _job("adventureworks", "P6Q7R8S9T0", "Field Technician", employment="Part-time",
                 remote=False, department="Field Ops", published="2026-10-01",
                 locations=[_loc("Denver", "Colorado", "United States", "US")],
                 description="<p>Install trail sensors on site.</p>", workplace="on_site"),
        ],
    },
}


def widget_path(account: str) -> str:
    return f"/api/v1/widget/accounts/{account}"


def serve(boards: JobBoards) -> None:
    for account, payload in ACCOUNTS.items():
        boards.serve_json(widget_path(account), payload)
