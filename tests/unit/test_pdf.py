"""Résumé and cover-letter PDFs: valid, paginated, Unicode-safe, atomic, deterministic."""

from __future__ import annotations

import os
import re
import zlib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from backend.pipeline import pdf as pdf_module
from backend.pipeline.pdf import (
    CoverLetterDocument,
    PdfInfo,
    ResumeDocument,
    ResumeSection,
    pdf_safe_text,
    render_cover_letter_pdf,
    render_resume_pdf,
)

ARTIFACTS = Path(__file__).resolve().parents[1] / "_artifacts"
FIXED = datetime(2026, 11, 30, 9, 0, 0, tzinfo=UTC)

SAMPLE_RESUME = ResumeDocument(
    name="Maria Kowalczyk",
    headline="Senior Backend Engineer \u2014 distributed systems, payments and data platforms",
    contact_lines=[
        "Rotterdam, Netherlands",
        "maria.kowalczyk@example.com",
        "+31 6 1234 5678",
        "linkedin.com/in/mariakowalczyk",
        "github.com/mkowalczyk",
    ],
    summary=(
        "Backend engineer with nine years of experience designing reliable, well-observed "
        "services for payments and logistics. I like boring infrastructure, clear APIs and "
        "teams that write things down \u2014 and I have led migrations that moved \u20ac2B+ "
        "of yearly volume without downtime."
    ),
    sections=[
        ResumeSection(
            "Experience",
            [
                "Staff Engineer, Copperleaf Payments (Amsterdam) \u2014 2021\u2013present: led "
                "the payout ledger rewrite on PostgreSQL and Temporal; cut reconciliation "
                "incidents by 70% and p99 latency from 900 ms to 120 ms.",
                "Designed an idempotent payouts API used by 40+ marketplaces in 30 countries; "
                "wrote the versioning policy adopted across the platform group.",
                "Mentored six engineers; two were promoted to senior within eighteen months.",
                "Senior Backend Engineer, Harborlight Logistics \u2014 2017\u20132021: built "
                "container tracking ingestion (Kafka, Go) processing 12M events/day.",
                "Introduced SLOs and on-call runbooks; halved pages per week in one quarter.",
            ],
        ),
        ResumeSection(
            "Skills",
            [
                "Languages: Python, Go, Kotlin, SQL",
                "Platforms: PostgreSQL, Kafka, Temporal, Kubernetes, AWS, GCP",
                "Practices: API design, event sourcing, observability, incident review",
            ],
        ),
        ResumeSection(
            "Education",
            ["MSc Computer Science, Politechnika \u0141\u00f3dzka (\u0141\u00f3d\u017a) \u2014 2016"],
        ),
    ],
)

SAMPLE_LETTER = CoverLetterDocument(
    sender_name="Maria Kowalczyk",
    sender_contact=["Rotterdam, Netherlands", "maria.kowalczyk@example.com", "+31 6 1234 5678"],
    date_line="30 November 2026",
    recipient_lines=[
        "Hiring Team",
        "Pixel Orchard Games",
        "Atlanta, GA, United States",
    ],
    salutation="Dear Hiring Team,",
    paragraphs=[
        "I am writing to apply for the Backend Engineer role on your player accounts team. "
        "Building dependable services that millions of players touch every day is exactly "
        "the kind of work I have enjoyed most over the past nine years.",
        "At Copperleaf Payments I led the rewrite of our payout ledger on PostgreSQL and "
        "Temporal, cutting reconciliation incidents by 70% while keeping the API stable for "
        "more than forty marketplaces. Before that, at Harborlight Logistics, I built the "
        "Kafka-based ingestion behind live container tracking and introduced the SLOs and "
        "runbooks that halved our on-call load.",
        "Your description\u2019s emphasis on \u201cpragmatic trade-offs\u201d and short "
        "design docs resonates with me: I write a one-page design note before any change "
        "that crosses a service boundary, and I enjoy reviewing others\u2019 work with the "
        "same care. I would be glad to bring that habit, along with hands-on Kubernetes "
        "and AWS experience, to Pixel Orchard Games.",
        "Thank you for your time and consideration. I would welcome the chance to talk "
        "about how I could help the player accounts team.",
    ],
    closing="Kind regards,",
    signature="Maria Kowalczyk",
)

UNICODE_TEXT = (
    "Salary \u20ac85k \u2013 \u20ac95k \u2014 \u201csmart\u201d \u2018quotes\u2019 \u2022 "
    "\u0141\u00f3d\u017a, Gy\u0151r, \u0160koda, \u010ce\u0161tina, stra\u00dfe, \u00e6 "
    "\u2192 next \u2264 5 \u2026 ok \U0001f680\U0001f44d\U0001f3fd \u4e2d\u6587 \u200bzero"
)


def page_count(data: bytes) -> int:
    return len(re.findall(rb"/Type\s*/Page\b", data))


def content_text(data: bytes) -> bytes:
    """Concatenated (decompressed) content streams, enough to look for drawn strings."""
    chunks = []
    for match in re.finditer(rb"stream\r?\n(.*?)\r?\nendstream", data, re.S):
        raw = match.group(1)
        try:
            chunks.append(zlib.decompress(raw))
        except zlib.error:
            chunks.append(raw)
    return b"\n".join(chunks)


def assert_valid_pdf(info: PdfInfo, path: Path) -> bytes:
    data = path.read_bytes()
    assert data.startswith(b"%PDF-")
    assert data.rstrip().endswith(b"%%EOF")
    assert info.path == path
    assert info.bytes == len(data)
    assert info.pages == page_count(data) >= 1
    assert len(info.sha256) == 64
    return data


def long_resume(items: int = 90) -> ResumeDocument:
    return ResumeDocument(
        name="Long Resume",
        headline="Engineer",
        contact_lines=["long@example.com"],
        summary="Summary " * 40,
        sections=[
            ResumeSection(
                f"Section {n}",
                [
                    f"Accomplishment {n}.{i}: shipped a meaningful improvement to a service "
                    "that other teams depend on, measured it and wrote it up for others."
                    for i in range(items // 3)
                ],
            )
            for n in range(3)
        ],
    )


def test_resume_renders_a_valid_pdf_with_metadata(tmp_path):
    path = tmp_path / "resume.pdf"
    info = render_resume_pdf(SAMPLE_RESUME, path, creation_date=FIXED)

    data = assert_valid_pdf(info, path)
    assert info.pages == 1
    assert b"/Creator (JobCtrl)" in data
    assert b"/Author (Maria Kowalczyk)" in data
    assert b"/Title (Maria Kowalczyk - Resume)" in data
    assert b"/CreationDate (D:20261130090000Z" in data
    assert b"Page 1 of" not in content_text(data)  # single page: no page numbers
    assert b"EXPERIENCE" in content_text(data)


def test_cover_letter_renders_a_valid_pdf(tmp_path):
    path = tmp_path / "letter.pdf"
    info = render_cover_letter_pdf(SAMPLE_LETTER, path, creation_date=FIXED)

    data = assert_valid_pdf(info, path)
    assert info.pages == 1
    assert b"/Creator (JobCtrl)" in data
    assert b"Dear Hiring Team," in content_text(data)


@pytest.mark.parametrize(("page_size", "mediabox"), [("letter", b"612"), ("a4", b"595.28")])
def test_page_size_is_selectable(tmp_path, page_size, mediabox):
    path = tmp_path / f"{page_size}.pdf"
    render_resume_pdf(SAMPLE_RESUME, path, page_size=page_size, creation_date=FIXED)
    assert re.search(rb"/MediaBox \[0 0 " + re.escape(mediabox), path.read_bytes())


def test_long_resume_spans_pages_with_numbered_footers(tmp_path):
    path = tmp_path / "long.pdf"
    info = render_resume_pdf(long_resume(), path, creation_date=FIXED)

    data = assert_valid_pdf(info, path)
    assert info.pages >= 2
    text = content_text(data)
    for page in range(1, info.pages + 1):
        assert f"Page {page} of {info.pages}".encode() in text


def test_long_cover_letter_spans_pages(tmp_path):
    letter = CoverLetterDocument(**{**SAMPLE_LETTER.__dict__, "paragraphs": SAMPLE_LETTER.paragraphs * 8})
    info = render_cover_letter_pdf(letter, tmp_path / "long-letter.pdf", creation_date=FIXED)
    assert info.pages >= 2
    assert f"Page 2 of {info.pages}".encode() in content_text(info.path.read_bytes())


def test_non_latin1_text_renders_with_deterministic_replacements(tmp_path):
    resume = ResumeDocument(
        name="Zo\u00eb \u0141ukasz \U0001f680",
        headline=UNICODE_TEXT,
        contact_lines=[UNICODE_TEXT],
        summary=UNICODE_TEXT,
        sections=[ResumeSection(UNICODE_TEXT, [UNICODE_TEXT, "\u2022 already bulleted"])],
    )
    letter = CoverLetterDocument(
        sender_name=UNICODE_TEXT,
        sender_contact=[UNICODE_TEXT],
        date_line=UNICODE_TEXT,
        recipient_lines=[UNICODE_TEXT],
        salutation=UNICODE_TEXT,
        paragraphs=[UNICODE_TEXT],
        closing=UNICODE_TEXT,
        signature=UNICODE_TEXT,
    )
    resume_info = render_resume_pdf(resume, tmp_path / "u-resume.pdf", creation_date=FIXED)
    letter_info = render_cover_letter_pdf(letter, tmp_path / "u-letter.pdf", creation_date=FIXED)
    assert_valid_pdf(resume_info, resume_info.path)
    assert_valid_pdf(letter_info, letter_info.path)

    text = content_text(resume_info.path.read_bytes())
    assert "L\u00f3dz, Gyor, \u0160koda, Ce\u0161tina".encode("cp1252") in text
    assert "\u20ac85k \u2013 \u20ac95k \u2014 \u201csmart\u201d".encode("cp1252") in text
    assert b"-> next <= 5 \x85 ok ?? zero" in text


def test_pdf_safe_text_is_a_deterministic_table():
    assert pdf_safe_text(UNICODE_TEXT) == (
        "Salary \u20ac85k \u2013 \u20ac95k \u2014 \u201csmart\u201d \u2018quotes\u2019 \u2022 "
        "L\u00f3dz, Gyor, \u0160koda, Ce\u0161tina, stra\u00dfe, \u00e6 "
        "-> next <= 5 \u2026 ok ?? zero"
    )
    assert pdf_safe_text("a\u00a0b\tc\r\nd\x07") == "a\u00a0b c\nd"
    assert pdf_safe_text("") == ""
    for char in map(chr, range(0x20, 0x3000)):
        pdf_safe_text(char).encode("cp1252")  # never raises


def test_identical_input_and_date_give_identical_bytes(tmp_path):
    first = render_resume_pdf(SAMPLE_RESUME, tmp_path / "a.pdf", creation_date=FIXED)
    second = render_resume_pdf(SAMPLE_RESUME, tmp_path / "b.pdf", creation_date=FIXED)
    later = render_resume_pdf(
        SAMPLE_RESUME, tmp_path / "c.pdf", creation_date=datetime(2027, 1, 1, tzinfo=UTC)
    )
    letters = [
        render_cover_letter_pdf(SAMPLE_LETTER, tmp_path / f"l{n}.pdf", creation_date=FIXED) for n in range(2)
    ]

    assert first.sha256 == second.sha256
    assert first.sha256 != later.sha256
    assert letters[0].sha256 == letters[1].sha256
    # A naive date is taken as UTC, never as the machine's local zone.
    naive = render_resume_pdf(SAMPLE_RESUME, tmp_path / "naive.pdf", creation_date=FIXED.replace(tzinfo=None))
    assert naive.sha256 == first.sha256


def test_atomic_write_leaves_only_the_final_file(tmp_path):
    target = tmp_path / "out" / "resume.pdf"
    render_resume_pdf(SAMPLE_RESUME, target, creation_date=FIXED)
    render_resume_pdf(SAMPLE_RESUME, target, creation_date=FIXED)  # overwrite in place

    assert sorted(p.name for p in target.parent.iterdir()) == ["resume.pdf"]


def test_crash_during_write_keeps_previous_file_and_no_temp(tmp_path, monkeypatch):
    target = tmp_path / "resume.pdf"
    before = render_resume_pdf(SAMPLE_RESUME, target, creation_date=FIXED)

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(pdf_module.os, "replace", boom)
    with pytest.raises(OSError):
        render_resume_pdf(long_resume(), target, creation_date=FIXED)

    assert sorted(p.name for p in tmp_path.iterdir()) == ["resume.pdf"]
    assert target.read_bytes()[:5] == b"%PDF-"
    assert len(target.read_bytes()) == before.bytes


def test_empty_optional_parts_are_skipped(tmp_path):
    resume = ResumeDocument(name="Only Name", headline="", contact_lines=[], summary="", sections=[])
    info = render_resume_pdf(resume, tmp_path / "min.pdf", creation_date=FIXED)
    assert info.pages == 1


def test_render_samples_for_inspection():
    """Writes tests/_artifacts/sample-*.pdf (git-ignored) for a human to look at."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    resume = render_resume_pdf(SAMPLE_RESUME, ARTIFACTS / "sample-resume.pdf", creation_date=FIXED)
    letter = render_cover_letter_pdf(
        SAMPLE_LETTER, ARTIFACTS / "sample-cover-letter.pdf", creation_date=FIXED
    )
    assert resume.pages == letter.pages == 1
    assert not [p for p in os.listdir(ARTIFACTS) if p.endswith(".tmp")]
