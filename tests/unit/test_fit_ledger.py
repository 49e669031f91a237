"""The fit evidence ledger: hand-written posting / profile pairs whose answer is known.

Each test checks the requirement lines (kind, importance, status, evidence, detail), not
only the number: the number is derived from them.
"""

from __future__ import annotations

from datetime import date

import pytest

from backend.domain.fit import FitLedger, Requirement, ScoreCap, score_from_ledger
from backend.domain.profile import CandidateProfile
from backend.pipeline.score import JobText, ScoreResult, offline_score

TODAY = date(2026, 12, 1)

NORTHWIND = "Senior Backend Engineer, Northwind (2021–)"
ACME = "Backend Engineer, Acme (2016–2021)"


def backend_profile(**preferences) -> CandidateProfile:
    """A senior backend engineer in Berlin whose work entries prove Python, PostgreSQL and Kafka."""
    document = {
        "resume": {
            "basics": {"name": "Ada Example", "label": "Senior Backend Engineer"},
            "work": [
                {"name": "Northwind", "position": "Senior Backend Engineer", "startDate": "2021-03",
                 "highlights": ["Built Kafka event pipelines in Python for 40M events a day",
                                "Moved billing to PostgreSQL 15 with zero downtime"]},
                {"name": "Acme", "position": "Backend Engineer", "startDate": "2016-09",
                 "endDate": "2021-02", "highlights": ["Wrote Go services behind REST APIs"]},
            ],
            "skills": [{"name": "Backend", "keywords": ["Python", "postgres", "Kafka", "Go", "Docker"]}],
            "languages": [{"language": "English", "fluency": "Native speaker"}],
            "education": [{"institution": "TU Berlin", "studyType": "BSc", "area": "Computer Science"}],
        },
        "targetTitles": ["Backend Engineer", "Senior Backend Engineer"],
        "locations": ["Berlin"],
        "remotePreference": "remote_or_hybrid",
        "salaryFloor": 70000, "salaryCurrency": "EUR",
    }
    document.update(preferences)
    return CandidateProfile.model_validate(document)


def posting(**overrides) -> JobText:
    base = dict(title="Senior Backend Engineer", company="Lumen", location="Remote (EU)", remote="remote",
                description=PERFECT, salary_min=85000, salary_max=100000, salary_currency="EUR")
    return JobText(**{**base, **overrides})


PERFECT = """Senior Backend Engineer

Lumen builds billing software for utilities. This is a fully remote role; you need to live in the EU.

What you'll do

- Design and run the services behind invoicing.

Requirements

- 5+ years of experience in backend development.
- Strong skills in Python.
- Hands-on experience with PostgreSQL.
- Practical experience with Kafka.
- Fluent English.

Nice to have

- Some familiarity with Docker.

What we offer

- 30 days of paid vacation
"""


def score(profile: CandidateProfile, job: JobText) -> ScoreResult:
    return offline_score(profile, job, today=TODAY)


def line(result: ScoreResult, kind: str, label: str | None = None) -> Requirement:
    assert result.ledger is not None
    matches = [r for r in result.ledger.requirements
               if r.kind == kind and (label is None or r.label == label)]
    assert matches, f"no {kind} {label!r} in {[(r.kind, r.label) for r in result.ledger.requirements]}"
    return matches[0]


# --------------------------------------------------------------------------- the perfect match


def test_a_perfect_match_scores_high_and_every_must_names_its_work_entry():
    result = score(backend_profile(), posting())

    assert result.score >= 85 and result.ledger.cap is None
    musts = [r for r in result.ledger.requirements if r.importance == "must"]
    assert musts and all(r.status == "met" for r in musts), [(r.label, r.status, r.detail) for r in musts]
    for skill in ("Python", "PostgreSQL", "Kafka"):
        requirement = line(result, "skill", skill)
        assert (requirement.importance, requirement.status) == ("must", "met")
        assert requirement.evidence == NORTHWIND
    assert line(result, "skill", "Docker").importance == "nice"
    assert line(result, "skill", "Docker").evidence == "Skills: Docker"  # listed, not used in a job
    years = line(result, "experience_years")
    assert years.label == "5+ years of backend development" and years.status == "met"
    assert NORTHWIND in years.evidence and ACME in years.evidence
    assert line(result, "location").label == "Remote (EU)" and line(result, "location").status == "met"
    assert line(result, "language").label == "English (C1+)" and line(result, "language").status == "met"
    assert line(result, "salary").status == "met"
    assert line(result, "title").evidence.startswith("Target title: Senior Backend Engineer")
    assert result.matched[:3] == ["Python", "PostgreSQL", "Kafka"] and result.missing == []
    assert "Meets" in result.rationale and result.rationale.count(".") <= 4


def test_the_skill_index_maps_aliases_to_one_canonical_skill():
    job = posting(description="Requirements\n\n- k8s, psql and golang.\n- Modern JS.")
    profile = backend_profile().with_skills(["Kubernetes", "PostgreSQL", "Go", "JavaScript"])
    result = score(profile, job)
    for skill in ("Kubernetes", "PostgreSQL", "Go", "JavaScript"):
        assert line(result, "skill", skill).status == "met"


def test_go_the_word_is_not_go_the_language():
    result = score(backend_profile(), posting(description="Requirements\n\n- Know when to go fast."))
    assert all(r.label != "Go" for r in result.ledger.requirements)


# --------------------------------------------------------------------------- location


SF_ONSITE = """Senior Backend Engineer

This role is on-site in our San Francisco office 5 days a week.

Requirements

- Python and PostgreSQL.
"""


def test_an_onsite_role_for_a_remote_only_profile_is_capped_and_says_what_you_want():
    profile = backend_profile(remotePreference="remote_only")
    result = score(profile, posting(location="San Francisco, CA, United States", remote="onsite",
                                    description=SF_ONSITE, salary_currency="USD"))

    location = line(result, "location")
    assert location.label == "On-site in San Francisco, 5 days a week"
    assert (location.status, location.importance, location.deal_breaker) == ("missing", "must", True)
    assert "remote only" in location.detail and "Berlin" in location.detail
    assert result.ledger.cap is not None and "San Francisco" in result.ledger.cap.reason
    assert result.score < 50 and result.score <= result.ledger.cap.score
    assert result.rationale.startswith(f"Capped at {result.ledger.cap.score}")


def test_a_hybrid_role_in_your_city_is_met_and_one_elsewhere_is_missing():
    berlin = posting(location="Berlin, Germany", remote="hybrid",
                     description="We work hybrid: three days a week together in our Berlin office.")
    assert line(score(backend_profile(), berlin), "location").status == "met"
    assert line(score(backend_profile(), berlin), "location").label == "Hybrid, 3 days a week in Berlin"

    london = posting(location="London, United Kingdom", remote="hybrid",
                     description="We work hybrid: two days a week together in our London office.")
    result = score(backend_profile(), london)
    # An office in a city the job seeker did not list rules the job out, visibly.
    assert line(result, "location").status == "missing" and line(result, "location").deal_breaker
    assert line(result, "location").detail == "you want remote, or hybrid in Berlin"
    assert result.ledger.cap is not None and result.score <= 30 < score(backend_profile(), berlin).score


def test_a_remote_role_restricted_to_another_region_is_missing():
    job = posting(location="Remote (US)", description="This is a fully remote role open to candidates "
                                                     "anywhere in the United States.")
    location = line(score(backend_profile(), job), "location")
    assert location.label == "Remote (US)" and location.status == "missing"
    assert "Berlin" in location.detail and location.deal_breaker
    assert score(backend_profile(), job).score <= 30


# --------------------------------------------------------------------------- seniority and title


def test_a_junior_role_for_a_staff_engineer_is_a_seniority_mismatch():
    staff = backend_profile(targetTitles=["Backend Engineer"])
    staff = staff.model_copy(update={"resume": staff.resume.model_copy(update={"work": [
        staff.resume.work[0].model_copy(update={"position": "Staff Backend Engineer"}),
        *staff.resume.work[1:]]})})
    result = score(staff, posting(title="Junior Backend Engineer"))

    seniority = line(result, "seniority")
    assert (seniority.label, seniority.status, seniority.importance) == ("Junior level", "missing", "must")
    assert "staff" in seniority.detail and "Staff Backend Engineer, Northwind (2021–)" in seniority.detail
    assert result.ledger.cap is not None and result.score <= result.ledger.cap.score


def test_a_senior_role_for_a_senior_engineer_is_met():
    assert line(score(backend_profile(), posting()), "seniority").status == "met"


MARKETING = """Senior Growth Marketing Manager

Requirements

- 5+ years of experience in B2B marketing.
- Demonstrable experience with lifecycle marketing.
- Practical experience with SEO.
- Strong skills in Google Analytics.

Bonus points

- Exposure to positioning.
"""


def test_a_marketing_role_for_a_backend_engineer_is_far_below_50_with_a_visible_cap():
    result = score(backend_profile(), posting(title="Senior Growth Marketing Manager", description=MARKETING))

    title = line(result, "title")
    assert (title.status, title.deal_breaker) == ("missing", True) and "marketing" in title.detail
    assert result.ledger.cap is not None and "marketing" in result.ledger.cap.reason
    assert result.score < 30
    for skill in ("SEO", "Google Analytics", "Lifecycle marketing"):
        assert line(result, "skill", skill).status == "missing"
    assert line(result, "skill", "Positioning").importance == "nice"
    years = line(result, "experience_years")
    assert years.label == "5+ years of B2B marketing" and years.status == "missing"
    assert "marketing roles" in years.detail


# --------------------------------------------------------------------------- languages


GERMAN = "Requirements\n\n- Fluent German (C1) and English.\n- Python."


def test_fluent_german_is_missing_for_an_english_only_profile():
    language = line(score(backend_profile(), posting(description=GERMAN)), "language", "German (C1+)")
    assert (language.status, language.importance) == ("missing", "must")
    assert "English (Native speaker)" in language.detail


@pytest.mark.parametrize(("fluency", "status"), [("C1", "met"), ("Native", "met"), ("B2", "missing")])
def test_fluent_german_needs_c1_or_native(fluency, status):
    profile = backend_profile()
    languages = [*profile.resume.languages, {"language": "German", "fluency": fluency}]
    profile = CandidateProfile.model_validate(
        {**profile.model_dump(by_alias=True), "resume": {**profile.resume.model_dump(by_alias=True),
                                                         "languages": languages}})
    language = line(score(profile, posting(description=GERMAN)), "language", "German (C1+)")
    assert language.status == status
    if status == "met":
        assert language.evidence == f"Languages: German ({fluency})"


def test_deutsch_reads_as_german_and_a_language_in_the_company_blurb_is_not_a_requirement():
    job = posting(description="We deliver groceries in 14 Spanish cities.\n\nAbout you\n\n- Sehr gute "
                              "Deutschkenntnisse, fluent.")
    result = score(backend_profile(), job)
    assert line(result, "language", "German (C1+)").status == "missing"
    assert all(not r.label.startswith("Spanish") for r in result.ledger.requirements)


# --------------------------------------------------------------------------- no sections


def test_a_posting_without_a_requirements_section_still_yields_a_sane_ledger():
    job = posting(title="Backend Engineer", location="Berlin, Germany", remote=None,
                  description="We are a small team in Berlin using Python, Kafka and Rust. "
                              "Come build with us.", salary_min=None, salary_max=None)
    result = score(backend_profile(), job)

    kinds = [r.kind for r in result.ledger.requirements]
    assert "title" in kinds and "location" in kinds
    skills = {r.label: r for r in result.ledger.requirements if r.kind == "skill"}
    assert set(skills) == {"Python", "Kafka", "Rust"}
    assert all(r.importance == "nice" for r in skills.values())
    assert skills["Python"].status == "met" and skills["Rust"].status == "missing"
    # Remote or on-site is not stated, but the office is in the job seeker's own city.
    assert line(result, "location").status == "met"
    salary = line(result, "salary")
    assert (salary.status, salary.detail) == ("unknown", "Salary — not stated")
    assert 0 <= result.score <= 100 and result.score == score_from_ledger(result.ledger)


def test_an_empty_description_does_not_crash():
    result = score(backend_profile(), posting(description=""))
    assert result.ledger.requirements and result.rationale


# --------------------------------------------------------------------------- salary


@pytest.mark.parametrize(("low", "high", "currency", "status", "detail"), [
    (50000, 60000, "EUR", "missing", "Up to EUR 60,000 — below your floor of EUR 70,000"),
    (90000, 120000, "ARS", "unknown", "Paid in ARS; your floor is EUR 70,000"),  # no ECB rate
    (None, None, None, "unknown", "Salary — not stated"),
    (80000, None, "EUR", "met", None),
])
def test_the_salary_against_the_floor(low, high, currency, status, detail):
    job = posting(salary_min=low, salary_max=high, salary_currency=currency)
    salary = line(score(backend_profile(), job), "salary")
    assert (salary.status, salary.detail) == (status, detail)
    if status == "met":
        assert salary.evidence == "Your floor: EUR 70,000"


# --------------------------------------------------------------------------- work authorization


AUTHORIZATION = ("Requirements\n\n- You must be authorized to work in the United States; we do not "
                 "offer visa sponsorship.\n- Python.")


def test_work_authorization_stated_in_the_profile_is_met():
    profile = backend_profile(workAuthorization=["US", "EU"])
    requirement = line(score(profile, posting(description=AUTHORIZATION)), "work_authorization")
    assert requirement.label == "Authorized to work in United States (no visa sponsorship)"
    assert (requirement.status, requirement.evidence) == ("met", "Work authorization: US and EU")


def test_work_authorization_not_stated_in_the_profile_is_unknown():
    requirement = line(score(backend_profile(), posting(description=AUTHORIZATION)), "work_authorization")
    assert requirement.status == "unknown"
    assert requirement.detail == "Work authorization — not stated in your profile"


def test_work_authorization_elsewhere_is_missing():
    profile = backend_profile(workAuthorization=["Canada"])
    assert line(score(profile, posting(description=AUTHORIZATION)), "work_authorization").status == "missing"


def test_a_posting_that_does_not_mention_authorization_has_no_such_line():
    requirements = score(backend_profile(), posting()).ledger.requirements
    assert all(r.kind != "work_authorization" for r in requirements)


# --------------------------------------------------------------------------- degree and keywords


def test_a_degree_is_matched_against_education():
    job = posting(description="Requirements\n\n- BS in Computer Science.")
    degree = line(score(backend_profile(), job), "degree")
    assert (degree.label, degree.status) == ("Bachelor's in Computer Science", "met")
    assert degree.evidence == "BSc Computer Science, TU Berlin"
    master_job = posting(description="Requirements\n\n- A Master's degree.")
    master = line(score(backend_profile(), master_job), "degree")
    assert master.status == "missing"


def test_a_deal_breaker_keyword_caps_the_score_and_must_haves_are_checked():
    profile = backend_profile(dealBreakerKeywords=["crypto"], mustHaveKeywords=["Python", "Elixir"])
    result = score(profile, posting(description=PERFECT + "\nWe trade crypto."))
    breaker = line(result, "keyword", "No “crypto”")
    assert (breaker.status, breaker.deal_breaker) == ("missing", True)
    assert result.ledger.cap == ScoreCap(score=10, reason=f"No “crypto” — {breaker.detail}")
    assert result.score <= 10
    assert line(result, "keyword", "Python").status == "met"
    assert line(result, "keyword", "Elixir").status == "missing"


# --------------------------------------------------------------------------- the number


def test_the_score_is_derived_from_the_ledger_and_a_flagged_deal_breaker_caps_it():
    met = Requirement(kind="skill", label="Python", status="met")
    assert score_from_ledger(FitLedger(requirements=[met])) == 100
    assert score_from_ledger(FitLedger()) == 50
    flagged = Requirement(kind="location", label="On-site", status="missing", deal_breaker=True)
    assert score_from_ledger(FitLedger(requirements=[met] * 10 + [flagged])) == 15


def test_the_ledger_round_trips_as_camel_case_json():
    ledger = score(backend_profile(), posting()).ledger
    data = ledger.model_dump(mode="json", by_alias=True)
    assert {"kind", "label", "importance", "status", "evidence", "detail", "dealBreaker"} <= set(
        data["requirements"][0])
    assert FitLedger.model_validate(data) == ledger


def test_offline_scoring_is_deterministic():
    assert score(backend_profile(), posting()) == score(backend_profile(), posting())


def test_a_salary_in_another_currency_is_compared_at_the_bundled_dated_ecb_rate():
    """A USD range against a EUR floor is ✓ or ✗, never "?" (issue 30: a USD salary
    against a CAD floor stayed unknown)."""
    from backend.pipeline.fit.evidence import converted

    above = line(score(backend_profile(), posting(salary_min=90000, salary_max=120000,
                                                  salary_currency="USD")), "salary")
    in_eur, day = converted(120000, "USD", "EUR")
    assert above.status == "met" and f"about EUR {in_eur:,} at the ECB rate of {day}" in above.evidence
    below = line(score(backend_profile(), posting(salary_min=40000, salary_max=60000,
                                                  salary_currency="USD")), "salary")
    assert (below.status, below.deal_breaker) == ("missing", True)
    assert below.detail.startswith("Up to USD 60,000 (about EUR ")
    assert below.detail.endswith("below your floor of EUR 70,000")
