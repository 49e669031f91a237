"""Every board family on real-shape payloads (tests/fakes/boards/README.md says where each
shape comes from), served by a real loopback HTTP server: field by field, paging, 429
backoff, robots.txt, details that vanished, malformed answers as typed errors."""

from __future__ import annotations

import pytest

from backend.domain.source_config import (
    AshbySource,
    FeedSource,
    GreenhouseSource,
    LeverSource,
    PersonioSource,
    RecruiteeSource,
    SmartRecruitersSource,
    WorkableSource,
    WorkdaySource,
)
from backend.sources import greenhouse as greenhouse_module
from backend.sources import smartrecruiters, workday
from backend.sources.ashby import fetch_ashby
from backend.sources.errors import SourceMisconfigured, SourcePayloadInvalid, SourceUnavailable
from backend.sources.feeds import fetch_feed
from backend.sources.greenhouse import fetch_greenhouse
from backend.sources.http import USER_AGENT, RobotsDisallowed, retry_after_seconds
from backend.sources.lever import fetch_lever
from backend.sources.personio import fetch_personio
from backend.sources.recruitee import fetch_recruitee
from backend.sources.registry import fetch_source
from backend.sources.smartrecruiters import fetch_smartrecruiters
from backend.sources.workable import fetch_workable
from backend.sources.workday import fetch_workday
from tests.fakes.boards import classic, serve_all
from tests.fakes.boards import personio as personio_boards
from tests.fakes.boards import recruitee as recruitee_boards
from tests.fakes.boards import smartrecruiters as sr_boards
from tests.fakes.boards import workable as workable_boards
from tests.fakes.boards import workday as workday_boards
from tests.fakes.job_boards import (  # noqa: F401 (fast_retries_fixture is a fixture)
    JobBoards,
    Reply,
    fast_retries_fixture,
    json_reply,
)
from tests.unit.test_source_families import assert_bounded, assert_safe_html

pytestmark = pytest.mark.usefixtures("fast_retries")


@pytest.fixture
def boards():
    server = serve_all(JobBoards().start())
    try:
        yield server
    finally:
        server.stop()


def salary(posting):
    return posting.salary.model_dump() if posting.salary else None


def by_title(postings):
    return {posting.title: posting for posting in postings}


# ----------------------------------------------------------------------------- Workday


def wd(boards: JobBoards, tenant: str, **kw) -> WorkdaySource:
    site = workday_boards.SITES[tenant]
    return WorkdaySource(id=f"wd-{tenant}", host=site.host, tenant=tenant, site=site.site,
                         base_url=boards.base_url, **kw)


async def test_workday_site_field_by_field(boards: JobBoards, monkeypatch):
    monkeypatch.setattr(workday, "PAGE_SIZE", 2)  # three postings: two pages
    postings = await fetch_workday(wd(boards, "acme"))

    assert [p.title for p in postings] == [
        "Senior Site Reliability Engineer", "Product Manager, Payments",
        "Warehouse Associate (Part-Time)"]
    sre, pm, warehouse = postings
    assert {p.company for p in postings} == {"Acme Corporation"}  # hiringOrganization
    assert sre.url == ("https://acme.wd5.myworkdayjobs.com/en-US/External/job/Remote-USA/"
                       "Senior-Site-Reliability-Engineer_JR2024-0131")
    assert sre.apply_url == sre.url + "/apply"
    assert sre.source_key == "JR2024-0131"
    assert [p.remote for p in postings] == ["remote", "hybrid", "onsite"]  # remoteType
    assert sre.location == "Remote - USA"
    assert pm.location == "Austin, TX; Denver, CO; Chicago, IL"  # never "3 Locations"
    assert salary(sre) == {"min": 132000, "max": 165000, "currency": "USD", "period": "year"}
    assert salary(pm) is None  # no pay statement: hidden stays hidden
    # $19.50 - $22.00: whole amounts (the store keeps integers), rounded half to even
    assert salary(warehouse) == {"min": 20, "max": 22, "currency": "USD", "period": "hour"}
    assert [p.employment_type for p in postings] == ["full_time", "full_time", "part_time"]
    assert sre.posted_at == "2026-10-05T00:00:00Z"  # startDate
    assert pm.posted_at is not None and pm.posted_at.endswith("T00:00:00Z")  # 3 days ago
    assert warehouse.posted_at is None  # "30+ Days Ago" names no day
    assert_safe_html(pm.description_html)
    assert "<li>Talk to merchants</li>" in pm.description_html

    searches = [s for s in boards.seen if s.path.endswith("/jobs")]
    assert [s.method for s in searches] == ["POST", "POST"]
    assert [s.json()["offset"] for s in searches] == [0, 2]
    assert searches[0].json() == {"appliedFacets": {}, "limit": 2, "offset": 0, "searchText": ""}
    assert searches[0].headers["user-agent"] == USER_AGENT
    assert boards.count("/robots.txt") == 1


async def test_workday_without_remote_type_reads_the_location(boards: JobBoards):
    postings = await fetch_workday(wd(boards, "globex", company_name="Globex Corporation"))
    engineer, recruiter = postings
    assert {p.company for p in postings} == {"Globex Corporation"}  # configured name wins
    assert (engineer.remote, recruiter.remote) == ("remote", "onsite")
    assert recruiter.location == "Toronto, ON; Montreal, QC"
    assert recruiter.employment_type == "full_time"  # timeType, whatever the title says
    [coordinator] = await fetch_workday(wd(boards, "initech"))
    assert coordinator.remote == "hybrid"  # the title says so; "Flexible" says nothing
    assert salary(coordinator) == {"min": 38000, "max": 42000, "currency": "GBP",
                                   "period": "year"}


async def test_workday_stops_at_max_postings(boards: JobBoards, monkeypatch):
    monkeypatch.setattr(workday, "PAGE_SIZE", 1)
    postings = await fetch_workday(wd(boards, "acme", max_postings=2))
    assert len(postings) == 2
    assert len([s for s in boards.seen if s.path.endswith("/jobs")]) == 2


async def test_workday_wrong_answer_is_payload_invalid(boards: JobBoards):
    boards.serve_json(workday_boards.SITES["acme"].root + "/jobs", {"errorCode": "HTTP_500"})
    with pytest.raises(SourcePayloadInvalid) as caught:
        await fetch_workday(wd(boards, "acme"))
    assert_bounded(caught.value)


# ----------------------------------------------------------------------------- SmartRecruiters


def sr(boards: JobBoards, company: str, **kw) -> SmartRecruitersSource:
    return SmartRecruitersSource(id=f"sr-{company.lower()}", company=company,
                                 base_url=boards.base_url, **kw)


async def test_smartrecruiters_company_field_by_field(boards: JobBoards):
    postings = await fetch_smartrecruiters(sr(boards, "ContosoGmbH"))
    embedded, technician = postings
    assert embedded.title == "Embedded Software Engineer (m/f/d)"
    assert {p.company for p in postings} == {"Contoso GmbH"}
    assert embedded.url == ("https://jobs.smartrecruiters.com/ContosoGmbH/744000012345001-"
                            "embedded-software-engineer-m-f-d-")
    assert embedded.apply_url == embedded.url + "?oga=true"
    assert (embedded.remote, technician.remote) == ("hybrid", "onsite")
    assert embedded.location == "Stuttgart, BW, Germany"
    assert (embedded.employment_type, technician.employment_type) == ("full_time", "part_time")
    assert embedded.posted_at == "2026-10-01T08:12:44Z"
    assert embedded.tags == ["Engineering", "Information Technology"]
    assert salary(embedded) is None
    assert_safe_html(embedded.description_html)
    assert "<h3>Qualifications</h3>" in embedded.description_html
    assert "<li>RTOS experience</li>" in embedded.description_html


async def test_smartrecruiters_remote_pay_and_a_vanished_detail(boards: JobBoards):
    frontend, support = await fetch_smartrecruiters(sr(boards, "Fabrikam"))
    assert frontend.remote == "remote"
    assert salary(frontend) == {"min": 150000, "max": 180000, "currency": "USD",
                                "period": "year"}
    # The detail answered 404 (closed since the list): kept, with its public page URL.
    assert support.url == "https://jobs.smartrecruiters.com/Fabrikam/744000020000102"
    assert support.description_html is None and support.remote == "onsite"


async def test_smartrecruiters_pages_until_total_found(boards: JobBoards, monkeypatch):
    monkeypatch.setattr(smartrecruiters, "PAGE_SIZE", 2)
    postings = await fetch_smartrecruiters(sr(boards, "Northwind"))
    assert [p.title for p in postings] == [f"Account Executive {i}" for i in range(1, 6)]
    pages = [s.query["offset"] for s in boards.seen if s.path == sr_boards.COMPANIES[
        "Northwind"].root]
    assert pages == [["0"], ["2"], ["4"]]


# ----------------------------------------------------------------------------- Workable


def wk(boards: JobBoards, account: str) -> WorkableSource:
    return WorkableSource(id=f"wk-{account}", account=account, base_url=boards.base_url)


async def test_workable_accounts_field_by_field(boards: JobBoards):
    backend, manager = await fetch_workable(wk(boards, "tailspin"))
    assert backend.company == manager.company == "Tailspin Toys"
    assert backend.url == "https://apply.workable.com/j/A1B2C3D4E5"
    assert backend.apply_url == "https://apply.workable.com/j/A1B2C3D4E5/apply"
    assert backend.source_key == "A1B2C3D4E5"
    assert (backend.remote, manager.remote) == ("remote", "onsite")  # telecommuting
    assert backend.location == "Athens, Attica, Greece"
    # every visible location, the hidden one left out
    assert manager.location == ("Thessaloniki, Central Macedonia, Greece; Patras, Western "
                                "Greece, Greece")
    assert salary(backend) == {"min": 55000, "max": 70000, "currency": "EUR", "period": "year"}
    assert salary(manager) is None
    assert backend.posted_at == "2026-10-02T00:00:00Z"
    assert backend.employment_type == "full_time"
    [researcher] = await fetch_workable(wk(boards, "wingtip"))
    assert (researcher.remote, researcher.employment_type) == ("hybrid", "contract")
    [technician] = await fetch_workable(wk(boards, "adventureworks"))
    assert (technician.remote, technician.employment_type) == ("onsite", "part_time")
    assert boards.last(workable_boards.widget_path("tailspin")).query == {"details": ["true"]}


# ----------------------------------------------------------------------------- Recruitee


def rc(boards: JobBoards, company: str) -> RecruiteeSource:
    return RecruiteeSource(id=f"rc-{company}", company=company,
                           base_url=f"{boards.base_url}/{company}")


async def test_recruitee_offers_field_by_field(boards: JobBoards):
    postings = await fetch_recruitee(rc(boards, "lucerne"))
    assert [p.title for p in postings] == ["Python Engineer", "Editor in Chief"]  # no draft
    engineer, editor = postings
    assert engineer.company == "Lucerne Publishing"
    assert engineer.url == "https://lucerne.recruitee.com/o/python-engineer"
    assert engineer.apply_url == "https://lucerne.recruitee.com/o/python-engineer/c/new"
    assert (engineer.remote, editor.remote) == ("remote", "hybrid")  # remote + on-site
    assert editor.location == "Utrecht, Netherlands; Ghent, Belgium"
    assert salary(engineer) == {"min": 60000, "max": 75000, "currency": "EUR", "period": "year"}
    assert salary(editor) is None  # null amounts: not shown
    assert engineer.posted_at == "2026-10-02T09:15:22Z"  # "... UTC"
    assert engineer.employment_type == "full_time"
    assert "<li>Django</li>" in engineer.description_html
    [lead] = await fetch_recruitee(rc(boards, "proseware"))
    assert (lead.remote, lead.employment_type) == ("onsite", "part_time")
    assert salary(lead) == {"min": 18, "max": 21, "currency": "EUR", "period": "hour"}
    [analyst] = await fetch_recruitee(rc(boards, "woodgrove"))
    assert (analyst.remote, analyst.employment_type, salary(analyst)) == (
        "hybrid", "contract", None)
    assert boards.count(recruitee_boards.offers_path("lucerne")) == 1


# ----------------------------------------------------------------------------- Personio


def ps(boards: JobBoards, company: str) -> PersonioSource:
    return PersonioSource(id=f"ps-{company}", company=company,
                          base_url=f"{boards.base_url}/{company}")


async def test_personio_feeds_field_by_field(boards: JobBoards):
    backend, student = await fetch_personio(ps(boards, "litware"))
    assert backend.title == "Senior Backend Developer (m/w/d)"
    assert backend.company == "Litware GmbH"
    assert backend.url == f"{boards.base_url}/litware/job/1203456?language=en"
    assert backend.location == "Berlin; Munich; Remote"
    assert (backend.remote, student.remote) == ("remote", "onsite")
    assert salary(backend) == {"min": 70000, "max": 85000, "currency": "EUR", "period": "year"}
    assert salary(student) is None
    assert (backend.employment_type, student.employment_type) == ("full_time", "part_time")
    assert backend.posted_at == "2026-09-30T10:11:12Z"
    assert "<h3>Your profile</h3>" in backend.description_html
    assert "<strong>payroll</strong>" in backend.description_html
    [manager] = await fetch_personio(ps(boards, "alpineski"))
    assert (manager.remote, manager.posted_at) == ("remote", "2026-10-02T07:00:00Z")
    [illustrator] = await fetch_personio(ps(boards, "margie"))
    assert illustrator.company == "margie"  # no subcompany: the page's name
    assert illustrator.employment_type == "contract"  # freelance
    assert boards.last(personio_boards.feed_path("litware")).query == {"language": ["en"]}


@pytest.mark.parametrize("body", [
    b"<html><body>Maintenance</body></html>",
    b'<?xml version="1.0"?><workzag-jobs><position><id>1</id>',
    b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
    b"<workzag-jobs><position><id>&e;</id></position></workzag-jobs>",
])
async def test_personio_unreadable_xml_is_payload_invalid(boards: JobBoards, body):
    boards.route(personio_boards.feed_path("litware"), Reply(body=body, content_type="text/xml"))
    with pytest.raises(SourcePayloadInvalid):
        await fetch_personio(ps(boards, "litware"))


# ----------------------------------------------------------------------------- first families


async def test_greenhouse_company_per_job_and_workplace_from_metadata(boards: JobBoards):
    postings = await fetch_greenhouse(GreenhouseSource(
        id="gh", board_token="nimbuslabs", base_url=boards.base_url))
    assert {p.company for p in postings} == {"Nimbus Labs"}  # not "nimbuslabs"
    assert [p.remote for p in postings] == ["remote", "remote", "hybrid"]
    assert [p.location for p in postings] == ["Canada", "United States", "Mexico"]
    assert salary(postings[0]) == {"min": 128000, "max": 160000, "currency": "USD",
                                   "period": None}  # the pay-transparency block
    assert salary(postings[1]) is None
    cook, analyst = await fetch_greenhouse(GreenhouseSource(
        id="gh2", board_token="orbitfoods", base_url=boards.base_url))
    assert (cook.remote, analyst.remote) == ("onsite", "remote")
    assert cook.company == "Orbit Foods, Inc." and cook.employment_type == "part_time"
    assert salary(cook) == {"min": 21, "max": 24, "currency": "USD", "period": "hour"}


async def test_lever_all_locations_and_lists_that_hold_a_list(boards: JobBoards):
    [engineer] = await fetch_lever(LeverSource(id="lv", company="contoso",
                                               base_url=boards.base_url))
    assert engineer.location == "Berlin; Munich; Hamburg"
    assert engineer.remote == "hybrid"
    assert "<ul><ul>" not in engineer.description_html
    assert "<ul><li>Run Kubernetes</li><li>Write Terraform</li></ul>" in (
        engineer.description_html)
    assert "<ul><li>Linux</li></ul>" in engineer.description_html  # bare items wrapped once
    assert salary(engineer) == {"min": 65000, "max": 80000, "currency": "EUR", "period": "year"}
    [trainer] = await fetch_lever(LeverSource(id="lv2", company="fourthcoffee",
                                              base_url=boards.base_url))
    assert (trainer.location, trainer.remote, salary(trainer)) == (
        "Seattle, WA; Portland, OR", "onsite", None)


async def test_ashby_hidden_pay_and_secondary_locations(boards: JobBoards):
    [staff] = await fetch_ashby(AshbySource(id="ab", board_name="quietpay",
                                            base_url=boards.base_url))
    assert salary(staff) is None  # sent, but the employer does not show it
    assert staff.location == "San Francisco, CA; New York, NY; Seattle, WA"
    assert staff.remote == "hybrid"
    support, advocate = await fetch_ashby(AshbySource(id="ab2", board_name="openpay",
                                                      base_url=boards.base_url))
    assert salary(support) == {"min": 42000, "max": 50000, "currency": "EUR", "period": "year"}
    assert (support.remote, advocate.remote) == ("onsite", "remote")
    assert advocate.location == "Remote (Europe); London, UK"
    assert (support.employment_type, advocate.employment_type) == ("part_time", "contract")


async def test_company_title_feed(boards: JobBoards):
    postings = await fetch_feed(FeedSource(id="f", url=boards.url(classic.COMPANY_TITLE_PATH)))
    assert [(p.company, p.title) for p in postings] == [
        ("Blue Yonder Airlines", "Senior Rails Developer"),
        ("Coho Winery", "Full-Stack Engineer: Payments"),  # split once, at the first colon
        ("Datum Corp", "Hybrid DevOps Engineer"),
    ]
    assert [p.location for p in postings] == ["USA Only", "Anywhere in the World",
                                              "Europe Only"]
    # the region is read, and a region never makes a posting on-site by itself
    assert [p.remote for p in postings] == ["remote", "remote", "hybrid"]
    assert [p.employment_type for p in postings] == ["full_time", "contract", "full_time"]


async def test_a_stray_latin1_byte_is_payload_invalid_not_mojibake(boards: JobBoards):
    body = classic.COMPANY_TITLE_FEED.encode("utf-8").replace(b"Coho", b"C\xf6ho")
    boards.route("/feeds/broken.rss", Reply(body=body, content_type="application/rss+xml"))
    with pytest.raises(SourcePayloadInvalid) as caught:
        await fetch_feed(FeedSource(id="f", url=boards.url("/feeds/broken.rss")))
    assert_bounded(caught.value)
    latin = classic.COMPANY_TITLE_FEED.replace('encoding="UTF-8"', 'encoding="ISO-8859-1"')
    latin = latin.replace("Coho", "C\u00f6ho").encode("latin-1")
    boards.route("/feeds/latin.rss", Reply(body=latin, content_type="application/rss+xml"))
    postings = await fetch_feed(FeedSource(id="f", url=boards.url("/feeds/latin.rss")))
    assert postings[1].company == "C\u00f6ho Winery"  # declared latin-1 reads right


# ----------------------------------------------------------------------------- rate limits, robots


async def test_a_429_waits_and_retries_then_succeeds(boards: JobBoards):
    path = workable_boards.widget_path("wingtip")
    limited = Reply(status=429, body=b"{}", headers={"Retry-After": "0"})
    boards.queue(path, limited, Reply(status=429, body=b"{}"))
    [researcher] = await fetch_workable(wk(boards, "wingtip"))
    assert researcher.title == "UX Researcher"
    assert boards.count(path) == 3


async def test_a_board_that_stays_limited_is_unavailable_and_retryable(boards: JobBoards):
    path = workable_boards.widget_path("wingtip")
    boards.route(path, Reply(status=429, body=b"{}", headers={"Retry-After": "0"}))
    with pytest.raises(SourceUnavailable) as caught:
        await fetch_workable(wk(boards, "wingtip"))
    assert caught.value.retryable and boards.count(path) == 3  # fast_retries: 3 attempts
    assert_bounded(caught.value)


def test_retry_after_reads_seconds_and_dates():
    from datetime import UTC, datetime

    now = datetime(2026, 10, 5, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("7") == 7.0
    assert retry_after_seconds("Mon, 05 Oct 2026 12:00:30 GMT", now) == 30.0
    assert retry_after_seconds("Mon, 05 Oct 2026 11:00:00 GMT", now) == 0.0
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None


async def test_robots_disallow_stops_the_family_before_any_request(boards: JobBoards):
    boards.serve_text("/robots.txt", "User-agent: *\nDisallow: /wday/\n", "text/plain")
    with pytest.raises(RobotsDisallowed) as caught:
        await fetch_workday(wd(boards, "acme"))
    assert isinstance(caught.value, SourceMisconfigured) and not caught.value.retryable
    assert [s.path for s in boards.seen] == ["/robots.txt"]


async def test_an_unavailable_detail_fails_the_family_for_a_retry(boards: JobBoards):
    detail = sr_boards.COMPANIES["ContosoGmbH"].root + "/744000012345002"
    boards.fail(detail, 503)
    with pytest.raises(SourceUnavailable):
        await fetch_smartrecruiters(sr(boards, "ContosoGmbH"))


async def test_registry_serves_every_new_family(boards: JobBoards):
    for source in (wd(boards, "initech"), sr(boards, "Fabrikam"), wk(boards, "wingtip"),
                   rc(boards, "woodgrove"), ps(boards, "margie")):
        assert await fetch_source(source), source.kind


async def test_conversion_and_cleanup_run_off_the_event_loop(boards: JobBoards, monkeypatch):
    import threading

    from backend.sources import normalize

    loop_thread = threading.get_ident()
    threads: set[int] = set()
    original = normalize.description_html

    def recording(*args, **kwargs):
        threads.add(threading.get_ident())
        return original(*args, **kwargs)

    for module in (greenhouse_module, workday):
        monkeypatch.setattr(module, "description_html", recording)
    await fetch_greenhouse(GreenhouseSource(id="gh", board_token="nimbuslabs",
                                            base_url=boards.base_url))
    await fetch_workday(wd(boards, "initech"))
    assert threads and loop_thread not in threads
