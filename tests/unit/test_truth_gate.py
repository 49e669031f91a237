"""The truthfulness gate, and the model writers behind it: anything the profile does not
hold is rejected with the claim named; one repair, then a typed failure that is not retried.
The model is a plain async stand-in (pure unit tests, no provider)."""

from __future__ import annotations

import json

import pytest

from backend.domain.fit import FitLedger, Requirement
from backend.pipeline.cover import COVER_SYSTEM, model_cover, offline_cover
from backend.pipeline.documents import (
    CoverLetterDoc,
    EducationLine,
    ExperienceEntry,
    LetterParagraph,
    SkillLine,
)
from backend.pipeline.score import RepairFailed, offline_score
from backend.pipeline.tailor import TAILOR_SYSTEM, model_tailor, offline_tailor
from backend.pipeline.truth import UnsupportedClaim, check_letter, check_resume
from tests.unit.test_writing import NORTHWIND, PROFILE, SAN_FRANCISCO, TODAY, job

POSTING = job()
FIT = offline_score(PROFILE, POSTING, today=TODAY)
RESUME = offline_tailor(PROFILE, POSTING, FIT)
LETTER = offline_cover(PROFILE, POSTING, FIT, RESUME, TODAY)


def rejected(call) -> UnsupportedClaim:
    with pytest.raises(UnsupportedClaim) as caught:
        call()
    assert caught.value.code == "materials_unsupported_claim" and caught.value.retryable is False
    return caught.value


def with_entry(index: int, **changes) -> object:
    entries = list(RESUME.experience)
    entries[index] = entries[index].model_copy(update=changes)
    return RESUME.model_copy(update={"experience": entries})


SF_CONTACT = RESUME.contact.model_copy(update={"locations": ["San Francisco"]})
HOOLI = ExperienceEntry(position="Staff Engineer", employer="Hooli", start_date="2019-01", end_date="2020-12",
                        bullets=["Led search"])


@pytest.mark.parametrize(("doc", "named"), [
    (RESUME.model_copy(update={"experience": [*RESUME.experience, HOOLI]}), "Staff Engineer, Hooli"),
    (with_entry(0, start_date="2018-03"), "Senior Backend Engineer, Northwind (2018–)"),
    (with_entry(1, bullets=[NORTHWIND[3]]), NORTHWIND[3]),  # a bullet moved to another employer
    (with_entry(0, bullets=["Mentored 12 engineers"]), "12"),
    (with_entry(0, bullets=["Built Rust services handling 2M requests/day"]), "Rust"),
    (RESUME.model_copy(update={"education": [EducationLine(institution="MIT", degree="PhD")]}),
     "PhD, MIT"),
    (RESUME.model_copy(update={"certifications": ["Certified Kubernetes Administrator"]}),
     "Certified Kubernetes Administrator"),
    (RESUME.model_copy(update={"skills": [SkillLine(group="Languages", items=["Python", "Haskell"])]}),
     "Haskell"),
    (RESUME.model_copy(update={"languages": ["German (C1)"]}), "German (C1)"),
    (RESUME.model_copy(update={"contact": SF_CONTACT}),
     "San Francisco"),
    (RESUME.model_copy(update={"summary": "Backend engineer with 10 years of Go."}), "10 years of Go"),
    (RESUME.model_copy(update={"summary": "Backend engineer, happy to relocate to San Francisco."}),
     "happy to relocate to San Francisco"),
    (RESUME.model_copy(update={"summary": "Holds a Master's degree in Computer Science."}),
     "Master's degree"),
    (RESUME.model_copy(update={"summary": "Previously a Staff Engineer at Hooli."}), "Hooli"),
])
def test_the_resume_gate_rejects_what_the_profile_does_not_hold(doc, named):
    claim = rejected(lambda: check_resume(doc, PROFILE, job=POSTING, today=TODAY)).claim
    assert named in claim


def test_the_resume_gate_accepts_synonyms_rephrasings_and_supported_year_counts():
    doc = RESUME.model_copy(update={
        "skills": [SkillLine(group="Data", items=["Postgres", "Kafka"])],
        "summary": "Backend engineer with 5 years of Python and 11 years of experience.",
    })
    doc = with_entry(0, bullets=["Built FastAPI services in Python that handle 2 million requests a day"]) \
        .model_copy(update={"skills": doc.skills, "summary": doc.summary})
    check_resume(doc, PROFILE, job=POSTING, today=TODAY)


def letter_saying(text: str, evidence: list[str] | None = None) -> CoverLetterDoc:
    return LETTER.model_copy(update={"paragraphs": [LetterParagraph(text=text, evidence=evidence or [])]})


@pytest.mark.parametrize(("text", "named"), [
    ("I am happy to relocate to San Francisco.", "happy to relocate to San Francisco"),
    ("The San Francisco, CA, United States setup works for me.", "San Francisco"),
    ("I have 10 years of Go.", "10 years of Go"),
    ("At Hooli, I led the search team.", "At Hooli"),
    ("I hold a Master's degree in Computer Science.", "Master's degree"),
    ("I am a Certified Kubernetes Administrator.", "Certified Kubernetes Administrator"),
    ("I am available to start immediately.", "available to start immediately"),
    ("I do not need visa sponsorship.", "visa sponsorship"),
    ("My salary expectation is EUR 90,000.", "salary"),
    ("I speak fluent German.", "German"),
    ("I am happy to work on-site.", "on-site"),
])
def test_the_letter_gate_rejects_invented_preferences_and_facts(text, named):
    claim = rejected(lambda: check_letter(letter_saying(text), PROFILE, FIT.ledger, SAN_FRANCISCO,
                                          today=TODAY)).claim
    assert named in claim


def test_the_letter_gate_rejects_requirements_the_ledger_marks_missing_and_invented_evidence():
    ledger = FitLedger(requirements=[Requirement(kind="skill", label="distributed systems", status="missing",
                                                 detail="Not in your skills or work history")])
    claim = rejected(lambda: check_letter(letter_saying("I design distributed systems."), PROFILE, ledger,
                                          POSTING, today=TODAY)).claim
    assert "distributed systems" in claim and "missing" in claim
    claim = rejected(lambda: check_letter(letter_saying("I build services.", ["Staff Engineer, Hooli"]),
                                          PROFILE, FIT.ledger, POSTING, today=TODAY)).claim
    assert "Hooli" in claim


def test_the_letter_gate_accepts_what_the_profile_states():
    text = ("I am based in Berlin and I am looking for remote work. I speak German (B1). "
            "At Northwind, I tuned PostgreSQL for billing. I hold the AWS Certified Developer certification.")
    check_letter(letter_saying(text, ["Senior Backend Engineer, Northwind (2021–)"]), PROFILE, FIT.ledger,
                 POSTING, today=TODAY)


# --------------------------------------------------------------------------- the model writers


class StandIn:
    """A model that answers from a script, and remembers what it was asked."""

    def __init__(self, *replies: str) -> None:
        self.replies = list(replies)
        self.prompts: list[tuple[str, str]] = []

    async def __call__(self, system: str, user: str) -> str:
        self.prompts.append((system, user))
        return self.replies[min(len(self.prompts), len(self.replies)) - 1]


def tailor_reply(summary: str, bullet: str | None = None) -> str:
    first = [{"source": 1, "text": bullet}] if bullet else [{"source": 1, "text": ""}]
    bullets = [*first, {"source": 2, "text": ""}]
    return json.dumps({"summary": summary, "entries": [{"entry": 0, "bullets": bullets}]})


CLEAN_SUMMARY = "Backend engineer who builds reliable data services in Python and PostgreSQL."
DIRTY_TAILOR = [
    (tailor_reply("Backend engineer with 10 years of Go."), "10 years of Go"),
    (tailor_reply("Backend engineer, happy to relocate to San Francisco."), "relocate to San Francisco"),
    (tailor_reply("Holds a PhD in Physics."), "PhD"),
    (tailor_reply("AWS Certified Solutions Architect."), "Certified Solutions Architect"),
    (tailor_reply(CLEAN_SUMMARY, "Built Python services at Hooli handling 2M requests/day"), "Hooli"),
]


@pytest.mark.parametrize(("dirty", "named"), DIRTY_TAILOR)
async def test_a_model_resume_with_an_invented_claim_is_repaired_once(dirty, named):
    model = StandIn(dirty, tailor_reply(CLEAN_SUMMARY))
    resume = await model_tailor(model, PROFILE, POSTING, FIT)
    assert len(model.prompts) == 2 and model.prompts[0][0] == TAILOR_SYSTEM
    assert named in model.prompts[1][1]  # the repair says exactly which claim
    assert resume.summary == CLEAN_SUMMARY
    assert resume.experience[0].bullets == [NORTHWIND[1], NORTHWIND[2]]
    assert [e.employer for e in resume.experience] == ["Northwind", "Acme", "Initech"]
    assert {d.text for d in resume.dropped if d.kind == "bullet"} >= set(NORTHWIND) - set(NORTHWIND[1:3])


@pytest.mark.parametrize(("dirty", "named"), DIRTY_TAILOR)
async def test_a_model_resume_that_stays_dirty_fails_typed_after_two_calls(dirty, named):
    model = StandIn(dirty)
    with pytest.raises(UnsupportedClaim) as caught:
        await model_tailor(model, PROFILE, POSTING, FIT)
    assert len(model.prompts) == 2 and named in caught.value.claim and not caught.value.retryable


async def test_a_model_resume_cannot_move_bullets_or_name_unknown_entries():
    moved = json.dumps({"summary": CLEAN_SUMMARY, "entries": [{"entry": 1, "bullets": [{"source": 7}]}]})
    model = StandIn(moved, "not json at all")
    with pytest.raises(RepairFailed) as caught:
        await model_tailor(model, PROFILE, POSTING, FIT)
    assert len(model.prompts) == 2 and "source" in model.prompts[1][1] and not caught.value.retryable


def cover_reply(*texts: str) -> str:
    return json.dumps({"paragraphs": [{"text": text, "evidence": ["entry0", "entry0.bullet0"]}
                                      for text in texts]})


CLEAN_LETTER = cover_reply("I am applying for the Senior Backend Engineer position at Globex Cloud.",
                           "At Northwind, I built Python/FastAPI services handling 2M requests/day.",
                           "Thank you for your time.")
DIRTY_COVER = [
    (cover_reply("I am happy to relocate to San Francisco."), "relocate to San Francisco"),
    (cover_reply("I have 10 years of Go."), "10 years of Go"),
    (cover_reply("At Hooli, I led the search team."), "Hooli"),
    (cover_reply("I hold a PhD in Physics."), "PhD"),
    (cover_reply("I am a Certified Kubernetes Administrator."), "Certified Kubernetes Administrator"),
]


@pytest.mark.parametrize(("dirty", "named"), DIRTY_COVER)
async def test_a_model_letter_with_an_invented_claim_is_repaired_once(dirty, named):
    model = StandIn(dirty, CLEAN_LETTER)
    letter = await model_cover(model, PROFILE, POSTING, FIT, RESUME, TODAY)
    assert len(model.prompts) == 2 and model.prompts[0][0] == COVER_SYSTEM and named in model.prompts[1][1]
    assert letter.paragraphs[1].evidence == ["Senior Backend Engineer, Northwind (2021–)",
                                             RESUME.experience[0].bullets[0]]


@pytest.mark.parametrize(("dirty", "named"), DIRTY_COVER)
async def test_a_model_letter_that_stays_dirty_fails_typed_after_two_calls(dirty, named):
    model = StandIn(dirty)
    with pytest.raises(UnsupportedClaim) as caught:
        await model_cover(model, PROFILE, POSTING, FIT, RESUME, TODAY)
    assert len(model.prompts) == 2 and named in caught.value.claim


async def test_a_model_letter_citing_unknown_evidence_is_malformed():
    unknown = json.dumps({"paragraphs": [{"text": "I build services.", "evidence": ["entry9"]}]})
    model = StandIn(unknown, unknown)
    with pytest.raises(RepairFailed):
        await model_cover(model, PROFILE, POSTING, FIT, RESUME, TODAY)
    assert len(model.prompts) == 2 and "entry9" in model.prompts[1][1]


def test_a_posting_title_with_a_number_is_not_a_claim():
    """'Backend Engineer · Tester 2' names the role; its 2 is the posting's, not the seeker's."""
    from datetime import date

    from backend.pipeline.score import JobText, offline_score
    from backend.pipeline.tailor import offline_tailor
    from backend.pipeline.truth import gate_materials
    from tests.unit.test_writing import PROFILE as three_entries

    titles = ("Backend Engineer · Actions Tester 2", "Senior Backend Engineer II", "Backend Engineer (L5)")
    for title in titles:
        job = JobText(title=title, company="Harbourline Insurance", location="Berlin, Germany",
                      remote="remote", description="Requirements: Python, PostgreSQL and Kubernetes.")
        fit = offline_score(three_entries, job, today=date(2026, 12, 1))
        resume = offline_tailor(three_entries, job, fit)
        assert title in resume.summary or "Harbourline" in resume.summary
        gate_materials(resume, None, three_entries, fit.ledger, job)


def test_the_country_code_of_the_home_is_the_country_it_names():
    """The profile's home is Berlin, countryCode "DE": Germany (ISO 3166), not Delaware."""
    check_letter(letter_saying("I live in Germany and would join your team remotely.",
                               ["Senior Backend Engineer, Northwind (2021–)"]),
                 PROFILE, FIT.ledger, POSTING, today=TODAY)
    claim = rejected(lambda: check_letter(letter_saying("I would move to Delaware for this role."),
                                          PROFILE, FIT.ledger, POSTING, today=TODAY)).claim
    assert "Delaware" in claim


# --------------------------------------------------------------------------- letters in other languages

GERMAN_POSTING = job(title="Senior Backend-Entwickler (m/w/d)", company="Havelsoft GmbH",
                     location="Berlin, Deutschland", remote="hybrid",
                     description="Ihr Profil: sehr gute Kenntnisse in Python und PostgreSQL. Wir bieten: "
                                 "hybrides Arbeiten in Berlin mit einem Team, das für die Sache brennt.")


@pytest.mark.parametrize(("text", "named"), [
    ("Bei der Hooli Systems GmbH habe ich Python-Dienste gebaut.", "Hooli Systems GmbH"),
    ("Ich bringe die Zertifizierung zum PMP mit.", "PMP"),
    ("Ich habe einen Masterabschluss in Informatik.", "Masterabschluss"),
    ("Ich spreche fließend Französisch.", "Französisch"),
    ("Ich habe 2M Transaktionen pro Tag und 17 Dienste betreut.", "17"),
    ("Ich arbeite mit Rust und Python.", "Rust"),
    ("Ein Umzug nach Hamburg ist für mich kein Problem.", "Umzug"),
    ("Je parle couramment l'italien.", "italien"),
    ("Tengo un máster en Física.", "máster"),
])
def test_a_letter_in_another_language_is_checked_too(text, named):
    """Numbers, skills, credentials, employers by their legal form, language names and the
    relocation, visa, salary and remote words are read in German, French and Spanish too."""
    fit = offline_score(PROFILE, GERMAN_POSTING, today=TODAY)
    letter = LETTER.model_copy(update={"paragraphs": [LetterParagraph(text=text)]})
    claim = rejected(lambda: check_letter(letter, PROFILE, fit.ledger, GERMAN_POSTING, today=TODAY)).claim
    assert named in claim


async def test_with_the_setting_a_model_writes_in_the_postings_language():
    german_letter = cover_reply(
        "Hiermit bewerbe ich mich um die Stelle als Senior Backend-Entwickler (m/w/d) bei Havelsoft GmbH.",
        "Bei Northwind habe ich Python-Dienste gebaut.")
    fit = offline_score(PROFILE, GERMAN_POSTING, today=TODAY)
    model = StandIn(german_letter)
    letter = await model_cover(model, PROFILE, GERMAN_POSTING, fit, RESUME, TODAY, letter_language="posting")
    assert json.loads(model.prompts[0][1])["letterLanguage"] == "German"
    assert letter.salutation == "Sehr geehrte Damen und Herren,"
    assert letter.closing == "Mit freundlichen Grüßen"
    english = StandIn(cover_reply("At Northwind, I built Python/FastAPI services handling 2M requests/day."))
    await model_cover(english, PROFILE, GERMAN_POSTING, fit, RESUME, TODAY)
    assert json.loads(english.prompts[0][1])["letterLanguage"] == "English"  # the résumé's, by default
