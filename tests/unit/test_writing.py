"""Offline tailoring and cover letters: deterministic, honest. (Scoring: test_fit_ledger*.)"""

from __future__ import annotations

from datetime import date

import pytest

from backend.domain.profile import CandidateProfile
from backend.pipeline.cover import offline_cover, parse_model_cover
from backend.pipeline.score import JobText, ModelOutputInvalid, offline_score
from backend.pipeline.tailor import ResumeRejected, offline_tailor, parse_model_resume

PROFILE = CandidateProfile(
    name="Ada Example", email="ada@example.org", target_titles=["Backend Engineer"],
    locations=["Berlin"], remote_preference="remote_or_hybrid", salary_floor=70000,
    salary_currency="EUR", skills=["Python", "PostgreSQL", "Kubernetes", "C++"],
    must_have_keywords=["Python"], deal_breaker_keywords=["crypto"],
    resume_text="Ada Example\nEngineer.\n\nEXPERIENCE\n- Built Kubernetes tooling\n"
                "- Tuned PostgreSQL for billing\n\nEDUCATION\n- BSc, TU Berlin\n",
)


def job(**overrides) -> JobText:
    base = dict(title="Senior Backend Engineer", company="Acme", location="Berlin, Germany",
                remote="hybrid", description="We use Python, PostgreSQL and C++ daily.",
                salary_min=80000, salary_max=95000, salary_currency="EUR")
    return JobText(**{**base, **overrides})


TODAY = date(2026, 11, 29)


def score(posting: JobText):
    return offline_score(PROFILE, posting, today=TODAY)


def test_the_tailored_resume_leads_with_matched_skills_and_invents_nothing():
    resume = offline_tailor(PROFILE, job(), score(job()))
    skills = resume.sections[0]
    assert skills.items[:3] == ["Python", "PostgreSQL", "C++"]
    assert set(skills.items) <= set(PROFILE.all_skills())
    experience = resume.sections[1].items
    assert experience[0] == "Tuned PostgreSQL for billing"  # the most relevant first
    assert resume.name == "Ada Example" and "ada@example.org" in resume.contact_lines


def test_the_cover_letter_names_the_role_and_company():
    fit = score(job())
    resume = offline_tailor(PROFILE, job(), fit)
    letter = offline_cover(PROFILE, job(), fit, resume, TODAY)
    assert letter.paragraphs[0].startswith("I am applying for the Senior Backend Engineer "
                                           "position at Acme.")
    assert letter.date_line == "November 29, 2026"
    assert letter.signature == "Ada Example"


def test_model_letters_are_validated():
    with pytest.raises(ModelOutputInvalid):
        parse_model_cover('{"paragraphs": 3}', PROFILE, job(), date(2026, 11, 29))


def test_a_model_resume_that_claims_a_skill_the_profile_lacks_is_rejected():
    reply = '{"headline": "x", "summary": "y", "sections": [{"title": "Skills", ' \
            '"items": ["Python", "Haskell"]}]}'
    with pytest.raises(ResumeRejected):
        parse_model_resume(reply, PROFILE)
    honest = reply.replace("Haskell", "Kubernetes")
    assert parse_model_resume(honest, PROFILE).sections[0].items == ["Python", "Kubernetes"]
