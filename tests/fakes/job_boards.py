"""A real loopback HTTP server playing Greenhouse, Lever, Ashby and two job feeds.

Payloads follow the shapes those public APIs return (trimmed to the fields we read plus
some we don't). Any path can be made to fail (status, garbage body, delay, redirect), and
every request is recorded so tests can count them.

Use the ``job_boards`` fixture: ``from tests.fakes.job_boards import job_boards_fixture``.
"""

from __future__ import annotations

import html
import json
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

# ---------------------------------------------------------------------------- payloads

SHARED_POSTING_URL = "https://boards.greenhouse.io/acme/jobs/4012345006"

_GH_BACKEND_HTML = (
    '<div class="content-intro"><p>At <strong>Acme Robotics</strong>, our R&amp;D team '
    "builds warehouse robots&nbsp;that people like working next to.</p></div>"
    "<h2>What you&rsquo;ll do</h2>"
    '<ul><li onclick="track()">Design and run the services behind our fleet</li>'
    '<li>Own on-call for what you ship</li></ul>'
    '<p style="font-size:12px">Read about <a href="https://acme.example/benefits" '
    'target="_blank" rel="noopener">our benefits</a> or '
    '<a href="javascript:alert(document.cookie)">click here</a>.</p>'
    "<script>window.dataLayer.push({'event': 'job_view'})</script>"
    "<style>.content-intro { color: #333 }</style>"
    '<div class="content-pay-transparency"><div class="title">Pay range</div>'
    '<div class="pay-range"><span>$150,000</span><span class="divider">&mdash;</span>'
    "<span>$185,000 USD</span></div></div>"
    '<img src="https://acme.example/pixel.gif" onerror="alert(1)">'
)

GREENHOUSE_JOBS: dict[str, Any] = {
    "jobs": [
        {
            "absolute_url": SHARED_POSTING_URL,
            "data_compliance": [{"type": "gdpr", "requires_consent": False}],
            "internal_job_id": 2011001,
            "location": {"name": "Remote - US"},
            "metadata": [
                {"id": 7001, "name": "Employment Type", "value": "Full-time",
                 "value_type": "single_select"},
                {"id": 7002, "name": "Salary Range",
                 "value": {"min_value": "150000.0", "max_value": "185000.0", "unit": "USD"},
                 "value_type": "currency_range"},
            ],
            "id": 4012345006,
            "updated_at": "2026-10-02T09:15:22-04:00",
            "first_published": "2026-09-28T14:00:00-04:00",
            "requisition_id": "ENG-104",
            "title": "Senior Backend Engineer, Fleet Platform",
            "content": html.escape(_GH_BACKEND_HTML),
            "departments": [{"id": 50, "name": "Engineering", "child_ids": [], "parent_id": None}],
            "offices": [{"id": 60, "name": "Remote", "location": "United States",
                         "child_ids": [], "parent_id": None}],
        },
        {
            "absolute_url": "https://boards.greenhouse.io/acme/jobs/4012345007?gh_jid=4012345007",
            "internal_job_id": 2011002,
            "location": {"name": "New York, NY"},
            "metadata": None,
            "id": 4012345007,
            "updated_at": "2026-10-01T12:00:00-04:00",
            "requisition_id": "OPS-12",
            "title": "Warehouse Operations Lead",
            "content": html.escape("<p>Lead a team of 12 on the floor in Brooklyn.</p>"),
            "departments": [{"id": 51, "name": "Operations"}],
            "offices": [{"id": 61, "name": "New York"}],
        },
        {
            "absolute_url": "https://boards.greenhouse.io/acme/jobs/4012345008",
            "internal_job_id": 2011003,
            "location": {"name": "Hybrid - London, UK"},
            "metadata": [],
            "id": 4012345008,
            "updated_at": "2026-09-30T08:30:00Z",
            "title": "Product Designer",
            "content": "",
            "departments": [],
            "offices": [],
        },
        {
            # A draft-ish entry without a public URL: skipped, not fatal.
            "absolute_url": None,
            "internal_job_id": 2011004,
            "location": {"name": "Remote"},
            "id": 4012345009,
            "updated_at": "2026-09-29T08:30:00Z",
            "title": "Placeholder",
            "content": "",
        },
    ],
    "meta": {"total": 4},
}

_LEVER_CREATED = 1790000000000  # ms since the epoch

LEVER_POSTINGS: list[dict[str, Any]] = [
    {
        "additional": "<div>We sponsor visas.</div><div><br></div><div>Equal opportunity "
                      "employer.</div>",
        "additionalPlain": "We sponsor visas.\n\nEqual opportunity employer.",
        "categories": {
            "commitment": "Full-time",
            "department": "Engineering",
            "location": "San Francisco, CA",
            "team": "Payments",
            "allLocations": ["San Francisco, CA", "Remote - US"],
        },
        "createdAt": _LEVER_CREATED,
        "descriptionPlain": "Globex moves money for small businesses.",
        "description": "<div><b>Globex</b> moves money for small businesses.</div>"
                       "<script src=\"https://cdn.example/track.js\"></script>",
        "id": "5f0c8a2e-1b7d-4a35-9a51-0d7c3b1e2a01",
        "lists": [
            {"text": "What you'll do", "content": "<li>Build the ledger</li><li>Ship weekly</li>"},
            {"text": "About you", "content": "<li>5+ years with Go or Kotlin</li>"},
        ],
        "text": "Staff Software Engineer, Payments",
        "country": "US",
        "workplaceType": "remote",
        "opening": "",
        "openingPlain": "",
        "descriptionBody": "",
        "descriptionBodyPlain": "",
        "hostedUrl": "https://jobs.lever.co/globex/5f0c8a2e-1b7d-4a35-9a51-0d7c3b1e2a01",
        "applyUrl": "https://jobs.lever.co/globex/5f0c8a2e-1b7d-4a35-9a51-0d7c3b1e2a01/apply",
        "salaryDescription": "<div>Base pay for this role</div>",
        "salaryDescriptionPlain": "Base pay for this role",
        "salaryRange": {"max": 210000, "min": 170000, "currency": "USD",
                        "interval": "per-year-salary"},
    },
    {
        "additional": "",
        "categories": {"commitment": "Part-time", "location": "Austin, TX", "team": "Support"},
        "createdAt": _LEVER_CREATED + 86_400_000,
        "descriptionPlain": "Help our customers.",
        "description": "<div>Help our customers.</div>",
        "id": "5f0c8a2e-1b7d-4a35-9a51-0d7c3b1e2a02",
        "lists": [],
        "text": "Customer Support Specialist",
        "workplaceType": "on-site",
        "hostedUrl": "https://jobs.lever.co/globex/5f0c8a2e-1b7d-4a35-9a51-0d7c3b1e2a02",
        "applyUrl": "https://jobs.lever.co/globex/5f0c8a2e-1b7d-4a35-9a51-0d7c3b1e2a02/apply",
    },
    {
        "categories": {"commitment": "Contract", "location": "Hybrid - Berlin", "team": "Data"},
        "createdAt": _LEVER_CREATED + 2 * 86_400_000,
        "descriptionPlain": "Build dashboards.\nWork with finance.",
        "id": "5f0c8a2e-1b7d-4a35-9a51-0d7c3b1e2a03",
        "lists": [],
        "text": "Data Analyst (Contract)",
        "workplaceType": "unspecified",
        "hostedUrl": "https://jobs.lever.co/globex/5f0c8a2e-1b7d-4a35-9a51-0d7c3b1e2a03",
        "applyUrl": "https://jobs.lever.co/globex/5f0c8a2e-1b7d-4a35-9a51-0d7c3b1e2a03/apply",
    },
]

ASHBY_BOARD: dict[str, Any] = {
    "apiVersion": "1",
    "jobs": [
        {
            "id": "0b7f5c4e-8d3a-4f6e-9a21-4c1e2d3f4a5b",
            "title": "Machine Learning Engineer",
            "department": "Engineering",
            "team": "Applied ML",
            "employmentType": "FullTime",
            "location": "Toronto, ON",
            "secondaryLocations": [{"location": "Montreal, QC",
                                    "address": {"addressLocality": "Montreal"}}],
            "shouldDisplayCompensationOnJobPostings": True,
            "address": {"postalAddress": {"addressLocality": "Toronto", "addressRegion": "ON",
                                          "addressCountry": "Canada"}},
            "isListed": True,
            "isRemote": True,
            "workplaceType": None,
            "publishedAt": "2026-10-03T16:21:55.393+00:00",
            "jobUrl": "https://jobs.ashbyhq.com/initech/0b7f5c4e-8d3a-4f6e-9a21-4c1e2d3f4a5b",
            "applyUrl": "https://jobs.ashbyhq.com/initech/0b7f5c4e-8d3a-4f6e-9a21-4c1e2d3f4a5b"
                        "/application",
            "descriptionHtml": "<p>Train models that <em>route</em> support tickets.</p>"
                               '<p><iframe src="https://www.youtube.com/embed/x"></iframe></p>',
            "descriptionPlain": "Train models that route support tickets.",
            "compensation": {
                "compensationTierSummary": "CA$140K – CA$170K • 0.05% – 0.1%",
                "scrapeableCompensationSalarySummary": "CA$140K - CA$170K",
                "compensationTiers": [
                    {
                        "id": "c1", "title": "Canada", "tierSummary": "CA$140K – CA$170K",
                        "additionalInformation": None,
                        "components": [
                            {"id": "c1-eq", "summary": "0.05% – 0.1%",
                             "compensationType": "EquityPercentage", "interval": "NONE",
                             "currencyCode": None, "minValue": 0.05, "maxValue": 0.1},
                            {"id": "c1-sal", "summary": "CA$140K – CA$170K",
                             "compensationType": "Salary", "interval": "1 YEAR",
                             "currencyCode": "CAD", "minValue": 140000, "maxValue": 170000},
                        ],
                    }
                ],
                "summaryComponents": [
                    {"compensationType": "Salary", "interval": "1 YEAR", "currencyCode": "CAD",
                     "minValue": 140000, "maxValue": 170000},
                ],
            },
        },
        {
            "id": "1c8a6d5f-9e4b-4a7f-8b32-5d2f3e4a5b6c",
            "title": "Office Manager",
            "department": "G&A",
            "team": None,
            "employmentType": "Contract",
            "location": "Chicago, IL",
            "isListed": True,
            "isRemote": False,
            "workplaceType": "Hybrid",
            "publishedAt": "2026-10-04T10:00:00.000+00:00",
            "jobUrl": "https://jobs.ashbyhq.com/initech/1c8a6d5f-9e4b-4a7f-8b32-5d2f3e4a5b6c",
            "applyUrl": "https://jobs.ashbyhq.com/initech/1c8a6d5f-9e4b-4a7f-8b32-5d2f3e4a5b6c"
                        "/application",
            "descriptionHtml": "",
            "descriptionPlain": "Keep the Chicago office running.",
            "compensation": {
                "compensationTierSummary": "$30 – $38 per hour",
                "scrapeableCompensationSalarySummary": "$30 - $38 per hour",
                "compensationTiers": [],
                "summaryComponents": [],
            },
        },
        {
            "id": "2d9b7e6a-0f5c-4b8a-9c43-6e3a4f5b6c7d",
            "title": "Unlisted Role",
            "employmentType": "FullTime",
            "location": "Remote",
            "isListed": False,
            "isRemote": True,
            "publishedAt": "2026-10-05T10:00:00.000+00:00",
            "jobUrl": "https://jobs.ashbyhq.com/initech/2d9b7e6a-0f5c-4b8a-9c43-6e3a4f5b6c7d",
            "descriptionHtml": "<p>Hidden</p>",
        },
    ],
}

RSS_FEED = f"""<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/"
     xmlns:atom="http://www.w3.org/2005/Atom">
  <channel>
    <title>Remote Dev Jobs</title>
    <link>https://remotedevjobs.example/</link>
    <description>Hand-picked remote developer jobs</description>
    <atom:link href="https://remotedevjobs.example/feed.rss" rel="self"
               type="application/rss+xml"/>
    <lastBuildDate>Sat, 03 Oct 2026 12:00:00 GMT</lastBuildDate>
    <item>
      <title>Senior Backend Engineer, Fleet Platform (Remote)</title>
      <link>{html.escape(SHARED_POSTING_URL)}?utm_source=remotedevjobs&amp;utm_medium=rss&amp;gh_src=8f3a2b1c1</link>
      <guid isPermaLink="false">rdj-88231</guid>
      <dc:creator>Acme Robotics</dc:creator>
      <category>Backend</category>
      <category>Go</category>
      <pubDate>Fri, 02 Oct 2026 13:00:00 GMT</pubDate>
      <description><![CDATA[<p>Acme builds warehouse robots &amp; more.</p>
        <p onmouseover="steal()">Apply via Greenhouse.</p><script>alert('x')</script>]]>
      </description>
    </item>
    <item>
      <title>Frontend Developer (Hybrid)</title>
      <link>https://remotedevjobs.example/jobs/frontend-developer-umbrella?ref=rss</link>
      <guid isPermaLink="true">https://remotedevjobs.example/jobs/frontend-developer-umbrella</guid>
      <pubDate>Thu, 01 Oct 2026 09:30:00 +0200</pubDate>
      <description>Build the Umbrella customer portal. React &amp; TypeScript.</description>
    </item>
    <item>
      <title></title>
      <description>An item without a title or link is skipped.</description>
    </item>
  </channel>
</rss>
"""

ATOM_FEED = """<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Hooli Careers</title>
  <id>urn:uuid:60a76c80-d399-11d9-b93C-0003939e0af6</id>
  <updated>2026-10-03T18:30:02Z</updated>
  <link href="https://careers.hooli.example/"/>
  <entry>
    <title>Site Reliability Engineer</title>
    <link rel="alternate" type="text/html"
          href="https://careers.hooli.example/jobs/sre-2231"/>
    <id>urn:hooli:job:2231</id>
    <published>2026-10-02T08:00:00-07:00</published>
    <updated>2026-10-03T08:00:00-07:00</updated>
    <summary>Keep Hooli up.</summary>
    <content type="html">&lt;h3&gt;About the role&lt;/h3&gt;&lt;p&gt;Keep Hooli
      up &amp;amp; running.&lt;/p&gt;&lt;style&gt;h3{color:red}&lt;/style&gt;</content>
    <category term="Infrastructure"/>
  </entry>
  <entry>
    <title>Remote Technical Writer</title>
    <link rel="alternate" href="https://careers.hooli.example/jobs/writer-2232"/>
    <id>urn:hooli:job:2232</id>
    <updated>2026-10-01T08:00:00Z</updated>
    <summary type="text">Write the docs.</summary>
  </entry>
</feed>
"""

# ---------------------------------------------------------------------------- the server


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    content_type: str = "application/json; charset=utf-8"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass(frozen=True)
class Seen:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    method: str = "GET"
    body: bytes = b""

    def json(self) -> Any:
        return json.loads(self.body or b"null")


def json_reply(payload: Any, status: int = 200) -> Reply:
    return Reply(status=status, body=json.dumps(payload).encode("utf-8"))


NOT_FOUND = json_reply({"status": 404, "error": "Not found"}, status=404)


class JobBoards:
    """Routes by path (query ignored for matching, recorded for assertions)."""

    GREENHOUSE_PATH = "/v1/boards/acme/jobs"
    LEVER_PATH = "/v0/postings/globex"
    ASHBY_PATH = "/posting-api/job-board/initech"
    RSS_PATH = "/feeds/remote-dev.rss"
    ATOM_PATH = "/feeds/hooli.atom"

    def __init__(self) -> None:
        self.routes: dict[str, Reply] = {}
        # path -> a function of the request, for answers that depend on it (paging)
        self.dynamic: dict[str, Callable[[Seen], Reply]] = {}
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.serve_defaults()

    # -- routes

    def serve_defaults(self) -> None:
        self.route(self.GREENHOUSE_PATH, json_reply(GREENHOUSE_JOBS))
        self.route(self.LEVER_PATH, json_reply(LEVER_POSTINGS))
        self.route(self.ASHBY_PATH, json_reply(ASHBY_BOARD))
        self.route(self.RSS_PATH, Reply(body=RSS_FEED.encode("utf-8"),
                                        content_type="application/rss+xml; charset=utf-8"))
        self.route(self.ATOM_PATH, Reply(body=ATOM_FEED.encode("utf-8"),
                                         content_type="application/atom+xml"))

    def route(self, path: str, reply: Reply) -> None:
        with self._lock:
            self.routes[path] = reply
            self.dynamic.pop(path, None)

    def serve_dynamic(self, path: str, answer: Callable[[Seen], Reply]) -> None:
        with self._lock:
            self.dynamic[path] = answer
            self.routes.pop(path, None)

    def queue(self, path: str, *replies: Reply) -> None:
        """Answer the next requests to ``path`` with ``replies`` in turn, then as before
        (a 429 or two before the real answer)."""
        with self._lock:
            pending = list(replies)
            previous = self.dynamic.get(path)
            fallback = self.routes.get(path, NOT_FOUND)

        def answer(seen: Seen) -> Reply:
            with self._lock:
                if pending:
                    return pending.pop(0)
            return previous(seen) if previous else fallback

        with self._lock:
            self.dynamic[path] = answer

    def serve_json(self, path: str, payload: Any, status: int = 200) -> None:
        self.route(path, json_reply(payload, status))

    def serve_text(self, path: str, text: str, content_type: str, status: int = 200) -> None:
        self.route(path, Reply(status=status, body=text.encode("utf-8"),
                               content_type=content_type))

    def fail(self, path: str, status: int, body: bytes = b'{"error": "boom"}') -> None:
        self.route(path, Reply(status=status, body=body))

    def garbage(self, path: str, body: bytes = b'{"jobs": [{"id": 1, "title": "Trunc') -> None:
        self.route(path, Reply(body=body))

    def slow(self, path: str, delay: float) -> None:
        with self._lock:
            base = self.routes.get(path, NOT_FOUND)
            self.routes[path] = Reply(base.status, base.body, base.content_type,
                                      dict(base.headers), delay)

    def redirect(self, path: str, to: str, status: int = 301) -> None:
        self.route(path, Reply(status=status, body=b"", headers={"Location": to}))

    # -- observations

    def count(self, path: str) -> int:
        with self._lock:
            return Counter(seen.path for seen in self.seen)[path]

    def last(self, path: str) -> Seen:
        with self._lock:
            return [seen for seen in self.seen if seen.path == path][-1]

    # -- lifecycle

    @property
    def base_url(self) -> str:
        assert self._server is not None, "server not started"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def url(self, path: str) -> str:
        return self.base_url + path

    def start(self) -> JobBoards:
        boards = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = 10

            def do_GET(self) -> None:  # noqa: N802 (http.server naming)
                self._answer("GET")

            def do_POST(self) -> None:  # noqa: N802 (http.server naming)
                self._answer("POST")

            def _answer(self, method: str) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                seen = Seen(parts.path, parse_qs(parts.query),
                            {k.lower(): v for k, v in self.headers.items()}, method, body)
                with boards._lock:
                    boards.seen.append(seen)
                    dynamic = boards.dynamic.get(parts.path)
                    reply = boards.routes.get(parts.path, NOT_FOUND)
                if dynamic is not None:
                    reply = dynamic(seen)
                if reply.delay:
                    time.sleep(reply.delay)
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", reply.content_type)
                    self.send_header("Content-Length", str(len(reply.body)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(reply.body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
            name="fake-job-boards", daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)


@pytest.fixture(name="fast_retries")
def fast_retries_fixture(monkeypatch):
    """Rate-limit backoff in milliseconds, so a 429 test does not wait seconds."""
    from backend.sources import http

    monkeypatch.setattr(http, "RATE_LIMIT_RETRY",
                        http.RateLimitRetry(attempts=3, first_wait=0.01, max_wait=0.05))


@pytest.fixture(name="job_boards")
def job_boards_fixture():
    boards = JobBoards().start()
    try:
        yield boards
    finally:
        boards.stop()
