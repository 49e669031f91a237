"""Pasted links -> source family and board token, on the URL shapes the boards really use;
typed errors for links no family reads; generated source ids. Plain functions."""

from __future__ import annotations

import warnings

import pytest

from backend.api.routers.settings import SettingsPatch
from backend.sources import link as links
from backend.sources.link import (
    BoardRef,
    LinkFamily,
    SourceLinkError,
    new_source_id,
    register_link_family,
    resolve_source_link,
)
from tests.api_http import in_process_api

REAL_SHAPES = [
    # Greenhouse: the classic and the new board hosts, a job page, the EU host, the embed.
    ("https://boards.greenhouse.io/acme", "greenhouse", "acme", None),
    ("https://boards.greenhouse.io/acme/jobs/4567890?gh_src=abc123", "greenhouse", "acme", None),
    ("https://job-boards.greenhouse.io/acme", "greenhouse", "acme", None),
    ("https://job-boards.greenhouse.io/acme/jobs/7123456008", "greenhouse", "acme", None),
    ("https://job-boards.eu.greenhouse.io/optimove/jobs/4455667", "greenhouse", "optimove", None),
    ("https://boards.greenhouse.io/embed/job_board?for=acme&b=https%3A%2F%2Facme.com",
     "greenhouse", "acme", None),
    ("https://boards.greenhouse.io/embed/job_app?for=acme&token=4567890", "greenhouse", "acme",
     None),
    ("https://boards-api.greenhouse.io/v1/boards/acme/jobs?content=true", "greenhouse", "acme",
     None),
    ("boards.greenhouse.io/acme/", "greenhouse", "acme", None),  # typed without https://
    # Lever: the board, a posting, its apply page with tracking, the EU region and its API.
    ("https://jobs.lever.co/globex", "lever", "globex", None),
    ("https://jobs.lever.co/globex/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b", "lever", "globex", None),
    ("https://jobs.lever.co/globex/0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b/apply?lever-source=LinkedIn",
     "lever", "globex", None),
    ("https://jobs.eu.lever.co/mobileye", "lever", "mobileye", "https://api.eu.lever.co"),
    ("https://api.lever.co/v0/postings/globex?mode=json", "lever", "globex", None),
    ("HTTPS://JOBS.LEVER.CO/globex", "lever", "globex", None),
    # Ashby: the board, a posting, its application page, a name with a space, the API.
    ("https://jobs.ashbyhq.com/initech", "ashby", "initech", None),
    ("https://jobs.ashbyhq.com/initech/3c2b1a09-8f7e-4d6c-b5a4-938271605f4e", "ashby", "initech",
     None),
    ("https://jobs.ashbyhq.com/initech/3c2b1a09-8f7e-4d6c-b5a4-938271605f4e/application",
     "ashby", "initech", None),
    ("https://jobs.ashbyhq.com/Acme%20Labs", "ashby", "Acme Labs", None),
    ("https://api.ashbyhq.com/posting-api/job-board/initech?includeCompensation=true", "ashby",
     "initech", None),
]


@pytest.mark.parametrize(("link", "kind", "token", "base_url"), REAL_SHAPES)
def test_real_link_shapes_resolve_to_family_and_token(link, kind, token, base_url):
    resolved = resolve_source_link(link)
    assert (resolved.family.kind, resolved.token, resolved.base_url) == (kind, token, base_url)


def test_a_resolved_link_is_a_settings_entry_with_a_generated_id():
    entry = resolve_source_link("https://jobs.eu.lever.co/mobileye/abc").source({"lever-mobileye"})
    assert entry == {"kind": "lever", "id": "lever-mobileye-2", "company": "mobileye",
                     "enabled": True, "baseUrl": "https://api.eu.lever.co"}
    assert resolve_source_link("https://jobs.ashbyhq.com/Acme%20Labs").source() == {
        "kind": "ashby", "id": "ashby-acme-labs", "boardName": "Acme Labs", "enabled": True}


@pytest.mark.parametrize(("link", "code"), [
    ("", "source_link_invalid"),
    ("acme", "source_link_invalid"),
    ("not a link at all", "source_link_invalid"),
    ("ftp://boards.greenhouse.io/acme", "source_link_invalid"),
    ("https://[::1", "source_link_invalid"),
    ("https://www.example.com/careers", "source_unrecognized"),
    ("https://www.linkedin.com/jobs/view/123456", "source_unrecognized"),
    ("https://boards.greenhouse.io/", "source_link_incomplete"),
    ("https://boards.greenhouse.io/embed/job_board", "source_link_incomplete"),
    ("https://jobs.lever.co", "source_link_incomplete"),
    ("https://boards-api.greenhouse.io/v1/boards", "source_link_incomplete"),
    ("https://jobs.lever.co/a!b", "source_link_incomplete"),
    ("https://careers.acme.com/jobs?gh_jid=4567890", "source_link_board_hidden"),
])
def test_links_no_family_can_read_are_typed_errors(link, code):
    with pytest.raises(SourceLinkError) as raised:
        resolve_source_link(link)
    assert raised.value.code == code
    assert raised.value.message.endswith(".")  # a sentence the user can act on


def test_the_messages_say_what_to_paste_instead():
    with pytest.raises(SourceLinkError) as raised:
        resolve_source_link("https://www.example.com/careers")
    assert raised.value.message == (
        "JobCtrl cannot read jobs from www.example.com yet. Paste the link of the company's "
        "Greenhouse, Lever, Ashby, Workday, SmartRecruiters, Workable, Recruitee or Personio "
        "job board (like https://boards.greenhouse.io/acme).")
    with pytest.raises(SourceLinkError) as raised:
        resolve_source_link("https://careers.acme.com/jobs?gh_jid=4567890")
    assert "uses Greenhouse" in raised.value.message


def test_a_family_added_later_plugs_in(monkeypatch):
    monkeypatch.setattr(links, "LINK_FAMILIES", list(links.LINK_FAMILIES))

    def read(host, parts, _query):  # a feed host: the link is the feed
        return BoardRef(f"https://{host}/{'/'.join(parts)}") if parts else None

    register_link_family(LinkFamily("feed", "Acme Feeds", "url", "https://feeds.example/acme.rss",
                                    frozenset({"feeds.example"}), read))
    resolved = resolve_source_link("https://feeds.example/acme.rss")
    assert resolved.family.name == "Acme Feeds"
    assert resolved.source() == {"kind": "feed", "id": "feed-acme-rss",
                                 "url": "https://feeds.example/acme.rss", "enabled": True}
    assert links.family_names().startswith("Greenhouse, Lever, Ashby, Acme Feeds, Workday")
    assert links.family_names().endswith(" or Personio")
    with pytest.raises(ValueError, match="already registered"):
        register_link_family(links.LINK_FAMILIES[0])


def test_generated_source_ids_are_slugs_and_unique():
    assert new_source_id("greenhouse", "acme", set()) == "gh-acme"
    assert new_source_id("greenhouse", "acme", {"gh-acme", "gh-acme-2"}) == "gh-acme-3"
    assert new_source_id("ashby", "Acme Labs GmbH") == "ashby-acme-labs-gmbh"
    assert new_source_id("feed", "https://example.org/jobs.rss") == "feed-jobs-rss"
    assert new_source_id("csv_file", "/home/me/Exports/") == "csv-exports"
    assert new_source_id("lever", "!!!") == "lever-source"
    assert len(new_source_id("greenhouse", "x" * 200)) <= 64


# -- the API: sources given as links -----------------------------------------------------------



@pytest.fixture
def api(tmp_path):
    with in_process_api(tmp_path) as client:
        yield client


def test_the_settings_take_a_source_as_a_link(api):
    before = api.get("/v1/settings").json()["sources"]
    response = api.patch("/v1/settings", json={"sources": [
        *before, {"link": "https://job-boards.greenhouse.io/acme/jobs/1", "enabled": False}]})
    assert response.status_code == 200, response.text
    added = response.json()["sources"][-1]
    assert (added["kind"], added["id"], added["boardToken"], added["enabled"]) == (
        "greenhouse", "gh-acme", "acme", False)


def test_a_patch_with_links_reads_back_as_it_was_sent_without_warnings():
    # The body's union is told apart by a callable: it sees dicts when validating and the
    # models themselves when dumping (it once sent a link down the source branch, and
    # every save with a link logged pydantic's serializer warnings).
    sent = {"sources": [{"link": "https://jobs.lever.co/globex", "enabled": False},
                        {"kind": "demo_board", "id": "demo"}]}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        body = SettingsPatch.model_validate(sent)
        dumped = body.model_dump(by_alias=True, exclude_unset=True)
    assert dumped == sent


def test_an_unreadable_link_is_a_typed_error_and_saves_nothing(api):
    before = api.get("/v1/settings").json()
    response = api.patch("/v1/settings", json={
        "dailyBudgetUsd": 3, "sources": [*before["sources"], {"link": "https://example.com/jobs"}]})
    assert response.status_code == 422
    error = response.json()["error"]
    assert error["code"] == "source_unrecognized"
    assert error["fields"] == [f"sources.{len(before['sources'])}.link"]
    assert "example.com" in error["message"]
    assert api.get("/v1/settings").json() == before
