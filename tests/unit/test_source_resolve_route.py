"""POST /v1/sources/resolve: a pasted link answers its family and the settings entry, or a
typed refusal; nothing is saved either way (TestClient over a real app dir)."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from backend.api.app import create_app
from backend.config import AppPaths

TOKEN = "test-token"


@pytest.fixture
def client(tmp_path):
    (tmp_path / "settings.json").write_text(json.dumps({"sources": [
        {"kind": "greenhouse", "id": "gh-acme", "boardToken": "acme"}]}), encoding="utf-8")
    app = create_app(AppPaths(tmp_path), api_token=TOKEN, temporal_address="127.0.0.1:1")
    with TestClient(app, base_url="http://127.0.0.1", raise_server_exceptions=False) as test:
        test.headers["Authorization"] = f"Bearer {TOKEN}"
        yield test


@pytest.mark.parametrize(("link", "kind", "family", "fields"), [
    ("https://boards.greenhouse.io/acme", "greenhouse", "Greenhouse", {"boardToken": "acme"}),
    ("https://jobs.lever.co/acme", "lever", "Lever", {"company": "acme"}),
    ("https://jobs.ashbyhq.com/acme", "ashby", "Ashby", {"boardName": "acme"}),
    ("https://acme.wd5.myworkdayjobs.com/en-US/External", "workday", "Workday",
     {"tenant": "acme", "site": "External", "host": "acme.wd5.myworkdayjobs.com"}),
    ("https://careers.smartrecruiters.com/Acme", "smartrecruiters", "SmartRecruiters",
     {"company": "Acme"}),
    ("https://apply.workable.com/acme/", "workable", "Workable", {"account": "acme"}),
    ("https://acme.recruitee.com/", "recruitee", "Recruitee", {"company": "acme"}),
    ("https://acme.jobs.personio.de/", "personio", "Personio", {"company": "acme"}),
])
def test_a_link_of_every_family_resolves(client, link, kind, family, fields):
    reply = client.post("/v1/sources/resolve", json={"link": link})
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["kind"] == kind and body["family"] == family
    assert body["source"]["kind"] == kind and fields.items() <= body["source"].items()
    assert body["source"]["enabled"] is True


def test_the_new_id_is_unique_among_the_saved_sources(client):
    body = client.post("/v1/sources/resolve", json={"link": "boards.greenhouse.io/acme"}).json()
    assert body["source"]["id"] == "gh-acme-2"


@pytest.mark.parametrize(("link", "code"), [
    ("https://example.com/careers", "source_unrecognized"),
    ("not a link", "source_link_invalid"),
    ("https://boards.greenhouse.io/", "source_link_incomplete"),
])
def test_a_link_no_family_reads_is_a_typed_422_and_saves_nothing(client, tmp_path, link, code):
    before = (tmp_path / "settings.json").read_text(encoding="utf-8")
    reply = client.post("/v1/sources/resolve", json={"link": link})
    assert reply.status_code == 422 and reply.json()["error"]["code"] == code
    assert (tmp_path / "settings.json").read_text(encoding="utf-8") == before


def test_a_missing_or_oversized_link_is_a_validation_error(client):
    assert client.post("/v1/sources/resolve", json={}).status_code == 422
    assert client.post("/v1/sources/resolve", json={"link": "x" * 3000}).status_code == 422
