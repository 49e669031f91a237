"""Offline tailoring and cover letters: faithful to the profile's structure, honest,
grammatical. (The gate's own rules: test_truth_gate.py; the whole board: test_tailor_board.py.)"""

from __future__ import annotations

import re
from datetime import date

from backend.domain.profile import CandidateProfile
from backend.pipeline.cover import as_clause, offline_cover
from backend.pipeline.documents import ResumeDoc
from backend.pipeline.score import JobText, offline_score
from backend.pipeline.tailor import offline_tailor
from backend.pipeline.truth import gate_materials

TODAY = date(2026, 12, 1)
NORTHWIND = ["Mentored four engineers", "Built Python/FastAPI services handling 2M requests/day",
             "Tuned PostgreSQL for billing, cutting p95 latency by 40%", "Ran the on-call rotation",
             "Introduced Airflow for nightly jobs", "Wrote the incident runbooks",
             "Moved infrastructure to Terraform", "Organised the reading group"]
ACME = ["Wrote Go services for payments", "Kept 40 services on Kubernetes",
        "Designed the REST API guidelines"]
INITECH = ["Maintained PHP reports", "Automated test runs with Jenkins", "Answered support tickets"]
PROFILE = CandidateProfile.model_validate({
    "resume": {
        "basics": {
            "name": "Ada Example", "label": "Backend Engineer", "email": "ada@example.org",
            "phone": "+49 30 5550 1234", "url": "https://ada.example.org",
            "summary": "Backend engineer who builds reliable data services. Happiest close to the database.",
            "location": {"city": "Berlin", "countryCode": "DE"},
            "profiles": [{"network": "GitHub", "url": "https://github.com/ada"}],
        },
        # Deliberately not newest first: the tailored résumé orders by date.
        "work": [
            {"name": "Acme", "position": "Backend Engineer", "location": "Hamburg", "startDate": "2017-01",
             "endDate": "2021-02", "highlights": ACME},
            {"name": "Northwind", "position": "Senior Backend Engineer", "location": "Berlin",
             "startDate": "2021-03", "highlights": NORTHWIND},
            {"name": "Initech", "position": "Junior Developer", "startDate": "2015-06", "endDate": "2016-12",
             "highlights": INITECH},
        ],
        "education": [{"institution": "TU Berlin", "studyType": "BSc", "area": "Computer Science",
                       "endDate": "2015"}],
        "skills": [{"name": "Languages", "keywords": ["Python", "Go", "SQL"]},
                   {"name": "Data", "keywords": ["Kafka", "PostgreSQL", "Airflow"]},
                   {"name": "Infrastructure", "keywords": ["Docker", "Kubernetes", "Terraform"]}],
        "languages": [{"language": "English", "fluency": "C2"}, {"language": "German", "fluency": "B1"}],
        "certificates": [{"name": "AWS Certified Developer", "issuer": "Amazon", "date": "2022-05"}],
    },
    "targetTitles": ["Backend Engineer", "Senior Backend Engineer"],
    "locations": ["Berlin", "Lisbon"], "remotePreference": "remote_only",
    "salaryFloor": 70000, "salaryCurrency": "EUR",
})
EMPLOYER_BULLETS = {"Northwind": NORTHWIND, "Acme": ACME, "Initech": INITECH}


def job(**overrides) -> JobText:
    base = dict(title="Senior Backend Engineer", company="Globex Cloud", location="Remote (EU)",
                remote="remote", description="Remote within the EU. Requirements: Python, FastAPI, "
                "PostgreSQL and Airflow. Nice to have: Terraform.")
    return JobText(**{**base, **overrides})


SAN_FRANCISCO = job(company="Bayside Data", location="San Francisco, CA, United States", remote="onsite",
                    description="This role is on-site in our San Francisco office five days a week. "
                                "Requirements: Python, PostgreSQL and Kubernetes.")


def tailored(posting: JobText) -> tuple[ResumeDoc, object]:
    fit = offline_score(PROFILE, posting, today=TODAY)
    return offline_tailor(PROFILE, posting, fit), fit


def test_every_employer_keeps_its_own_bullets_newest_first():
    resume, _ = tailored(job())
    assert [e.employer for e in resume.experience] == ["Northwind", "Acme", "Initech"]
    by_employer = {w.name: w for w in PROFILE.resume.work}
    for entry in resume.experience:
        work = by_employer[entry.employer]
        assert (entry.position, entry.location, entry.start_date, entry.end_date) == (
            work.position, work.location, work.start_date, work.end_date)
        assert set(entry.bullets) <= set(EMPLOYER_BULLETS[entry.employer])
    dropped = {d.text for d in resume.dropped if d.kind == "bullet"}
    for entry in resume.experience:  # kept + dropped is exactly the entry's own bullets
        own = set(EMPLOYER_BULLETS[entry.employer])
        assert set(entry.bullets) | (dropped & own) == own
    assert all(d.reason for d in resume.dropped)


def test_within_an_entry_the_bullets_proving_met_requirements_come_first_and_long_entries_trim():
    resume, _ = tailored(job())
    northwind = resume.experience[0]
    assert len(northwind.bullets) == 6
    # Python/FastAPI, PostgreSQL and Airflow: the posting's must-haves
    assert set(northwind.bullets[:3]) == {NORTHWIND[1], NORTHWIND[2], NORTHWIND[4]}
    trimmed = [d for d in resume.dropped if d.kind == "bullet"]
    assert len(trimmed) == 2 and all("Northwind" in d.reason for d in trimmed)
    assert resume.experience[2].bullets == INITECH  # nothing matched: the profile's order


def test_a_clean_header_every_location_and_a_summary_without_contact_data():
    resume, _ = tailored(job())
    assert (resume.name, resume.headline) == ("Ada Example", "Backend Engineer")
    assert resume.contact.email == "ada@example.org" and resume.contact.phone == "+49 30 5550 1234"
    assert resume.contact.locations == ["Berlin, Germany", "Lisbon, Portugal"]
    assert resume.contact.links == ["https://ada.example.org", "https://github.com/ada"]
    assert resume.summary.startswith("Backend engineer who builds reliable data services. Happiest close")
    assert "Senior Backend Engineer role at Globex Cloud." in resume.summary
    assert "@" not in resume.summary and " - " not in resume.summary and "5550" not in resume.summary


def test_skills_keep_their_groups_matched_first_and_none_is_dropped():
    resume, _ = tailored(job())
    groups = {line.group: line.items for line in resume.skills}
    assert list(groups) == ["Languages", "Data", "Infrastructure"]
    assert groups["Data"] == ["PostgreSQL", "Airflow", "Kafka"]
    assert groups["Infrastructure"][0] == "Terraform"
    assert sorted(resume.skill_items()) == sorted(PROFILE.all_skills())
    assert not [d for d in resume.dropped if d.kind == "skill"]


def test_education_languages_and_certifications_as_the_profile_has_them():
    resume, _ = tailored(job())
    assert [(e.degree, e.institution) for e in resume.education] == [("BSc in Computer Science", "TU Berlin")]
    assert resume.languages == ["English (C2)", "German (B1)"]
    assert resume.certifications == ["AWS Certified Developer (Amazon, 2022)"]


def test_the_offline_materials_pass_their_own_gate():
    for posting in (job(), SAN_FRANCISCO):
        resume, fit = tailored(posting)
        letter = offline_cover(PROFILE, posting, fit, resume, TODAY)
        gate_materials(resume, letter, PROFILE, fit.ledger, posting, today=TODAY)


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+", text) if s]


def assert_grammatical(text: str) -> None:
    assert ": Built" not in text and "for example" not in text.lower()
    for sentence in _sentences(text):
        assert sentence.endswith("."), sentence
        assert sentence[0].isupper(), sentence
        # no capitalised verb glued mid-sentence ("…, Built Python services")
        assert not re.search(r"[,:;] (?:Built|Tuned|Ran|Wrote|Led|Designed|Kept)\b", sentence), sentence


def test_the_letter_is_addressed_grammatical_and_cites_real_evidence():
    resume, fit = tailored(job())
    letter = offline_cover(PROFILE, job(), fit, resume, TODAY)
    assert 3 <= len(letter.paragraphs) <= 5
    assert letter.paragraphs[0].text.startswith(
        "I am applying for the Senior Backend Engineer position at Globex Cloud.")
    assert letter.salutation == "Dear Globex Cloud hiring team," and letter.date_line == "December 1, 2026"
    assert "I built Python/FastAPI services handling 2M requests/day." in letter.text()
    cited = [e for p in letter.paragraphs for e in p.evidence]
    assert "Senior Backend Engineer, Northwind (2021–)" in cited and NORTHWIND[1] in cited
    assert_grammatical(letter.text())
    assert "remote" not in letter.text().lower()  # remote_only, and the role is remote: nothing to say
    assert len(letter.text().split()) < 300


def test_an_on_site_san_francisco_role_gets_no_location_or_relocation_claim():
    resume, fit = tailored(SAN_FRANCISCO)
    assert fit.score <= 20  # on-site for a remote-only job seeker: capped
    letter = offline_cover(PROFILE, SAN_FRANCISCO, fit, resume, TODAY)
    text = letter.text().lower()
    for phrase in ("san francisco", "united states", "reloca", "setup", "works for me", "on-site", "onsite",
                   "remote", "office", "based in", "visa", "salary", "available"):
        assert phrase not in text, phrase
    assert_grammatical(letter.text())


def test_only_verb_led_bullets_become_clauses():
    assert as_clause("Built Kafka pipelines.", current=False) == "built Kafka pipelines"
    assert as_clause("Docker, Redis and REST APIs", current=True) is None
    assert as_clause("Kafka pipelines for billing", current=True) is None
    assert as_clause("Design APIs", current=False) is None  # a present tense only for the current role
    assert as_clause("Design APIs", current=True) == "design APIs"


def test_a_profile_that_only_kept_its_text_is_structured_not_guessed():
    profile = CandidateProfile(resume_text=(
        "Sam Sample\nsam@example.org\n\nEXPERIENCE\nBackend Engineer, Northwind (2020–2024)\n"
        "- Built Python services\n- Tuned PostgreSQL\n\nSKILLS\nPython, PostgreSQL\n"))
    posting = job()
    fit = offline_score(profile, posting, today=TODAY)
    resume = offline_tailor(profile, posting, fit)
    assert resume.experience and resume.experience[0].employer == "Northwind"
    assert set(resume.experience[0].bullets) == {"Built Python services", "Tuned PostgreSQL"}
    letter = offline_cover(profile, posting, fit, resume, TODAY)
    gate_materials(resume, letter, profile, fit.ledger, posting, today=TODAY)
