"""Résumé file bytes → text lines, one reader per format.

The format is decided from the bytes first (a PDF is a PDF whatever it is called), then
from the file name and content type. Readers keep line breaks and turn list items into
"• " lines, so :mod:`backend.domain.resume_structure` sees the same shape whatever the
source was.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Literal

from pydantic import ValidationError

from backend.domain.resume import JsonResume
from backend.profile_import import errors, limits, pdf_layout

Format = Literal["pdf", "docx", "text", "markdown", "jsonresume"]

MAX_BYTES = 5 * 1024 * 1024
MAX_PDF_PAGES = 20

_PDF_MAGIC = b"%PDF-"
_ZIP_MAGIC = b"PK\x03\x04"
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# Office puts a password-protected .docx into an OLE container with these streams; the
# directory stores stream names in UTF-16LE, so a byte search finds them without a parser.
_OLE_ENCRYPTION_STREAMS = ("EncryptionInfo".encode("utf-16-le"), "EncryptedPackage".encode("utf-16-le"))

_MARKDOWN_NAMES = (".md", ".markdown", ".mdown", ".mkd")
_TEXT_NAMES = (".txt", ".text")
_MARKDOWN_TYPES = ("text/markdown", "text/x-markdown")
_BULLET = "• "


@dataclass(frozen=True)
class Extracted:
    format: Format
    lines: list[str]
    pages: int | None = None
    resume: JsonResume | None = None  # only for JSON Resume: the document itself


def extract(data: bytes, *, file_name: str | None, content_type: str | None) -> Extracted:
    """Read ``data`` as a résumé file; raises a :class:`errors.ResumeImportError`."""
    if len(data) > MAX_BYTES:
        raise errors.ResumeTooLarge()
    if limits.looks_like_json(data):  # before any json.loads: nesting, from the brackets
        limits.check_json(data)
    kind = detect_format(data, file_name=file_name, content_type=content_type)
    if kind == "pdf":
        lines, pages = pdf_lines(data)
        return Extracted("pdf", limits.check_lines(lines), pages=pages)
    if kind == "docx":
        return Extracted("docx", limits.check_lines(docx_lines(data)))
    if kind == "jsonresume":
        resume = json_resume(data)
        return Extracted("jsonresume", decode_text(data).splitlines(), resume=resume)
    lines = limits.check_lines(decode_text(data).splitlines())
    if not any(line.strip() for line in lines):
        raise errors.ResumeUnreadable(errors.EMPTY_DOCUMENT)
    return Extracted(kind, lines)


# --------------------------------------------------------------------------- detection


def detect_format(data: bytes, *, file_name: str | None, content_type: str | None) -> Format:
    suffix = PurePath(file_name or "").suffix.lower()
    mime = (content_type or "").split(";")[0].strip().lower()
    # PDF readers accept the header anywhere in the first KiB (some tools prepend junk).
    if _PDF_MAGIC in data[:1024]:
        return "pdf"
    if data.startswith(_ZIP_MAGIC):
        return _zip_kind(data, suffix)
    if data.startswith(_OLE_MAGIC):
        if any(marker in data for marker in _OLE_ENCRYPTION_STREAMS):
            raise errors.ResumeEncrypted()
        raise errors.ResumeUnsupportedType(errors.OLD_WORD_FORMAT)
    if suffix in (".pdf", ".docx") or mime in ("application/pdf", _DOCX_TYPE):
        raise errors.ResumeUnreadable(errors.DAMAGED_FILE)  # named as one, but it is not
    if not data.strip():
        raise errors.ResumeUnreadable(errors.EMPTY_DOCUMENT)
    if not _looks_like_text(data):
        raise errors.ResumeUnsupportedType()
    if _is_json_resume(data):
        return "jsonresume"
    if suffix == ".json" or mime == "application/json":
        raise errors.ResumeUnsupportedType(errors.BAD_JSON_RESUME)
    return _text_kind(data, suffix, mime)


_DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def _zip_kind(data: bytes, suffix: str) -> Format:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
    except (zipfile.BadZipFile, ValueError):
        if suffix == ".docx":
            raise errors.ResumeUnreadable(errors.DAMAGED_FILE) from None
        raise errors.ResumeUnsupportedType() from None
    if "word/document.xml" in names:
        return "docx"
    raise errors.ResumeUnsupportedType()  # .odt, .xlsx, .pptx, any other archive


def _text_kind(data: bytes, suffix: str, mime: str) -> Format:
    if suffix in _MARKDOWN_NAMES or mime in _MARKDOWN_TYPES:
        return "markdown"
    if suffix in _TEXT_NAMES or mime == "text/plain":
        return "text"
    if suffix or (mime and not mime.startswith("text/") and mime != "application/octet-stream"):
        raise errors.ResumeUnsupportedType()  # an .rtf, .html, .csv... that happens to be text
    # No usable name: Markdown headings or list markers decide.
    head = decode_text(data[:20_000])
    return "markdown" if re.search(r"^#{1,6}\s+\S", head, re.MULTILINE) else "text"


def _looks_like_text(data: bytes) -> bool:
    sample = data[:8192]
    if b"\x00" in sample:
        return False
    control = sum(1 for byte in sample if byte < 32 and byte not in (9, 10, 12, 13))
    return control <= len(sample) // 100


def _is_json_resume(data: bytes) -> bool:
    text = decode_text(data).lstrip()
    if not text.startswith("{"):
        return False
    try:
        document = json.loads(text)
    except ValueError:
        return False
    return isinstance(document, dict) and ("basics" in document or "work" in document)


# --------------------------------------------------------------------------- text and JSON


def decode_text(data: bytes) -> str:
    """UTF-8 (with or without BOM), else Windows-1252, the usual legacy Windows encoding;
    Latin-1 as the last resort because it can decode any byte."""
    for encoding in ("utf-8-sig", "cp1252", "latin-1"):
        try:
            text = data.decode(encoding)
            break
        except UnicodeDecodeError:
            continue
    return text.replace("\r\n", "\n").replace("\r", "\n")


def json_resume(data: bytes) -> JsonResume:
    limits.check_json(data)
    try:
        return JsonResume.model_validate(json.loads(decode_text(data)))
    except (ValueError, ValidationError):
        raise errors.ResumeUnreadable(errors.BAD_JSON_RESUME) from None


# --------------------------------------------------------------------------- DOCX


def docx_lines(data: bytes) -> list[str]:
    import docx  # python-docx; imported here so text imports do not pay for lxml
    from docx.opc.exceptions import PackageNotFoundError

    limits.check_docx(data)  # from the zip directory, before anything is unzipped
    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile, SyntaxError):
        raise errors.ResumeUnreadable(errors.DAMAGED_FILE) from None
    except Exception as exc:  # lxml's XMLSyntaxError and friends: a damaged part
        if type(exc).__module__.startswith(("lxml", "docx")):
            raise errors.ResumeUnreadable(errors.DAMAGED_FILE) from None
        raise
    styles = _docx_styles(document)
    lines: list[str] = []
    # Contact details often sit in the page header of Word templates.
    # (A header "linked to previous" has no part of its own; reading it would add one.)
    if document.sections and not document.sections[0].header.is_linked_to_previous:
        lines.extend(_docx_block_lines(document.sections[0].header, styles))
    lines.extend(_docx_block_lines(document, styles))
    if not any(line.strip() for line in lines):
        raise errors.ResumeUnreadable(errors.EMPTY_DOCUMENT)
    return lines


@dataclass(frozen=True)
class _DocxStyles:
    lists: frozenset[str]  # ids of paragraph styles that make list items
    headings: dict[str, int]  # id of a heading style → its level


_HEADING_STYLE = re.compile(r"^(?:heading|überschrift|titre|título|titolo|kop)\s*(\d)$")


def _docx_styles(document: Any) -> _DocxStyles:
    """List styles are named "List…" in English Word, or numbered by the style itself
    (what localised templates' bullet styles do); heading styles are never lists, even
    numbered (outline numbering). Read once per document: python-docx resolves
    ``paragraph.style`` by a slow scan."""
    lists, headings = set(), {}
    for style in document.styles.element.style_lst:
        name = (style.name_val or "").lower()
        heading = _HEADING_STYLE.match(name)
        if heading:
            headings[style.styleId] = int(heading.group(1))
            continue
        properties = style.pPr
        if name.startswith("list") or (properties is not None and properties.numPr is not None):
            lists.add(style.styleId)
    return _DocxStyles(frozenset(lists), headings)


def _docx_block_lines(container: Any, styles: _DocxStyles) -> list[str]:
    """Paragraphs and tables of a document, header or table cell, in document order."""
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    lines: list[str] = []
    for item in container.iter_inner_content():
        if isinstance(item, Paragraph):
            lines.extend(_paragraph_lines(item, styles))
        elif isinstance(item, Table):
            lines.extend(_table_lines(item, styles))
    return lines


def _table_lines(table: Any, styles: _DocxStyles) -> list[str]:
    """Row by row, cell by cell: a layout table (sidebar cell + main cell, or one row per
    job) then reads like the page. Merged cells repeat in python-docx; read each once.
    (The set holds the elements themselves: an id() of a freed lxml proxy gets reused.)"""
    lines: list[str] = []
    seen: set[Any] = set()
    for row in table.rows:
        for cell in row.cells:
            if cell._tc in seen:
                continue
            seen.add(cell._tc)
            lines.extend(_docx_block_lines(cell, styles))
            lines.append("")
    return lines


def _paragraph_lines(paragraph: Any, styles: _DocxStyles) -> list[str]:
    text = paragraph.text.replace("\t", "  ")
    if not text.strip():
        return [""]
    parts = text.split("\n")  # python-docx renders soft line breaks as "\n"
    level = styles.headings.get(paragraph._p.style)
    if level:  # a Markdown heading: the section rules read its level
        return ["#" * min(level, 6) + " " + parts[0].strip(), *parts[1:]]
    properties = paragraph._p.pPr
    numbered = properties is not None and properties.numPr is not None
    if numbered or paragraph._p.style in styles.lists:
        parts[0] = _BULLET + parts[0].strip()
    return parts


# --------------------------------------------------------------------------- PDF


def pdf_lines(data: bytes) -> tuple[list[str], int]:
    import pdfplumber
    from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect
    from pdfplumber.utils.exceptions import PdfminerException

    limits.check_pdf(data, MAX_PDF_PAGES)  # pages, content per page, nesting
    try:
        with pdfplumber.open(io.BytesIO(data)) as pdf:
            page_count = len(pdf.pages)
            if page_count > MAX_PDF_PAGES:
                raise errors.ResumeTooLarge(errors.TOO_MANY_PAGES)
            plain_hyphens = pdf_layout.hyphenating_producer(pdf.metadata or {})
            pages = []
            for page in pdf.pages:
                pages.append((page.height, pdf_layout.page_rows(page), pdf_layout.bullet_shapes(page)))
                page.close()  # drop its parsed objects: memory stays one page deep
    except PdfminerException as exc:
        cause = exc.args[0] if exc.args else None
        if isinstance(cause, PDFPasswordIncorrect | PDFEncryptionError):
            raise errors.ResumeEncrypted() from None
        raise errors.ResumeUnreadable(errors.DAMAGED_FILE) from None
    kept = pdf_layout.drop_running_lines([(height, rows) for height, rows, _ in pages])
    lines: list[str] = []
    for rows, (_, _, markers) in zip(kept, pages, strict=True):
        if lines:
            lines.append("")
        lines.extend(pdf_layout.page_lines(rows, markers))
    lines = pdf_layout.resolve_line_breaks(lines, plain_hyphens=plain_hyphens)
    if not any(line.strip() for line in lines):
        raise errors.ResumeUnreadable(errors.SCANNED_PDF)
    return lines, page_count
