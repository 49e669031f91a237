"""Enrich against a real loopback HTTP server: robots, typed failures, extraction."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from backend.pipeline.enrich import (
    BOUNDED_ENRICH_CODES,
    EXTRACTION_REASONS,
    MAX_PAGE_BYTES,
    USER_AGENT,
    EnrichBlocked,
    EnrichError,
    EnrichGone,
    EnrichNotHtml,
    EnrichRejected,
    EnrichUnavailable,
    Extraction,
    RobotsCache,
    description_from_source,
    extract_description,
    fetch_posting_page,
)
from backend.supervision.ports import free_port
from tests.fakes.posting_pages import (
    COOKIE_TEXT,
    FOOTER_TEXT,
    JSONLD_MARKER,
    NAV_TEXT,
    REQUIREMENTS,
    SIMILAR_TEXT,
    PostingPagesServer,
)

ROOT = Path(__file__).resolve().parents[2]
ALLOWED_TAGS = {"p", "ul", "ol", "li", "h2", "h3", "h4", "strong", "em", "br"}


@pytest.fixture(scope="module")
def server() -> Iterator[PostingPagesServer]:
    with PostingPagesServer() as running:
        yield running


@pytest.fixture(scope="module")
def other_server() -> Iterator[PostingPagesServer]:
    """A second origin (different port) with the same default robots.txt."""
    with PostingPagesServer() as running:
        yield running


@pytest.fixture(autouse=True)
def _fresh_counts(server: PostingPagesServer, other_server: PostingPagesServer) -> None:
    server.reset()
    other_server.reset()


async def fetch(url: str, robots: RobotsCache | None = None, timeout: float = 5.0) -> str:
    async with httpx.AsyncClient(timeout=timeout) as client:
        return await fetch_posting_page(url, client=client, robots=robots or RobotsCache())


def assert_allowlisted(html: str) -> None:
    for tag in re.findall(r"</?([a-zA-Z0-9]+)([^>]*)>", html):
        name, attrs = tag
        assert name in ALLOWED_TAGS, name
        assert attrs.strip() == "", attrs


# --------------------------------------------------------------------------- fetch + extract


async def test_allowed_posting_page_is_extracted_without_page_chrome(server):
    html = await fetch(server.url("/jobs/backend-engineer"))
    extraction = extract_description(html)

    assert isinstance(extraction, Extraction)
    assert extraction.confidence == "high"
    assert extraction.reason is None
    assert extraction.method == "dom"
    assert extraction.word_count >= 80
    for requirement in REQUIREMENTS:
        assert f"- {requirement}" in extraction.text
        assert f"<li>{requirement}</li>" in extraction.html
    for chrome in (COOKIE_TEXT, NAV_TEXT, FOOTER_TEXT, SIMILAR_TEXT, "Apply now", "Home"):
        assert chrome not in extraction.text
    assert "window.dataLayer" not in extraction.text
    assert ".cookie-banner" not in extraction.text
    assert "<strong>Senior Backend Engineer</strong>" in extraction.html
    assert "<h3>Requirements</h3>" in extraction.html
    assert_allowlisted(extraction.html)
    # Source line breaks inside a paragraph are not kept as hard breaks.
    assert "shippers across Europe" in extraction.text


async def test_json_ld_job_posting_description_is_preferred(server):
    extraction = extract_description(await fetch(server.url("/jobs/data-engineer-jsonld")))

    assert extraction.method == "json_ld"
    assert extraction.confidence == "high"
    assert JSONLD_MARKER in extraction.text
    assert "careers portal" not in extraction.text  # the visible teaser lost
    assert "- Comfort with orchestration tools like Airflow or Dagster." in extraction.text
    assert_allowlisted(extraction.html)


async def test_redirect_to_another_path_is_followed(server):
    html = await fetch(server.url("/old/backend-engineer"))

    assert REQUIREMENTS[0] in extract_description(html).text
    assert server.count("/old/backend-engineer") == 1
    assert server.count("/jobs/backend-engineer") == 1


async def test_page_larger_than_cap_is_truncated(server):
    html = await fetch(server.url("/huge"))

    assert len(html.encode("utf-8")) == MAX_PAGE_BYTES


# --------------------------------------------------------------------------- robots.txt


async def test_disallowed_path_is_a_typed_block_and_never_requested(server):
    with pytest.raises(EnrichBlocked) as caught:
        await fetch(server.url("/private/secret-role"))

    assert caught.value.code == "ENRICH_ROBOTS_DISALLOWED"
    assert caught.value.retryable is False
    assert str(caught.value) == "ENRICH_ROBOTS_DISALLOWED"
    assert server.count("/private/secret-role") == 0
    assert server.count("/robots.txt") == 1


async def test_robots_is_fetched_once_per_origin(server, other_server):
    robots = RobotsCache()
    async with httpx.AsyncClient(timeout=5) as client:
        for path in ("/jobs/backend-engineer", "/jobs/data-engineer-jsonld", "/jobs/expired"):
            await fetch_posting_page(server.url(path), client=client, robots=robots)
        with pytest.raises(EnrichBlocked):
            await fetch_posting_page(server.url("/private/secret-role"), client=client, robots=robots)
        await fetch_posting_page(other_server.url("/jobs/backend-engineer"), client=client, robots=robots)
        assert await robots.allowed(client, server.url("/jobs/anything")) is True
        assert await robots.allowed(client, server.url("/private/x")) is False

    assert server.count("/robots.txt") == 1
    assert other_server.count("/robots.txt") == 1
    assert len(robots) == 2


async def test_cross_origin_redirect_rechecks_that_origins_robots(server, other_server):
    target = other_server.url("/private/secret-role")
    with pytest.raises(EnrichBlocked):
        await fetch(server.url(f"/redirect?to={target}"))

    assert server.count("/redirect") == 1
    assert other_server.count("/robots.txt") == 1
    assert other_server.count("/private/secret-role") == 0


async def test_same_origin_redirect_into_disallowed_path_is_blocked(server):
    with pytest.raises(EnrichBlocked):
        await fetch(server.url("/redirect?to=/private/secret-role"))

    assert server.count("/private/secret-role") == 0
    assert server.count("/robots.txt") == 1


async def test_rules_naming_our_user_agent_apply():
    robots_body = "User-agent: JobCtrl\nDisallow: /jobs/\n\nUser-agent: *\nAllow: /\n"
    with PostingPagesServer(robots_body=robots_body) as strict:
        with pytest.raises(EnrichBlocked):
            await fetch(strict.url("/jobs/backend-engineer"))
        assert strict.count("/jobs/backend-engineer") == 0
    assert USER_AGENT.startswith("JobCtrl/")


async def test_most_specific_rule_and_wildcards_win():
    robots_body = (
        "User-agent: *\nDisallow: /\nAllow: /jobs/\nDisallow: /jobs/*.pdf$\nDisallow: /jobs/*/apply\n"
    )
    with PostingPagesServer(robots_body=robots_body) as site:
        robots = RobotsCache()
        async with httpx.AsyncClient(timeout=5) as client:
            html = await fetch_posting_page(site.url("/jobs/backend-engineer"), client=client, robots=robots)
            assert REQUIREMENTS[0] in html
            for path in ("/jobs/brochure.pdf", "/jobs/backend-engineer/apply", "/gone"):
                with pytest.raises(EnrichBlocked):
                    await fetch_posting_page(site.url(path), client=client, robots=robots)
                assert site.count(path) == 0
            assert await robots.allowed(client, site.url("/jobs/brochure.pdf?v=2")) is True
        assert site.count("/robots.txt") == 1


async def test_robots_404_allows_everything():
    with PostingPagesServer(robots_status=404) as lenient:
        html = await fetch(lenient.url("/private/secret-role"))
    assert "Secret internal role" in html


@pytest.mark.parametrize("status", [401, 403])
async def test_robots_401_403_disallow_everything(status):
    with PostingPagesServer(robots_status=status) as closed:
        with pytest.raises(EnrichBlocked):
            await fetch(closed.url("/jobs/backend-engineer"))
        assert closed.count("/jobs/backend-engineer") == 0


async def test_robots_5xx_is_retryable_and_not_cached():
    with PostingPagesServer(robots_status=503) as flaky_robots:
        robots = RobotsCache()
        async with httpx.AsyncClient(timeout=5) as client:
            for _ in range(2):
                with pytest.raises(EnrichUnavailable) as caught:
                    await fetch_posting_page(
                        flaky_robots.url("/jobs/backend-engineer"), client=client, robots=robots
                    )
                assert caught.value.retryable is True
        assert flaky_robots.count("/robots.txt") == 2
        assert flaky_robots.count("/jobs/backend-engineer") == 0
        assert len(robots) == 0


# --------------------------------------------------------------------------- typed failures


async def test_500_is_retryable_unavailable_until_the_server_recovers(server):
    robots = RobotsCache()
    for _ in range(server.flaky_failures):
        with pytest.raises(EnrichUnavailable) as caught:
            await fetch(server.url("/flaky"), robots=robots)
        assert caught.value.code == "ENRICH_FETCH_UNAVAILABLE"
        assert caught.value.retryable is True

    html = await fetch(server.url("/flaky"), robots=robots)  # what a Temporal retry sees
    assert extract_description(html).confidence == "high"
    assert server.count("/flaky") == server.flaky_failures + 1


@pytest.mark.parametrize("path", ["/always-500", "/rate-limited"])
async def test_5xx_and_429_are_unavailable(server, path):
    with pytest.raises(EnrichUnavailable):
        await fetch(server.url(path))


@pytest.mark.parametrize("path", ["/no-such-posting", "/gone"])
async def test_404_and_410_are_gone(server, path):
    with pytest.raises(EnrichGone) as caught:
        await fetch(server.url(path))
    assert caught.value.code == "ENRICH_POSTING_GONE"
    assert caught.value.retryable is False


async def test_non_html_content_is_a_typed_error(server):
    with pytest.raises(EnrichNotHtml) as caught:
        await fetch(server.url("/jobs/brochure.pdf"))
    assert caught.value.code == "ENRICH_NOT_HTML"
    assert caught.value.retryable is False


async def test_other_4xx_and_redirect_loops_are_rejected(server):
    with pytest.raises(EnrichRejected):
        await fetch(server.url("/forbidden"))
    with pytest.raises(EnrichRejected):
        await fetch(server.url("/loop"))
    assert server.count("/loop") == 6  # the first request plus five redirects, then stop


async def test_non_http_url_is_rejected_without_network():
    with pytest.raises(EnrichRejected):
        await fetch("ftp://example.com/job")


async def test_timeout_is_unavailable(server):
    with pytest.raises(EnrichUnavailable):
        await fetch(server.url("/slow"), timeout=0.3)


async def test_connection_refused_is_unavailable():
    with pytest.raises(EnrichUnavailable):
        await fetch(f"http://127.0.0.1:{free_port()}/jobs/backend-engineer")


def test_error_codes_are_bounded():
    for cls in (EnrichBlocked, EnrichUnavailable, EnrichGone, EnrichNotHtml, EnrichRejected):
        assert issubclass(cls, EnrichError)
        assert cls.code in BOUNDED_ENRICH_CODES
        assert str(cls()) == cls.code


# --------------------------------------------------------------------------- confidence


async def test_expired_page_is_low_confidence_with_reason(server):
    extraction = extract_description(await fetch(server.url("/jobs/expired")))

    assert extraction.confidence == "low"
    assert extraction.reason == "expired_posting"
    assert extraction.reason in EXTRACTION_REASONS


async def test_login_wall_is_low_confidence_with_reason(server):
    extraction = extract_description(await fetch(server.url("/jobs/login")))

    assert extraction.confidence == "low"
    assert extraction.reason == "login_wall"


def test_thin_page_is_too_short():
    extraction = extract_description(
        "<html><body><main><h1>Engineer</h1><p>Great role, apply today.</p></main></body></html>"
    )
    assert (extraction.confidence, extraction.reason) == ("low", "too_short")


def test_link_farm_is_mostly_navigation():
    links = "".join(f'<li><a href="/jobs/{n}">Open role number {n} in Berlin</a></li>' for n in range(60))
    extraction = extract_description(f"<html><body><div><ul>{links}</ul></div></body></html>")
    assert (extraction.confidence, extraction.reason) == ("low", "mostly_navigation")


def test_empty_page_is_empty():
    extraction = extract_description("<html><body><script>app()</script></body></html>")
    assert (extraction.text, extraction.word_count, extraction.reason) == ("", 0, "empty")


def test_long_description_mentioning_closed_things_stays_high():
    body = " ".join(["We build reliable logistics software for shippers."] * 40)
    page = (
        "<html><body><article><p>"
        + body
        + "</p><p>This role is no longer open to relocation candidates.</p></article></body></html>"
    )
    extraction = extract_description(page)
    assert extraction.confidence == "high"


# --------------------------------------------------------------------------- source HTML


def test_description_from_source_on_the_demo_board_is_high_confidence():
    board = json.loads((ROOT / "resources/demo_board/postings.json").read_text("utf-8"))
    first = board["postings"][0]

    extraction = description_from_source(first["descriptionHtml"])

    assert extraction is not None
    assert extraction.confidence == "high"
    assert extraction.reason is None
    assert extraction.method == "source"
    assert extraction.word_count >= 80
    assert "- Strong skills in Kubernetes." in extraction.text
    assert "$145,000 – $170,000" in extraction.text  # &ndash; decoded
    assert_allowlisted(extraction.html)


def test_description_from_source_sanitizes_and_handles_escaped_html():
    escaped = (
        "&lt;div class=&quot;x&quot; onclick=&quot;evil()&quot;&gt;&lt;h1&gt;Role&lt;/h1&gt;"
        "&lt;p&gt;Hello &lt;b&gt;world&lt;/b&gt; &lt;a href=&quot;/x&quot;&gt;link&lt;/a&gt;"
        "&lt;img src=x&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;/p&gt;&lt;/div&gt;"
    )
    extraction = description_from_source(escaped)

    assert extraction is not None
    assert extraction.html == "<h2>Role</h2>\n<p>Hello <strong>world</strong> link</p>"
    assert extraction.text == "Role\n\nHello world link"
    assert (extraction.confidence, extraction.reason) == ("low", "too_short")


def test_description_from_source_accepts_plain_text():
    extraction = description_from_source("Line one & more\nLine two\n\nSecond paragraph")
    assert extraction is not None
    assert extraction.html == "<p>Line one &amp; more<br>Line two</p>\n<p>Second paragraph</p>"
    assert extraction.text == "Line one & more\nLine two\n\nSecond paragraph"


@pytest.mark.parametrize("value", [None, "", "   ", "<script>x()</script>", "<p> </p>"])
def test_description_from_source_without_content_is_none(value):
    assert description_from_source(value) is None
