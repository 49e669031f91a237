"""The posting's must-have terms, honestly: each one the profile proves shows in the tailored
résumé, one it does not prove is never added, and the job detail's answer carries the list."""

from __future__ import annotations

import sqlite3

import pytest

from backend.domain.profile import CandidateProfile
from backend.pipeline.coverage import keyword_coverage, resume_text, shows
from backend.pipeline.score import JobText, offline_score
from backend.pipeline.tailor import offline_tailor
from backend.pipeline.truth import gate_materials
from tests.api_http import in_process_api
from tests.fit_evaluation import TODAY, load_postings, load_seekers
from tests.unit.application_helpers import job_key

SEEKERS = {seeker.id: seeker for seeker in load_seekers()}
POSTINGS = {posting.id: posting for posting in load_postings()}


def coverage(seeker: str, posting: str, *, tailor: bool = True):
    profile, job = SEEKERS[seeker].profile, POSTINGS[posting].job
    fit = offline_score(profile, job, today=TODAY)
    resume = offline_tailor(profile, job, fit) if tailor else None
    return keyword_coverage(fit.ledger, profile, resume, today=TODAY), resume, fit


def test_each_must_have_term_is_proven_or_not_and_in_the_resume_or_not():
    found, resume, _ = coverage("data_analyst_toronto", "data-002")
    by_term = {c.term: (c.proven, c.in_resume) for c in found}
    assert by_term == {"Looker": (True, True), "SQL": (True, True), "Python": (True, True),
                       "R": (False, False), "Tableau": (True, True), "Power BI": (True, True),
                       "HIPAA": (False, False)}
    before, _, _ = coverage("data_analyst_toronto", "data-002", tailor=False)
    assert [c.in_resume for c in before] == [None] * len(before)  # no résumé yet: unknown
    assert [c.proven for c in before] == [c.proven for c in found]


def test_a_term_in_the_postings_title_in_the_summary_is_not_a_claim():
    found, resume, _ = coverage("growth_marketer_austin", "marketing-006")
    assert "to the " in resume.summary
    assert all(c.in_resume is False for c in found if not c.proven)


@pytest.mark.parametrize("seeker", sorted(SEEKERS))
def test_the_offline_tailor_puts_in_every_proven_term_and_never_an_unproven_one(seeker):
    checked = 0
    for posting in POSTINGS.values():
        found, resume, fit = coverage(seeker, posting.id)
        gate_materials(resume, None, SEEKERS[seeker].profile, fit.ledger, posting.job, today=TODAY)
        for item in found:
            assert item.in_resume == item.proven, (posting.id, item)
            checked += 1
    assert checked


def _profile_with_a_trimmed_proof() -> CandidateProfile:
    """Five jobs: the oldest keeps two bullets, and each of its three proves a must-have."""
    work = [{"name": f"Firm {n}", "position": "Data Engineer", "startDate": f"20{20 - 2 * n}-01",
             "endDate": f"20{21 - 2 * n}-12", "highlights": [f"Kept reports for team {n}"]}
            for n in range(4)]
    work.append({"name": "Oldco", "position": "Data Engineer", "startDate": "2008-01", "endDate": "2010-12",
                 "highlights": ["Ran Kafka topics for billing", "Wrote Spark jobs for invoices",
                                "Scheduled Airflow DAGs for exports"]})
    return CandidateProfile.model_validate({
        "resume": {"basics": {"name": "Kim Doe", "label": "Data Engineer"}, "work": work,
                   "skills": [{"name": "Tools", "keywords": ["Python", "SQL", "Docker"]}]},
        "targetTitles": ["Data Engineer"]})


def test_a_proven_term_whose_bullet_was_trimmed_comes_back_and_nothing_unproven_is_added():
    profile = _profile_with_a_trimmed_proof()
    job = JobText(title="Data Engineer", company="Acme", location="Berlin", remote="remote",
                  description="Requirements: Python, SQL, Docker, Kafka, Spark, Airflow and Snowflake.")
    fit = offline_score(profile, job, today=TODAY)
    resume = offline_tailor(profile, job, fit)
    oldco = next(entry for entry in resume.experience if entry.employer == "Oldco")
    assert len(oldco.bullets) == 3
    found = {c.term: (c.proven, c.in_resume)
             for c in keyword_coverage(fit.ledger, profile, resume, today=TODAY)}
    assert found == {"Python": (True, True), "SQL": (True, True), "Docker": (True, True),
                     "Kafka": (True, True), "Spark": (True, True), "Airflow": (True, True),
                     "Snowflake": (False, False)}
    assert "Airflow" not in resume.summary  # it is the restored bullet that shows it
    assert not shows(resume, "Snowflake") and "Snowflake" not in resume_text(resume)
    assert not [d for d in resume.dropped if "Oldco" in d.reason]
    gate_materials(resume, None, profile, fit.ledger, job, today=TODAY)


def test_the_job_detail_answer_carries_the_coverage(tmp_path):
    seeker, posting = SEEKERS["data_analyst_toronto"], POSTINGS["data-002"]
    fit = offline_score(seeker.profile, posting.job, today=TODAY)
    resume = offline_tailor(seeker.profile, posting.job, fit)
    with in_process_api(tmp_path) as client:
        key = job_key(1)
        with sqlite3.connect(tmp_path / "jobctrl.db") as conn:
            conn.execute(
                "INSERT INTO jobs (job_id, tenant_id, canonical_url, url, title, company, description_html,"
                " first_source, first_seen_at, last_seen_at) VALUES (?, 'local', 'https://a.example/1',"
                " 'https://a.example/1', 'Data Analyst', 'Acme', '<p>x</p>', 'demo_board',"
                " '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')", (key,))
        empty = client.get(f"/v1/jobs/{key}").json()
        assert empty["keywordCoverage"] == []  # no score yet
        assert client.put("/v1/profile", json=seeker.profile.model_dump(mode="json", by_alias=True)
                          ).status_code == 200
        with sqlite3.connect(tmp_path / "jobctrl.db") as conn:
            conn.execute(
                "INSERT INTO job_scores (tenant_id, job_id, version, score, rationale, matched_json,"
                " missing_json, provider, model, profile_revision, workflow_id, run_id, created_at,"
                " ledger_json) VALUES ('local', ?, 1, 70, 'r', '[]', '[]', 'offline', 'm', 1, 'w', 'r',"
                " '2026-01-01T00:00:00.000Z', ?)", (key, fit.ledger.model_dump_json(by_alias=True)))
            conn.execute(
                "INSERT INTO job_materials (tenant_id, job_id, kind, generation, content_json, provider,"
                " model, profile_revision, workflow_id, run_id, created_at) VALUES ('local', ?, 'resume',"
                " 1, ?, 'offline', 'm', 1, 'w', 'r', '2026-01-01T00:00:00.000Z')",
                (key, resume.model_dump_json(by_alias=True)))
        answer = client.get(f"/v1/jobs/{key}")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert {"score", "resume", "fitThreshold", "stages"} <= body.keys()  # the names stay
    assert body["keywordCoverage"][:2] == [{"term": "Looker", "proven": True, "inResume": True},
                                           {"term": "SQL", "proven": True, "inResume": True}]
    assert {"term": "HIPAA", "proven": False, "inResume": False} in body["keywordCoverage"]
