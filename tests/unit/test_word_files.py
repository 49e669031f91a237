"""The Word files beside the PDFs: real Word styles, the PDF's words in the PDF's order,
the PDF's file name with another extension, and (where LibreOffice is installed) a file
an office suite opens and converts."""

from __future__ import annotations

import io
import os
import re
import shutil
import subprocess
import zipfile
from collections import Counter
from datetime import UTC, datetime

import docx
import pytest

from backend.pipeline import pdf as pdf_module
from backend.pipeline.ats_check import plain_text, words
from backend.pipeline.documents import (
    CoverLetterDoc,
    EducationLine,
    ExperienceEntry,
    LetterParagraph,
    ResumeContact,
    ResumeDoc,
    SkillLine,
)
from backend.pipeline.material_view import material_file_name, resume_view
from backend.pipeline.word import (
    cover_letter_docx_bytes,
    render_cover_letter_docx,
    render_resume_docx,
    resume_docx_bytes,
)

FIXED = datetime(2026, 11, 30, 9, 0, 0, tzinfo=UTC)

RESUME = ResumeDoc(
    name="Zoë Müller-Ortiz",
    headline="Data Analyst — SQL, Power BI",
    contact=ResumeContact(email="zoe@example.com", phone="+49 30 1234", locations=["Berlin, DE"],
                          links=["linkedin.com/in/zoe"]),
    summary="Analyst with six years of retail and insurance reporting.",
    skills=[SkillLine(group="Tools", items=["SQL", "Power BI", "dbt"])],
    experience=[
        ExperienceEntry(position="Senior Analyst, Pricing", employer="Shopify",
                        location="Berlin", start_date="2021-03",
                        bullets=["Cut the weekly report from 6 hours to 20 minutes with dbt",
                                 "Built the mid-market churn model used by three teams"]),
        ExperienceEntry(position="Analyst", employer="Allianz – Retail Division",
                        start_date="2018-09", end_date="2021-02",
                        bullets=["Owned the claims dashboard (Power BI) for 40 branch managers"]),
    ],
    education=[EducationLine(institution="Freie Universität Berlin", degree="B.Sc. Statistics",
                             start_date="2014-10", end_date="2018-07")],
    languages=["German (Native)", "English (C1)"],
    certifications=["dbt Analytics Engineering (dbt Labs, 2023)"],
)

LETTER = CoverLetterDoc(
    sender_name="Zoë Müller-Ortiz", sender_contact=["zoe@example.com", "Berlin, DE"],
    date_line="30 November 2026", recipient_lines=["Hiring team", "Shopify", "Berlin"],
    salutation="Dear hiring team,",
    paragraphs=[LetterParagraph(text="I am applying for the Senior Analyst role."),
                LetterParagraph(text="At Allianz I owned the claims dashboard.")],
    closing="Kind regards,", signature="Zoë Müller-Ortiz",
)


def _document(data: bytes):
    return docx.Document(io.BytesIO(data))


def _styled(document) -> list[tuple[str, str]]:
    return [(p.style.name, p.text) for p in document.paragraphs if p.text.strip()]


def test_resume_uses_word_heading_and_list_styles():
    document = _document(resume_docx_bytes(RESUME, creation_date=FIXED))
    styled = _styled(document)
    assert styled[0] == ("Heading 1", "Zoë Müller-Ortiz")
    assert [text for style, text in styled if style == "Heading 2"] == [
        "Experience", "Skills", "Education", "Languages", "Certifications"]
    bullets = [text for style, text in styled if style == "List Bullet"]
    assert bullets == [*RESUME.all_bullets(), *RESUME.certifications]
    # No tables for layout and no text boxes: what applicant-tracking systems skip.
    assert document.tables == []
    xml = zipfile.ZipFile(io.BytesIO(resume_docx_bytes(RESUME))).read("word/document.xml")
    assert b"txbxContent" not in xml and b"<w:tbl>" not in xml
    assert document.core_properties.title == "Zoë Müller-Ortiz - Resume"
    assert document.core_properties.author == "Zoë Müller-Ortiz"


def test_every_employer_title_date_and_bullet_is_there_in_order():
    styled = _styled(_document(resume_docx_bytes(RESUME)))
    texts = [text for _style, text in styled]
    expected = []
    for entry in resume_view(RESUME)["experience"]:
        expected += [entry["position"], entry["employer"], entry["dates"], *entry["bullets"]]
    joined, position = "\n".join(texts), 0
    for fragment in expected:
        found = joined.find(fragment, position)
        assert found >= 0, f"{fragment!r} missing or out of order"
        position = found + len(fragment)
    assert "Senior Analyst, Pricing, Shopify\tMar 2021 – Present" in texts
    assert "Analyst, Allianz – Retail Division\tSep 2018 – Feb 2021" in texts


@pytest.mark.parametrize("template", pdf_module.TEMPLATES)
def test_the_word_file_says_what_the_pdf_says(template):
    """One view, two writers: the same words; in the same order as the classic template
    (compact puts an entry's place before its dates). A one-page résumé, so the PDF has
    no page footer."""
    pdf_words = words(plain_text(pdf_module.resume_pdf_bytes(RESUME, template=template), "pdf"))
    docx_words = words(plain_text(resume_docx_bytes(RESUME), "docx"))
    if template == "classic":
        assert pdf_words == docx_words
    assert Counter(pdf_words) == Counter(docx_words)
    letter_pdf = pdf_module.cover_letter_pdf_bytes(LETTER)
    assert words(plain_text(letter_pdf, "pdf")) == words(plain_text(
        cover_letter_docx_bytes(LETTER), "docx"))


def test_letter_in_order_with_the_sender_as_heading():
    styled = _styled(_document(cover_letter_docx_bytes(LETTER)))
    assert styled[0] == ("Heading 1", "Zoë Müller-Ortiz")
    texts = [text for _style, text in styled]
    assert texts[1:] == ["zoe@example.com · Berlin, DE", "30 November 2026",
                         "Hiring team\nShopify\nBerlin", "Dear hiring team,",
                         "I am applying for the Senior Analyst role.",
                         "At Allianz I owned the claims dashboard.", "Kind regards,",
                         "Zoë Müller-Ortiz"]


@pytest.mark.parametrize(("paper", "width_cm"), [("a4", 21.0), ("letter", 21.59)])
def test_paper_size_follows_the_pdf_choice(paper, width_cm):
    section = _document(resume_docx_bytes(RESUME, paper=paper)).sections[0]
    assert round(section.page_width.cm, 2) == width_cm


def test_word_file_names_are_the_pdf_names_with_another_extension(tmp_path):
    for company in ("Shopify", "株式会社" * 30, "A/B: <Test> GmbH."):
        pdf_name = material_file_name("Zoë Müller-Ortiz", "resume", company)
        docx_name = material_file_name("Zoë Müller-Ortiz", "resume", company, extension=".docx")
        assert len(docx_name.encode()) <= 120 and docx_name.endswith(".docx")
        assert docx_name.removesuffix(".docx").startswith(
            pdf_name.removesuffix(".pdf")[:len(docx_name.removesuffix(".docx"))])
    name = material_file_name("Zoë Müller-Ortiz", "cover_letter", "Shopify", extension=".docx")
    info = render_cover_letter_docx(LETTER, tmp_path / name)
    assert info.path.name == "Zoë Müller-Ortiz - Cover letter - Shopify.docx"
    assert info.bytes == len(info.path.read_bytes()) and len(info.sha256) == 64
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_libreoffice_opens_and_converts_both_files(tmp_path):
    """As a recruiter's office suite opens them. CI installs LibreOffice (.ci/run) and sets
    JOBCTRL_REQUIRE_LIBREOFFICE, so there a missing LibreOffice fails; a developer machine
    without it skips this one test (the python-docx tests above still run)."""
    if shutil.which("soffice") is None:
        if os.environ.get("JOBCTRL_REQUIRE_LIBREOFFICE"):
            pytest.fail("LibreOffice (soffice) is required here but not installed")
        pytest.skip("LibreOffice is not installed")
    files = [render_resume_docx(RESUME, tmp_path / "resume.docx").path,
             render_cover_letter_docx(LETTER, tmp_path / "letter.docx").path]
    profile = (tmp_path / "lo-profile").as_uri()  # its own profile: no clash with a running one
    result = subprocess.run(
        ["soffice", f"-env:UserInstallation={profile}", "--headless", "--norestore",
         "--convert-to", "pdf", "--outdir", str(tmp_path / "out"), *map(str, files)],
        capture_output=True, text=True, timeout=240, check=False)
    assert result.returncode == 0, result.stderr
    resume_text = plain_text((tmp_path / "out" / "resume.pdf").read_bytes(), "pdf")
    for fragment in ("Shopify", "Allianz", "Mar 2021", *RESUME.all_bullets()):
        assert words(fragment) and " ".join(words(fragment)) in " ".join(words(resume_text))
    letter_text = plain_text((tmp_path / "out" / "letter.pdf").read_bytes(), "pdf")
    assert re.search(r"Dear hiring team", letter_text)
