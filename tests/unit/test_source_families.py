"""Source families against a real loopback server playing Greenhouse, Lever, Ashby and feeds."""

from __future__ import annotations

import typing
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from pydantic import ValidationError

from backend.config import AppSettings
from backend.domain.ids import job_id_for_url
from backend.domain.source_config import (
    AshbySource,
    CsvFileSource,
    DemoBoardSource,
    FeedSource,
    GreenhouseSource,
    JsonFileSource,
    LeverSource,
    SourceConfig,
)
from backend.sources import normalize
from backend.sources.ashby import fetch_ashby
from backend.sources.csv_file import fetch_csv_file
from backend.sources.errors import (
    BOUNDED_SOURCE_CODES,
    SourceError,
    SourceMisconfigured,
    SourcePayloadInvalid,
    SourceUnavailable,
)
from backend.sources.feeds import fetch_feed
from backend.sources.greenhouse import fetch_greenhouse
from backend.sources.http import USER_AGENT, get_bytes, get_json
from backend.sources.lever import fetch_lever
from backend.sources.registry import FETCHERS, fetch_source, fetcher_for
from backend.supervision.ports import free_port
from tests.fakes.job_boards import (  # noqa: F401 (job_boards_fixture is the fixture)
    SHARED_POSTING_URL,
    JobBoards,
    fast_retries_fixture,
    job_boards_fixture,
)

pytestmark = pytest.mark.usefixtures("fast_retries")


def gh(boards: JobBoards, **kw) -> GreenhouseSource:
    return GreenhouseSource(id="gh-acme", board_token=kw.pop("board_token", "acme"),
                            base_url=boards.base_url, **kw)


def lever(boards: JobBoards, **kw) -> LeverSource:
    return LeverSource(id="lever-globex", company=kw.pop("company", "globex"),
                       base_url=boards.base_url, **kw)


def ashby(boards: JobBoards, **kw) -> AshbySource:
    return AshbySource(id="ashby-initech", board_name=kw.pop("board_name", "initech"),
                       base_url=boards.base_url, **kw)


def assert_safe_html(fragment: str | None) -> None:
    assert fragment
    soup = BeautifulSoup(fragment, "html.parser")
    for tag in soup.find_all(True):
        assert tag.name in normalize.ALLOWED_TAGS, tag.name
        assert set(tag.attrs) <= ({"href"} if tag.name == "a" else set()), tag
        if tag.name == "a":
            assert tag["href"].startswith(("http://", "https://", "mailto:"))
    lowered = fragment.lower()
    for needle in ("<script", "<style", "<iframe", "<img", "javascript:", "onclick", "onerror",
                   "style=", "&lt;p&gt;", "&amp;amp;"):
        assert needle not in lowered, needle


def assert_bounded(error: SourceError) -> None:
    assert error.code in BOUNDED_SOURCE_CODES
    assert error.args == ()  # no exception text or payload travels with the code


# ----------------------------------------------------------------------------- Greenhouse


async def test_greenhouse_board(job_boards: JobBoards):
    postings = await fetch_greenhouse(gh(job_boards))

    assert [p.title for p in postings] == [
        "Senior Backend Engineer, Fleet Platform", "Warehouse Operations Lead", "Product Designer",
    ]  # the entry without absolute_url is skipped, not fatal
    backend, ops, designer = postings
    assert backend.url == SHARED_POSTING_URL
    assert backend.source_key == "4012345006"
    assert {p.company for p in postings} == {"acme"}
    assert [p.remote for p in postings] == ["remote", "onsite", "hybrid"]
    assert backend.location == "Remote - US"
    assert backend.posted_at == "2026-09-28T18:00:00Z"  # first_published, in UTC
    assert designer.posted_at == "2026-09-30T08:30:00Z"
    assert backend.employment_type == "full_time"
    assert backend.salary is not None
    assert (backend.salary.min, backend.salary.max, backend.salary.currency) == (
        150000, 185000, "USD")
    assert backend.tags == ["Engineering"]
    assert ops.salary is None and ops.tags == ["Operations"]
    assert designer.description_html is None

    html = backend.description_html
    assert_safe_html(html)
    assert "<strong>Acme Robotics</strong>" in html
    assert "R&amp;D team" in html  # entities unescaped exactly once
    assert "What you\u2019ll do" in html
    assert '<a href="https://acme.example/benefits">our benefits</a>' in html
    assert "click here" in html  # the javascript: link loses its href, keeps its text
    assert "<li>Design and run the services behind our fleet</li>" in html
    assert "dataLayer" not in html

    seen = job_boards.last(JobBoards.GREENHOUSE_PATH)
    assert seen.query == {"content": ["true"]}
    assert seen.headers["user-agent"] == USER_AGENT
    assert job_boards.count(JobBoards.GREENHOUSE_PATH) == 1


async def test_greenhouse_company_name_override(job_boards: JobBoards):
    postings = await fetch_greenhouse(gh(job_boards, company_name="Acme Robotics"))
    assert {p.company for p in postings} == {"Acme Robotics"}


# ----------------------------------------------------------------------------- Lever


async def test_lever_site(job_boards: JobBoards):
    postings = await fetch_lever(lever(job_boards, company_name="Globex"))

    assert [p.title for p in postings] == [
        "Staff Software Engineer, Payments", "Customer Support Specialist",
        "Data Analyst (Contract)",
    ]
    staff, support, analyst = postings
    assert staff.company == "Globex"
    # Explicit workplaceType wins over the location text; "unspecified" falls back to it.
    assert [p.remote for p in postings] == ["remote", "onsite", "hybrid"]
    assert staff.url.startswith("https://jobs.lever.co/globex/")
    assert staff.apply_url == staff.url + "/apply"
    assert staff.location == "San Francisco, CA; Remote - US"  # allLocations kept
    assert staff.salary is not None
    assert staff.salary.model_dump() == {
        "min": 170000, "max": 210000, "currency": "USD", "period": "year"}
    assert support.salary is None
    assert [p.employment_type for p in postings] == ["full_time", "part_time", "contract"]
    assert staff.posted_at == "2026-09-21T14:13:20Z"
    assert staff.tags == ["Engineering", "Payments"]

    assert_safe_html(staff.description_html)
    assert "<h3>What you'll do</h3>" in staff.description_html
    assert "<ul><li>Build the ledger</li><li>Ship weekly</li></ul>" in staff.description_html
    assert "<p>We sponsor visas.</p>" in staff.description_html
    # No HTML description at all: the plain text becomes paragraphs.
    assert analyst.description_html == "<p>Build dashboards.<br/>Work with finance.</p>"

    seen = job_boards.last(JobBoards.LEVER_PATH)
    assert seen.query == {"mode": ["json"]}


async def test_lever_company_defaults_to_site_name(job_boards: JobBoards):
    postings = await fetch_lever(lever(job_boards))
    assert {p.company for p in postings} == {"globex"}


# ----------------------------------------------------------------------------- Ashby


async def test_ashby_board(job_boards: JobBoards):
    postings = await fetch_ashby(ashby(job_boards, company_name="Initech"))

    assert [p.title for p in postings] == ["Machine Learning Engineer", "Office Manager"]
    ml, office = postings  # the unlisted job is left out
    assert ml.company == office.company == "Initech"
    assert ml.remote == "remote"  # isRemote
    assert office.remote == "hybrid"  # workplaceType beats isRemote=false
    assert ml.salary is not None
    assert ml.salary.model_dump() == {
        "min": 140000, "max": 170000, "currency": "CAD", "period": "year"}
    # No structured components: the scrapeable summary is parsed.
    assert office.salary is not None
    assert office.salary.model_dump() == {
        "min": 30, "max": 38, "currency": "USD", "period": "hour"}
    assert [p.employment_type for p in postings] == ["full_time", "contract"]
    assert ml.posted_at == "2026-10-03T16:21:55Z"
    assert ml.apply_url and ml.apply_url.endswith("/application")
    assert ml.tags == ["Engineering", "Applied ML"]
    assert_safe_html(ml.description_html)
    assert "<em>route</em>" in ml.description_html
    assert office.description_html == "<p>Keep the Chicago office running.</p>"
    assert job_boards.last(JobBoards.ASHBY_PATH).query == {"includeCompensation": ["true"]}


# ----------------------------------------------------------------------------- feeds


async def test_rss_feed(job_boards: JobBoards):
    source = FeedSource(id="feed-remote-dev", url=job_boards.url(JobBoards.RSS_PATH))
    postings = await fetch_feed(source)

    assert [p.title for p in postings] == [
        "Senior Backend Engineer, Fleet Platform (Remote)", "Frontend Developer (Hybrid)",
    ]  # the item without title or link is skipped
    backend, frontend = postings
    assert backend.company == "Acme Robotics"  # entry author (dc:creator)
    assert frontend.company == "Remote Dev Jobs"  # feed title
    assert [p.remote for p in postings] == ["remote", "hybrid"]
    assert backend.source_key == "rdj-88231"
    assert backend.posted_at == "2026-10-02T13:00:00Z"
    assert frontend.posted_at == "2026-10-01T07:30:00Z"
    assert backend.tags == ["Backend", "Go"]
    assert_safe_html(backend.description_html)
    assert "warehouse robots &amp; more" in backend.description_html
    assert "alert" not in backend.description_html
    assert frontend.description_html == (
        "<p>Build the Umbrella customer portal. React &amp; TypeScript.</p>")
    assert "rss+xml" in job_boards.last(JobBoards.RSS_PATH).headers["accept"]


async def test_rss_feed_configured_company_wins(job_boards: JobBoards):
    source = FeedSource(id="feed-remote-dev", url=job_boards.url(JobBoards.RSS_PATH),
                        company_name="Curated")
    assert {p.company for p in await fetch_feed(source)} == {"Curated"}


async def test_atom_feed(job_boards: JobBoards):
    source = FeedSource(id="feed-hooli", url=job_boards.url(JobBoards.ATOM_PATH))
    postings = await fetch_feed(source)

    assert [p.title for p in postings] == ["Site Reliability Engineer", "Remote Technical Writer"]
    sre, writer = postings
    assert sre.url == "https://careers.hooli.example/jobs/sre-2231"
    assert {p.company for p in postings} == {"Hooli Careers"}
    assert [p.remote for p in postings] == ["unknown", "remote"]
    assert sre.posted_at == "2026-10-02T15:00:00Z"
    assert writer.posted_at == "2026-10-01T08:00:00Z"  # no <published>: <updated>
    assert sre.tags == ["Infrastructure"]
    assert_safe_html(sre.description_html)
    assert "<h3>About the role</h3>" in sre.description_html
    assert "up &amp; running" in sre.description_html
    assert writer.description_html == "<p>Write the docs.</p>"


@pytest.mark.parametrize("content_type", ["application/rss+xml", "text/html; charset=utf-8"])
async def test_empty_but_valid_feed_has_no_postings(job_boards: JobBoards, content_type):
    empty = '<?xml version="1.0"?><rss version="2.0"><channel><title>x</title></channel></rss>'
    job_boards.serve_text("/feeds/empty.rss", empty, content_type)
    assert await fetch_feed(FeedSource(id="f", url=job_boards.url("/feeds/empty.rss"))) == []


async def test_feed_encoding_follows_the_server(job_boards: JobBoards):
    feed = (
        '<?xml version="1.0" encoding="UTF-8"?><rss version="2.0"><channel><title>Jobs</title>'
        "<item><title>Ingénieur logiciel – Zürich</title>"
        "<link>https://jobs.example.ch/42</link><description>Salaire: CHF 120’000"
        "</description></item></channel></rss>"
    )
    job_boards.serve_text("/feeds/ch.rss", feed, "application/rss+xml; charset=utf-8")
    [posting] = await fetch_feed(FeedSource(id="f", url=job_boards.url("/feeds/ch.rss")))
    assert posting.title == "Ingénieur logiciel – Zürich"
    assert posting.remote == "unknown"


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        ("<html><body>Service moved</body><p>oops", "text/html"),
        ('<?xml version="1.0"?><rss version="2.0"><channel><title>x</ti', "application/rss+xml"),
        ('{"jobs": []}', "application/json"),
        ("", "application/rss+xml"),
    ],
)
async def test_garbage_feed_is_payload_invalid(job_boards: JobBoards, body, content_type):
    job_boards.serve_text("/feeds/broken.rss", body, content_type)
    with pytest.raises(SourcePayloadInvalid) as caught:
        await fetch_feed(FeedSource(id="f", url=job_boards.url("/feeds/broken.rss")))
    assert_bounded(caught.value)


async def test_feed_http_errors_map_like_apis(job_boards: JobBoards):
    job_boards.fail(JobBoards.RSS_PATH, 503)
    with pytest.raises(SourceUnavailable):
        await fetch_feed(FeedSource(id="f", url=job_boards.url(JobBoards.RSS_PATH)))
    with pytest.raises(SourceMisconfigured):
        await fetch_feed(FeedSource(id="f", url=job_boards.url("/feeds/missing.rss")))


# ----------------------------------------------------------------------------- dedup


async def test_same_posting_from_greenhouse_and_a_feed_is_one_job(job_boards: JobBoards):
    from_board = await fetch_greenhouse(gh(job_boards))
    from_feed = await fetch_feed(FeedSource(id="feed", url=job_boards.url(JobBoards.RSS_PATH)))

    board_posting = next(p for p in from_board if p.title.startswith("Senior Backend"))
    feed_posting = next(p for p in from_feed if p.title.startswith("Senior Backend"))
    assert "utm_source" in feed_posting.url and "gh_src" in feed_posting.url
    assert job_id_for_url(feed_posting.url) == job_id_for_url(board_posting.url)

    board_ids = {job_id_for_url(p.url) for p in from_board}
    feed_ids = {job_id_for_url(p.url) for p in from_feed}
    assert board_ids & feed_ids == {job_id_for_url(SHARED_POSTING_URL)}


async def test_duplicate_urls_within_one_payload_collapse(job_boards: JobBoards):
    first = dict(GREENHOUSE_JOB_TEMPLATE, id=1, absolute_url=SHARED_POSTING_URL)
    second = dict(GREENHOUSE_JOB_TEMPLATE, id=2, absolute_url=SHARED_POSTING_URL + "?utm_x=1")
    job_boards.serve_json("/v1/boards/dupes/jobs", {"jobs": [first, second]})
    postings = await fetch_greenhouse(gh(job_boards, board_token="dupes"))
    assert [p.source_key for p in postings] == ["1"]


GREENHOUSE_JOB_TEMPLATE = {"title": "Engineer", "location": {"name": "Remote"}, "content": ""}


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize("status", [500, 502, 503, 429])
async def test_server_trouble_is_unavailable_and_retryable(job_boards: JobBoards, status):
    job_boards.fail(JobBoards.GREENHOUSE_PATH, status)
    with pytest.raises(SourceUnavailable) as caught:
        await fetch_greenhouse(gh(job_boards))
    assert caught.value.retryable is True
    assert caught.value.code == "source_unavailable"
    assert_bounded(caught.value)


@pytest.mark.parametrize("status", [400, 401, 403, 404])
async def test_client_errors_mean_misconfigured(job_boards: JobBoards, status):
    job_boards.fail(JobBoards.LEVER_PATH, status, b'{"ok": false, "error": "Document not found"}')
    with pytest.raises(SourceMisconfigured) as caught:
        await fetch_lever(lever(job_boards))
    assert caught.value.retryable is False
    assert caught.value.code == "configuration"
    assert_bounded(caught.value)


async def test_unknown_board_token_is_misconfigured(job_boards: JobBoards):
    with pytest.raises(SourceMisconfigured):
        await fetch_greenhouse(gh(job_boards, board_token="no-such-board"))
    assert job_boards.count("/v1/boards/no-such-board/jobs") == 1


async def test_garbage_json_is_payload_invalid(job_boards: JobBoards):
    job_boards.garbage(JobBoards.ASHBY_PATH)
    with pytest.raises(SourcePayloadInvalid) as caught:
        await fetch_ashby(ashby(job_boards))
    assert caught.value.retryable is False
    assert_bounded(caught.value)


@pytest.mark.parametrize(
    ("path", "payload", "make"),
    [
        (JobBoards.GREENHOUSE_PATH, {"postings": []}, gh),
        (JobBoards.GREENHOUSE_PATH, {"jobs": {"id": 1}}, gh),
        (JobBoards.GREENHOUSE_PATH, [], gh),
        (JobBoards.LEVER_PATH, {"ok": False, "error": "Document not found"}, lever),
        (JobBoards.ASHBY_PATH, {"apiVersion": "1", "jobs": None}, ashby),
        (JobBoards.ASHBY_PATH, "jobs", ashby),
    ],
)
async def test_wrong_shape_is_payload_invalid(job_boards: JobBoards, path, payload, make):
    job_boards.serve_json(path, payload)
    fetcher = fetcher_for(make(job_boards).kind)
    with pytest.raises(SourcePayloadInvalid):
        await fetcher(make(job_boards))


async def test_no_usable_posting_is_payload_invalid(job_boards: JobBoards):
    job_boards.serve_json(JobBoards.GREENHOUSE_PATH, {"jobs": [
        {"id": 1, "title": "No URL"},
        {"id": 2, "absolute_url": "https://boards.greenhouse.io/acme/jobs/2", "title": ""},
        {"id": 3, "absolute_url": "javascript:alert(1)", "title": "Bad URL"},
        "not an object",
    ]})
    with pytest.raises(SourcePayloadInvalid):
        await fetch_greenhouse(gh(job_boards))


async def test_empty_board_is_fine(job_boards: JobBoards):
    job_boards.serve_json(JobBoards.GREENHOUSE_PATH, {"jobs": [], "meta": {"total": 0}})
    job_boards.serve_json(JobBoards.LEVER_PATH, [])
    assert await fetch_greenhouse(gh(job_boards)) == []
    assert await fetch_lever(lever(job_boards)) == []


async def test_redirects_are_followed(job_boards: JobBoards):
    job_boards.redirect("/v1/boards/old-name/jobs", JobBoards.GREENHOUSE_PATH + "?content=true")
    postings = await fetch_greenhouse(gh(job_boards, board_token="old-name"))
    assert len(postings) == 3
    assert job_boards.count(JobBoards.GREENHOUSE_PATH) == 1


async def test_slow_server_is_unavailable(job_boards: JobBoards):
    job_boards.slow(JobBoards.GREENHOUSE_PATH, delay=1.0)
    with pytest.raises(SourceUnavailable):
        await get_json(job_boards.url(JobBoards.GREENHOUSE_PATH), timeout=0.2)


async def test_connection_refused_is_unavailable():
    with pytest.raises(SourceUnavailable) as caught:
        await get_bytes(f"http://127.0.0.1:{free_port()}/feed.rss", timeout=5)
    assert_bounded(caught.value)


async def test_registry_dispatches_every_kind(job_boards: JobBoards):
    union = typing.get_args(typing.get_args(SourceConfig)[0])
    kinds = {model.model_fields["kind"].default for model in union}
    assert kinds == set(FETCHERS)
    assert all(callable(fetcher_for(kind)) for kind in kinds)
    postings = await fetch_source(gh(job_boards))
    assert len(postings) == 3


# ----------------------------------------------------------------------------- CSV


CSV_TEXT = (
    "\ufeffURL,Title,Company,Location,Remote,Salary_Min,Salary Max,salary_currency,Posted_At,"
    "Description,Tags,Notes\n"
    "https://jobs.example.com/acme/42?utm_source=sheet,Backend Engineer,Acme,Berlin,hybrid,"
    '"70,000",90000,eur,2026-10-01,"Build APIs.\n\nOn-call <1 week/month.",python; go ;,x\n'
    "https://jobs.example.com/globex/7,Support Lead,Globex,Remote - EU,,,,,,,,\n"
    "https://jobs.example.com/initech/9,Office Manager,Initech,Chicago,,,,,,"
    "<p>Run the <b onclick='x()'>office</b></p><script>bad()</script>,,\n"
    ",Missing URL,Nobody,,,,,,,,,\n"
    "https://jobs.example.com/umbrella/1,,Umbrella,,,,,,,,,\n"
)


async def test_csv_import(tmp_path: Path):
    path = tmp_path / "jobs.csv"
    path.write_bytes(CSV_TEXT.encode("utf-8"))
    postings = await fetch_csv_file(CsvFileSource(id="csv-mine", path=str(path)))

    assert [p.title for p in postings] == ["Backend Engineer", "Support Lead", "Office Manager"]
    backend, support, office = postings
    assert backend.company == "Acme"
    assert [p.remote for p in postings] == ["hybrid", "remote", "onsite"]
    assert backend.salary is not None
    assert backend.salary.model_dump() == {
        "min": 70000, "max": 90000, "currency": "EUR", "period": None}
    assert backend.posted_at == "2026-10-01T00:00:00Z"
    assert backend.tags == ["python", "go"]
    assert backend.description_html == "<p>Build APIs.</p>\n<p>On-call &lt;1 week/month.</p>"
    assert backend.source_key == job_id_for_url("https://jobs.example.com/acme/42")
    assert support.salary is None and support.tags == []
    assert office.description_html == "<p>Run the <b>office</b></p>"


async def test_csv_missing_required_column(tmp_path: Path):
    path = tmp_path / "jobs.csv"
    path.write_text("url,title,location\nhttps://jobs.example.com/1,Engineer,Berlin\n")
    with pytest.raises(SourcePayloadInvalid):
        await fetch_csv_file(CsvFileSource(id="csv", path=str(path)))


@pytest.mark.parametrize("content", [b"", b"\xff\xfe\x00garbage", b"url,title,company\n,,\n"])
async def test_csv_unreadable_content(tmp_path: Path, content: bytes):
    path = tmp_path / "jobs.csv"
    path.write_bytes(content)
    with pytest.raises(SourcePayloadInvalid):
        await fetch_csv_file(CsvFileSource(id="csv", path=str(path)))


async def test_csv_header_only_is_empty(tmp_path: Path):
    path = tmp_path / "jobs.csv"
    path.write_text("url,title,company\n")
    assert await fetch_csv_file(CsvFileSource(id="csv", path=str(path))) == []


async def test_csv_missing_file_is_misconfigured(tmp_path: Path):
    with pytest.raises(SourceMisconfigured) as caught:
        await fetch_csv_file(CsvFileSource(id="csv", path=str(tmp_path / "nope.csv")))
    assert_bounded(caught.value)
    with pytest.raises(SourceMisconfigured):
        await fetch_csv_file(CsvFileSource(id="csv", path=str(tmp_path)))  # a directory


# ----------------------------------------------------------------------------- config


@pytest.mark.parametrize(
    "base_url",
    ["ftp://boards.example", "not a url", "https://", "file:///etc/passwd",
     "https://user:secret@boards.example", "https://boards.example/?token=x",
     "https://boards.example/#x", "javascript:alert(1)", "https://boards .example",
     "http://127.0.0.1:99999"],
)
def test_bad_base_url_is_rejected(base_url):
    with pytest.raises(ValidationError):
        GreenhouseSource(id="gh", board_token="acme", base_url=base_url)


@pytest.mark.parametrize("source_id", ["", "Bad ID", "-leading", "UPPER", "x" * 65, "a/b"])
def test_bad_source_id_is_rejected(source_id):
    with pytest.raises(ValidationError):
        LeverSource(id=source_id, company="globex")


@pytest.mark.parametrize("token", ["", "../etc", "acme/jobs", "acme?x=1", "a b"])
def test_bad_board_token_is_rejected(token):
    with pytest.raises(ValidationError):
        GreenhouseSource(id="gh", board_token=token)


def test_bad_feed_url_is_rejected():
    with pytest.raises(ValidationError):
        FeedSource(id="f", url="file:///tmp/feed.xml")
    assert FeedSource(id="f", url="https://x.example/jobs.rss?team=eng").url.endswith("team=eng")


def test_base_url_defaults_and_loopback():
    assert GreenhouseSource(id="gh", board_token="acme").base_url == (
        "https://boards-api.greenhouse.io")
    assert LeverSource(id="lv", company="globex").base_url == "https://api.lever.co"
    assert AshbySource(id="ab", board_name="Initech Labs").base_url == "https://api.ashbyhq.com"
    assert GreenhouseSource(id="gh", board_token="acme",
                            base_url="http://127.0.0.1:8123/").base_url == "http://127.0.0.1:8123"


def test_app_settings_accept_mixed_sources_from_camel_case_json():
    settings = AppSettings.model_validate({"sources": [
        {"kind": "greenhouse", "id": "gh-acme", "boardToken": "acme"},
        {"kind": "demo_board"},
        {"kind": "lever", "id": "lever-globex", "company": "globex", "companyName": "Globex",
         "baseUrl": "https://api.eu.lever.co"},
        {"kind": "ashby", "id": "ashby-initech", "boardName": "initech", "enabled": False},
        {"kind": "feed", "id": "feed-remote", "url": "https://remotedevjobs.example/feed.rss"},
        {"kind": "csv_file", "id": "csv-mine", "path": "~/jobs.csv"},
        {"kind": "json_file", "id": "json-mine", "path": "~/jobs.json"},
    ]})
    kinds = [type(source) for source in settings.sources]
    assert kinds == [GreenhouseSource, DemoBoardSource, LeverSource, AshbySource, FeedSource,
                     CsvFileSource, JsonFileSource]
    greenhouse = settings.sources[0]
    assert isinstance(greenhouse, GreenhouseSource)
    assert greenhouse.board_token == "acme"
    assert greenhouse.base_url == "https://boards-api.greenhouse.io"
    assert settings.sources[3].enabled is False

    dumped = settings.model_dump(by_alias=True, mode="json")
    assert dumped["sources"][0] == {
        "kind": "greenhouse", "id": "gh-acme", "boardToken": "acme", "companyName": None,
        "baseUrl": "https://boards-api.greenhouse.io", "enabled": True}
    assert AppSettings.model_validate(dumped) == settings


def test_app_settings_reject_unknown_kind_and_bad_entries():
    with pytest.raises(ValidationError):
        AppSettings.model_validate({"sources": [{"kind": "taleo", "id": "tl"}]})
    with pytest.raises(ValidationError):
        AppSettings.model_validate({"sources": [{"kind": "greenhouse", "id": "gh"}]})
    with pytest.raises(ValidationError):
        AppSettings.model_validate({"sources": [
            {"kind": "ashby", "id": "ab", "boardName": "x", "baseUrl": "gopher://x"}]})


# ----------------------------------------------------------------------------- normalize


@pytest.mark.parametrize(
    ("location", "hints", "expected"),
    [
        ("Remote - US", (), "remote"),
        ("Hybrid - London", (), "hybrid"),
        ("Berlin (hybrid, 2 days remote)", (), "hybrid"),
        ("New York, NY", (), "onsite"),
        ("Anywhere", (), "remote"),
        (None, (), "unknown"),
        ("", (), "unknown"),
        (None, ("Senior Engineer (Remote)",), "remote"),
        ("Austin, TX", ("Work from home role",), "remote"),
        (None, ("Distributed Systems Engineer",), "unknown"),
        (None, ("On-site technician",), "onsite"),
    ],
)
def test_infer_remote(location, hints, expected):
    assert normalize.infer_remote(location, *hints) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("$81K – $87K", (81000, 87000, "USD", None)),
        ("€50,000 - €60,000 per year", (50000, 60000, "EUR", "year")),
        ("USD 45-60 / hour", (45, 60, "USD", "hour")),
        ("$80-95k", (80000, 95000, "USD", None)),
        ("£40,000 p.a.", (40000, None, "GBP", "year")),
        ("CA$140K - CA$170K", (140000, 170000, "CAD", None)),
        ("We are 200 people in 3 offices", None),
        ("", None),
    ],
)
def test_parse_salary_text(text, expected):
    salary = normalize.parse_salary_text(text)
    if expected is None:
        assert salary is None
    else:
        assert salary is not None
        assert (salary.min, salary.max, salary.currency, salary.period) == expected


def test_sanitize_html_allowlist():
    dirty = (
        "<html><head><title>t</title></head><body>"
        '<div id="x"><p class="lead">Hello <span>there</span></p></div>'
        "<div>Loose line</div><h6>Small heading</h6>"
        '<p><a href="/relative">rel</a> <a href="mailto:jobs@acme.example">mail</a></p>'
        "<!-- tracking --><noscript><img src=x></noscript>"
        '<svg onload="alert(1)"><script>alert(2)</script></svg>'
        "<p><scr<script>ipt>alert(3)</script></p>"
        "</body></html>"
    )
    clean = normalize.sanitize_html(dirty)
    assert_safe_html(clean)
    assert "<p>Hello there</p>" in clean
    assert "<p>Loose line</p>" in clean
    assert "<h4>Small heading</h4>" in clean
    assert '<a href="mailto:jobs@acme.example">mail</a>' in clean
    assert "rel" in clean and 'href="/relative"' not in clean
    assert "tracking" not in clean
    assert "alert(2)" not in clean


def test_description_html_plain_text_and_escaped():
    assert normalize.description_html("a < b & c") == "<p>a &lt; b &amp; c</p>"
    assert normalize.description_html("&lt;p&gt;Tom &amp;amp; Jerry&lt;/p&gt;", escaped=True) == (
        "<p>Tom &amp; Jerry</p>")
    assert normalize.description_html("   ") is None
    assert normalize.description_html(None) is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-10-02T09:15:22-04:00", "2026-10-02T13:15:22Z"),
        ("2021-04-30T16:21:55.393+00:00", "2021-04-30T16:21:55Z"),
        (1790000000000, "2026-09-21T14:13:20Z"),
        ("2026-10-01", "2026-10-01T00:00:00Z"),
        ("yesterday", None),
        (None, None),
    ],
)
def test_iso_utc(value, expected):
    assert normalize.iso_utc(value) == expected
