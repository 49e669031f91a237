"""SmartRecruiters Posting API payloads for three companies (shape: README.md here).

List: ``GET /v1/companies/{company}/postings?limit&offset`` -> ``{"offset", "limit",
"totalFound", "content"}``; the list items carry no public URL. Detail:
``GET /v1/companies/{company}/postings/{id}`` adds ``postingUrl``, ``applyUrl`` and
``jobAd.sections``.
"""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.job_boards import JobBoards, Reply, Seen, json_reply


def _location(city: str, region: str | None, country: str, full: str, *, remote: bool,
              hybrid: bool | None = None) -> dict[str, Any]:
    location: dict[str, Any] = {"city": city, "country": country, "remote": remote,
                                "latitude": "0", "longitude": "0", "fullLocation": full}
    if region:
        location["region"] = region
    if hybrid is not None:
        location["hybrid"] = hybrid
    return location


def _item(company_id: str, company: str, posting_id: str, name: str, location: dict,
          released: str, employment: str, department: str) -> dict[str, Any]:
    return {
        "id": posting_id, "name": name, "uuid": f"{posting_id}-uuid", "jobAdId": f"ad-{posting_id}",
        "defaultJobAd": True, "refNumber": f"REF{posting_id[-4:]}",
        "company": {"identifier": company_id, "name": company}, "releasedDate": released,
        "location": location,
        "industry": {"id": "computer_software", "label": "Computer Software"},
        "department": {"id": "9811", "label": department},
        "function": {"id": "information_technology", "label": "Information Technology"},
        "typeOfEmployment": {"id": "permanent" if employment == "Full-time" else "other",
                             "label": employment},
        "experienceLevel": {"id": "mid_senior_level", "label": "Mid-Senior Level"},
        "customField": [], "visibility": "PUBLIC",
        "ref": f"https://api.smartrecruiters.com/v1/companies/{company_id}/postings/{posting_id}",
        "creator": {"name": "Sam Recruiter"},
        "language": {"code": "en", "label": "English", "labelNative": "English (US)"},
    }


def _sections(job: str, qualifications: str, additional: str = "") -> dict[str, Any]:
    return {
        "companyDescription": {"title": "Company Description",
                               "text": "<p>We build tools people rely on.</p>"},
        "jobDescription": {"title": "Job Description", "text": job},
        "qualifications": {"title": "Qualifications", "text": qualifications},
        "additionalInformation": {"title": "Additional Information", "text": additional},
    }


class Company:
    def __init__(self, identifier: str, postings: list[tuple[dict, dict | None]]):
        self.identifier = identifier
        self.postings = postings

    @property
    def root(self) -> str:
        return f"/v1/companies/{self.identifier}/postings"

    def serve(self, boards: JobBoards) -> None:
        items = [item for item, _ in self.postings]

        def page(seen: Seen) -> Reply:
            offset = int((seen.query.get("offset") or ["0"])[0])
            limit = int((seen.query.get("limit") or ["10"])[0])
            return json_reply({"offset": offset, "limit": limit, "totalFound": len(items),
                               "content": items[offset:offset + limit]})

        boards.serve_dynamic(self.root, page)
        for item, detail in self.postings:
            if detail is not None:  # None: the posting closed between list and detail (404)
                boards.route(f"{self.root}/{item['id']}",
                             Reply(body=json.dumps({**item, **detail}).encode("utf-8")))


def _detail(company_id: str, posting_id: str, slug: str, sections: dict) -> dict[str, Any]:
    url = f"https://jobs.smartrecruiters.com/{company_id}/{posting_id}-{slug}"
    return {"postingUrl": url, "applyUrl": f"{url}?oga=true", "active": True,
            "jobAd": {"sections": sections}}


def _bosch_like() -> Company:
    cid, name = "ContosoGmbH", "Contoso GmbH"
    return Company(cid, [
        (_item(cid, name, "744000012345001", "Embedded Software Engineer (m/f/d)",
               _location("Stuttgart", "BW", "de", "Stuttgart, BW, Germany", remote=False,
                         hybrid=True),
               "2026-10-01T08:12:44.000Z", "Full-time", "Engineering"),
         _detail(cid, "744000012345001", "embedded-software-engineer-m-f-d-",
                 _sections("<p>Write firmware for sensors.</p>",
                           "<ul><li>C and C++</li><li>RTOS experience</li></ul>"))),
        (_item(cid, name, "744000012345002", "Technician, Night Shift",
               _location("Leipzig", None, "de", "Leipzig, Germany", remote=False, hybrid=False),
               "2026-09-28T06:00:00.000Z", "Part-time", "Operations"),
         _detail(cid, "744000012345002", "technician-night-shift",
                 _sections("<p>Keep the line running at night.</p>", "<p>Vocational"
                           " training.</p>"))),
    ])


def _remote_first() -> Company:
    cid, name = "Fabrikam", "Fabrikam Inc."
    return Company(cid, [
        (_item(cid, name, "744000020000101", "Senior Frontend Engineer",
               _location("New York", "NY", "us", "New York, NY, United States", remote=True),
               "2026-10-03T15:30:00.000Z", "Full-time", "Engineering"),
         _detail(cid, "744000020000101", "senior-frontend-engineer",
                 _sections("<p>Build our design system in React.</p>",
                           "<p>5+ years with TypeScript.</p>",
                           "<p>The annual base salary for this role is $150,000 - $180,000."
                           " Fabrikam is an equal opportunity employer.</p>"))),
        (_item(cid, name, "744000020000102", "Support Specialist",
               _location("Austin", "TX", "us", "Austin, TX, United States", remote=False),
               "2026-10-02T10:00:00.000Z", "Full-time", "Support"),
         None),  # closed since the list: its detail answers 404
    ])


def _paged() -> Company:
    # Enough postings for several pages when the test asks for small ones.
    cid, name = "Northwind", "Northwind Traders"
    return Company(cid, [
        (_item(cid, name, f"74400003000{index:04d}", f"Account Executive {index}",
               _location("Chicago", "IL", "us", "Chicago, IL, United States", remote=False),
               f"2026-09-{10 + index:02d}T09:00:00.000Z", "Full-time", "Sales"),
         _detail(cid, f"74400003000{index:04d}", f"account-executive-{index}",
                 _sections(f"<p>Grow territory {index}.</p>", "<p>B2B sales.</p>")))
        for index in range(1, 6)
    ])


COMPANIES = {company.identifier: company for company in (_bosch_like(), _remote_first(),
                                                         _paged())}


def serve(boards: JobBoards) -> None:
    for company in COMPANIES.values():
        company.serve(boards)
