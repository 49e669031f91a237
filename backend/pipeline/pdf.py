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
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import typst

from backend.pipeline.documents import CoverLetterDoc, ResumeDoc
from backend.pipeline.material_view import (  # noqa: F401 - the names callers use from here
    LABELS_EN,
    MaterialKind,
    cut_to_bytes,
    date_range,
    letter_view,
    material_file_name,
    resume_view,
)

Paper = Literal["a4", "letter"]
PaperChoice = Literal["auto", "a4", "letter"]

TEMPLATES = ("classic", "compact")
LETTER_TEMPLATE = "letter"

# Countries that use US Letter (ISO 3166-1 alpha-2); everyone else uses A4.
LETTER_COUNTRIES = frozenset({
    "US", "CA", "MX", "PH", "CL", "CO", "VE", "GT", "DO", "PR", "CR", "SV", "NI", "PA",
    "BZ", "BS", "BO", "AS", "GU", "MP", "UM", "VI",
})

_TYPST_PAPER = {"a4": "a4", "letter": "us-letter"}
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


def write_atomic(data: bytes, path: Path) -> None:
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


def save_pdf(data: bytes, path: Path | str) -> PdfInfo:
    """Write rendered PDF bytes to ``path`` (atomically)."""
    target = Path(path)
    write_atomic(data, target)
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
    return save_pdf(data, path)


def render_cover_letter_pdf(letter: CoverLetterDoc, path: Path | str, *, paper: Paper = "a4",
                            creation_date: datetime | None = None) -> PdfInfo:
    """Render ``letter`` to ``path`` (atomically), on one page where the text allows."""
    data = cover_letter_pdf_bytes(letter, paper=paper, creation_date=creation_date)
    return save_pdf(data, path)
