"""What a résumé file may cost to read, checked before the expensive reading starts.

A résumé is a few pages of text. A file far past that — a Word file that unzips to
gigabytes, a PDF page holding a book's worth of glyphs, a JSON document nested
thousands deep — is refused with :class:`~backend.profile_import.errors.ResumeTooComplex`
before the parser that would choke on it runs. Each check reads only what it must: the
zip directory (nothing is unzipped), the PDF's page tree and its content streams
(decompressed with a bound), the JSON text's brackets (nothing is parsed).

These checks bound the common cases cheaply; the child process that runs an import from
the API (:mod:`backend.profile_import.isolated`) bounds everything else with a memory
cap and a deadline.

The bounds, measured on real résumés: a dense three-page Awesome-CV résumé is 9,500
characters, its longest line 148, its pages 18–36 KB of content stream with 2,300–8,300
bytes of text operands; a Word résumé's ``document.xml`` is well under 1 MB and its parts
compress at most 32:1 (styles), python-docx's own output 63:1. Past them, the unbounded
readers took: one PDF page of 6.5 MB content (5 million glyphs, 0.4 MB compressed) over
1.5 GB; 2,000 dense text lines on one page 17 s and 270 MB; a 2.5 MB .docx inflating to
840 MB of XML over 840 MB before failing; a 5 MB one-line text 4 s; a JSON Resume
nested 10,000 deep a RecursionError (an untyped 500).
"""

from __future__ import annotations

import io
import re
import zipfile
from typing import Any

from backend.profile_import import errors

MAX_TEXT_CHARS = 200_000   # extracted text: 20x a dense three-page résumé
MAX_LINE_CHARS = 20_000    # one line (a Word paragraph is one): a few pages' worth

MAX_ZIP_ENTRIES = 1_000              # a Word file has 10–30 parts, a few hundred with media
MAX_DOCX_UNCOMPRESSED = 64 * 1024**2  # all parts, media included
MAX_DOCX_XML_PART = 8 * 1024**2      # one XML part: python-docx parses every one it knows
MAX_ZIP_RATIO = 200                  # uncompressed : compressed, for parts over RATIO_FROM
RATIO_FROM = 1024**2

MAX_PAGE_CONTENT_BYTES = 1024**2   # a page's decoded content streams (and its forms)
MAX_PAGE_TEXT_BYTES = 40_000       # bytes of string operands on one page: glyphs, roughly
MAX_PDF_TEXT_BYTES = 100_000       # the same over the whole document
MAX_NESTING = 64                   # arrays / dictionaries in a PDF object, a content
                                   # stream or a JSON document (JSON Resume needs 5)
MAX_JSON_CONTAINERS = 100_000      # arrays + objects in a JSON document
MAX_PDF_OBJECT_NODES = 100_000     # values in one page's dictionary


def too_complex() -> errors.ResumeTooComplex:
    return errors.ResumeTooComplex()


# --------------------------------------------------------------------------- text


def check_lines(lines: list[str]) -> list[str]:
    """The extracted lines, if they stay within the text bounds (returned as they are)."""
    if sum(map(len, lines)) + len(lines) > MAX_TEXT_CHARS:
        raise too_complex()
    if max(map(len, lines), default=0) > MAX_LINE_CHARS:
        raise too_complex()
    return lines


# --------------------------------------------------------------------------- JSON

# A JSON string, escapes included (the unrolled form: no backtracking per character).
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_KEEP_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_AS_SQUARE = bytes.maketrans(b"{}", b"[]")


def looks_like_json(data: bytes) -> bool:
    head = data[:64].lstrip(b"\xef\xbb\xbf \t\r\n")
    return head.startswith((b"{", b"["))


def check_json(data: bytes) -> None:
    """Nesting depth and container count of a JSON text, from its brackets alone (the
    bytes are scanned as they are: every encoding the reader accepts keeps ASCII as is)."""
    brackets = _JSON_STRING.sub(b"", data).translate(None, _KEEP_BRACKETS)
    if brackets.count(b"[") + brackets.count(b"{") > MAX_JSON_CONTAINERS:
        raise too_complex()
    if _deeper_than(brackets, MAX_NESTING):
        raise too_complex()


def _deeper_than(brackets: bytes, limit: int) -> bool:
    """Whether a string of ``[]{}`` nests deeper than ``limit`` (the kinds are not told
    apart: the nesting is what costs). Each pass removes the innermost pairs at C speed;
    a string that stops shrinking is unbalanced, and its unclosed openers count too."""
    brackets = brackets.translate(_AS_SQUARE)
    for passes in range(limit + 1):
        shorter = brackets.replace(b"[]", b"")
        if len(shorter) == len(brackets):
            return passes + brackets.count(b"[") > limit
        brackets = shorter
    return True


# --------------------------------------------------------------------------- DOCX


def check_docx(data: bytes) -> None:
    """The zip directory of a Word file: entries, total and per-part uncompressed size,
    compression ratio. Nothing is decompressed (zipfile reads the central directory;
    a part that inflates past its declared size fails its CRC when it is read)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, ValueError, EOFError):
        return  # the reader reports a damaged file in its own words
    if len(entries) > MAX_ZIP_ENTRIES:
        raise too_complex()
    if sum(entry.file_size for entry in entries) > MAX_DOCX_UNCOMPRESSED:
        raise too_complex()
    for entry in entries:
        name = entry.filename.lower()
        if name.endswith((".xml", ".rels")) and entry.file_size > MAX_DOCX_XML_PART:
            raise too_complex()
        if entry.file_size > RATIO_FROM and (
                entry.file_size > MAX_ZIP_RATIO * max(1, entry.compress_size)):
            raise too_complex()


# --------------------------------------------------------------------------- PDF

_PDF_LITERAL = re.compile(rb"\((?:[^()\\]|\\.)*\)", re.DOTALL)  # nested parens: approximate
_PDF_HEX = re.compile(rb"<[0-9A-Fa-f\s]*>")
_PDF_STREAM = re.compile(rb"stream\r?\n.*?endstream", re.DOTALL)


def check_pdf(data: bytes, max_pages: int) -> None:
    """Walk the page tree (stopping past ``max_pages``) and measure each page's content:
    decoded size, string operands (glyphs), bracket nesting; and the page dictionary's own
    depth. A file pdfminer cannot open is left to the reader, which says why."""
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdfparser import PDFParser

    _check_pdf_syntax(data)
    try:
        document = PDFDocument(PDFParser(io.BytesIO(data)))
        text_total = 0
        for number, page in enumerate(PDFPage.create_pages(document), start=1):
            if number > max_pages:
                raise errors.ResumeTooLarge(errors.TOO_MANY_PAGES)
            _check_object(page.attrs)
            text_total += _check_page_content(page)
            if text_total > MAX_PDF_TEXT_BYTES:
                raise too_complex()
    except errors.ResumeImportError:
        raise
    except (RecursionError, MemoryError):
        raise too_complex() from None
    except Exception:  # noqa: BLE001 - damaged or encrypted: the reader's own words follow
        return


def _check_pdf_syntax(data: bytes) -> None:
    """Nesting in the file's own objects, outside its streams, from the bytes: pdfminer
    takes seconds to parse an object nested 100,000 deep before the page walk sees it."""
    objects = _PDF_STREAM.sub(b" ", data)
    objects = _PDF_HEX.sub(b" ", _PDF_LITERAL.sub(b" ", objects).replace(b"<<", b"{")
                           .replace(b">>", b"}"))
    if _deeper_than(objects.translate(None, _KEEP_BRACKETS), MAX_NESTING):
        raise too_complex()


def _check_object(root: Any) -> None:
    """Depth and size of a PDF object (references are not followed)."""
    stack = [(root, 1)]
    nodes = 0
    while stack:
        value, depth = stack.pop()
        nodes += 1
        if depth > MAX_NESTING or nodes > MAX_PDF_OBJECT_NODES:
            raise too_complex()
        if isinstance(value, dict):
            stack.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            stack.extend((item, depth + 1) for item in value)


def _check_page_content(page: Any) -> int:
    """The page's content streams and Form XObjects, decoded within the budget; answers
    the bytes of string operands it shows."""
    from pdfminer.pdftypes import PDFStream, resolve1

    streams = [resolve1(ref) for ref in (page.contents or [])]
    resources = resolve1(page.resources) or {}
    xobjects = resolve1(resources.get("XObject")) if isinstance(resources, dict) else None
    for ref in (xobjects.values() if isinstance(xobjects, dict) else ()):
        xobject = resolve1(ref)
        subtype = xobject.get("Subtype") if isinstance(xobject, PDFStream) else None
        if getattr(subtype, "name", None) == "Form":
            streams.append(xobject)
    budget = MAX_PAGE_CONTENT_BYTES
    text = 0
    for stream in streams:
        if not isinstance(stream, PDFStream):
            continue
        content = _bounded_data(stream, budget)
        budget -= len(content)
        if budget < 0:
            raise too_complex()
        text += _content_text_bytes(content)
    if text > MAX_PAGE_TEXT_BYTES:
        raise too_complex()
    return text


def _bounded_data(stream: Any, budget: int) -> bytes:
    """A stream's decoded bytes, at most ``budget + 1`` of them when it is plainly
    Flate-compressed (the usual content stream); other encodings decode in full."""
    import zlib

    from pdfminer.pdftypes import LITERALS_FLATE_DECODE, resolve1

    filters = stream.get_filters()
    if stream.decipher is None and stream.rawdata is not None:
        if not filters:
            return stream.rawdata
        if (len(filters) == 1 and filters[0][0] in LITERALS_FLATE_DECODE
                and not resolve1(filters[0][1])):
            try:
                return zlib.decompressobj().decompress(stream.rawdata, budget + 1)
            except zlib.error:
                return b""  # pdfminer has its own fallbacks for a damaged stream
    return stream.get_data()


def _content_text_bytes(content: bytes) -> int:
    """Bytes of string operands in a content stream (what text operators show), and a
    check of its nesting: only TJ arrays and small property dictionaries nest there."""
    literal = sum(len(match) - 2 for match in _PDF_LITERAL.findall(content))
    rest = _PDF_LITERAL.sub(b" ", content)
    hexadecimal = sum((len(match) - 2) // 2 for match in _PDF_HEX.findall(rest))
    brackets = _PDF_HEX.sub(b" ", rest.replace(b"<<", b"{").replace(b">>", b"}"))
    if _deeper_than(brackets.translate(None, _KEEP_BRACKETS), MAX_NESTING):
        raise too_complex()
    return literal + hexadecimal
