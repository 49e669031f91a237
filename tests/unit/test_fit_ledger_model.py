"""The model path of Score: the same ledger as validated JSON, one repair call at most,
and our deal-breaker checks applied whatever the model said. ``complete`` is an
in-process fake (a plain async function): these are pure-function tests."""

from __future__ import annotations

import json

import pytest

from backend.domain.profile import CandidateProfile
from backend.pipeline.score import (
    SCORE_SYSTEM,
    JobText,
    ModelOutputInvalid,
    model_ledger,
    parse_model_ledger,
    repair_prompt,
    result_from_ledger,
    score_prompt,
)

PROFILE = CandidateProfile.model_validate({
    "resume": {
        "work": [{"name": "Northwind", "position": "Senior Backend Engineer", "startDate": "2021-03",
                  "highlights": ["Built Kafka pipelines in Python"]}],
        "skills": [{"name": "Backend", "keywords": ["Python", "Kafka"]}],
        "languages": [{"language": "English", "fluency": "Native"}],
    },
    "targetTitles": ["Backend Engineer"], "locations": ["Berlin"], "remotePreference": "remote_only",
    "dealBreakerKeywords": ["crypto"],
})
JOB = JobText(title="Backend Engineer", company="Coinly", location="Berlin, Germany", remote="onsite",
              description="This role is based in our Berlin office, five days a week. We build crypto "
                          "wallets.\n\nRequirements\n\n- Python.")
REMOTE_JOB = JobText(title="Backend Engineer", company="Lumen", location="Remote (EU)", remote="remote",
                     description="Requirements\n\n- Python.")

VALID = json.dumps({"requirements": [
    {"kind": "skill", "label": "Python", "importance": "must", "status": "met",
     "evidence": "Senior Backend Engineer, Northwind (2021–)"},
    {"kind": "title", "label": "Backend Engineer", "status": "met",
     "evidence": "Target title: Backend Engineer"},
]})


class FakeModel:
    """Answers with the given replies in turn and records every call."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.calls: list[tuple[str, str]] = []

    async def __call__(self, system: str, user: str) -> str:
        self.calls.append((system, user))
        return self.replies[min(len(self.calls), len(self.replies)) - 1]


def test_the_reply_is_parsed_through_prose_and_code_fences():
    ledger = parse_model_ledger(f"Here you go:\n```json\n{VALID}\n```\nHope that helps.")
    assert ledger.method == "model"
    assert [r.label for r in ledger.requirements] == ["Python", "Backend Engineer"]
    assert ledger.requirements[0].evidence == "Senior Backend Engineer, Northwind (2021–)"


@pytest.mark.parametrize("bad", [
    "no json here", "{not json}", '{"requirements": []}',
    '{"requirements": [{"kind": "vibes", "label": "x", "status": "met"}]}',
    '{"requirements": [{"kind": "skill", "label": "Go", "status": "probably"}]}',
])
def test_a_malformed_reply_is_a_typed_failure_that_says_what_was_wrong(bad):
    with pytest.raises(ModelOutputInvalid) as caught:
        parse_model_ledger(bad)
    assert caught.value.code == "provider_response_invalid"
    assert caught.value.problem and bad not in str(caught.value)  # the message carries no reply text


def test_overlong_texts_are_cut_not_rejected():
    reply = json.dumps({"requirements": [{"kind": "skill", "label": "P" * 500, "status": "missing",
                                          "detail": "d" * 900}]})
    requirement = parse_model_ledger(reply).requirements[0]
    assert len(requirement.label) == 200 and len(requirement.detail) == 300


def test_the_prompt_sends_the_structured_profile_and_the_schema():
    prompt = json.loads(score_prompt(PROFILE, REMOTE_JOB))
    work = prompt["candidate"]["work"][0]
    assert work["heading"] == "Senior Backend Engineer, Northwind (2021–)"
    assert work["highlights"] == ["Built Kafka pipelines in Python"]
    assert prompt["candidate"]["languages"] == [{"language": "English", "fluency": "Native"}]
    assert prompt["candidate"]["preferences"]["remotePreference"] == "remote_only"
    assert prompt["job"]["description"] == REMOTE_JOB.description
    assert '"requirements"' in SCORE_SYSTEM and '"dealBreaker"' in SCORE_SYSTEM


def test_the_repair_prompt_names_the_problem_and_asks_for_json_only():
    text = repair_prompt("Sure! score: 80", "the reply is not one JSON object")
    assert "the reply is not one JSON object" in text and "Sure! score: 80" in text
    assert "JSON object only" in text


async def test_malformed_then_valid_makes_exactly_two_calls_and_returns_the_ledger():
    model = FakeModel("I think it's a great fit!", VALID)
    ledger = await model_ledger(model, PROFILE, REMOTE_JOB)
    assert len(model.calls) == 2
    assert [r.label for r in ledger.requirements] == ["Python", "Backend Engineer"]
    repair_user = model.calls[1][1]
    assert "not one JSON object" in repair_user and "I think it's a great fit!" in repair_user
    assert result_from_ledger(ledger).score == 100


async def test_a_valid_first_answer_makes_one_call():
    model = FakeModel(VALID)
    await model_ledger(model, PROFILE, REMOTE_JOB)
    assert len(model.calls) == 1


async def test_always_malformed_raises_after_exactly_two_calls():
    model = FakeModel("nope", '{"requirements": "nope"}')
    with pytest.raises(ModelOutputInvalid):
        await model_ledger(model, PROFILE, REMOTE_JOB)
    assert len(model.calls) == 2


async def test_a_model_ledger_that_omits_the_deal_breakers_still_gets_capped():
    ledger = await model_ledger(FakeModel(VALID), PROFILE, JOB)

    keyword = next(r for r in ledger.requirements if r.kind == "keyword")
    assert keyword.label == "No “crypto”" and keyword.deal_breaker and keyword.status == "missing"
    location = next(r for r in ledger.requirements if r.kind == "location")
    assert location.deal_breaker and location.status == "missing" and "remote only" in location.detail
    assert ledger.cap is not None and ledger.cap.score == 10 and "crypto" in ledger.cap.reason
    assert result_from_ledger(ledger).score <= 10


async def test_a_model_location_line_cannot_hide_an_onsite_role_from_a_remote_only_profile():
    reply = json.dumps({"requirements": [
        {"kind": "location", "label": "Berlin", "status": "met", "evidence": "Locations: Berlin"},
        {"kind": "skill", "label": "Python", "status": "met", "evidence": "Skills: Python"}]})
    job = JobText(title=JOB.title, company=JOB.company, location=JOB.location, remote="onsite",
                  description="This role is based in our Berlin office, five days a week.")
    ledger = await model_ledger(FakeModel(reply), PROFILE, job)
    locations = [r for r in ledger.requirements if r.kind == "location"]
    assert len(locations) == 1 and locations[0].status == "missing"
    assert ledger.cap is not None and ledger.cap.score == 20
    assert result_from_ledger(ledger).score <= 20
