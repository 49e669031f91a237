"""Preference suggestions from a résumé's "Objective / Looking for / Preferences" part, in
English, German, French and Spanish, and how the draft merges them with what the user
saved (plain functions; no files, no services)."""

from __future__ import annotations

import pytest

from backend.domain.profile import CandidateProfile
from backend.domain.resume import JsonResume
from backend.profile_import import ImportResult
from backend.profile_import.draft import draft_with_suggestions, merge_preferences
from backend.profile_import.preferences import (
    PreferenceSuggestions,
    currency_code,
    preference_lines,
    suggest_preferences,
)


def suggest(text: str, **kwargs) -> dict:
    return suggest_preferences(text.splitlines(), **kwargs).model_dump(by_alias=True)


def test_english_looking_for_section():
    text = """Priya Raman
Toronto, ON, Canada

LOOKING FOR
Senior Data Analyst or Analytics Engineer roles, remote or hybrid, in Toronto or Montréal.
At least $95,000 CAD a year.

EXPERIENCE
Senior Data Analyst, Northwind Analytics (2021 – present)"""
    assert suggest(text) == {
        "targetTitles": ["Senior Data Analyst", "Analytics Engineer"],
        "locations": ["Toronto", "Montréal"], "remotePreference": "remote_or_hybrid",
        "salaryFloor": 95000, "salaryCurrency": "CAD"}
    assert preference_lines(text.splitlines())[-1] == "At least $95,000 CAD a year."


def test_german_suchprofil_with_labelled_lines():
    text = """## Suchprofil
Wunschposition: Senior Data Engineer, Analytics Engineer
Standort: Berlin oder Hamburg
Arbeitsmodell: hybrid
Gehaltsvorstellung: 95 000 €

## Berufserfahrung
Data Engineer bei Beispiel GmbH"""
    assert suggest(text) == {
        "targetTitles": ["Senior Data Engineer", "Analytics Engineer"],
        "locations": ["Berlin", "Hamburg"], "remotePreference": "remote_or_hybrid",
        "salaryFloor": 95000, "salaryCurrency": "EUR"}


def test_french_objectif_sentence():
    text = ("OBJECTIF\nPoste de Chef de projet digital à Lyon ou Paris, en présentiel, "
            "à partir de 45 000 euros bruts annuels.\nEXPÉRIENCE PROFESSIONNELLE")
    assert suggest(text) == {
        "targetTitles": ["Chef de projet digital"], "locations": ["Lyon", "Paris"],
        "remotePreference": "onsite", "salaryFloor": 45000, "salaryCurrency": "EUR"}


def test_spanish_objetivo_inline_heading():
    text = ("Objetivo: busco un puesto de Ingeniero de Datos en Madrid o Barcelona, en remoto. "
            "Salario: EUR 60.000\n\nExperiencia\nIngeniera de Datos, Acme (2020 - actualidad)")
    assert suggest(text) == {
        "targetTitles": ["Ingeniero de Datos"], "locations": ["Madrid", "Barcelona"],
        "remotePreference": "remote_only", "salaryFloor": 60000, "salaryCurrency": "EUR"}


@pytest.mark.parametrize(("amount", "floor", "currency"), [
    ("$95,000 CAD", 95000, "CAD"),
    ("95 000 €", 95000, "EUR"),
    ("95\u202f000 €", 95000, "EUR"),
    ("£45k–55k", 45000, "GBP"),
    ("EUR 60.000", 60000, "EUR"),
    ("60.000–70.000 EUR", 60000, "EUR"),
    ("CHF 120'000", 120000, "CHF"),
    ("60 kEUR", 60000, "EUR"),
    ("85 T€", 85000, "EUR"),
    ("US$120,000", 120000, "USD"),
    ("€72.5k", 72500, "EUR"),
    ("95,000", 95000, None),  # a salary line with no currency: the floor, no currency
])
def test_salary_amounts_and_currencies(amount, floor, currency):
    found = suggest(f"Preferences\nSalary: {amount}")
    assert (found["salaryFloor"], found["salaryCurrency"]) == (floor, currency)


def test_a_bare_dollar_is_the_resume_countrys_currency_or_unknown():
    text = "Looking for: remote Data Engineer roles from $95,000"
    assert suggest(text, country="CA")["salaryCurrency"] == "CAD"
    assert suggest(text, country="United States")["salaryCurrency"] == "USD"
    assert suggest(text, country="MX")["salaryCurrency"] == "MXN"  # the peso's "$"
    assert suggest(text)["salaryCurrency"] is None
    assert suggest(text, country="DE")["salaryCurrency"] is None  # the euro area: no "$"
    assert suggest(text)["salaryFloor"] == 95000
    assert currency_code("kr", "SE") == "SEK" and currency_code("kr", "NO") == "NOK"
    assert currency_code("XYZ") is None and currency_code("GBP") == "GBP"


def test_monthly_or_hourly_amounts_are_not_a_yearly_floor():
    assert suggest("Wunschposition: Data Engineer\nGehalt: 3.500 € pro Monat")["salaryFloor"] is None
    assert suggest("Looking for: contract roles at $90 per hour")["salaryFloor"] is None


def test_years_and_counts_are_not_salaries_and_skills_are_not_places():
    text = "Objective\nBackend roles in Python or Go, building on 8 years since 2016."
    found = suggest(text, skills=["Python", "Go"])
    assert found["salaryFloor"] is None and found["locations"] == []
    assert found["targetTitles"] == ["Backend"]


def test_a_generic_objective_or_none_suggests_nothing():
    generic = "Objective\nA challenging position where I can grow my skills.\n\nExperience\nX"
    assert PreferenceSuggestions.model_validate(suggest(generic)).is_empty()
    assert suggest_preferences(["Ada Example", "Experience", "Engineer, Acme"]).is_empty()
    # The section ends at the next heading: a later "remote" is not read.
    text = "Looking for\nData Engineer roles\n\nExperience\nRemote data engineer at Acme"
    assert suggest(text)["remotePreference"] is None


# -- the draft: saved preferences win, empty ones are filled ----------------------------------


SUGGESTED = PreferenceSuggestions(target_titles=["Data Engineer"], locations=["Toronto"],
                                  remote_preference="remote_or_hybrid", salary_floor=95000,
                                  salary_currency="CAD")


def test_saved_preferences_win_and_only_empty_ones_are_filled():
    saved = {"targetTitles": ["Analyst"], "locations": [], "remotePreference": "onsite",
             "salaryFloor": None, "salaryCurrency": "EUR"}
    merged, taken = merge_preferences(saved, SUGGESTED)
    assert merged == {"targetTitles": ["Analyst"], "locations": ["Toronto"],
                      "remotePreference": "onsite", "salaryFloor": 95000, "salaryCurrency": "CAD"}
    assert taken.model_dump(by_alias=True) == {
        "targetTitles": [], "locations": ["Toronto"], "remotePreference": None,
        "salaryFloor": 95000, "salaryCurrency": "CAD"}
    # A saved floor keeps its own currency; "any" (the default) counts as empty.
    merged, taken = merge_preferences({"salaryFloor": 80000, "salaryCurrency": "EUR",
                                       "remotePreference": "any"}, SUGGESTED)
    assert (merged["salaryFloor"], merged["salaryCurrency"]) == (80000, "EUR")
    assert merged["remotePreference"] == "remote_or_hybrid" == taken.remote_preference
    assert taken.salary_floor is None


def _result(text: str) -> ImportResult:
    """The import of ``text`` as the parser reads it (made by hand: the parser is not
    what is tested here)."""
    resume = JsonResume.model_validate({
        "basics": {"name": "Priya Raman", "email": "priya@example.org",
                   "location": {"city": "Toronto", "countryCode": "CA"}},
        "work": [{"name": "Northwind", "position": "Senior Data Analyst",
                  "startDate": "2021"}]})
    return ImportResult(resume=resume, unplaced=[], format="text", pages=None,
                        characters=len(text), text=text)


def test_the_draft_takes_the_looking_for_part_over_the_latest_title():
    text = ("Priya Raman\npriya@example.org\nToronto\n\nLooking for\nAnalytics Engineer roles, "
            "remote only, $95,000+\n\nExperience\nSenior Data Analyst, Northwind (2021 – present)")
    profile, taken = draft_with_suggestions(_result(text), current=None, file_name="cv.txt",
                                            sample=False)
    assert profile.target_titles == ["Analytics Engineer"]
    assert (profile.remote_preference, profile.salary_floor) == ("remote_only", 95000)
    assert profile.salary_currency == "CAD"  # "$" in a Canadian résumé
    assert profile.locations == ["Toronto"]  # no place in the part: the résumé's city
    assert taken.target_titles == ["Analytics Engineer"]
    saved = CandidateProfile(target_titles=["Data Analyst"], salary_floor=70000,
                             salary_currency="CAD")
    profile, taken = draft_with_suggestions(_result(text), current=saved, file_name="cv.txt",
                                            sample=False)
    assert profile.target_titles == ["Data Analyst"] and profile.salary_floor == 70000
    assert taken.target_titles == [] and taken.remote_preference == "remote_only"
