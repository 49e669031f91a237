"""Word (.docx) files of the tailored résumé and cover letter, beside their PDFs.

Recruiters and job portals often ask for Word. Each file is written from the same view as
its PDF (:mod:`backend.pipeline.material_view`), so both say the same words in the same
order. It uses Word's own styles, the ones applicant-tracking systems and screen readers
understand: "Heading 1" for the name, "Heading 2" for each section, "List Bullet" for
bullets; no text boxes and no tables for layout (dates sit at a right-aligned tab stop).
Files are written atomically, like the PDFs.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import docx
from docx.enum.text import WD_TAB_ALIGNMENT
from docx.shared import Cm, Pt, RGBColor

from backend.pipeline.documents import CoverLetterDoc, ResumeDoc
from backend.pipeline.material_view import LABELS_EN, letter_view, resume_view
from backend.pipeline.pdf import Paper, write_atomic

_PAGE = {"a4": (Cm(21.0), Cm(29.7)), "letter": (Cm(21.59), Cm(27.94))}
_MARGIN = Cm(1.9)
_ACCENT = RGBColor(0x1F, 0x3A, 0x5F)
_MUTED = RGBColor(0x5A, 0x62, 0x70)
_SEPARATOR = " · "


@dataclass(frozen=True)
class DocxInfo:
    path: Path
    bytes: int
    sha256: str
    pages: int = 0  # Word lays out the pages itself: the file does not know how many


def _new_document(title: str, author: str, paper: Paper, creation_date: datetime | None,
                  size: float) -> Any:
    if paper not in _PAGE:
        raise ValueError(f"unsupported paper: {paper!r}")
    document = docx.Document()
    section = document.sections[0]
    section.page_width, section.page_height = _PAGE[paper]
    for side in ("left_margin", "right_margin", "top_margin", "bottom_margin"):
        setattr(section, side, _MARGIN)
    normal = document.styles["Normal"]
    normal.font.size = Pt(size)
    for name in ("Heading 1", "Heading 2"):
        document.styles[name].font.color.rgb = _ACCENT
    properties = document.core_properties
    when = (creation_date or datetime.now(UTC)).replace(microsecond=0)
    properties.title, properties.author, properties.last_modified_by = title, author, author
    properties.created = properties.modified = when
    properties.revision = 1
    return document


def _text_width(document: Any) -> Any:
    section = document.sections[0]
    return section.page_width - section.left_margin - section.right_margin


def _paragraph(document: Any, text: str = "", *, style: str | None = None, bold: bool = False,
               italic: bool = False, muted: bool = False) -> Any:
    paragraph = document.add_paragraph(style=style)
    if text:
        run = paragraph.add_run(text)
        run.bold, run.italic = bold or None, italic or None
        if muted:
            run.font.color.rgb = _MUTED
    return paragraph


def _with_dates(document: Any, parts: list[tuple[str, bool]], dates: str) -> Any:
    """A label (runs of text, bold or not) with its dates flush right on the same line, at
    a right-aligned tab stop: the label reads before the dates, as in the PDF."""
    paragraph = document.add_paragraph()
    paragraph.paragraph_format.keep_with_next = True
    for text, bold in parts:
        if text:
            paragraph.add_run(text).bold = bold or None
    if dates:
        paragraph.paragraph_format.tab_stops.add_tab_stop(_text_width(document),
                                                          WD_TAB_ALIGNMENT.RIGHT)
        paragraph.add_run("\t" + dates).font.color.rgb = _MUTED
    return paragraph


def _save(document: Any) -> bytes:
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def resume_docx_bytes(resume: ResumeDoc, *, paper: Paper = "a4",
                      creation_date: datetime | None = None,
                      labels: dict[str, str] = LABELS_EN) -> bytes:
    view = resume_view(resume, labels=labels)
    document = _new_document(f"{resume.name} - Resume", resume.name, paper, creation_date, 10.5)
    document.add_heading(view["name"], level=1)
    if view["headline"]:
        _paragraph(document, view["headline"])
    for row in (view["contact"], view["links"]):
        if row:
            _paragraph(document, _SEPARATOR.join(row), muted=True)
    if view["summary"]:
        _paragraph(document, view["summary"])
    if view["experience"]:
        document.add_heading(labels["experience"], level=2)
        for entry in view["experience"]:
            comma = ", " if entry["position"] and entry["employer"] else ""
            _with_dates(document, [(entry["position"], True), (comma + entry["employer"], False)],
                        entry["dates"])
            if entry["location"]:
                _paragraph(document, entry["location"], italic=True, muted=True)
            for bullet in entry["bullets"]:
                _paragraph(document, bullet, style="List Bullet")
    if view["skills"]:
        document.add_heading(labels["skills"], level=2)
        for line in view["skills"]:
            paragraph = document.add_paragraph()
            if line["group"]:
                paragraph.add_run(line["group"] + ": ").bold = True
            paragraph.add_run(", ".join(line["items"]))
    if view["education"]:
        document.add_heading(labels["education"], level=2)
        for line in view["education"]:
            _with_dates(document, [(line["institution"], True)], line["dates"])
            if line["degree"]:
                _paragraph(document, line["degree"])
    if view["languages"]:
        document.add_heading(labels["languages"], level=2)
        _paragraph(document, _SEPARATOR.join(view["languages"]))
    if view["certifications"]:
        document.add_heading(labels["certifications"], level=2)
        for item in view["certifications"]:
            _paragraph(document, item, style="List Bullet")
    return _save(document)


def cover_letter_docx_bytes(letter: CoverLetterDoc, *, paper: Paper = "a4",
                            creation_date: datetime | None = None) -> bytes:
    view = letter_view(letter)
    document = _new_document(f"{letter.sender_name} - Cover letter", letter.sender_name, paper,
                             creation_date, 11)
    document.add_heading(view["sender_name"], level=1)
    if view["sender_contact"]:
        _paragraph(document, _SEPARATOR.join(view["sender_contact"]), muted=True)
    if view["date_line"]:
        _paragraph(document, view["date_line"])
    if view["recipient_lines"]:
        paragraph = document.add_paragraph()
        for index, line in enumerate(view["recipient_lines"]):
            run = paragraph.add_run(line)
            if index < len(view["recipient_lines"]) - 1:
                run.add_break()
    for text in (view["salutation"], *view["paragraphs"], view["closing"]):
        if text:
            _paragraph(document, text)
    if view["signature"]:
        _paragraph(document, view["signature"], bold=True)
    return _save(document)


def save_docx(data: bytes, path: Path | str) -> DocxInfo:
    """Write rendered Word bytes to ``path`` (atomically)."""
    target = Path(path)
    write_atomic(data, target)
    return DocxInfo(path=target, bytes=len(data), sha256=hashlib.sha256(data).hexdigest())


def render_resume_docx(resume: ResumeDoc, path: Path | str, *, paper: Paper = "a4",
                       creation_date: datetime | None = None) -> DocxInfo:
    return save_docx(resume_docx_bytes(resume, paper=paper, creation_date=creation_date), path)


def render_cover_letter_docx(letter: CoverLetterDoc, path: Path | str, *, paper: Paper = "a4",
                             creation_date: datetime | None = None) -> DocxInfo:
    return save_docx(cover_letter_docx_bytes(letter, paper=paper, creation_date=creation_date), path)
