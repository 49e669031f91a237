"""The offline letter reads like a person wrote it, for every seeker of the fit evaluation
set (eleven lines of work, nine countries, résumés in English, German, French and
Spanish) and each one's best postings: short sentences, no bullet punctuation, a body
whenever the profile proves what the posting asks, and no sentence the posting did not
ask for. Every letter passes the truth gate."""

from __future__ import annotations

from functools import cache

import pytest

from backend.pipeline.cover import offline_cover, profile_language
from backend.pipeline.material_checks import (
    body,
    letter_sentences,
    list_punctuation,
    long_sentences,
    repeated,
    unasked,
)
from backend.pipeline.score import offline_score
from backend.pipeline.tailor import offline_tailor
from backend.pipeline.truth import gate_materials, source_resume
from tests.fit_evaluation import TODAY, load_postings, load_seekers

TOP = 3
SEEKERS = load_seekers()


@cache
def letters(seeker_id: str):
    seeker = next(s for s in SEEKERS if s.id == seeker_id)
    scored = sorted(((offline_score(seeker.profile, p.job, today=TODAY), p) for p in load_postings()),
                    key=lambda item: (-item[0].score, item[1].id))
    out = []
    for fit, posting in scored[:TOP]:
        resume = offline_tailor(seeker.profile, posting.job, fit)
        letter = offline_cover(seeker.profile, posting.job, fit, resume, TODAY)
        out.append((seeker, posting, fit, resume, letter))
    return out


@pytest.mark.parametrize("seeker_id", [s.id for s in SEEKERS])
def test_sentences_a_person_writes(seeker_id):
    for _, posting, _, _, letter in letters(seeker_id):
        # The posting's title and company are its own words: the rest is the writer's.
        said = letter_sentences(letter, posting.job)
        where = f"{seeker_id} / {posting.id}"
        assert not long_sentences(said), where
        assert not list_punctuation(said), where
        assert not repeated(said), (where, said)
        openings = [s.split()[0] for s in said]
        assert openings.count("I") <= len(said) / 2, (where, said)


@pytest.mark.parametrize("seeker_id", [s.id for s in SEEKERS])
def test_a_body_whenever_the_profile_proves_what_the_posting_asks(seeker_id):
    for _, posting, fit, resume, letter in letters(seeker_id):
        proven = [r for r in fit.ledger.met() if r.importance == "must"
                  and r.kind in ("skill", "title", "experience_years", "management")]
        cited = [e for p in letter.paragraphs[1:-1] for e in p.evidence]
        if proven and any(entry.bullets for entry in resume.experience):
            bullets = {b for entry in resume.experience for b in entry.bullets}
            assert any(e in bullets for e in cited), (seeker_id, posting.id, body(letter))


@pytest.mark.parametrize("seeker_id", [s.id for s in SEEKERS])
def test_only_sentences_the_posting_asks_for(seeker_id):
    for seeker, posting, fit, _, letter in letters(seeker_id):
        for paragraph in body(letter):
            why = unasked(paragraph, fit, posting.job, seeker.profile)
            assert why is None, (seeker_id, posting.id, why, paragraph)


@pytest.mark.parametrize("seeker_id", [s.id for s in SEEKERS])
def test_every_letter_passes_the_truth_gate(seeker_id):
    for seeker, posting, fit, resume, letter in letters(seeker_id):
        gate_materials(resume, letter, seeker.profile, fit.ledger, posting.job, today=TODAY)


def test_the_letter_is_written_in_the_resumes_language():
    expected = {"mech_engineer_munich": "de", "accountant_lyon": "fr", "teacher_madrid": "es",
                "data_analyst_toronto": "en", "rn_houston": "en"}
    for seeker_id, language in expected.items():
        seeker = next(s for s in SEEKERS if s.id == seeker_id)
        assert profile_language(seeker.profile) == language, seeker_id
    german = letters("mech_engineer_munich")[0][4]
    assert german.paragraphs[0].text.startswith("Hiermit bewerbe ich mich")
    assert german.closing == "Mit freundlichen Grüßen"
    assert letters("teacher_madrid")[0][4].date_line == "1 de diciembre de 2026"


def test_a_nurse_letter_cites_her_own_icu_work():
    nurse = letters("rn_houston")[0]
    text = " ".join(body(nurse[4]))
    own = {b for w in source_resume(nurse[0].profile).work for b in w.highlights}
    assert any(b in (nurse[4].paragraphs[1].evidence) for b in own), text
    assert "vasopressors" in text or "ventilated" in text, text
