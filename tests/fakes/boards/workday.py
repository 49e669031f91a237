"""Workday CXS payloads for three career sites (shape: see README.md in this folder).

List: ``POST /wday/cxs/{tenant}/{site}/jobs`` answers ``{"total", "jobPostings",
"facets", "userAuthenticated"}`` with ``total`` on the first page only (0 on later pages,
as Workday does). Detail: ``GET /wday/cxs/{tenant}/{site}{externalPath}``.
"""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.job_boards import JobBoards, Reply, Seen, json_reply

PAY_SENTENCE = ("<p>The base salary range for this position is $132,000 - $165,000 USD per"
                " year, plus equity and benefits.</p>")


def _listing(title: str, path: str, locations: str, posted: str, req: str) -> dict[str, Any]:
    return {"title": title, "externalPath": path, "locationsText": locations,
            "postedOn": posted, "bulletFields": [req]}


def _detail(host: str, site: str, *, title: str, path: str, req: str, location: str,
            others: list[str], time_type: str, posted: str, start: str | None,
            description: str, organization: str, remote: str | None = None) -> dict[str, Any]:
    info: dict[str, Any] = {
        "id": f"{req.lower()}-0001", "title": title, "jobDescription": description,
        "location": location, "postedOn": posted, "timeType": time_type, "jobReqId": req,
        "jobPostingId": path.rsplit("/", 1)[-1], "jobPostingSiteId": site,
        "country": {"descriptor": "United States of America", "id": "bc33aa3152ec42d4995f4791a106ed09"},
        "canApply": True, "posted": True, "includeResumeParsing": True,
        "externalUrl": f"https://{host}/en-US/{site}{path}", "questionnaireId": "5f3c9b1e",
    }
    if others:
        info["additionalLocations"] = others
    if start:
        info["startDate"] = start
    if remote is not None:
        info["remoteType"] = remote
    return {"jobPostingInfo": info, "hiringOrganization": {"name": organization, "url": ""},
            "similarJobs": [], "userAuthenticated": False}


class Site:
    def __init__(self, tenant: str, host: str, site: str, postings: list[tuple[dict, dict]]):
        self.tenant, self.host, self.site = tenant, host, site
        self.postings = postings

    @property
    def root(self) -> str:
        return f"/wday/cxs/{self.tenant}/{self.site}"

    def serve(self, boards: JobBoards) -> None:
        listings = [listing for listing, _ in self.postings]

        def search(seen: Seen) -> Reply:
            asked = seen.json() or {}
            offset, limit = int(asked.get("offset", 0)), int(asked.get("limit", 20))
            page = listings[offset:offset + limit]
            return json_reply({"total": len(listings) if offset == 0 else 0,
                               "jobPostings": page, "facets": [],
                               "userAuthenticated": False})

        boards.serve_dynamic(f"{self.root}/jobs", search)
        for listing, detail in self.postings:
            boards.route(self.root + listing["externalPath"],
                         Reply(body=json.dumps(detail).encode("utf-8")))


def _acme() -> Site:
    host, site = "acme.wd5.myworkdayjobs.com", "External"
    specs = [
        dict(title="Senior Site Reliability Engineer",
             path="/job/Remote-USA/Senior-Site-Reliability-Engineer_JR2024-0131", req="JR2024-0131",
             location="Remote - USA", others=[], time_type="Full time", posted="Posted Today",
             start="2026-10-05", remote="Remote",
             description="<p>Keep the Acme platform up.</p>" + PAY_SENTENCE),
        dict(title="Product Manager, Payments",
             path="/job/Austin-TX/Product-Manager--Payments_JR2024-0188", req="JR2024-0188",
             location="Austin, TX", others=["Denver, CO", "Chicago, IL"],
             time_type="Full time", posted="Posted 3 Days Ago", start=None, remote="Hybrid",
             description="<div><p>Own the payments roadmap.</p><ul><li>Work with"
                         " engineering</li><li>Talk to merchants</li></ul></div>"),
        dict(title="Warehouse Associate (Part-Time)",
             path="/job/Reno-NV/Warehouse-Associate--Part-Time-_JR2024-0210", req="JR2024-0210",
             location="Reno, NV", others=[], time_type="Part time",
             posted="Posted 30+ Days Ago", start=None, remote="On-site",
             description="<p>Pick and pack orders on the day shift.</p>"
                         "<p>Pay: $19.50 - $22.00 per hour.</p>"),
    ]
    return Site("acme", host, site, [
        (_listing(spec["title"], spec["path"],
                  "3 Locations" if len(spec["others"]) == 2 else spec["location"],
                  spec["posted"], spec["req"]),
         _detail(host, site, organization="Acme Corporation", **spec))
        for spec in specs])


def _globex() -> Site:
    # An older tenant: no remoteType field, the location text says it when anything does.
    host, site = "globex.wd1.myworkdayjobs.com", "Globex_Careers"
    specs = [
        dict(title="Data Engineer", path="/job/Remote---Canada/Data-Engineer_R-10482",
             req="R-10482", location="Remote - Canada", others=[], time_type="Full time",
             posted="Posted Yesterday", start="2026-10-06",
             description="<p>Build pipelines in <b>Python</b>.</p>"),
        dict(title="Contract Recruiter", path="/job/Toronto-ON/Contract-Recruiter_R-10499",
             req="R-10499", location="Toronto, ON", others=["Montreal, QC"],
             time_type="Full time", posted="Posted 7 Days Ago", start="2026-09-30",
             description="<p>Hire our next 50 engineers. Six-month contract.</p>"),
    ]
    return Site("globex", host, site, [
        (_listing(spec["title"], spec["path"], spec["location"], spec["posted"], spec["req"]),
         _detail(host, site, organization="Globex", **spec)) for spec in specs])


def _initech() -> Site:
    host, site = "initech.wd3.myworkdayjobs.com", "InitechJobs"
    specs = [
        dict(title="Hybrid Office Coordinator",
             path="/job/London/Hybrid-Office-Coordinator_REQ-7781", req="REQ-7781",
             location="London", others=[], time_type="Full time", posted="Posted 2 Days Ago",
             start="2026-10-04", remote="Flexible",
             description="<p>Three days a week in our London office.</p>"
                         "<p>Salary: \u00a338,000 - \u00a342,000 per year.</p>"),
    ]
    return Site("initech", host, site, [
        (_listing(spec["title"], spec["path"], spec["location"], spec["posted"], spec["req"]),
         _detail(host, site, organization="Initech Ltd", **spec)) for spec in specs])


SITES = {site.tenant: site for site in (_acme(), _globex(), _initech())}


def serve(boards: JobBoards) -> None:
    for site in SITES.values():
        site.serve(boards)
