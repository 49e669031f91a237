"""POST /v1/profile/import's answer carries how sure the draft is (``sections``), what
looks wrong (``warnings``) and the preferences it took from the résumé
(``suggestedPreferences``), and the OpenAPI document says so (FastAPI TestClient over a
real database file; Temporal unreachable)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from backend.api.app import create_app
from backend.config import AppPaths

TOKEN = "test-token"

RESUME = """Ada Example
ada@example.org · +49 30 1234567 · Berlin

Experience
Senior Backend Engineer, Northwind (2021 – present)
- Built the billing service
Backend Engineer, Contoso
- Kept the lights on

Skills
Python, PostgreSQL
"""


@pytest.fixture
def client(tmp_path):
    app = create_app(AppPaths(tmp_path), api_token=TOKEN, temporal_address="127.0.0.1:1")
    with TestClient(app, base_url="http://127.0.0.1") as test_client:
        test_client.headers["Authorization"] = f"Bearer {TOKEN}"
        yield test_client


def test_the_draft_says_how_sure_it_is_and_what_looks_wrong(client):
    response = client.post("/v1/profile/import",
                           files={"file": ("cv.txt", RESUME.encode(), "text/plain")})
    assert response.status_code == 200, response.text
    answer = response.json()
    sections = {s["section"]: s for s in answer["sections"]}
    assert list(sections) == ["contact", "work", "education", "skills", "languages"]
    assert sections["contact"]["level"] == "high"
    assert sections["work"] == {"section": "work", "level": "medium",
                                "note": "1 of 2 jobs has no dates"}
    assert [w["code"] for w in answer["warnings"]] == ["work_without_dates"]
    assert set(answer["warnings"][0]) == {"code", "message", "suggestion"}
    # No "Looking for" part: the latest title and the city are what the draft took.
    assert answer["suggestedPreferences"]["targetTitles"] == ["Senior Backend Engineer"]
    assert answer["profile"]["targetTitles"] == ["Senior Backend Engineer"]


def test_the_sample_draft_takes_no_preference_from_the_resume(client):
    answer = client.post("/v1/profile/import", params={"sample": "true"}).json()
    assert answer["warnings"] == []
    assert all(s["level"] == "high" for s in answer["sections"]), answer["sections"]
    assert answer["suggestedPreferences"] == {"targetTitles": [], "locations": [],
                                              "remotePreference": None, "salaryFloor": None,
                                              "salaryCurrency": None}


def test_the_openapi_document_declares_the_new_fields(client):
    document = client.get("/openapi.json").json()
    schemas = document["components"]["schemas"]
    draft = schemas["ImportDraft"]["properties"]
    assert {"sections", "warnings", "suggestedPreferences"} <= draft.keys()
    assert all(draft[key].get("description") for key in ("sections", "warnings",
                                                         "suggestedPreferences"))
    assert schemas["SectionConfidence"]["properties"]["level"]["enum"] == ["high", "medium", "low"]
    assert "few_entries" in schemas["DraftWarning"]["properties"]["code"]["enum"]
    assert "remotePreference" in schemas["PreferenceSuggestions"]["properties"]
