"""``structure_text`` on awkward text: wrapped bullets, German headings and dates, every
header layout, and text with no headings at all — where nothing may be lost."""

from __future__ import annotations

import random
import re

import pytest

from backend.domain.resume_structure import Line, heading_kind
from backend.domain.resume_vocabulary import iso_date, location_of
from backend.profile_import import structure_text


def _jobs(text: str) -> list[dict]:
    resume, _unplaced = structure_text(text)
    return resume.export().get("work", [])


def _all_strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _all_strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _all_strings(v)]
    return []


_DATE_WORDS = re.compile(
    r"^(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|present|heute|current|seit|since|bis|to)$")


def _exempt(word: str) -> bool:
    """Words that come back in another form: month names (ISO dates) and countries
    (ISO country codes)."""
    return bool(_DATE_WORDS.match(word.lower())) or location_of(f"Somewhere, {word}") is not None


def assert_nothing_lost(text: str) -> None:
    """Every non-empty line is a section heading, is in ``unplaced`` as it was, or each
    of its words is somewhere in the résumé."""
    resume, unplaced = structure_text(text)
    placed = " ".join(_all_strings(resume.export())).lower()
    for line in text.splitlines():
        if not line.strip() or line.strip() in unplaced:
            continue
        if heading_kind(Line(raw=line, text=line.strip())) not in (None, "other"):
            continue
        for word in re.findall(r"[^\W\d_]{2,}|\d{4}", line):
            if _exempt(word):
                continue
            assert word.lower() in placed, f"{word!r} of {line!r} was lost"


# --------------------------------------------------------------------------- entries


def test_wrapped_bullets_join_the_bullet_they_continue_and_the_next_entry_survives():
    text = """\
Experience
Senior Backend Engineer — Northwind GmbH, Berlin
Apr 2021 – Present
• Designed the ingestion platform on Kafka and PostgreSQL for
  forty thousand events a second
• Built the reporting API with FastAPI
that customers call for invoices.
Backend Engineer — Lindenhof AG, Hamburg
2018 – 2021
• Wrote the tracking backend.
"""
    jobs = _jobs(text)
    assert [job["name"] for job in jobs] == ["Northwind GmbH", "Lindenhof AG"]
    assert jobs[0]["highlights"] == [
        "Designed the ingestion platform on Kafka and PostgreSQL for forty thousand events a second",
        "Built the reporting API with FastAPI that customers call for invoices.",
    ]
    assert jobs[1]["highlights"] == ["Wrote the tracking backend."]
    assert_nothing_lost(text)


def test_capitalised_continuation_of_an_unfinished_bullet_joins_it():
    text = """\
Experience
Data Engineer | Rheinblick SE | 2019 – 2022
- Migrated the warehouse loads to Airflow and
  Kubernetes operators
- Cut costs.
"""
    assert _jobs(text)[0]["highlights"] == [
        "Migrated the warehouse loads to Airflow and Kubernetes operators", "Cut costs."]


@pytest.mark.parametrize(("header", "expected"), [
    (["Senior Backend Engineer — Northwind GmbH, Berlin", "Apr 2021 – Present"],
     {"position": "Senior Backend Engineer", "name": "Northwind GmbH", "location": "Berlin",
      "startDate": "2021-04"}),
    (["Northwind GmbH | Senior Backend Engineer | 2021 – present"],
     {"position": "Senior Backend Engineer", "name": "Northwind GmbH", "startDate": "2021"}),
    (["Senior Backend Engineer, Northwind (Apr 2021 – Present)"],
     {"position": "Senior Backend Engineer", "name": "Northwind", "startDate": "2021-04"}),
    (["Senior Backend Engineer", "Northwind GmbH, Berlin", "04/2021 – 03/2023"],
     {"position": "Senior Backend Engineer", "name": "Northwind GmbH", "location": "Berlin",
      "startDate": "2021-04", "endDate": "2023-03"}),
    (["Backend Developer at Northwind Inc.", "2021-04 to 2022-11"],
     {"position": "Backend Developer", "name": "Northwind Inc.", "startDate": "2021-04",
      "endDate": "2022-11"}),
    (["Softwareentwickler bei Spreewerk GmbH, Cottbus", "März 2018 – Feb. 2020"],
     {"position": "Softwareentwickler", "name": "Spreewerk GmbH", "location": "Cottbus",
      "startDate": "2018-03", "endDate": "2020-02"}),
    (["Teamleiter — Havelblick AG", "seit 09/2020"],
     {"position": "Teamleiter", "name": "Havelblick AG", "startDate": "2020-09"}),
    (["Werkstudent, Oderbruch Labs", "Okt. 2016 – bis heute"],
     {"position": "Werkstudent", "name": "Oderbruch Labs", "startDate": "2016-10"}),
])
def test_header_layouts(header, expected):
    text = "\n".join(["Work Experience", *header, "- Did one concrete thing."])
    jobs = _jobs(text)
    assert len(jobs) == 1
    job = {key: value for key, value in jobs[0].items() if key != "highlights"}
    assert job == expected
    assert jobs[0]["highlights"] == ["Did one concrete thing."]


def test_entries_without_bullets_are_split_by_their_dates():
    text = """\
EXPERIENCE
Platform Engineer — Hafenkante Cloud GmbH
2020 – present
Software Engineer — Elbtal Payments AG
2017 – 2020
"""
    jobs = _jobs(text)
    assert [(j["name"], j["startDate"], j.get("endDate")) for j in jobs] == [
        ("Hafenkante Cloud GmbH", "2020", None), ("Elbtal Payments AG", "2017", "2020")]


def test_a_description_paragraph_becomes_the_entry_summary():
    text = """\
Experience
Staff Engineer — Isarwerk GmbH
2020 – present
Led a platform group of six engineers across two product teams in Munich.
- Introduced Kafka.
"""
    job = _jobs(text)[0]
    assert job["summary"] == "Led a platform group of six engineers across two product teams in Munich."
    assert job["highlights"] == ["Introduced Kafka."]


# --------------------------------------------------------------------------- sections


def test_german_headings_and_sections():
    text = """\
Lea Beispiel
Backend-Entwicklerin
lea@example.de | Dresden, Deutschland

PROFIL
Entwickle seit acht Jahren Python-Dienste.

## Berufserfahrung:
Backend-Entwicklerin — Elbflorenz Software GmbH, Dresden
01/2019 – heute
• Baut die Abrechnungsdienste mit FastAPI.

Ausbildung
B.Sc. Informatik, TU Dresden, 2015 – 2018

Kenntnisse
Sprachen: Python, Go
Datenbanken: PostgreSQL

Sprachen
Deutsch (Muttersprache), Englisch (C1)

Zertifikate
Certified Kubernetes Administrator (CKA) — CNCF, 2023
"""
    resume, unplaced = structure_text(text)
    assert unplaced == []
    assert resume.basics.location.country_code == "DE"
    assert resume.basics.summary == "Entwickle seit acht Jahren Python-Dienste."
    assert resume.work[0].name == "Elbflorenz Software GmbH" and resume.work[0].end_date is None
    assert (resume.education[0].study_type, resume.education[0].area, resume.education[0].institution) == (
        "B.Sc.", "Informatik", "TU Dresden")
    assert [(g.name, g.keywords) for g in resume.skills] == [("Sprachen", ["Python", "Go"]),
                                                            ("Datenbanken", ["PostgreSQL"])]
    assert [lang.language for lang in resume.languages] == ["Deutsch", "Englisch"]
    certificate = resume.certificates[0]
    assert (certificate.name, certificate.issuer, certificate.date) == (
        "Certified Kubernetes Administrator (CKA)", "CNCF", "2023")


def test_skills_grouped_plain_and_wrapped():
    text = """\
Technical Skills
Languages: Python, Go,
  TypeScript, SQL
Cloud: AWS (EKS, RDS), Terraform
Docker, Kubernetes
Helm
"""
    resume, unplaced = structure_text(text)
    assert unplaced == []
    assert [(g.name, g.keywords) for g in resume.skills] == [
        ("Languages", ["Python", "Go", "TypeScript", "SQL"]),
        ("Cloud", ["AWS (EKS, RDS)", "Terraform"]),
        ("Skills", ["Docker", "Kubernetes", "Helm"]),
    ]


def test_languages_listed_among_the_skills_are_languages():
    resume, _ = structure_text("Skills\nPython, Go\nLanguages: English (native), German (B2)\n")
    assert resume.skill_names() == ["Python", "Go"]
    assert [(lang.language, lang.fluency) for lang in resume.languages] == [
        ("English", "native"), ("German", "B2")]


def test_unknown_sections_and_stray_lines_go_to_unplaced_verbatim():
    text = """\
Sam Sample
sam@example.com
## Projects
- jobctrl: a job-search pipeline
Languages
Klingon (fluent)
"""
    resume, unplaced = structure_text(text)
    assert unplaced == ["## Projects", "- jobctrl: a job-search pipeline", "Klingon (fluent)"]
    assert resume.languages == []


def test_contact_line_items_that_are_not_contact_details_are_kept():
    resume, unplaced = structure_text("Sam Sample\nsam@example.com | Open to relocation | sam-sample.dev\n")
    assert resume.basics.email == "sam@example.com"
    assert resume.basics.url == "https://sam-sample.dev"
    assert unplaced == ["Open to relocation"]


def test_locations_and_links():
    resume, unplaced = structure_text(
        "Ana Ejemplo\nAustin, TX · https://gitlab.com/ana · linkedin.com/in/ana-e · ana.example.io\n")
    assert unplaced == []
    location = resume.basics.location
    assert (location.city, location.region, location.country_code) == ("Austin", "TX", "US")
    assert [(p.network, p.username) for p in resume.basics.profiles] == [("GitLab", "ana"),
                                                                         ("LinkedIn", "ana-e")]
    assert resume.basics.url == "https://ana.example.io"


# --------------------------------------------------------------------------- nothing lost


def test_no_headings_at_all_nothing_is_lost():
    text = """\
Jamie Plain
Software Developer
jamie@example.com, +44 20 5550 9999
I have built web shops and payment systems for ten years.
Mostly Python and PostgreSQL, some Go.
- Led the checkout rewrite at Thames Retail Ltd
- Mentored juniors
2015 – 2020 Thames Retail Ltd
"""
    resume, unplaced = structure_text(text)
    assert (resume.basics.name, resume.basics.label) == ("Jamie Plain", "Software Developer")
    assert resume.basics.summary.startswith("I have built web shops")
    assert "- Led the checkout rewrite at Thames Retail Ltd" in unplaced
    assert resume.work == []  # no heading: no entry is invented
    assert_nothing_lost(text)


_CORPUS = [
    "Experience", "Education", "Skills", "Languages", "Projects", "Summary",
    "Senior Engineer — Acme GmbH, Berlin", "Apr 2021 – Present", "Acme | Developer | 2019 – 2021",
    "- Built things with Python", "• Ran Kafka", "continued the sentence", "Python, Go, SQL",
    "English (C2), German (B1)", "M.Sc. Physics, Universität Wien, 2012", "Random remark",
    "sam@example.com | Berlin, Germany", "AWS Certified Developer, Amazon, 2020", "", "",
]


@pytest.mark.parametrize("seed", range(25))
def test_shuffled_lines_never_lose_anything(seed):
    """A cheap property test: random mixes of typical lines never lose a word and never
    fail validation (hypothesis is not a test dependency yet)."""
    rng = random.Random(seed)
    text = "\n".join(rng.choice(_CORPUS) for _ in range(rng.randint(5, 40)))
    assert_nothing_lost(text)


def test_oversized_values_go_to_unplaced_instead_of_failing():
    long_title = "Engineer " * 40  # 360 characters: over the 200 the model allows
    resume, unplaced = structure_text(f"Experience\n{long_title}— Acme GmbH\n2020 – 2021\n- Did it.\n")
    assert resume.work[0].name == "Acme GmbH"
    assert any(item.startswith("Engineer Engineer") for item in unplaced)


@pytest.mark.parametrize(("text", "iso"), [
    ("Apr 2021", "2021-04"), ("April 2021", "2021-04"), ("04/2021", "2021-04"), ("2021-04", "2021-04"),
    ("4.2021", "2021-04"), ("Okt. 2019", "2019-10"), ("März 2018", "2018-03"), ("2021", "2021"),
])
def test_iso_dates(text, iso):
    assert iso_date(text) == iso
