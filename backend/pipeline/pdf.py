"""Typeset tailored résumés and cover letters to PDF with Typst.

The templates live in ``resources/templates`` (``resume-classic.typ``, ``resume-compact.typ``,
``letter.typ``). The documents reach them as one JSON string in ``sys.inputs`` and are placed
as plain strings, never as markup, so user text such as ``#sys.exit()``, ``*bold*`` or ``$``
prints literally.

Fonts: Typst's embedded Libertinus Serif carries Latin, Greek and Cyrillic; a bundled subset
of Noto Sans CJK JP (``resources/fonts``) is the fallback for Chinese, Japanese and Korean.
System fonts are ignored so every machine produces the same bytes. Fonts are embedded and
subset by Typst; the text is real, selectable text in reading order.

Output is deterministic for a fixed ``creation_date`` and is written atomically (temp file
in the target directory + ``os.replace``), so a crash never leaves half a PDF.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
import threading
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import typst

from backend.pipeline.documents import CoverLetterDoc, ResumeDoc

Paper = Literal["a4", "letter"]
PaperChoice = Literal["auto", "a4", "letter"]
MaterialKind = Literal["resume", "cover_letter"]

TEMPLATES = ("classic", "compact")
LETTER_TEMPLATE = "letter"

# Countries that use US Letter (ISO 3166-1 alpha-2); everyone else uses A4.
LETTER_COUNTRIES = frozenset({
    "US", "CA", "MX", "PH", "CL", "CO", "VE", "GT", "DO", "PR", "CR", "SV", "NI", "PA",
    "BZ", "BS", "BO", "AS", "GU", "MP", "UM", "VI",
})

LABELS_EN = {
    "experience": "Experience",
    "skills": "Skills",
    "education": "Education",
    "languages": "Languages",
    "certifications": "Certifications",
    "present": "Present",
}

_TYPST_PAPER = {"a4": "a4", "letter": "us-letter"}
# A file name is limited in bytes, not characters (NAME_MAX: 255 bytes on Linux and macOS;
# 255 UTF-16 units on Windows, which a 120-byte UTF-8 name never exceeds). 120 bytes is 120
# Latin letters but only 40 CJK characters or 30 emoji; it also leaves room for the
# temporary name the atomic write uses next to it (``.<name>.XXXXXXXX.tmp``).
_MAX_FILE_NAME_BYTES = 120


@dataclass(frozen=True)
class PdfInfo:
    path: Path
    pages: int
    bytes: int
    sha256: str


# --------------------------------------------------------------------------- choices


def paper_for(country_code: str | None, override: PaperChoice = "auto") -> Paper:
    """The paper a person in ``country_code`` expects: Letter in the Americas' Letter
    countries and the Philippines, A4 elsewhere and when the country is unknown."""
    if override in ("a4", "letter"):
        return override
    if override != "auto":
        raise ValueError(f"unsupported paper override: {override!r}")
    code = (country_code or "").strip().upper()
    return "letter" if code in LETTER_COUNTRIES else "a4"


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


def material_file_name(full_name: str | None, kind: MaterialKind, company: str | None) -> str:
    """``"<Full Name> - Resume - <Company>.pdf"`` (or ``Cover letter``), safe on Windows,
    macOS and Linux: no reserved or control characters, accents kept, at most 120 bytes
    in UTF-8 (the name gets up to half of that, the company what is left; a character is
    never cut in half and the ``.pdf`` extension always stays)."""
    labels = {"resume": "Resume", "cover_letter": "Cover letter"}
    if kind not in labels:
        raise ValueError(f"unsupported material kind: {kind!r}")
    name = cut_to_bytes(_file_name_part(full_name), _MAX_FILE_NAME_BYTES // 2).rstrip(" .")
    parts = [part for part in (name, labels[kind]) if part]
    room = _MAX_FILE_NAME_BYTES - _utf8_len(" - ".join(parts)) - len(" - ") - len(".pdf")
    company_part = cut_to_bytes(_file_name_part(company), room).rstrip(" .")
    if company_part:
        parts.append(company_part)
    return " - ".join(parts) + ".pdf"


# --------------------------------------------------------------------------- view model


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


# --------------------------------------------------------------------------- typst


def _resource_dir(name: str) -> Path:
    return Path(str(resources.files("resources") / name))


@cache
def _fonts() -> typst.Fonts:
    # Built once per process: scanning and parsing the font files is a large share of a
    # cold compile, and the font book never changes while the app runs.
    return typst.Fonts(include_system_fonts=False, include_embedded_fonts=True,
                       font_paths=[str(_resource_dir("fonts"))])


_compilers: dict[str, typst.Compiler] = {}
_compilers_lock = threading.Lock()


@contextlib.contextmanager
def _compiler(template: str):
    """One Compiler per template, reused so Typst's caches stay warm; a lock because a
    Compiler keeps state (its inputs) between calls and the worker renders in threads."""
    with _compilers_lock:
        compiler = _compilers.get(template)
        if compiler is None:
            folder = _resource_dir("templates")
            compiler = typst.Compiler(str(folder / f"{template}.typ"), root=str(folder),
                                      font_paths=_fonts(), ignore_system_fonts=True)
            _compilers[template] = compiler
        yield compiler


def _creation_date(value: datetime | None) -> datetime:
    if value is None:
        return datetime.now(UTC).replace(microsecond=0)
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)  # never the machine's local zone: stay deterministic
    return value


def compile_pdf(template: str, payload: dict[str, Any], *, creation_date: datetime | None) -> bytes:
    """Compile ``resources/templates/<template>.typ`` with ``payload`` as its data."""
    inputs = {"data": json.dumps(payload, ensure_ascii=False)}
    with _compiler(template) as compiler:
        return compiler.compile(sys_inputs=inputs, timestamp=_creation_date(creation_date))


def _meta(title: str, author: str, paper: Paper) -> dict[str, str]:
    if paper not in _TYPST_PAPER:
        raise ValueError(f"unsupported paper: {paper!r}")
    return {"title": title, "author": author, "paper": _TYPST_PAPER[paper], "lang": "en"}


# --------------------------------------------------------------------------- output


def _write_atomic(data: bytes, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # The temporary name stays within NAME_MAX whatever the target name is.
    prefix = f".{cut_to_bytes(path.name, 200)}."
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=prefix, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise
    if hasattr(os, "O_DIRECTORY"):  # make the rename itself durable (POSIX)
        with contextlib.suppress(OSError):
            dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
            try:
                os.fsync(dir_fd)
            finally:
                os.close(dir_fd)


_PAGE_OBJECT = re.compile(rb"/Type\s*/Page(?![a-zA-Z])")


def _page_count(data: bytes) -> int:
    # Typst writes uncompressed page dictionaries, so counting /Type /Page is exact and
    # avoids a PDF parser at render time.
    return len(_PAGE_OBJECT.findall(data))


def _save(data: bytes, path: Path | str) -> PdfInfo:
    target = Path(path)
    _write_atomic(data, target)
    return PdfInfo(path=target, pages=_page_count(data), bytes=len(data),
                   sha256=hashlib.sha256(data).hexdigest())


def resume_pdf_bytes(resume: ResumeDoc, *, template: str = "classic", paper: Paper = "a4",
                     creation_date: datetime | None = None) -> bytes:
    if template not in TEMPLATES:
        raise ValueError(f"unknown résumé template {template!r}; choose one of {TEMPLATES}")
    payload = {
        "meta": _meta(f"{resume.name} - Resume", resume.name, paper),
        "labels": LABELS_EN,
        "resume": resume_view(resume),
    }
    return compile_pdf(f"resume-{template}", payload, creation_date=creation_date)


def cover_letter_pdf_bytes(letter: CoverLetterDoc, *, paper: Paper = "a4",
                           creation_date: datetime | None = None) -> bytes:
    payload = {
        "meta": _meta(f"{letter.sender_name} - Cover letter", letter.sender_name, paper),
        "letter": letter_view(letter),
    }
    return compile_pdf(LETTER_TEMPLATE, payload, creation_date=creation_date)


def render_resume_pdf(resume: ResumeDoc, path: Path | str, *, template: str = "classic",
                      paper: Paper = "a4", creation_date: datetime | None = None) -> PdfInfo:
    """Render ``resume`` to ``path`` (atomically). Same input + same ``creation_date``
    → byte-identical output."""
    data = resume_pdf_bytes(resume, template=template, paper=paper, creation_date=creation_date)
    return _save(data, path)


def render_cover_letter_pdf(letter: CoverLetterDoc, path: Path | str, *, paper: Paper = "a4",
                            creation_date: datetime | None = None) -> PdfInfo:
    """Render ``letter`` to ``path`` (atomically), on one page where the text allows."""
    data = cover_letter_pdf_bytes(letter, paper=paper, creation_date=creation_date)
    return _save(data, path)
