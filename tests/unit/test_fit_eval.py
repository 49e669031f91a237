"""The fit evaluation set as a regression (issue 30), and each wrong call a job seeker saw
in the issue's walk-through, at the level of the ledger line that decides it.

The set: twelve job seekers in eleven lines of work and nine countries, 156 postings in five
languages (``tests/fixtures/fit_eval``, read by ``tests/fit_evaluation.py``). The targets
are the issue's: precision and recall ≥ 0.95 at the default threshold, NDCG@10 ≥ 0.90 and
no *no* job above the threshold for a deal-breaker reason (``bench/fit_eval.py --wrong``
lists the wrong calls that remain).
"""

from __future__ import annotations

from functools import cache

import pytest

from backend.domain.fit import Requirement
from backend.pipeline.score import ScoreResult, offline_score
from tests.fit_evaluation import ROOT, TODAY, evaluate, load_postings, load_seekers, offline_scorer

PRECISION_TARGET = 0.95
RECALL_TARGET = 0.95
NDCG_TARGET = 0.90


@cache
def _set():
    return {s.id: s for s in load_seekers()}, {p.id: p for p in load_postings()}


def scored(seeker: str, posting: str) -> ScoreResult:
    seekers, postings = _set()
    return offline_score(seekers[seeker].profile, postings[posting].job, today=TODAY)


def line(result: ScoreResult, kind: str) -> Requirement:
    return next(r for r in result.ledger.requirements if r.kind == kind)


def test_the_evaluation_set_is_broad_enough_to_judge_fit_for_everyone():
    seekers, postings = _set()
    assert len(seekers) >= 12 and len(postings) >= 150
    assert len({s.line_of_work for s in seekers.values()}) >= 8
    assert len({s.country for s in seekers.values()}) >= 6
    assert {"de", "fr", "es"} <= {p.language for p in postings.values()}
    for posting in postings.values():
        for seeker, label in posting.labels.items():
            assert seeker in seekers, f"{posting.id}: unknown seeker {seeker}"
            assert label["label"] in ("good", "acceptable", "no") and label["reason"].strip()


def test_the_second_set_holds_its_level():
    """Six more job seekers (pharmacy, kitchens, logistics, HR, legal, content design),
    written after the rules: first measured at precision 0.61, recall 0.93, 18 leaks."""
    root = ROOT.parent / "fit_holdout"
    report = evaluate(offline_scorer, load_seekers(root), load_postings(root))
    assert report.precision() >= 0.85 and report.recall() >= RECALL_TARGET
    assert report.ndcg(10) >= NDCG_TARGET and len(report.deal_breaker_leaks()) <= 4


def test_the_offline_rules_meet_the_targets_on_the_evaluation_set():
    report = evaluate(offline_scorer)
    leaks = [(p.seeker, p.posting, p.score, p.reason) for p in report.deal_breaker_leaks()]
    assert report.precision() >= PRECISION_TARGET
    assert report.recall() >= RECALL_TARGET
    assert report.ndcg(10) >= NDCG_TARGET
    assert leaks == []


# --------------------------------------------------------------------------- the wrong calls


def test_a_nurse_posting_is_another_line_of_work_for_a_data_analyst():
    result = scored("data_analyst_toronto", "nursing_us-001")
    title = line(result, "title")
    assert (title.status, title.deal_breaker) == ("missing", True)
    assert "nursing" in title.detail and result.score < 50


@pytest.mark.parametrize("posting", ["software-001", "software-002"])
def test_backend_and_product_roles_are_not_a_data_analysts_line_of_work(posting):
    result = scored("data_analyst_toronto", posting)
    assert line(result, "title").status == "missing" and result.score < 50


def test_on_site_five_days_is_a_deal_breaker_for_remote_or_hybrid():
    result = scored("data_analyst_toronto", "data-001")
    location = line(result, "location")
    assert (location.status, location.deal_breaker) == ("missing", True)
    assert "on-site" in location.detail.lower() and result.score < 50


def test_a_remote_role_for_us_residents_only_is_out_of_reach_from_canada():
    result = scored("data_analyst_toronto", "data-002")
    location = line(result, "location")
    assert (location.status, location.deal_breaker) == ("missing", True) and result.score < 50


def test_a_usd_range_against_a_cad_floor_is_compared_not_unknown():
    salary = line(scored("data_analyst_toronto", "data-005"), "salary")
    assert salary.status == "met" and "CAD" in salary.evidence and "ECB" in salary.evidence


@pytest.mark.parametrize(("seeker", "posting"), [
    ("growth_marketer_austin", "marketing-001"),  # his exact title, hybrid in Austin: capped at 30 before
    ("mech_engineer_munich", "mechanical-001"),  # "Konstrukteur Getriebe (m/w/d)", "München, Deutschland"
])
def test_the_right_line_of_work_in_the_right_place_is_a_fit(seeker, posting):
    result = scored(seeker, posting)
    assert line(result, "title").status == "met"
    assert line(result, "location").status == "met"
    assert result.ledger.cap is None and result.score >= 70


def test_a_sales_development_role_is_not_a_growth_marketers_job():
    result = scored("growth_marketer_austin", "sales-007")  # scored 69 before
    assert line(result, "title").status == "missing" and result.score < 50


def test_a_town_within_a_commute_counts_and_a_city_beyond_it_does_not():
    assert line(scored("data_analyst_toronto", "data-008"), "location").status == "met"  # Mississauga
    far = line(scored("data_analyst_toronto", "data-010"), "location")  # Calgary
    assert (far.status, far.deal_breaker) == ("missing", True)


def test_a_registration_the_profile_does_not_hold_is_a_deal_breaker():
    result = scored("ward_sister_manchester", "nursing_uk-005")  # needs RMN; she is an adult nurse
    licence = next(r for r in result.ledger.requirements if r.kind == "licence" and "RMN" in r.label)
    assert (licence.status, licence.deal_breaker) == ("missing", True) and result.score < 50
    held = [r for r in scored("ward_sister_manchester", "nursing_uk-001").ledger.requirements
            if r.kind == "licence"]
    assert held and all(r.status == "met" for r in held)


def test_an_internship_is_two_levels_below_an_experienced_analyst():
    result = scored("data_analyst_toronto", "data-006")
    seniority = line(result, "seniority")
    assert (seniority.status, seniority.deal_breaker) == ("missing", True) and result.score < 50


def test_language_names_and_levels_in_the_profiles_own_language_count():
    """"Deutsch (Muttersprache)" answers a posting's "sehr gute Deutschkenntnisse"."""
    result = scored("mech_engineer_munich", "mechanical-001")
    german = next(r for r in result.ledger.requirements
                  if r.kind == "language" and r.label.startswith("German"))
    assert german.status == "met" and "Deutsch" in german.evidence


def test_a_longer_commute_for_a_hybrid_role_is_a_reservation_not_a_deal_breaker():
    location = line(scored("product_designer_amsterdam", "design-002"), "location")  # Rotterdam, 2 days
    assert (location.status, location.deal_breaker) == ("unknown", False) and "km" in location.detail


def test_a_role_only_for_students_is_below_a_qualified_teacher():
    result = scored("teacher_madrid", "teaching-009")  # "Estudiante universitario o titulado reciente"
    seniority = line(result, "seniority")
    assert (seniority.status, seniority.deal_breaker) == ("missing", True) and result.score < 50


def test_an_essential_qualification_the_profile_lacks_is_a_deal_breaker():
    result = scored("teacher_madrid", "teaching-008")  # Máster de Profesorado (IMPRESCINDIBLE)
    degree = line(result, "degree")
    assert (degree.status, degree.deal_breaker) == ("missing", True) and result.score < 50


def test_managing_ninety_staff_is_missing_for_a_bedside_nurse():
    result = scored("rn_houston", "nursing_us-007")
    managing = line(result, "management")
    assert managing.label == "Managing a team of 90"
    assert (managing.status, managing.deal_breaker) == ("missing", True) and result.score < 50


def test_the_profiles_own_words_count_as_evidence():
    """"Analytics" is in a data analyst's own title, even where her skills list lacks it."""
    from backend.pipeline.fit.evidence import ProfileFacts, skill_requirement

    seekers, _ = _set()
    facts = ProfileFacts.read(seekers["data_analyst_toronto"].profile, TODAY)
    analytics = skill_requirement(facts, "Analytics", "must")
    assert analytics.status == "met"
