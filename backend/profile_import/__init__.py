"""Résumé import: a file's bytes → a draft JSON Resume for the job seeker to review.

Plain functions, no HTTP, no database, no Qt. :func:`import_resume` reads PDF, DOCX,
plain text, Markdown and JSON Resume files; :func:`structure_text` structures text that
was pasted (or kept from an older profile). Failures are typed
(:mod:`backend.profile_import.errors`), each with its code, HTTP status and a sentence
for the job seeker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from backend.domain.resume import JsonResume
from backend.domain.resume_structure import structure_lines, structure_text
from backend.profile_import.errors import (
    ResumeEncrypted,
    ResumeImportError,
    ResumeTooLarge,
    ResumeUnreadable,
    ResumeUnsupportedType,
)
from backend.profile_import.extract import MAX_BYTES, MAX_PDF_PAGES, extract

__all__ = [
    "MAX_BYTES",
    "MAX_PDF_PAGES",
    "ImportResult",
    "ResumeEncrypted",
    "ResumeImportError",
    "ResumeTooLarge",
    "ResumeUnreadable",
    "ResumeUnsupportedType",
    "import_resume",
    "structure_text",
]


@dataclass(frozen=True)
class ImportResult:
    resume: JsonResume
    unplaced: list[str]  # lines the rules could not place, verbatim ("not placed: 3 lines")
    format: Literal["pdf", "docx", "text", "markdown", "jsonresume"]
    pages: int | None  # PDF only
    characters: int  # len(text)
    text: str  # the extracted plain text, kept by the profile as resumeText


def import_resume(data: bytes, *, file_name: str | None, content_type: str | None) -> ImportResult:
    """Read a résumé file into a draft. Raises a :class:`ResumeImportError` subclass."""
    extracted = extract(data, file_name=file_name, content_type=content_type)
    text = "\n".join(extracted.lines).strip("\n")
    if extracted.resume is not None:  # JSON Resume: already structured, kept as it is
        resume, unplaced = extracted.resume, []
    else:
        resume, unplaced = structure_lines(extracted.lines)
    return ImportResult(resume=resume, unplaced=unplaced, format=extracted.format,
                        pages=extracted.pages, characters=len(text), text=text)


