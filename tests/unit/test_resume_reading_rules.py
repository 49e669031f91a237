"""The data-backed rules the résumé import reads with: places (ISO 3166 via pycountry,
GeoNames cities), job titles in several languages, spoken-language names, dates in
English, German, French and Spanish, and a few layouts as text lines."""

from __future__ import annotations

import pytest

from backend.domain import occupations, places, spoken_languages
from backend.domain.resume_vocabulary import find_range, range_dates
from backend.profile_import import structure_text


@pytest.mark.parametrize(("text", "expected"), [
    ("Toronto, ON, Canada", {"city": "Toronto", "region": "ON", "countryCode": "CA"}),
    ("Toronto, ON", {"city": "Toronto", "region": "ON", "countryCode": "CA"}),
    ("Austin, TX", {"city": "Austin", "region": "TX", "countryCode": "US"}),
    ("Berlin, DE", {"city": "Berlin", "countryCode": "DE"}),
    ("München, Deutschland", {"city": "München", "countryCode": "DE"}),
    ("Madrid, España", {"city": "Madrid", "countryCode": "ES"}),
    ("Sydney NSW, Australia", {"city": "Sydney", "region": "NSW", "countryCode": "AU"}),
    ("Wandsbeker Chaussee 88, 22089 Hamburg, Deutschland",
     {"address": "Wandsbeker Chaussee 88", "city": "Hamburg", "countryCode": "DE"}),
    ("Senior Engineer, Acme", None),
    ("Remote", None),
])
def test_places(text, expected):
    assert places.location_of(text) == expected


def test_a_city_by_any_of_its_names():
    assert places.city_named("München") == places.city_named("Munich")
    assert places.city_named("München").country == "DE"
    assert places.city_named("Engineer") is None


@pytest.mark.parametrize(("title", "role"), [
    ("HR Generalistin", True), ("Recruiterin", True), ("Contable sénior", True),
    ("Auditora junior", True), ("Elektromeister und Bauleiter", True), ("Infirmière", True),
    ("Sous-chef", True), ("Développeuse", True),
    ("Donau Versicherung AG", False), ("Northwind Analytics", False), ("Acute Medical Unit", False),
])
def test_job_titles_in_several_languages(title, role):
    assert (occupations.role_score(title) > 0) is role


@pytest.mark.parametrize("name", ["English", "Deutsch", "Español", "anglais", "Inglés", "Tamil"])
def test_spoken_language_names(name):
    assert spoken_languages.is_language_name(name)


@pytest.mark.parametrize("name", ["Python", "Kafka", "Go", "SQL"])
def test_programming_languages_are_not_spoken_ones(name):
    assert not spoken_languages.is_language_name(name)


@pytest.mark.parametrize(("text", "dates"), [
    ("03/2021 – heute", {"startDate": "2021-03"}),
    ("seit 2020", {"startDate": "2020"}),
    ("2019 – aujourd’hui", {"startDate": "2019"}),
    ("de mars 2019 à juin 2021", {"startDate": "2019-03", "endDate": "2021-06"}),
    ("enero 2018 – actualidad", {"startDate": "2018-01"}),
    ("2021 to present", {"startDate": "2021"}),
    ("Sep. 2023 ‑ Mar. 2024", {"startDate": "2023-09", "endDate": "2024-03"}),
])
def test_date_ranges_in_four_languages(text, dates):
    assert range_dates(find_range(text)) == dates


def test_contact_details_set_beside_the_name_by_single_spaces():
    resume, _ = structure_text("Priya Raman  priya.raman@example.com +1 416 555 0142\n"
                               "Toronto, ON, Canada\n")
    assert (resume.basics.name, resume.basics.email, resume.basics.phone) == (
        "Priya Raman", "priya.raman@example.com", "+1 416 555 0142")
    assert (resume.basics.location.city, resume.basics.location.region,
            resume.basics.location.country_code) == ("Toronto", "ON", "CA")


def test_programming_languages_labelled_inside_skills_are_a_skill_group():
    resume, unplaced = structure_text("Sam Sample\n\nSkills\nLanguages  SQL, Python, R\n"
                                      "Tools  dbt, Airflow\n\nLanguages\nEnglish  native\n")
    assert {group.name: group.keywords for group in resume.skills} == {
        "Languages": ["SQL", "Python", "R"], "Tools": ["dbt", "Airflow"]}
    assert [(entry.language, entry.fluency) for entry in resume.languages] == [("English", "native")]
    assert unplaced == []


def test_an_employer_and_title_in_a_section_told_by_its_other_entries():
    """"Grupo Alvarado Distribución" names no kind of company, but the section's other
    entries put the employer first, so this one does too."""
    resume, _ = structure_text(
        "Ana Ruiz\n\nExperiencia laboral\n"
        "Donau Versicherung AG — Contable sénior\n2020 – actualidad\n- Cierre mensual.\n\n"
        "Grupo Alvarado Distribución — Analista de datos\n2017 – 2020\n- Informes.\n")
    assert [(job.name, job.position) for job in resume.work] == [
        ("Donau Versicherung AG", "Contable sénior"),
        ("Grupo Alvarado Distribución", "Analista de datos")]


def test_an_unknown_heading_set_like_the_known_ones_ends_the_section_before_it():
    """"MENTORING CIRCLES" names no section JobCtrl knows, but it is set like EXPERIENCE
    and EDUCATION, so its lines do not join the last job."""
    from fpdf import FPDF

    from backend.profile_import import import_resume

    pdf = FPDF(unit="pt", format="a4")
    pdf.core_fonts_encoding = "windows-1252"
    pdf.add_page()

    def line(text: str, size: float = 10, style: str = "") -> None:
        pdf.set_font("helvetica", style=style, size=size)
        pdf.multi_cell(pdf.epw, size * 1.5, text, new_x="LMARGIN", new_y="NEXT")

    line("Robin Example", 20, "B")
    line("robin@example.com | +44 20 7946 0000 | Leeds, UK")
    line("EXPERIENCE", 14, "B")
    line("Ward Manager — Leeds Teaching Hospitals NHS Trust, Leeds")
    line("2019 – Present")
    line("• Led a team of 30 nurses.")
    line("MENTORING CIRCLES", 14, "B")
    line("Monthly circle for newly qualified nurses, run since 2020 with the practice educators.")
    line("EDUCATION", 14, "B")
    line("BSc Nursing, University of Leeds, 2012 – 2015")
    result = import_resume(bytes(pdf.output()), file_name="robin.pdf", content_type=None)

    job = result.resume.export()["work"][0]
    assert job["highlights"] == ["Led a team of 30 nurses."]
    assert "summary" not in job
    assert any("Monthly circle" in text for text in result.unplaced)
