"""Résumé import end to end: real files made here (fpdf2, typst, python-docx, text),
read by ``import_resume``, asserting each employer's title, dates and own bullets."""

from __future__ import annotations

import io
import json
import random
import zipfile
from importlib import resources
from pathlib import Path

import docx
import pytest
import typst
from docx.shared import Pt
from fpdf import FPDF
from PIL import Image

from backend.domain.profile import CandidateProfile
from backend.pipeline.documents import ResumeDoc
from backend.pipeline.pdf import render_resume_pdf
from backend.profile_import import (
    MAX_BYTES,
    ImportResult,
    ResumeEncrypted,
    ResumeTooLarge,
    ResumeUnreadable,
    ResumeUnsupportedType,
    import_resume,
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _work(result: ImportResult) -> list[dict]:
    return result.resume.export().get("work", [])


def _by_employer(result: ImportResult) -> dict[str, dict]:
    return {entry["name"]: entry for entry in _work(result)}


# --------------------------------------------------------------------------- builders


def _fpdf_one_column() -> bytes:
    """A plain one-column résumé drawn like backend/pipeline/pdf.py draws: core
    Helvetica in Windows-1252, text bullets, a long bullet that wraps, and one title line
    with its dates right-aligned on the same line."""
    pdf = FPDF(unit="pt", format="a4")
    pdf.core_fonts_encoding = "windows-1252"
    pdf.set_margins(54, 50, 54)
    pdf.add_page()

    def line(text: str, size: float = 10, style: str = "", align: str = "L") -> None:
        pdf.set_font("helvetica", style=style, size=size)
        pdf.multi_cell(pdf.epw, size * 1.4, text, align=align, new_x="LMARGIN", new_y="NEXT")

    def gap() -> None:
        pdf.ln(8)

    line("Alex Muster", 20, "B")
    line("Platform Engineer")
    line("alex.muster@example.net | +49 40 5550 3030 | Hamburg, Germany")
    gap()
    line("EXPERIENCE", 12, "B")
    line("Platform Engineer — Hafenkante Cloud GmbH, Hamburg", 11, "B")
    line("May 2020 – Present")
    line("• Runs the Kubernetes clusters on AWS that host 80 services, all defined in Terraform and "
         "reviewed through pull requests with automatic plans.")
    line("• Cut the monthly AWS bill by a third with spot instances.")
    gap()
    pdf.set_font("helvetica", style="B", size=11)
    y = pdf.get_y()
    pdf.cell(pdf.epw * 0.7, 15, "Software Engineer — Elbtal Payments AG, Hamburg")
    pdf.set_xy(pdf.l_margin, y)
    pdf.set_font("helvetica", size=10)
    pdf.cell(pdf.epw, 15, "01/2017 – 04/2020", align="R", new_x="LMARGIN", new_y="NEXT")
    line("• Built the settlement service in Python and PostgreSQL.")
    line("• Wrote the Kafka consumers that reconcile card payments.")
    gap()
    line("EDUCATION", 12, "B")
    line("B.Sc. Informatik — Universität Hamburg, 2013 – 2016")
    gap()
    line("SKILLS", 12, "B")
    line("Python, Go, PostgreSQL, Kafka, Kubernetes, Terraform, AWS")
    return bytes(pdf.output())


_TYPST_TWO_COLUMN = r"""
#set page(paper: "a4", margin: 1.5cm)
#set text(size: 10pt)
#text(size: 18pt, weight: "bold")[Jordan Example]
#grid(columns: (1fr, 2fr), column-gutter: 18pt,
[
  == Contact
  jordan.example\@example.org \
  +49 89 5550 7788 \
  Munich, Germany \
  github.com/jordan-example

  == Skills
  Languages: Python, Go, TypeScript \
  Data: PostgreSQL, Kafka, Redis \
  Cloud: AWS, Kubernetes, Terraform

  == Languages
  English (C1) \
  German (native)
],
[
  == Experience
  *Staff Engineer — Isarwerk Digital GmbH, Munich* \
  Jan 2020 – Present
  - Led the migration of the order system from a monolith to Python services on Kubernetes.
  - Introduced Kafka for order events and cut the nightly batch from six hours to twenty minutes.
  - Built the cost dashboards for AWS accounts with Terraform-managed budgets.

  *Backend Developer — Alpenblick Reisen AG, Innsbruck* \
  Jun 2016 – Dec 2019
  - Developed the booking API in Python and PostgreSQL.
  - Wrote Airflow jobs that reconcile payments with the bank every hour.

  == Education
  M.Sc. Informatics — Technische Universität München \
  2014 – 2016
]
)
"""


def _typst_pdf(tmp_path: Path, source: str) -> bytes:
    path = tmp_path / "resume.typ"
    path.write_text(source, encoding="utf-8")
    return typst.compile(str(path))


def _docx_bytes(document) -> bytes:
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _docx_paragraphs() -> bytes:
    document = docx.Document()
    document.add_heading("Robin Beispiel", level=0)
    document.add_paragraph("Data Engineer")
    document.add_paragraph("robin.beispiel@example.com · Cologne, Germany · linkedin.com/in/robin-beispiel")
    document.add_heading("Berufserfahrung", level=1)
    document.add_paragraph("Senior Data Engineer")
    document.add_paragraph("Rheinblick Energie SE, Cologne")
    document.add_paragraph("03/2019 – heute")
    for text in ("Built the Airflow platform that loads 300 tables into the warehouse nightly.",
                 "Moved the streaming jobs from cron scripts to Kafka and Flink."):
        document.add_paragraph(text, style="List Bullet")
    document.add_paragraph("Data Analyst")
    document.add_paragraph("Domstadt Versicherung AG, Cologne")
    document.add_paragraph("Okt. 2015 – Feb. 2019")
    document.add_paragraph("Automated the monthly claims report with Python and SQL.", style="List Bullet")
    document.add_heading("Ausbildung", level=1)
    document.add_paragraph("M.Sc. Data Science — Universität zu Köln, 2013 – 2015")
    document.add_heading("Kenntnisse", level=1)
    document.add_paragraph("Python, SQL, Airflow, Kafka, dbt")
    document.add_heading("Sprachen", level=1)
    document.add_paragraph("Deutsch (Muttersprache), Englisch (C1)")
    return _docx_bytes(document)


def _docx_layout_tables() -> bytes:
    """A Word template made of tables: a sidebar cell next to a main cell, then one row
    per job with the dates in the left cell."""
    document = docx.Document()
    header = document.add_table(rows=1, cols=2)
    left, right = header.rows[0].cells
    left.paragraphs[0].text = "Kim Vorlage"
    left.add_paragraph("Site Reliability Engineer")
    right.paragraphs[0].text = "kim.vorlage@example.org"
    right.add_paragraph("+49 711 5550 4242")
    right.add_paragraph("Stuttgart, Germany")
    document.add_paragraph("Experience")
    jobs = document.add_table(rows=2, cols=2)
    rows = [
        ("2021 – present", "SRE — Neckartal Mobility GmbH, Stuttgart",
         ["Kept the booking platform at 99.95 % availability on Kubernetes.",
          "Wrote the Terraform modules for every AWS account."]),
        ("2017 – 2021", "Systems Engineer — Schwabenhost AG, Stuttgart",
         ["Automated server builds with Ansible.", "Ran PostgreSQL replication for 40 customers."]),
    ]
    for row, (dates, title, bullets) in zip(jobs.rows, rows, strict=True):
        row.cells[0].paragraphs[0].text = dates
        row.cells[1].paragraphs[0].text = title
        for bullet in bullets:
            row.cells[1].add_paragraph(bullet, style="List Bullet")
    document.add_paragraph("Skills")
    document.add_paragraph("Tools: Kubernetes, Terraform, Ansible, Prometheus")
    for paragraph in document.paragraphs:
        paragraph.style.font.size = Pt(10)
    return _docx_bytes(document)


_PIPE_TEXT = """\
Chris Pipeline
Backend Developer
chris.pipeline@example.com | +49 221 5550 111 | Cologne, DE

BERUFSERFAHRUNG
Kölner Datenwerk GmbH | Senior Backend Developer | 2021 – present
- Designs the FastAPI services behind the customer portal.
- Runs the PostgreSQL upgrades without downtime.
Rheinufer Media AG | Backend Developer | 2018 – 2021
- Built the video metadata API in Python.

AUSBILDUNG
Universität Bonn | B.Sc. Informatik | 2014 – 2018

KENNTNISSE
Backend: Python, FastAPI, PostgreSQL
Ops: Docker, Kubernetes
"""

_MARKDOWN_PARENS = """\
# Pat Markdown
**Backend Engineer** · pat@example.dev · [GitHub](https://github.com/pat-md) · Leipzig, Germany

## Work Experience

**Backend Engineer, Sachsenbahn Digital (Apr 2021 – Present)**
* Owns the timetable API (Python, FastAPI, PostgreSQL).
* Added Kafka change events for the
  passenger information screens.

**Junior Developer, Auenwald Software (Sep 2018 – Mar 2021)**
* Maintained Django apps for regional newspapers.

## Languages
English (fluent), German (native)
"""


# --------------------------------------------------------------------------- the formats


def test_one_column_pdf_made_with_fpdf2_reads_each_employer_with_its_bullets():
    result = import_resume(_fpdf_one_column(), file_name="alex.pdf", content_type="application/pdf")

    assert result.format == "pdf" and result.pages == 1
    basics = result.resume.basics
    assert (basics.name, basics.label, basics.email) == ("Alex Muster", "Platform Engineer",
                                                         "alex.muster@example.net")
    assert (basics.location.city, basics.location.country_code) == ("Hamburg", "DE")
    jobs = _by_employer(result)
    assert list(jobs) == ["Hafenkante Cloud GmbH", "Elbtal Payments AG"]
    first, second = jobs["Hafenkante Cloud GmbH"], jobs["Elbtal Payments AG"]
    assert (first["position"], first["location"], first["startDate"]) == ("Platform Engineer", "Hamburg",
                                                                          "2020-05")
    assert "endDate" not in first
    # The wrapped bullet is one highlight again.
    assert first["highlights"] == [
        "Runs the Kubernetes clusters on AWS that host 80 services, all defined in Terraform and "
        "reviewed through pull requests with automatic plans.",
        "Cut the monthly AWS bill by a third with spot instances.",
    ]
    # Dates right-aligned on the title line: still one column, the dates still found.
    assert (second["position"], second["startDate"], second["endDate"]) == ("Software Engineer", "2017-01",
                                                                            "2020-04")
    assert second["highlights"] == ["Built the settlement service in Python and PostgreSQL.",
                                    "Wrote the Kafka consumers that reconcile card payments."]
    education = result.resume.education[0]
    assert (education.institution, education.study_type, education.area) == (
        "Universität Hamburg", "B.Sc.", "Informatik")
    assert "Kafka" in result.resume.skill_names()
    assert result.unplaced == []
    assert result.characters == len(result.text) and "Hafenkante" in result.text


def test_two_column_pdf_made_with_typst_reads_the_sidebar_then_the_experience(tmp_path):
    result = import_resume(_typst_pdf(tmp_path, _TYPST_TWO_COLUMN), file_name=None, content_type=None)

    assert result.format == "pdf"
    lines = result.text.splitlines()
    first_bullet = next(i for i, line in enumerate(lines) if "Led the migration" in line)
    last_bullet = next(i for i, line in enumerate(lines) if "reconcile payments" in line)
    sidebar = ("Contact", "jordan.example@example.org", "Munich, Germany", "Skills", "Data: PostgreSQL",
               "English (C1)", "German (native)")
    between = lines[first_bullet:last_bullet + 1]
    assert not [line for line in between if line.startswith(sidebar)], between  # not interleaved

    jobs = _by_employer(result)
    assert list(jobs) == ["Isarwerk Digital GmbH", "Alpenblick Reisen AG"]
    assert jobs["Isarwerk Digital GmbH"]["position"] == "Staff Engineer"
    assert jobs["Isarwerk Digital GmbH"]["startDate"] == "2020-01"
    assert jobs["Isarwerk Digital GmbH"]["highlights"] == [
        "Led the migration of the order system from a monolith to Python services on Kubernetes.",
        "Introduced Kafka for order events and cut the nightly batch from six hours to twenty minutes.",
        "Built the cost dashboards for AWS accounts with Terraform-managed budgets.",
    ]
    assert jobs["Alpenblick Reisen AG"]["highlights"] == [
        "Developed the booking API in Python and PostgreSQL.",
        "Wrote Airflow jobs that reconcile payments with the bank every hour.",
    ]
    assert (jobs["Alpenblick Reisen AG"]["startDate"], jobs["Alpenblick Reisen AG"]["endDate"]) == (
        "2016-06", "2019-12")
    resume = result.resume
    assert resume.basics.email == "jordan.example@example.org"
    assert resume.basics.profiles[0].network == "GitHub"
    assert [(g.name, g.keywords) for g in resume.skills][0] == ("Languages", ["Python", "Go", "TypeScript"])
    assert [(lang.language, lang.fluency) for lang in resume.languages] == [("English", "C1"),
                                                                           ("German", "native")]
    assert result.unplaced == []


def test_two_column_pdf_where_a_long_sidebar_word_reaches_into_the_gutter(tmp_path):
    """The sidebar's email address, far longer than the other sidebar lines, sits on the
    same line as the first job title and reaches into the gutter band: each word still
    goes to the column it starts in."""
    source = r"""
#set page(paper: "a4", margin: 1.5cm)
#set text(size: 10pt)
#grid(columns: (1fr, 2fr), column-gutter: 12pt,
[
  == Contact
  firstname.lastname.long\@example.com \
  Berlin, Germany

  == Skills
  Python \
  Kafka \
  Terraform \
  Kubernetes
],
[
  == Experience
  Backend Engineer — Example Company GmbH, Berlin \
  2022 – 2024
  - Built the Python service that handled ten thousand requests a minute for the operations team.
  - Cut the error rate by two percent.

  Backend Engineer — Second Example AG, Hamburg \
  2020 – 2022
""" + "".join(f"  - Ran Kafka cluster number {n}.\n" for n in range(1, 16)) + """]
)
"""
    result = import_resume(_typst_pdf(tmp_path, source), file_name="cv.pdf", content_type=None)

    assert result.resume.basics.email == "firstname.lastname.long@example.com"
    jobs = _by_employer(result)
    assert list(jobs) == ["Example Company GmbH", "Second Example AG"]
    assert jobs["Example Company GmbH"]["position"] == "Backend Engineer"
    assert len(jobs["Example Company GmbH"]["highlights"]) == 2
    assert len(jobs["Second Example AG"]["highlights"]) == 15
    assert result.resume.skill_names() == ["Python", "Kafka", "Terraform", "Kubernetes"]
    assert result.unplaced == []


def test_two_column_pdf_with_a_full_width_header_and_the_sidebar_on_the_right(tmp_path):
    source = r"""
#set page(paper: "us-letter", margin: 1.2cm)
#set text(size: 10pt)
#align(center)[#text(size: 16pt, weight: "bold")[Morgan Wide] \
  morgan.wide\@example.com · +1 512 555 0100 · Austin, TX · linkedin.com/in/morgan-wide]
#line(length: 100%)
#grid(columns: (2fr, 1fr), column-gutter: 20pt,
[
  = EXPERIENCE
  *Principal Engineer* #h(1fr) 2019 – Present \
  Lone Star Robotics Inc., Austin
  - Designed the fleet telemetry pipeline on Kafka, Flink and S3 handling ten billion events a day.
  - Hired and led a team of nine.

  *Senior Engineer* #h(1fr) 2015 – 2019 \
  Pecan Street Labs, Austin
  - Built the billing system in Go.
  = EDUCATION
  B.S. Computer Science, University of Texas at Austin, 2011 – 2015
],
[
  = SKILLS
  Go, Python, Rust \
  Kafka, Flink \
  PostgreSQL

  = LANGUAGES
  English (native) \
  Spanish (B2)

  = CERTIFICATIONS
  CKA — CNCF, 2021
]
)
"""
    result = import_resume(_typst_pdf(tmp_path, source), file_name="morgan.pdf", content_type=None)

    basics = result.resume.basics
    assert (basics.name, basics.email, basics.phone) == ("Morgan Wide", "morgan.wide@example.com",
                                                         "+1 512 555 0100")
    assert (basics.location.city, basics.location.region, basics.location.country_code) == (
        "Austin", "TX", "US")
    jobs = _by_employer(result)
    assert list(jobs) == ["Lone Star Robotics Inc.", "Pecan Street Labs"]
    assert (jobs["Lone Star Robotics Inc."]["position"], jobs["Lone Star Robotics Inc."]["startDate"]) == (
        "Principal Engineer", "2019")
    assert len(jobs["Lone Star Robotics Inc."]["highlights"]) == 2
    assert jobs["Pecan Street Labs"]["highlights"] == ["Built the billing system in Go."]
    education = result.resume.education[0]
    assert (education.institution, education.study_type, education.area) == (
        "University of Texas at Austin", "B.S.", "Computer Science")
    assert result.resume.skill_names() == ["Go", "Python", "Rust", "Kafka", "Flink", "PostgreSQL"]
    assert [c.name for c in result.resume.certificates] == ["CKA"]
    assert result.unplaced == []


@pytest.mark.parametrize("template", ["classic", "compact"])
def test_a_resume_rendered_by_our_own_templates_imports_back(tmp_path, template):
    """JobCtrl's own résumé PDFs (Typst) read back into the same work entries."""
    document = ResumeDoc.model_validate({
        "name": "Sam Sample", "headline": "Senior Backend Engineer",
        "contact": {"email": "sam.sample@example.com", "phone": "+49 30 5550 1234",
                    "locations": ["Berlin, Germany"]},
        "summary": "Backend engineer who likes boring, reliable systems.",
        "skills": [{"items": ["Python", "PostgreSQL", "Kafka"]}],
        "experience": [
            {"position": "Senior Backend Engineer", "employer": "Northwind GmbH",
             "location": "Berlin", "startDate": "2021-04",
             "bullets": ["Built the billing platform on Python and PostgreSQL",
                         "Moved 40 services to Kubernetes"]},
            {"position": "Backend Engineer", "employer": "Contoso AG", "location": "Hamburg",
             "startDate": "2017-01", "endDate": "2021-03",
             "bullets": ["Wrote the Kafka event pipeline"]},
        ],
    })
    info = render_resume_pdf(document, tmp_path / "tailored.pdf", template=template)

    result = import_resume(info.path.read_bytes(), file_name="tailored.pdf", content_type=None)

    basics = result.resume.basics
    assert (basics.email, basics.phone, basics.location.city) == ("sam.sample@example.com",
                                                                   "+49 30 5550 1234", "Berlin")
    assert basics.summary == "Backend engineer who likes boring, reliable systems."
    assert result.resume.skill_names() == ["Python", "PostgreSQL", "Kafka"]
    work = {entry["name"]: entry for entry in _work(result)}
    assert work["Northwind GmbH"]["position"] == "Senior Backend Engineer"
    assert work["Northwind GmbH"]["startDate"] == "2021-04"
    assert work["Northwind GmbH"]["highlights"] == [
        "Built the billing platform on Python and PostgreSQL", "Moved 40 services to Kubernetes"]
    assert work["Contoso AG"]["highlights"] == ["Wrote the Kafka event pipeline"]
    assert work["Contoso AG"]["endDate"] == "2021-03"


def test_docx_paragraphs_with_list_bullets_and_german_headings():
    result = import_resume(_docx_paragraphs(), file_name="robin.docx", content_type=None)

    assert result.format == "docx" and result.pages is None
    jobs = _by_employer(result)
    assert list(jobs) == ["Rheinblick Energie SE", "Domstadt Versicherung AG"]
    senior = jobs["Rheinblick Energie SE"]
    assert (senior["position"], senior["location"], senior["startDate"]) == ("Senior Data Engineer",
                                                                             "Cologne", "2019-03")
    assert "endDate" not in senior  # "heute"
    assert len(senior["highlights"]) == 2 and senior["highlights"][1].startswith("Moved the streaming")
    analyst = jobs["Domstadt Versicherung AG"]
    assert (analyst["startDate"], analyst["endDate"]) == ("2015-10", "2019-02")
    assert analyst["highlights"] == ["Automated the monthly claims report with Python and SQL."]
    assert result.resume.education[0].institution == "Universität zu Köln"
    assert result.resume.skill_names() == ["Python", "SQL", "Airflow", "Kafka", "dbt"]
    assert [(lang.language, lang.fluency) for lang in result.resume.languages] == [
        ("Deutsch", "Muttersprache"), ("Englisch", "C1")]
    assert result.resume.basics.profiles[0].url == "https://linkedin.com/in/robin-beispiel"
    assert result.unplaced == []


def test_docx_layout_tables_read_cell_by_cell_one_row_per_job():
    result = import_resume(_docx_layout_tables(), file_name="kim.docx", content_type=None)

    basics = result.resume.basics
    assert (basics.name, basics.label, basics.phone) == ("Kim Vorlage", "Site Reliability Engineer",
                                                         "+49 711 5550 4242")
    jobs = _by_employer(result)
    assert list(jobs) == ["Neckartal Mobility GmbH", "Schwabenhost AG"]
    assert jobs["Neckartal Mobility GmbH"]["position"] == "SRE"
    assert jobs["Neckartal Mobility GmbH"]["startDate"] == "2021"
    assert jobs["Neckartal Mobility GmbH"]["highlights"] == [
        "Kept the booking platform at 99.95 % availability on Kubernetes.",
        "Wrote the Terraform modules for every AWS account."]
    assert (jobs["Schwabenhost AG"]["startDate"], jobs["Schwabenhost AG"]["endDate"]) == ("2017", "2021")
    assert jobs["Schwabenhost AG"]["highlights"] == ["Automated server builds with Ansible.",
                                                     "Ran PostgreSQL replication for 40 customers."]
    assert [(g.name, g.keywords) for g in result.resume.skills] == [
        ("Tools", ["Kubernetes", "Terraform", "Ansible", "Prometheus"])]
    assert result.unplaced == []


def test_plain_text_pipe_layout_in_windows_1252():
    data = _PIPE_TEXT.encode("cp1252")
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")  # the fallback is really exercised

    result = import_resume(data, file_name="chris.txt", content_type="text/plain")

    assert result.format == "text"
    jobs = _by_employer(result)
    assert list(jobs) == ["Kölner Datenwerk GmbH", "Rheinufer Media AG"]
    assert jobs["Kölner Datenwerk GmbH"]["position"] == "Senior Backend Developer"
    assert jobs["Kölner Datenwerk GmbH"]["highlights"] == [
        "Designs the FastAPI services behind the customer portal.",
        "Runs the PostgreSQL upgrades without downtime."]
    assert jobs["Rheinufer Media AG"]["highlights"] == ["Built the video metadata API in Python."]
    assert (jobs["Rheinufer Media AG"]["startDate"], jobs["Rheinufer Media AG"]["endDate"]) == ("2018",
                                                                                                "2021")
    education = result.resume.education[0]
    assert (education.institution, education.study_type, education.area) == ("Universität Bonn", "B.Sc.",
                                                                             "Informatik")
    assert result.resume.basics.location.country_code == "DE"
    assert result.unplaced == []


def test_markdown_with_title_employer_and_dates_in_parentheses():
    result = import_resume(_MARKDOWN_PARENS.encode(), file_name="pat.md", content_type=None)

    assert result.format == "markdown"
    assert result.resume.basics.label == "Backend Engineer"
    assert result.resume.basics.profiles[0].url == "https://github.com/pat-md"
    jobs = _by_employer(result)
    assert list(jobs) == ["Sachsenbahn Digital", "Auenwald Software"]
    assert jobs["Sachsenbahn Digital"]["highlights"] == [
        "Owns the timetable API (Python, FastAPI, PostgreSQL).",
        "Added Kafka change events for the passenger information screens."]
    assert (jobs["Auenwald Software"]["startDate"], jobs["Auenwald Software"]["endDate"]) == ("2018-09",
                                                                                              "2021-03")
    assert [lang.language for lang in result.resume.languages] == ["English", "German"]
    assert result.unplaced == []


def test_json_resume_sample_imports_losslessly():
    data = (FIXTURES / "jsonresume" / "sample.resume.json").read_bytes()
    original = json.loads(data)

    result = import_resume(data, file_name="resume.json", content_type="application/json")

    assert result.format == "jsonresume" and result.unplaced == []
    # Everything, unknown sections and keys included, comes back exactly; also after the
    # profile's own storage round trip (what GET /v1/profile/export answers).
    assert result.resume.export() == original
    stored = CandidateProfile(resume=result.resume).model_dump_json(by_alias=True)
    assert CandidateProfile.model_validate_json(stored).resume.export() == original
    assert result.resume.export()["projects"] == original["projects"]
    assert result.resume.work[0].model_extra["description"] == "Awesome compression company"


def test_json_resume_is_recognised_from_its_bytes_without_a_name():
    data = (FIXTURES / "jsonresume" / "sample.resume.json").read_bytes()
    assert import_resume(data, file_name=None, content_type=None).format == "jsonresume"


def test_bundled_sample_resume_imports_with_nothing_unplaced():
    data = (resources.files("resources") / "sample" / "sample-resume.md").read_bytes()

    result = import_resume(data, file_name="sample-resume.md", content_type="text/markdown")

    assert result.unplaced == []
    resume = result.resume
    assert resume.basics.name == "Sam Sample" and resume.basics.email == "sam.sample@example.com"
    assert resume.basics.location.city == "Berlin"
    assert len(resume.work) >= 2
    for entry in resume.work:
        assert entry.name and entry.position and entry.start_date
        assert 3 <= len(entry.highlights) <= 5
    assert resume.work[0].end_date is None
    assert {"Python", "FastAPI", "PostgreSQL", "Kafka", "Kubernetes", "AWS", "Terraform",
            "Airflow"} <= set(resume.skill_names())
    assert [(lang.language, lang.fluency) for lang in resume.languages] == [("English", "C2"),
                                                                           ("German", "B1")]
    assert len(resume.certificates) == 1 and resume.certificates[0].issuer
    assert resume.education


# --------------------------------------------------------------------------- bad files


def _png_bytes() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (400, 560), (240, 240, 240)).save(buffer, format="PNG")
    return buffer.getvalue()


def _scanned_pdf() -> bytes:
    pdf = FPDF()
    pdf.add_page()
    pdf.image(io.BytesIO(_png_bytes()), x=10, y=10, w=190)
    return bytes(pdf.output())


def _encrypted_pdf() -> bytes:
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.cell(text="Secret Person - Senior Engineer")
    pdf.set_encryption(owner_password="owner-secret", user_password="open-sesame")
    return bytes(pdf.output())


def _long_pdf(pages: int) -> bytes:
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for page in range(pages):
        pdf.add_page()
        pdf.set_y(120)  # mid-page: a line repeated in the top margin is a running header
        pdf.cell(text=f"Work history, part {page + 1}")
    return bytes(pdf.output())


def _ole(*streams: str) -> bytes:
    """The start of an OLE compound file: its signature, then a directory naming the
    streams (UTF-16LE), which is what Office writes around an encrypted .docx."""
    directory = b"".join(name.encode("utf-16-le").ljust(64, b"\x00") for name in streams)
    return b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504 + directory + b"\x00" * 1024


def _zip_of(name: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(name, "<xml/>")
    return buffer.getvalue()


@pytest.mark.parametrize(("make", "file_name", "error", "code", "status"), [
    (_scanned_pdf, "scan.pdf", ResumeUnreadable, "resume_unreadable", 422),
    (lambda: b"%PDF-1.7\n1 0 obj garbage", "broken.pdf", ResumeUnreadable, "resume_unreadable", 422),
    (lambda: _docx_bytes(docx.Document()), "empty.docx", ResumeUnreadable, "resume_unreadable", 422),
    (lambda: b"   \n\n", "empty.txt", ResumeUnreadable, "resume_unreadable", 422),
    (lambda: b'{"basics": "not an object"}', "bad.json", ResumeUnreadable, "resume_unreadable", 422),
    (_encrypted_pdf, "locked.pdf", ResumeEncrypted, "resume_encrypted", 422),
    (lambda: _ole("Root Entry", "EncryptionInfo", "EncryptedPackage"), "locked.docx", ResumeEncrypted,
     "resume_encrypted", 422),
    (lambda: b"x" * (MAX_BYTES + 1), "huge.txt", ResumeTooLarge, "resume_too_large", 413),
    (lambda: _long_pdf(21), "thesis.pdf", ResumeTooLarge, "resume_too_large", 413),
    (_png_bytes, "photo.png", ResumeUnsupportedType, "resume_unsupported_type", 415),
    (_png_bytes, None, ResumeUnsupportedType, "resume_unsupported_type", 415),
    (lambda: _zip_of("notes/readme.txt"), "resume.zip", ResumeUnsupportedType, "resume_unsupported_type",
     415),
    (lambda: _zip_of("content.xml"), "resume.odt", ResumeUnsupportedType, "resume_unsupported_type", 415),
    (lambda: _ole("Root Entry", "WordDocument"), "old.doc", ResumeUnsupportedType,
     "resume_unsupported_type", 415),
    (lambda: random.Random(7).randbytes(4096), "mystery.bin", ResumeUnsupportedType,
     "resume_unsupported_type", 415),
    (lambda: b'{"name": "package.json"}', "package.json", ResumeUnsupportedType,
     "resume_unsupported_type", 415),
])
def test_bad_files_get_their_typed_error(make, file_name, error, code, status):
    with pytest.raises(error) as caught:
        import_resume(make(), file_name=file_name, content_type=None)

    failure = caught.value
    assert (failure.code, failure.http_status, failure.retryable) == (code, status, False)
    assert failure.message.endswith(".") and len(failure.message) < 200
    assert "Secret Person" not in failure.message


def test_scanned_pdf_message_says_what_to_do():
    with pytest.raises(ResumeUnreadable) as caught:
        import_resume(_scanned_pdf(), file_name="scan.pdf", content_type=None)
    assert "no text layer" in caught.value.message and "DOCX" in caught.value.message


def test_a_pdf_of_twenty_pages_is_still_accepted():
    assert import_resume(_long_pdf(20), file_name="long.pdf", content_type=None).pages == 20
