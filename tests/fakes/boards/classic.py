"""More real-shape boards for the first families (Greenhouse, Lever, Ashby, job feeds),
carrying the data defects of issue 16 (shape origins: README.md in this folder). With the
boards of tests/fakes/job_boards.py each family has three.
"""

from __future__ import annotations

import html
from typing import Any

from tests.fakes.job_boards import JobBoards, Reply

# --------------------------------------------------------------------------- Greenhouse

_PAY_BLOCK = (
    '<div class="content-pay-transparency"><div class="pay-input"><div class="title">'
    'Pay range</div><div class="pay-range"><span>$128,000</span><span class="divider">'
    "&mdash;</span><span>$160,000 USD</span></div></div></div>"
)


def _gh_job(job_id: int, token: str, company: str, title: str, location: str,
            workplace: str | None, content: str, **extra: Any) -> dict[str, Any]:
    metadata = [{"id": 4001, "name": "Workplace Type", "value": workplace,
                 "value_type": "single_select"}] if workplace is not None else None
    return {
        "absolute_url": f"https://job-boards.greenhouse.io/{token}/jobs/{job_id}",
        "data_compliance": [{"type": "gdpr", "requires_consent": False,
                             "requires_processing_consent": False,
                             "requires_retention_consent": False, "retention_period": None}],
        "internal_job_id": job_id - 1000, "location": {"name": location},
        "metadata": metadata, "id": job_id, "updated_at": "2026-10-01T11:22:33-04:00",
        "requisition_id": f"R{job_id % 1000}", "title": title, "company_name": company,
        "first_published": "2026-09-25T09:00:00-04:00", "language": "en",
        "content": html.escape(content), "departments": [{"id": 77, "name": "Engineering",
                                                         "child_ids": [], "parent_id": None}],
        "offices": [{"id": 88, "name": location, "location": location, "child_ids": [],
                     "parent_id": None}],
        **extra,
    }


GREENHOUSE_BOARDS: dict[str, dict[str, Any]] = {
    # Country-only locations, the workplace in metadata (the "all remote came out
    # on-site" board), the company in each job.
    "nimbuslabs": {"jobs": [
        _gh_job(7027885, "nimbuslabs", "Nimbus Labs", "Senior Backend Developer (Node.js)",
                "Canada", "Remote", "<p>Node.js, TypeScript, PostgreSQL.</p>" + _PAY_BLOCK),
        _gh_job(7027886, "nimbuslabs", "Nimbus Labs", "QA Automation Engineer",
                "United States", "Remote", "<p>Playwright and CI.</p>"),
        _gh_job(7027887, "nimbuslabs", "Nimbus Labs", "Delivery Manager", "Mexico",
                "Hybrid", "<p>Two days a week in Guadalajara.</p>"),
    ], "meta": {"total": 3}},
    # A board whose jobs carry no workplace field: the location text decides.
    "orbitfoods": {"jobs": [
        _gh_job(5501001, "orbitfoods", "Orbit Foods, Inc.", "Line Cook",
                "Brooklyn, NY", None, "<p>Prep and line work. Pay: $21 - $24 per hour.</p>",
                metadata=[{"id": 9, "name": "Employment Type", "value": "Part-time",
                           "value_type": "single_select"}]),
        _gh_job(5501002, "orbitfoods", "Orbit Foods, Inc.", "Data Analyst",
                "Remote - US", None, "<p>Dashboards for the kitchen.</p>"),
    ], "meta": {"total": 2}},
}

# --------------------------------------------------------------------------- Lever

_LEVER_CREATED = 1790500000000


def _lever(posting_id: str, site: str, title: str, *, location: str, all_locations: list[str],
           workplace: str, commitment: str, lists: list[dict[str, str]],
           salary: dict[str, Any] | None = None) -> dict[str, Any]:
    url = f"https://jobs.lever.co/{site}/{posting_id}"
    posting: dict[str, Any] = {
        "additional": "<div>We hire across time zones.</div>",
        "additionalPlain": "We hire across time zones.",
        "categories": {"commitment": commitment, "department": "Product",
                       "location": location, "team": "Platform",
                       "allLocations": all_locations},
        "createdAt": _LEVER_CREATED, "descriptionPlain": f"{title} at {site}.",
        "description": f"<div>{title} at {site}.</div>", "id": posting_id, "lists": lists,
        "text": title, "country": "DE", "workplaceType": workplace, "opening": "",
        "openingPlain": "", "descriptionBody": "", "descriptionBodyPlain": "",
        "hostedUrl": url, "applyUrl": f"{url}/apply",
    }
    if salary is not None:
        posting["salaryRange"] = salary
        posting["salaryDescription"] = "<div>Base salary</div>"
        posting["salaryDescriptionPlain"] = "Base salary"
    return posting


LEVER_SITES: dict[str, list[dict[str, Any]]] = {
    # List content that is already a whole <ul>, and several locations beside the primary.
    "contoso": [
        _lever("8a1f0c2e-0001-4c1b-9d7e-1b2c3d4e5f60", "contoso", "Platform Engineer",
               location="Berlin", all_locations=["Berlin", "Munich", "Hamburg"],
               workplace="hybrid", commitment="Full-time",
               lists=[{"text": "Responsibilities",
                       "content": "<ul><li>Run Kubernetes</li><li>Write Terraform</li></ul>"},
                      {"text": "Requirements", "content": "<li>Linux</li>"}],
               salary={"currency": "EUR", "interval": "per-year-salary", "min": 65000,
                       "max": 80000}),
    ],
    "fourthcoffee": [
        _lever("8a1f0c2e-0002-4c1b-9d7e-1b2c3d4e5f61", "fourthcoffee", "Barista Trainer",
               location="Seattle, WA", all_locations=["Seattle, WA", "Portland, OR"],
               workplace="on-site", commitment="Part-time", lists=[]),
    ],
}

# --------------------------------------------------------------------------- Ashby


def _ashby(job_id: str, board: str, title: str, *, location: str, secondary: list[str],
           workplace: str | None, remote: bool, show_pay: bool, employment: str,
           compensation: dict[str, Any] | None) -> dict[str, Any]:
    return {
        "id": job_id, "title": title, "department": "Engineering", "team": "Core",
        "employmentType": employment, "location": location,
        "secondaryLocations": [{"location": name, "address": {"postalAddress": {
            "addressLocality": name.split(",")[0]}}} for name in secondary],
        "publishedAt": "2026-10-02T12:00:00.000+00:00", "isListed": True, "isRemote": remote,
        "workplaceType": workplace, "address": {"postalAddress": {
            "addressLocality": location.split(",")[0]}},
        "jobUrl": f"https://jobs.ashbyhq.com/{board}/{job_id}",
        "applyUrl": f"https://jobs.ashbyhq.com/{board}/{job_id}/application",
        "descriptionHtml": f"<p>{title} on the {board} team.</p>",
        "descriptionPlain": f"{title} on the {board} team.",
        "shouldDisplayCompensationOnJobPostings": show_pay,
        **({"compensation": compensation} if compensation is not None else {}),
    }


def _pay(low: int, high: int, currency: str) -> dict[str, Any]:
    component = {"id": "s1", "summary": f"{currency} {low} - {high}", "compensationType": "Salary",
                 "interval": "1 YEAR", "currencyCode": currency, "minValue": low,
                 "maxValue": high}
    return {"compensationTierSummary": f"{currency} {low}-{high}",
            "scrapeableCompensationSalarySummary": f"{currency} {low} - {high}",
            "compensationTiers": [{"id": "t1", "title": "Zone A", "components": [component]}],
            "summaryComponents": [component]}


ASHBY_BOARDS: dict[str, dict[str, Any]] = {
    # The employer hides pay, but includeCompensation still sends it.
    "quietpay": {"apiVersion": "1", "jobs": [
        _ashby("3f9e0d1c-0001-4a2b-8c3d-4e5f6a7b8c90", "quietpay", "Staff Engineer",
               location="San Francisco, CA", secondary=["New York, NY", "Seattle, WA"],
               workplace="Hybrid", remote=False, show_pay=False, employment="FullTime",
               compensation=_pay(210000, 260000, "USD")),
    ]},
    "openpay": {"apiVersion": "1", "jobs": [
        _ashby("3f9e0d1c-0002-4a2b-8c3d-4e5f6a7b8c91", "openpay", "Support Engineer",
               location="Dublin", secondary=[], workplace="OnSite", remote=False,
               show_pay=True, employment="PartTime", compensation=_pay(42000, 50000, "EUR")),
        _ashby("3f9e0d1c-0003-4a2b-8c3d-4e5f6a7b8c92", "openpay", "Developer Advocate",
               location="Remote (Europe)", secondary=["London, UK"], workplace="Remote",
               remote=True, show_pay=True, employment="Contract", compensation=None),
    ]},
}

# --------------------------------------------------------------------------- feeds

COMPANY_TITLE_FEED = """<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:media="http://search.yahoo.com/mrss/" xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel>
    <title>Remote Work Board: Programming Jobs</title>
    <link>https://remoteboard.example/categories/remote-programming-jobs</link>
    <description>Latest programming jobs</description>
    <item>
      <title>Blue Yonder Airlines: Senior Rails Developer</title>
      <region>USA Only</region>
      <country>US</country>
      <category>Back-End Programming</category>
      <type>Full-Time</type>
      <description>&lt;p&gt;Rails 7, Postgres, Sidekiq. Salary: $140,000 - $170,000.&lt;/p&gt;</description>
      <pubDate>Mon, 05 Oct 2026 14:02:11 +0000</pubDate>
      <guid>https://remoteboard.example/remote-jobs/blue-yonder-airlines-senior-rails-developer</guid>
      <link>https://remoteboard.example/remote-jobs/blue-yonder-airlines-senior-rails-developer</link>
    </item>
    <item>
      <title>Coho Winery: Full-Stack Engineer: Payments</title>
      <region>Anywhere in the World</region>
      <category>Full-Stack Programming</category>
      <type>Contract</type>
      <description>&lt;p&gt;Next.js and Stripe.&lt;/p&gt;</description>
      <pubDate>Sun, 04 Oct 2026 08:00:00 +0000</pubDate>
      <guid>https://remoteboard.example/remote-jobs/coho-winery-full-stack-engineer</guid>
      <link>https://remoteboard.example/remote-jobs/coho-winery-full-stack-engineer</link>
    </item>
    <item>
      <title>Datum Corp: Hybrid DevOps Engineer</title>
      <region>Europe Only</region>
      <type>Full-Time</type>
      <description>&lt;p&gt;Terraform and AWS.&lt;/p&gt;</description>
      <pubDate>Sat, 03 Oct 2026 08:00:00 +0000</pubDate>
      <guid>https://remoteboard.example/remote-jobs/datum-corp-devops</guid>
      <link>https://remoteboard.example/remote-jobs/datum-corp-devops</link>
    </item>
  </channel>
</rss>
"""

COMPANY_TITLE_PATH = "/feeds/company-title.rss"


def serve(boards: JobBoards) -> None:
    for token, payload in GREENHOUSE_BOARDS.items():
        boards.serve_json(f"/v1/boards/{token}/jobs", payload)
    for site, postings in LEVER_SITES.items():
        boards.serve_json(f"/v0/postings/{site}", postings)
    for board, payload in ASHBY_BOARDS.items():
        boards.serve_json(f"/posting-api/job-board/{board}", payload)
    boards.route(COMPANY_TITLE_PATH, Reply(body=COMPANY_TITLE_FEED.encode("utf-8"),
                                           content_type="application/rss+xml; charset=utf-8"))
