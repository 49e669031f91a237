"""What a résumé and a cover letter say, as both writers read it: the PDF (Typst, in
:mod:`backend.pipeline.pdf`) and the Word file (:mod:`backend.pipeline.word`) are built
from the same view, so the two files carry the same words in the same order. Also the file
names both get, which differ only in their extension.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Literal

from backend.pipeline.documents import CoverLetterDoc, ResumeDoc

MaterialKind = Literal["resume", "cover_letter"]

LABELS_EN = {
    "experience": "Experience",
    "skills": "Skills",
    "education": "Education",
    "languages": "Languages",
    "certifications": "Certifications",
    "present": "Present",
}

# A file name is limited in bytes, not characters (NAME_MAX: 255 bytes on Linux and macOS;
# 255 UTF-16 units on Windows, which a 120-byte UTF-8 name never exceeds). 120 bytes is 120
# Latin letters but only 40 CJK characters or 30 emoji; it also leaves room for the
# temporary name the atomic write uses next to it (``.<name>.XXXXXXXX.tmp``).
_MAX_FILE_NAME_BYTES = 120

_FORBIDDEN_IN_FILE_NAMES = re.compile(r'[/\\:*?"<>|\x00-\x1f\x7f]')
_SPACE_RUNS = re.compile(r"\s+")


def _file_name_part(text: str | None) -> str:
    text = unicodedata.normalize("NFC", text or "")
    text = "".join(" " if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp") else char
                   for char in text)
    text = _FORBIDDEN_IN_FILE_NAMES.sub(" ", text)
    # Windows drops trailing dots and spaces; a leading dot hides the file on Unix.
    return _SPACE_RUNS.sub(" ", text).strip(" .")


def cut_to_bytes(text: str, limit: int) -> str:
    """The longest start of ``text`` whose UTF-8 form fits in ``limit`` bytes, never
    ending inside a character."""
    encoded = text.encode("utf-8")
    if len(encoded) <= limit:
        return text
    return encoded[:max(0, limit)].decode("utf-8", errors="ignore")


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8"))


def material_file_name(full_name: str | None, kind: MaterialKind, company: str | None, *,
                       extension: str = ".pdf") -> str:
    """``"<Full Name> - Resume - <Company>.pdf"`` (or ``Cover letter``; ``.docx`` for the
    Word file), safe on Windows, macOS and Linux: no reserved or control characters, accents
    kept, at most 120 bytes in UTF-8 (the name gets up to half of that, the company what is
    left; a character is never cut in half and the extension always stays)."""
    labels = {"resume": "Resume", "cover_letter": "Cover letter"}
    if kind not in labels:
        raise ValueError(f"unsupported material kind: {kind!r}")
    name = cut_to_bytes(_file_name_part(full_name), _MAX_FILE_NAME_BYTES // 2).rstrip(" .")
    parts = [part for part in (name, labels[kind]) if part]
    room = _MAX_FILE_NAME_BYTES - _utf8_len(" - ".join(parts)) - len(" - ") - _utf8_len(extension)
    company_part = cut_to_bytes(_file_name_part(company), room).rstrip(" .")
    if company_part:
        parts.append(company_part)
    return " - ".join(parts) + extension


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_ISO_MONTH = re.compile(r"^(\d{4})-(\d{2})(?:-\d{2})?$")


def _display_date(value: str | None) -> str:
    """``2021-03`` → ``Mar 2021``; anything else (``2019``, ``Spring 2020``) stays as typed."""
    text = (value or "").strip()
    match = _ISO_MONTH.match(text)
    if match and 1 <= int(match.group(2)) <= 12:
        return f"{_MONTHS[int(match.group(2)) - 1]} {match.group(1)}"
    return text


def date_range(start: str | None, end: str | None, *, open_ended: bool, present: str) -> str:
    """``Mar 2021 – Present``. ``open_ended`` says whether a missing end means "present"
    (experience) or simply unknown (education)."""
    first, last = _display_date(start), _display_date(end)
    if not last and open_ended and first:
        last = present
    if first and last and first != last:
        return f"{first} – {last}"
    return first or last


def _clean(text: str | None) -> str:
    return (text or "").strip()


def _clean_list(items: list[str]) -> list[str]:
    return [item.strip() for item in items if item and item.strip()]


def resume_view(resume: ResumeDoc, *, labels: dict[str, str] = LABELS_EN) -> dict[str, Any]:
    """The résumé as the templates read it: every field a string or list, empty parts
    already removed, dates already formatted."""
    contact = resume.contact
    return {
        "name": _clean(resume.name),
        "headline": _clean(resume.headline),
        "contact": _clean_list([contact.email or "", contact.phone or "", *contact.locations]),
        "links": _clean_list(contact.links),
        "summary": _clean(resume.summary),
        "experience": [
            {
                "position": _clean(entry.position),
                "employer": _clean(entry.employer),
                "location": _clean(entry.location),
                "dates": date_range(entry.start_date, entry.end_date, open_ended=True,
                                    present=labels["present"]),
                "bullets": _clean_list(entry.bullets),
            }
            for entry in resume.experience
            if _clean(entry.position) or _clean(entry.employer) or _clean_list(entry.bullets)
        ],
        "skills": [{"group": _clean(line.group), "items": _clean_list(line.items)}
                   for line in resume.skills if _clean_list(line.items)],
        "education": [
            {
                "institution": _clean(line.institution),
                "degree": _clean(line.degree),
                "dates": date_range(line.start_date, line.end_date, open_ended=False,
                                    present=labels["present"]),
            }
            for line in resume.education
            if _clean(line.institution) or _clean(line.degree)
        ],
        "languages": _clean_list(resume.languages),
        "certifications": _clean_list(resume.certifications),
    }


def letter_view(letter: CoverLetterDoc) -> dict[str, Any]:
    return {
        "sender_name": _clean(letter.sender_name),
        "sender_contact": _clean_list(letter.sender_contact),
        "date_line": _clean(letter.date_line),
        "recipient_lines": _clean_list(letter.recipient_lines),
        "salutation": _clean(letter.salutation),
        "paragraphs": _clean_list([paragraph.text for paragraph in letter.paragraphs]),
        "closing": _clean(letter.closing),
        "signature": _clean(letter.signature),
    }
