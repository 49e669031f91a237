"""Places on a résumé and a letter as people write them: the city, the region only where it is
customarily written (the postal abbreviation in the United States, Canada and Australia), the
country's name, never a bare code; a preference ("Remote", "Open to relocation") is no place."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pdfplumber
import pytest

from backend.domain.places import country_name, places_as_written, preference_only, written_place
from backend.domain.profile import CandidateProfile
from backend.pipeline.cover import offline_cover, recipient_places
from backend.pipeline.pdf import render_cover_letter_pdf, render_resume_pdf
from backend.pipeline.score import JobText, offline_score
from backend.pipeline.tailor import offline_tailor
from backend.pipeline.truth import gate_materials, profile_locations


def place(text: str, language: str = "en") -> str | None:
    written = written_place(text, language)
    return written[0] if written else None


@pytest.mark.parametrize(("text", "expected"), [
    ("Toronto, CA", "Toronto, ON, Canada"),  # a Canadian city: "CA" is the country here
    ("Toronto", "Toronto, ON, Canada"),
    ("Toronto, ON, CA", "Toronto, ON, Canada"),
    ("Vancouver, British Columbia", "Vancouver, BC, Canada"),
    ("San Jose, CA", "San Jose, CA, United States"),  # and California here
    ("San Francisco", "San Francisco, CA, United States"),
    ("Springfield, Illinois", "Springfield, IL, United States"),
    ("Austin, TX, USA", "Austin, TX, United States"),
    ("Sydney", "Sydney, NSW, Australia"),
    ("Sydney NSW, Australia", "Sydney, NSW, Australia"),
    ("München, DE", "München, Germany"),  # no region where people do not write one
    ("Berlin", "Berlin, Germany"),
    ("London, UK", "London, United Kingdom"),
    ("Lyon, Auvergne-Rhône-Alpes, France", "Lyon, France"),
    ("Bangalore, IN", "Bangalore, India"),
    ("Seoul", "Seoul, South Korea"),
    ("Canada", "Canada"),
    ("Remote (Canada)", "Canada"),
    ("Toronto - hybrid", "Toronto, ON, Canada"),
    ("Greater Toronto Area", "Greater Toronto Area"),  # not a place known here: as written
])
def test_places_read_as_people_write_them(text, expected):
    assert place(text) == expected


@pytest.mark.parametrize("text", ["Remote", "remote", "Hybrid", "Onsite", "On-site", "Open to relocation",
                                  "Willing to relocate", "Anywhere", "Remote only", "Fully remote",
                                  "Work from home"])
def test_a_preference_is_never_a_place(text):
    assert preference_only(text) and written_place(text) is None


def test_the_country_name_follows_the_language_of_the_materials():
    assert place("München, DE", "de") == "München, Deutschland"
    assert place("Toronto", "de") == "Toronto, ON, Kanada"
    assert [country_name(code) for code in ("CA", "DE", "GB", "US")] == [
        "Canada", "Germany", "United Kingdom", "United States"]


def test_each_place_once():
    assert places_as_written(["Toronto, CA", "Toronto", "Remote", "Canada", "Munich", "München, Germany",
                              "Open to relocation"]) == ["Toronto, ON, Canada", "Munich, Germany"]
    assert recipient_places("Toronto, Ontario, Canada; Toronto") == ["Toronto, ON, Canada"]
    assert recipient_places("Berlin | Remote") == ["Berlin, Germany"]
    assert recipient_places("Remote") == [] and recipient_places(None) == []


TORONTO = CandidateProfile.model_validate({
    "resume": {
        "basics": {"name": "Sam Lee", "label": "Data Analyst", "email": "sam@example.org",
                   "location": {"city": "Toronto", "countryCode": "CA"}},
        "work": [{"name": "Maple Retail", "position": "Data Analyst", "startDate": "2020-01",
                  "highlights": ["Built SQL reports for weekly sales", "Made Tableau dashboards"]}],
        "skills": [{"name": "Analytics", "keywords": ["SQL", "Tableau", "Excel"]}],
    },
    "targetTitles": ["Data Analyst"], "locations": ["Toronto", "Remote"], "remotePreference": "remote_only",
})
JOB = JobText(title="Data Analyst", company="Northwind", location="Remote", remote="remote",
              description="Fully remote role. Requirements: SQL and Tableau.")
FIXED = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def _text(path) -> str:
    with pdfplumber.open(path) as document:
        return "\n".join(page.extract_text() or "" for page in document.pages)


def test_the_resume_and_letter_pdfs_of_a_toronto_profile_read_toronto_on_canada(tmp_path):
    assert profile_locations(TORONTO) == ["Toronto, ON, Canada"]
    fit = offline_score(TORONTO, JOB, today=date(2026, 12, 1))
    resume = offline_tailor(TORONTO, JOB, fit)
    letter = offline_cover(TORONTO, JOB, fit, resume, today=date(2026, 12, 1))
    gate_materials(resume, letter, TORONTO, fit.ledger, JOB, today=date(2026, 12, 1))
    for path in (render_resume_pdf(resume, tmp_path / "r.pdf", creation_date=FIXED).path,
                 render_cover_letter_pdf(letter, tmp_path / "l.pdf", creation_date=FIXED).path):
        text = _text(path)
        assert "Toronto, ON, Canada" in text
        assert "Toronto, CA" not in text and "· Remote" not in text
        assert not any(line.strip() == "Remote" for line in text.splitlines())
