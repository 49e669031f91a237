"""Does a generated résumé read back? The applicant-tracking-system check.

An applicant-tracking system reads a résumé file in one of two ways: it parses it into
entries (employer, title, dates, bullets) or it keeps the plain text for keyword search.
Both are tried here on each generated file, PDF and Word: JobCtrl's own importer (the one
that reads the job seeker's résumé, :func:`backend.profile_import.import_resume`) and a
plain text extraction (pdfminer for a PDF, the paragraphs' text for a Word file). Every
employer, title, date range and bullet the résumé shows must come back, in order.

Words are compared, not characters: punctuation, case and spacing may differ (an en dash
read as a hyphen is fine), a word split or glued together is not ("internallinking").
A title or employer comes back when its words stand together in its entry's heading, in
whichever field the importer put them ("Registered Nurse – Medical ICU" split into a
title and a unit still reads as that title); dates must match the entry's.
"""

from __future__ import annotations

import io
import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Literal

from backend.pipeline.documents import ResumeDoc
from backend.pipeline.material_view import LABELS_EN, date_range, resume_view

FileFormat = Literal["pdf", "docx"]
FORMAT_NAMES = {"pdf": "PDF", "docx": "Word file"}
_WORDS = re.compile(r"\w+")


@dataclass(frozen=True)
class AtsCheck:
    """``ok``, or what did not come back: "the dates of 'Analyst at Shopify' (PDF, plain
    text)"."""

    missing: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.missing

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "missing": list(self.missing)}


def words(text: str | None) -> list[str]:
    return _WORDS.findall(unicodedata.normalize("NFKC", text or "").casefold())


def find_run(haystack: list[str], needle: list[str], start: int) -> int | None:
    """The end of the first run of ``needle`` in ``haystack`` at or after ``start``."""
    if not needle:
        return start
    first, size = needle[0], len(needle)
    for index in range(start, len(haystack) - size + 1):
        if haystack[index] == first and haystack[index:index + size] == needle:
            return index + size
    return None


@dataclass(frozen=True)
class _Entry:
    label: str
    title: str
    employer: str
    dates: str
    bullets: tuple[str, ...]


def _expected(resume: ResumeDoc) -> list[_Entry]:
    entries = []
    for number, entry in enumerate(resume_view(resume)["experience"], start=1):
        title, employer = entry["position"], entry["employer"]
        label = f"{title} at {employer}" if title and employer else title or employer
        entries.append(_Entry(label or f"entry {number}", title, employer, entry["dates"],
                              tuple(entry["bullets"])))
    return entries


def _bullet_name(number: int, bullet: str) -> str:
    start = bullet if len(bullet) <= 50 else bullet[:49].rstrip() + "…"
    return f"bullet {number} (“{start}”)"


def _in_plain_text(entries: list[_Entry], text: str) -> list[str]:
    """What of each entry is not in the text, in order: an entry's heading parts after the
    entry before, its bullets after its heading and after each other."""
    haystack, cursor, missing = words(text), 0, []
    for entry in entries:
        heading_end = cursor
        for part, value in (("title", entry.title), ("employer", entry.employer),
                            ("dates", entry.dates)):
            end = find_run(haystack, words(value), cursor) if value else cursor
            if end is None:
                missing.append(f"the {part} of '{entry.label}'")
            else:
                heading_end = max(heading_end, end)
        cursor = heading_end
        for number, bullet in enumerate(entry.bullets, start=1):
            end = find_run(haystack, words(bullet), cursor)
            if end is None:
                missing.append(f"{_bullet_name(number, bullet)} of '{entry.label}'")
            else:
                cursor = end
    return missing


def _heading_words(work: Any) -> list[str]:
    return words(" ".join(filter(None, (work.position, work.name, work.location))))


def _names_entry(work: Any, entry: _Entry) -> bool:
    heading = _heading_words(work)
    return all(find_run(heading, words(value), 0) is not None
               for value in (entry.title, entry.employer) if value)


def _in_import(entries: list[_Entry], work: list[Any]) -> list[str]:
    """What of each entry the importer did not give back: the entries are looked for in
    order; each one's dates and bullets must be those of the entry it found."""
    missing: list[str] = []
    cursor = 0
    for entry in entries:
        found = next((index for index in range(cursor, len(work))
                      if _names_entry(work[index], entry)), None)
        if found is None:
            missing.append(f"'{entry.label}'")
            continue
        cursor = found + 1
        got = work[found]
        dates = date_range(got.start_date, got.end_date, open_ended=True,
                           present=LABELS_EN["present"])
        if words(dates) != words(entry.dates):
            missing.append(f"the dates of '{entry.label}'")
        highlights = [words(line) for line in got.highlights]
        position = 0
        for number, bullet in enumerate(entry.bullets, start=1):
            wanted = words(bullet)
            index = next((i for i in range(position, len(highlights)) if highlights[i] == wanted),
                         None)
            if index is None:
                missing.append(f"{_bullet_name(number, bullet)} of '{entry.label}'")
            else:
                position = index + 1
    return missing


def plain_text(data: bytes, file_format: FileFormat) -> str:
    """The file's text as a keyword search sees it."""
    if file_format == "pdf":
        from pdfminer.high_level import extract_text

        return extract_text(io.BytesIO(data))
    import docx

    return "\n".join(paragraph.text for paragraph in docx.Document(io.BytesIO(data)).paragraphs)


def _imported_work(data: bytes, file_format: FileFormat) -> list[Any] | None:
    from backend.profile_import import ResumeImportError, import_resume

    try:
        result = import_resume(data, file_name=f"resume.{file_format}", content_type=None)
    except ResumeImportError:
        return None
    return list(result.resume.work)


def check_resume(resume: ResumeDoc, data: bytes, file_format: FileFormat) -> AtsCheck:
    """Read ``data`` (the file rendered from ``resume``) back both ways; CPU work (run it
    off an event loop)."""
    if file_format not in FORMAT_NAMES:
        raise ValueError(f"unsupported file format: {file_format!r}")
    entries = _expected(resume)
    name = FORMAT_NAMES[file_format]
    try:
        text = plain_text(data, file_format)
    except Exception:  # noqa: BLE001 - a file its own writer made; say so, do not stop the render
        text = None
    if text is None:
        missing = [f"the whole {name}: its text could not be read"]
    else:
        missing = [f"{item} ({name}, plain text)" for item in _in_plain_text(entries, text)]
    work = _imported_work(data, file_format)
    if work is None:
        missing.append(f"the whole {name}: the importer could not read it")
    else:
        missing += [f"{item} ({name}, read into entries)" for item in _in_import(entries, work)]
    return AtsCheck(tuple(missing))
