"""The whole bundled demo board, offline: every tailored résumé and letter passes the
truthfulness gate, and every résumé keeps all work entries with their own bullets."""

from __future__ import annotations

import pytest

from backend.domain.profile import CandidateProfile
from backend.pipeline.cover import offline_cover
from backend.pipeline.posting_text import demo_board_jobs
from backend.pipeline.score import JobText, offline_score
from backend.pipeline.tailor import offline_tailor
from backend.pipeline.truth import gate_materials
from tests.unit import test_fit_ledger_board, test_writing

TODAY = test_writing.TODAY


def board_jobs() -> list[JobText]:
    return demo_board_jobs()


@pytest.mark.parametrize("profile", [test_writing.PROFILE, test_fit_ledger_board.PROFILE],
                         ids=["three-entries-remote-only", "two-entries-remote-or-hybrid"])
def test_every_board_posting_gets_materials_that_pass_the_gate(profile):
    jobs = board_jobs()
    assert len(jobs) > 200
    own = {work.name: set(filter(None, (work.summary, *work.highlights))) for work in profile.resume.work}
    for job in jobs:
        fit = offline_score(profile, job, today=TODAY)
        resume = offline_tailor(profile, job, fit)
        letter = offline_cover(profile, job, fit, resume, TODAY)
        gate_materials(resume, letter, profile, fit.ledger, job, today=TODAY)
        newest_first = sorted(profile.resume.work, key=_newest, reverse=True)
        assert [e.employer for e in resume.experience] == [w.name for w in newest_first]
        for entry in resume.experience:
            assert entry.bullets and set(entry.bullets) <= own[entry.employer], job.title
        assert 2 <= len(letter.paragraphs) <= 5 and len(letter.text().split()) < 300, job.title


def _newest(work) -> tuple:
    return (work.end_date is None, work.end_date or "", work.start_date or "")


THIN_PROFILES = {
    # Must-have words the profile never proves: the posting mentioning them is no strength.
    "must-have-words-only": CandidateProfile.model_validate({
        "targetTitles": ["Backend Engineer"], "mustHaveKeywords": ["Python", "Go"],
        "resume": {"basics": {"name": "Ada"}}}),
    "pasted-text-only": CandidateProfile.model_validate({
        "resumeText": "Ada Example\nEngineer who likes Python.", "mustHaveKeywords": ["Kafka"]}),
}


@pytest.mark.parametrize("profile", THIN_PROFILES.values(), ids=THIN_PROFILES.keys())
def test_thin_profiles_still_get_materials_that_pass_the_gate(profile):
    """Offline output must never fail its own gate, however little the profile holds."""
    for job in board_jobs():
        fit = offline_score(profile, job, today=TODAY)
        resume = offline_tailor(profile, job, fit)
        letter = offline_cover(profile, job, fit, resume, TODAY)
        gate_materials(resume, letter, profile, fit.ledger, job, today=TODAY)
