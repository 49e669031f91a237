"""The whole bundled demo board scored for a backend engineer: the distribution makes
sense (backend roles mostly fit, sales / marketing / design roles never do)."""

from __future__ import annotations

import re
import statistics
from datetime import date

import pytest

from backend.domain.fit import score_from_ledger
from backend.domain.profile import CandidateProfile
from backend.pipeline.posting_text import demo_board_jobs
from backend.pipeline.score import JobText, offline_score

TODAY = date(2026, 12, 1)
PROFILE = CandidateProfile.model_validate({
    "resume": {
        "work": [
            {"name": "Northwind", "position": "Senior Backend Engineer", "startDate": "2021-03",
             "highlights": ["Built Kafka event pipelines in Python", "Tuned PostgreSQL for billing",
                            "Ran services on Kubernetes in AWS"]},
            {"name": "Acme", "position": "Backend Engineer", "startDate": "2016-09", "endDate": "2021-02",
             "highlights": ["Wrote Go and Python APIs", "Docker, Redis and REST APIs"]},
        ],
        "skills": [{"name": "Backend", "keywords": ["Python", "Go", "PostgreSQL", "Kafka", "Kubernetes",
                                                     "AWS", "Docker", "Redis", "gRPC", "Terraform"]}],
        "languages": [{"language": "English", "fluency": "Native speaker"}],
    },
    "targetTitles": ["Backend Engineer", "Senior Backend Engineer"], "locations": ["Berlin"],
    "remotePreference": "remote_or_hybrid", "salaryFloor": 70000, "salaryCurrency": "EUR",
})
FAR_TITLES = re.compile(r"sales|account executive|marketing|designer|recruit|talent|product manager", re.I)
BACKEND_TITLES = re.compile(r"backend", re.I)


@pytest.fixture(scope="module")
def scored() -> list[tuple[JobText, object]]:
    return [(job, offline_score(PROFILE, job, today=TODAY)) for job in demo_board_jobs()]


def test_every_posting_gets_a_derived_score_and_a_readable_ledger(scored):
    assert len(scored) > 200
    for job, result in scored:
        assert result.score == score_from_ledger(result.ledger), job.title
        assert any(r.kind == "title" for r in result.ledger.requirements)
        assert any(r.kind == "location" for r in result.ledger.requirements)
        assert all(r.detail for r in result.ledger.requirements if r.status != "met"), job.title
        assert all(r.evidence for r in result.ledger.requirements if r.status == "met"), job.title
        assert result.rationale and result.rationale.count(". ") <= 3


def test_no_sales_marketing_or_design_role_scores_50_or_more(scored):
    far = [(job.title, result.score) for job, result in scored if FAR_TITLES.search(job.title)]
    assert len(far) >= 20
    assert [item for item in far if item[1] >= 50] == []
    assert statistics.median(score for _, score in far) < 30


def _location(result):
    return next(r for r in result.ledger.requirements if r.kind == "location")


def test_backend_roles_the_seeker_can_take_mostly_score_50_or_more(scored):
    """Remote from where they are, or in Berlin: the place fits and no deal-breaker (e.g. a
    head-of role two levels up) caps it, so skills decide."""
    reachable = [result.score for job, result in scored
                 if re.search(r"backend|platform|site reliability", job.title, re.I)
                 and _location(result).status == "met" and result.ledger.cap is None]
    assert len(reachable) >= 5
    assert sum(score >= 50 for score in reachable) >= 0.8 * len(reachable)
    assert max(reachable) >= 85


def test_backend_roles_with_an_office_elsewhere_are_capped_below_the_threshold(scored):
    elsewhere = [(job, result) for job, result in scored if BACKEND_TITLES.search(job.title)
                 and _location(result).status == "missing"]
    assert len(elsewhere) >= 5
    for job, result in elsewhere:
        assert result.score < 50 and result.ledger.cap is not None, job.title
        assert _location(result).deal_breaker and _location(result).detail, job.title


def test_postings_name_real_requirements_even_outside_engineering(scored):
    sales = [result for job, result in scored if re.search(r"account executive", job.title, re.I)]
    labels = {r.label for result in sales for r in result.ledger.requirements if r.kind == "skill"}
    assert {"Salesforce", "HubSpot"} <= labels
