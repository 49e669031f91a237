"""A real loopback HTTP server serving posting pages for Enrich tests.

Routes (every request is counted per path, query string excluded):

* ``/robots.txt``               the configured robots body/status (default: disallow /private/)
* ``/jobs/backend-engineer``     realistic page: nav, header, cookie banner, similar jobs,
                                 footer, and a ``.job-description`` section
* ``/jobs/data-engineer-jsonld`` page whose JobPosting JSON-LD holds the full description
* ``/jobs/expired``              thin "This job is no longer available" page
* ``/jobs/login``                login wall
* ``/private/secret-role``       a page robots.txt disallows (must never be requested)
* ``/old/backend-engineer``      301 → ``/jobs/backend-engineer``
* ``/redirect?to=<url>``         302 → any URL (e.g. another server's origin)
* ``/loop``                      302 → ``/loop`` forever
* ``/flaky``                     500 for the first ``flaky_failures`` requests, then the page
* ``/always-500``, ``/rate-limited`` (429), ``/forbidden`` (403), ``/gone`` (410)
* ``/jobs/brochure.pdf``         ``application/pdf``
* ``/huge``                      a 4 MB HTML page
* ``/slow``                      sleeps ``slow_seconds`` before answering
* ``/drip``                      a page sent one byte every ``drip_seconds`` (for a minute),
                                 each byte well inside any per-read timeout
* anything else                  404
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

DEFAULT_ROBOTS = "User-agent: *\nDisallow: /private/\n"

REQUIREMENTS = [
    "5+ years building production backend services in Python or Go.",
    "Deep experience with PostgreSQL schema design, indexing and query tuning.",
    "Operating services on Kubernetes with sensible alerting and on-call hygiene.",
    "Designing idempotent, well-versioned HTTP APIs consumed by other teams.",
    "Clear written communication in design documents and code review.",
]

COOKIE_TEXT = "We use cookies to improve your experience. Accept all cookies?"
NAV_TEXT = "Browse all jobs"
FOOTER_TEXT = "Copyright 2026 Harborlight Careers. All rights reserved."
SIMILAR_TEXT = "Senior Frontend Engineer at Quillstone"

POSTING_PAGE = f"""<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Senior Backend Engineer - Harborlight Logistics | Careers</title>
  <style>.cookie-banner {{ position: fixed; bottom: 0; }}</style>
  <script>window.dataLayer = window.dataLayer || []; function track() {{ return 1; }}</script>
</head>
<body>
  <div id="cookie-banner" class="cookie-banner">
    <p>{COOKIE_TEXT}</p><button>Accept</button><button>Manage preferences</button>
  </div>
  <header class="site-header">
    <a href="/">Harborlight Careers</a>
    <nav><ul><li><a href="/jobs">{NAV_TEXT}</a></li><li><a href="/teams">Teams</a></li>
    <li><a href="/life">Life at Harborlight</a></li><li><a href="/login">Sign in</a></li></ul></nav>
  </header>
  <div class="breadcrumbs"><a href="/">Home</a> / <a href="/jobs">Jobs</a> / Engineering</div>
  <main id="main-content">
    <div class="job-page">
      <h1 class="job-title">Senior Backend Engineer</h1>
      <ul class="job-meta"><li>Rotterdam, Netherlands</li><li>Hybrid</li><li>Full-time</li></ul>
      <a class="apply-button" href="/jobs/backend-engineer/apply">Apply now</a>
      <section class="job-description">
        <h2>About the role</h2>
        <p>Harborlight Logistics moves containers for more than four thousand shippers across
        Europe. Our platform team owns the booking, tracking and billing services that every
        customer touches, and we are hiring a <strong>Senior Backend Engineer</strong> to help
        us scale them through the next stage of growth.</p>
        <p>You will join a team of six engineers, a product manager and a designer. We ship
        several times a day, keep our services boring and observable, and write things down.</p>
        <h3>What you will do</h3>
        <ul>
          <li>Design and build the services behind container booking and live tracking.</li>
          <li>Own reliability: alerting, capacity planning and the occasional incident review.</li>
          <li>Mentor engineers through pairing, review and thoughtful design discussions.</li>
        </ul>
        <h3>Requirements</h3>
        <ul>
          {"".join(f"<li>{item}</li>" for item in REQUIREMENTS)}
        </ul>
        <h3>Nice to have</h3>
        <ul><li>Experience with event sourcing or Temporal workflows.</li>
        <li>Familiarity with logistics, shipping or supply-chain data.</li></ul>
        <p>The salary range is <em>EUR 85,000 &ndash; 105,000</em> depending on experience,
        plus a yearly learning budget and 30 days of paid holiday.</p>
      </section>
      <form class="apply-form" action="/apply"><input name="email"><button>Apply</button></form>
    </div>
  </main>
  <aside class="similar-jobs">
    <h2>Similar jobs</h2>
    <ul><li><a href="/jobs/1">{SIMILAR_TEXT}</a></li>
    <li><a href="/jobs/2">Platform Engineer at Tidewater Energy Co.</a></li></ul>
  </aside>
  <footer><p>{FOOTER_TEXT}</p><a href="/privacy">Privacy</a> <a href="/terms">Terms</a></footer>
</body>
</html>
"""

JSONLD_MARKER = "structured-data-only sentence about streaming ingestion"
JSONLD_DESCRIPTION = (
    "<p>Northwind Analytics is hiring a Data Engineer to build the pipelines that feed our "
    f"forecasting products. This {JSONLD_MARKER} lives only in the JSON-LD block.</p>"
    "<h3>Responsibilities</h3><ul>"
    "<li>Build batch and streaming pipelines with Spark, Kafka and dbt.</li>"
    "<li>Model warehouse tables that analysts and data scientists trust.</li>"
    "<li>Automate data-quality checks and alert on freshness regressions.</li></ul>"
    "<h3>Requirements</h3><ul>"
    "<li>3+ years of data engineering in Python and SQL.</li>"
    "<li>Hands-on experience with a cloud warehouse such as BigQuery or Snowflake.</li>"
    "<li>Comfort with orchestration tools like Airflow or Dagster.</li></ul>"
    "<p>We offer a remote-first team across Europe, a home-office budget, generous parental "
    "leave and a clear progression framework with twice-yearly reviews.</p>"
)
JSONLD_PAGE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Data Engineer - Northwind Analytics</title>
<script type="application/ld+json">{jsonld}</script>
</head><body>
<nav><a href="/">Home</a> <a href="/jobs">Jobs</a></nav>
<main><div class="job-content">
<h1>Data Engineer</h1>
<p>Northwind Analytics is hiring a Data Engineer. Read the full description on our
careers portal, where the page is rendered by JavaScript and this teaser is only a
summary of the role with a few words about the team and the way we work together.</p>
</div></main>
<footer>Northwind Analytics</footer>
</body></html>
""".replace(
    "{jsonld}",
    json.dumps(
        {
            "@context": "https://schema.org",
            "@graph": [
                {"@type": "Organization", "name": "Northwind Analytics"},
                {
                    "@type": "JobPosting",
                    "title": "Data Engineer",
                    "description": JSONLD_DESCRIPTION,
                    "hiringOrganization": {"@type": "Organization", "name": "Northwind"},
                },
            ],
        }
    ),
)

EXPIRED_PAGE = """<!doctype html>
<html><head><title>Job not available | Harborlight Careers</title></head><body>
<header><nav><a href="/">Home</a> <a href="/jobs">Jobs</a></nav></header>
<main><div class="job-posting">
<h1>This job is no longer available</h1>
<p>The position you are looking for has been filled or removed.</p>
<p><a href="/jobs">See all open positions</a></p>
</div></main>
<footer>Harborlight</footer>
</body></html>
"""

LOGIN_PAGE = """<!doctype html>
<html><head><title>Sign in | JobNetwork</title></head><body>
<main><div class="job-preview"><h1>Staff Engineer</h1>
<p>Acme Corp is hiring. Sign in to view the full job description and apply.</p>
<form><input type="email" name="email"><input type="password" name="password">
<button>Sign in</button></form></div></main>
</body></html>
"""

PRIVATE_PAGE = "<html><body><main><p>Secret internal role.</p></main></body></html>"


def huge_page(size: int = 4 * 1024 * 1024) -> bytes:
    head = b"<!doctype html><html><body><main><div class='job-description'>"
    filler = b"<p>" + b"Lorem ipsum dolor sit amet consectetur. " * 50 + b"</p>\n"
    parts = [head]
    total = len(head)
    while total < size:
        parts.append(filler)
        total += len(filler)
    parts.append(b"</div></main></body></html>")
    return b"".join(parts)


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request: object, client_address: object) -> None:
        # Clients that hang up early (size cap, timeouts) are expected, not test noise.
        return


class PostingPagesServer:
    """ThreadingHTTPServer on 127.0.0.1 with an ephemeral port, run in a daemon thread."""

    def __init__(
        self,
        *,
        robots_body: str = DEFAULT_ROBOTS,
        robots_status: int = 200,
        flaky_failures: int = 2,
        slow_seconds: float = 2.0,
        drip_seconds: float = 0.2,
    ) -> None:
        self.robots_body = robots_body
        self.robots_status = robots_status
        self.flaky_failures = flaky_failures
        self.slow_seconds = slow_seconds
        self.drip_seconds = drip_seconds
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()
        self._huge = huge_page()
        self._httpd = _QuietServer(("127.0.0.1", 0), self._handler_class())
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="posting-pages", daemon=True)

    # -- lifecycle ------------------------------------------------------------------
    def start(self) -> PostingPagesServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> PostingPagesServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def origin(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    def url(self, path: str) -> str:
        return self.origin + path

    @property
    def host(self) -> str:
        """``host:port``: what a test lists under ``localNetworkHosts`` to reach this
        loopback server from links in postings (JobCtrl refuses private addresses)."""
        return self.origin.removeprefix("http://")

    # -- request accounting -----------------------------------------------------------
    def count(self, path: str) -> int:
        with self._lock:
            return self._counts[path]

    @property
    def counts(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)

    def reset(self) -> None:
        with self._lock:
            self._counts.clear()

    def _hit(self, path: str) -> int:
        with self._lock:
            self._counts[path] += 1
            return self._counts[path]

    # -- routing ----------------------------------------------------------------------
    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                return

            def do_GET(self) -> None:  # noqa: N802 - http.server naming
                parts = urlsplit(self.path)
                hits = server._hit(parts.path)
                server._route(self, parts.path, parse_qs(parts.query), hits)

        return Handler

    def _route(
        self,
        handler: BaseHTTPRequestHandler,
        path: str,
        query: dict[str, list[str]],
        hits: int,
    ) -> None:
        html = "text/html; charset=utf-8"
        if path == "/robots.txt":
            if self.robots_status == 200:
                _send(handler, 200, "text/plain; charset=utf-8", self.robots_body.encode())
            else:
                _send(handler, self.robots_status, "text/plain", b"robots unavailable")
        elif path == "/jobs/backend-engineer":
            _send(handler, 200, html, POSTING_PAGE.encode())
        elif path == "/jobs/data-engineer-jsonld":
            _send(handler, 200, html, JSONLD_PAGE.encode())
        elif path == "/jobs/expired":
            _send(handler, 200, html, EXPIRED_PAGE.encode())
        elif path == "/jobs/login":
            _send(handler, 200, html, LOGIN_PAGE.encode())
        elif path.startswith("/private/"):
            _send(handler, 200, html, PRIVATE_PAGE.encode())
        elif path == "/old/backend-engineer":
            _send(handler, 301, html, b"", location="/jobs/backend-engineer")
        elif path == "/redirect":
            _send(handler, 302, html, b"", location=query.get("to", ["/"])[0])
        elif path == "/loop":
            _send(handler, 302, html, b"", location="/loop")
        elif path == "/flaky":
            if hits <= self.flaky_failures:
                _send(handler, 500, "text/plain", b"internal error")
            else:
                _send(handler, 200, html, POSTING_PAGE.encode())
        elif path == "/always-500":
            _send(handler, 500, "text/plain", b"internal error")
        elif path == "/rate-limited":
            _send(handler, 429, "text/plain", b"slow down")
        elif path == "/forbidden":
            _send(handler, 403, html, b"<html><body>Forbidden</body></html>")
        elif path == "/gone":
            _send(handler, 410, html, b"<html><body>Gone</body></html>")
        elif path == "/jobs/brochure.pdf":
            _send(handler, 200, "application/pdf", b"%PDF-1.4\n% fake brochure\n%%EOF\n")
        elif path == "/huge":
            _send(handler, 200, html, self._huge)
        elif path == "/drip":
            _drip(handler, html, self.drip_seconds)
        elif path == "/slow":
            time.sleep(self.slow_seconds)
            _send(handler, 200, html, POSTING_PAGE.encode())
        else:
            _send(handler, 404, html, b"<html><body>Not found</body></html>")


def _send(
    handler: BaseHTTPRequestHandler,
    status: int,
    content_type: str,
    body: bytes,
    *,
    location: str | None = None,
) -> None:
    try:
        handler.send_response(status)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(body)))
        if location is not None:
            handler.send_header("Location", location)
        handler.end_headers()
        handler.wfile.write(body)
    except (BrokenPipeError, ConnectionResetError):
        # The client stopped reading (size cap, timeout): that is its right.
        pass


def _drip(handler: BaseHTTPRequestHandler, content_type: str, pause: float) -> None:
    """A slowloris answer: a minute of bytes, one at a time."""
    count = max(1, int(60 / pause))
    try:
        handler.send_response(200)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(count))
        handler.end_headers()
        handler.wfile.flush()
        for _ in range(count):
            handler.wfile.write(b" ")
            handler.wfile.flush()
            time.sleep(pause)
    except (BrokenPipeError, ConnectionResetError):
        return
