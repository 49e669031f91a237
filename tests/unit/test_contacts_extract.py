"""Contact research's pure domain: the offline extractor, the model answer's checks
against the sources, page text and the source-access policy."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from backend.config import AppSettings
from backend.contacts.extract import (
    ContactOutputInvalid,
    contact_prompt,
    offline_candidates,
    page_text,
    parse_model_candidates,
)
from backend.domain.contact_policy import ContactSourceConfig, source_url
from backend.domain.contacts import SourceDocument, candidate_id, contact_id

POSTING = SourceDocument("posting_text", "https://jobs.example/backend", """
We are hiring a Backend Engineer in Rotterdam. Our Platform Team ships daily.
Questions? Contact Maria Lopez, Senior Technical Recruiter, at maria.lopez@harborlight.example.
You will report to our hiring manager, Tom Becker. Send applications to jobs@harborlight.example.
The Engineering Manager is Priya Raman (priya@harborlight.example).
Kubernetes and Python Developers wanted. Apply Today.
""")


def by_name(candidates):
    return {c.name or c.email: c for c in candidates}


def test_named_people_roles_and_addresses_are_found():
    found = by_name(offline_candidates([POSTING]))
    assert set(found) == {"Maria Lopez", "Tom Becker", "Priya Raman", "jobs@harborlight.example"}
    maria = found["Maria Lopez"]
    assert (maria.title, maria.email, maria.confidence) == (
        "Senior Technical Recruiter", "maria.lopez@harborlight.example", 0.9)
    assert maria.evidence == ("Contact Maria Lopez, Senior Technical Recruiter, at"
                              " maria.lopez@harborlight.example.")
    assert maria.source_url == "https://jobs.example/backend"
    assert (found["Tom Becker"].title, found["Tom Becker"].email) == ("Hiring manager", None)
    assert found["Priya Raman"].title == "Engineering Manager"
    inbox = found["jobs@harborlight.example"]
    assert inbox.name is None and inbox.title is None and inbox.confidence == 0.4


def test_extraction_is_deterministic_and_ordered_by_confidence():
    first, second = offline_candidates([POSTING]), offline_candidates([POSTING])
    assert first == second
    assert [c.confidence for c in first] == sorted((c.confidence for c in first), reverse=True)


def test_capitalized_words_that_are_not_people_are_ignored():
    text = SourceDocument("posting_text", None,
                          "Senior Recruiter wanted. Our Platform Team is Remote First."
                          " Python Developers welcome.")
    assert offline_candidates([text]) == []


def test_a_separate_address_joins_the_person_it_names_across_documents():
    team = SourceDocument("team", "https://acme.example/team", page_text(
        '<p>Ana Silva - Talent Partner</p><a href="mailto:ana.silva@acme.example">Mail</a>'))
    ana = by_name(offline_candidates([team]))["Ana Silva"]
    assert ana.title == "Talent Partner" and ana.email == "ana.silva@acme.example"
    assert len(offline_candidates([team])) == 1, "the address is not a second candidate"


def test_page_text_drops_scripts_and_keeps_mailto_addresses():
    text = page_text("<html><head><script>var x = 'Evil Person';</script></head><body>"
                     "<p>Hello</p><a href='mailto:hr@acme.example?subject=Hi'>write</a></body></html>")
    assert "Evil" not in text and "Hello" in text and "hr@acme.example" in text


def answer(*candidates) -> str:
    return "Here you go:\n" + json.dumps({"candidates": list(candidates)})


def test_model_candidates_are_checked_against_the_sources():
    parsed = parse_model_candidates(answer(
        {"name": "Maria Lopez", "title": "Recruiter", "email": "maria.lopez@harborlight.example",
         "sourceId": "posting_text", "evidence": "Contact Maria Lopez, Senior", "confidence": 3},
        {"name": "Tom Becker", "email": "tom@harborlight.example", "evidence": "invented quote"},
        {"name": "Nobody Here", "email": "nobody@harborlight.example"},
        {"name": None, "email": None},
    ), [POSTING])
    found = by_name(parsed)
    assert set(found) == {"Maria Lopez", "Tom Becker"}, "a name in no source is dropped"
    assert found["Maria Lopez"].confidence == 1.0  # clamped
    assert found["Maria Lopez"].evidence == "Contact Maria Lopez, Senior"
    tom = found["Tom Becker"]
    assert tom.email is None, "an address in no source is cleared"
    assert tom.evidence == "You will report to our hiring manager, Tom Becker."
    assert tom.confidence == 0.5  # no confidence given: unknown, a neutral middle
    assert tom.source_url == "https://jobs.example/backend"


@pytest.mark.parametrize("reply", ["no json here", '{"candidates": "nope"}', '{"other": []}'])
def test_a_reply_that_is_not_the_requested_json_is_a_typed_retryable_error(reply):
    with pytest.raises(ContactOutputInvalid) as raised:
        parse_model_candidates(reply, [POSTING])
    assert raised.value.code == "provider_response_invalid" and raised.value.retryable


def test_the_prompt_names_every_document_by_id():
    prompt = contact_prompt(title="Backend Engineer", company="Harborlight",
                            documents=[POSTING, SourceDocument("team", "u", "Ana Silva")])
    assert '<document id="posting_text">' in prompt and '<document id="team">' in prompt
    assert "Backend Engineer at Harborlight" in prompt


def test_ids_are_stable_per_company_and_person():
    [maria] = [c for c in offline_candidates([POSTING]) if c.name == "Maria Lopez"]
    assert contact_id("Harborlight", maria) == contact_id(" harborlight ", maria)
    assert contact_id("Harborlight", maria) != contact_id("Other Co", maria)
    assert candidate_id("t1", 0) != candidate_id("t1", 1) == candidate_id("t1", 1)


def test_no_public_source_is_configured_by_default():
    assert AppSettings().contact_research_sources == []


def test_source_policy_validates_and_builds_urls():
    team = ContactSourceConfig(id="team", kind="web_page", url="https://acme.example/{company}")
    assert source_url(team, job_url="https://j", company="Acme & Co") == \
        "https://acme.example/Acme%20%26%20Co"
    live = ContactSourceConfig(id="live", kind="posting_page")
    assert source_url(live, job_url="https://j/1", company="Acme") == "https://j/1"
    for bad in ({"id": "x", "kind": "web_page"},
                {"id": "x", "kind": "web_page", "url": "ftp://acme.example"},
                {"id": "x", "kind": "posting_page", "url": "https://a.example"},
                {"id": "Bad Id", "kind": "posting_page"},
                {"id": "x", "kind": "search_engine"}):
        with pytest.raises(ValidationError):
            ContactSourceConfig.model_validate(bad)
    with pytest.raises(ValidationError):
        AppSettings.model_validate({"contactResearchSources": [{"id": "x", "kind": "web_page"}]})
