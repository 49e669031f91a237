"""BASELINE ONLY: the pre-Typst renderer (fpdf2 core fonts), kept for bench/materials_render.py.

This is ``backend/pipeline/pdf.py`` as it was before résumés and letters moved to Typst
(``git show`` of that commit), unchanged below this docstring. Nothing in the app imports
it; it exists so the benchmark can measure the new renderer against the old one in the
same run. Do not fix or extend it.

Original description: résumés and cover letters drawn with fpdf2's built-in core fonts.
No font files are bundled: text is drawn with Helvetica in the Windows-1252 encoding
(fpdf2's ``core_fonts_encoding``), which covers Latin-1 plus €, curly quotes, en/em
dashes, bullets and ellipses. Anything beyond that goes through :func:`pdf_safe_text`,
one deterministic transliteration (ł → l, ő → o, → → "->", emoji dropped, unknown → ?).
Output is deterministic for a fixed ``creation_date`` and is written atomically.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from fpdf import FPDF
from fpdf.enums import MethodReturnValue, XPos, YPos

PageSize = Literal["letter", "a4"]

CREATOR = "JobCtrl"
CORE_FONTS_ENCODING = "windows-1252"


# --------------------------------------------------------------------------- documents


@dataclass(frozen=True)
class ResumeSection:
    title: str
    items: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ResumeDocument:
    name: str
    headline: str
    contact_lines: list[str]
    summary: str
    sections: list[ResumeSection]


@dataclass(frozen=True)
class CoverLetterDocument:
    sender_name: str
    sender_contact: list[str]
    date_line: str
    recipient_lines: list[str]
    salutation: str
    paragraphs: list[str]
    closing: str
    signature: str


@dataclass(frozen=True)
class PdfInfo:
    path: Path
    pages: int
    bytes: int
    sha256: str


# --------------------------------------------------------------------------- text safety

_REPLACEMENTS: dict[str, str] = {
    # Letters without a Windows-1252 form that NFKD cannot simplify.
    "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ħ": "h", "Ħ": "H", "ı": "i", "ŀ": "l",
    "Ŀ": "L", "ŧ": "t", "Ŧ": "T", "ĸ": "k", "ŋ": "ng", "Ŋ": "NG", "ə": "e", "Ə": "E",
    # Punctuation and symbols.
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2015": "\u2014", "\u2212": "-",
    "\u2043": "-", "\u2032": "'", "\u2033": '"', "\u2035": "'", "\u201b": "'",
    "\u201f": '"', "\u2039": "<", "\u203a": ">", "\u2190": "<-", "\u2192": "->",
    "\u2194": "<->", "\u21d2": "=>", "\u2264": "<=", "\u2265": ">=", "\u2260": "!=",
    "\u2248": "~", "\u221e": "inf", "\u2713": "", "\u2714": "", "\u2717": "x",
    "\u2605": "*", "\u2606": "*", "\u25cf": "\u2022", "\u25aa": "\u2022", "\u25e6": "\u2022",
    "\u2023": "\u2022", "\u2219": "\u2022", "\u00b7": "\u00b7", "\u2116": "No.",
    "\u20b9": "INR", "\u20bd": "RUB", "\u20ba": "TRY", "\u20a9": "KRW", "\u20aa": "ILS",
    "\u20b4": "UAH", "\u20ab": "VND", "\u20b1": "PHP", "\u20bf": "BTC",
    # Spaces and invisible marks.
    "\u2002": " ", "\u2003": " ", "\u2004": " ", "\u2005": " ", "\u2006": " ",
    "\u2007": " ", "\u2008": " ", "\u2009": " ", "\u200a": " ", "\u202f": " ",
    "\u205f": " ", "\u3000": " ", "\t": " ", "\u200b": "", "\u200c": "", "\u200d": "",
    "\u2060": "", "\ufeff": "", "\u00ad": "",
}  # fmt: skip


def _encodable(char: str) -> bool:
    try:
        char.encode(CORE_FONTS_ENCODING)
    except UnicodeEncodeError:
        return False
    return True


def _is_pictograph(char: str) -> bool:
    code = ord(char)
    return (
        0x1F000 <= code <= 0x1FAFF  # emoji, pictographs, flags
        or 0x2600 <= code <= 0x27BF  # misc symbols, dingbats
        or 0xFE00 <= code <= 0xFE0F  # variation selectors
        or 0xE0000 <= code <= 0xE007F  # tag characters
        or 0x1F3FB <= code <= 0x1F3FF  # skin tones
        or unicodedata.category(char) == "So"
    )


def _safe_char(char: str) -> str:
    if char in _REPLACEMENTS:
        return _REPLACEMENTS[char]
    if char == "\n":
        return char
    if unicodedata.category(char) in ("Cc", "Cf", "Cs", "Co", "Cn"):
        return ""
    if _encodable(char):
        return char
    decomposed = "".join(
        part for part in unicodedata.normalize("NFKD", char) if not unicodedata.combining(part)
    )
    if decomposed and decomposed != char and all(_encodable(part) for part in decomposed):
        return decomposed
    if _is_pictograph(char):
        return ""
    return "?"


_SPACES = re.compile(r" {2,}")


def pdf_safe_text(text: str) -> str:
    """Deterministically map any text onto what the core fonts can draw.

    Windows-1252 characters are kept as they are; other characters are replaced via a
    fixed table, then by accent stripping (NFKD), pictographs/emoji are dropped and
    anything else becomes ``?``. Whitespace runs left by removals are tidied.
    """
    text = unicodedata.normalize("NFC", text.replace("\r\n", "\n").replace("\r", "\n"))
    out = "".join(_safe_char(char) for char in text)
    lines = [_SPACES.sub(" ", line).strip(" ") for line in out.split("\n")]
    return "\n".join(lines).strip("\n")


# --------------------------------------------------------------------------- layout


@dataclass(frozen=True)
class _Style:
    ink: tuple[int, int, int] = (33, 37, 41)
    accent: tuple[int, int, int] = (24, 54, 94)
    muted: tuple[int, int, int] = (96, 104, 115)
    rule: tuple[int, int, int] = (196, 204, 214)
    margin_x: float = 54.0  # 0.75 in
    margin_top: float = 50.0
    margin_bottom: float = 56.0
    font: str = "helvetica"


STYLE = _Style()


class _Pdf(FPDF):
    def __init__(self, page_size: PageSize, footer_label: str, page_total: int | None) -> None:
        super().__init__(orientation="portrait", unit="pt", format=page_size)
        self.core_fonts_encoding = CORE_FONTS_ENCODING
        self.set_margins(STYLE.margin_x, STYLE.margin_top, STYLE.margin_x)
        self.set_auto_page_break(True, margin=STYLE.margin_bottom)
        self.c_margin = 0  # text starts exactly at the margin, aligned with rules and dots
        self._footer_label = footer_label
        self._page_total = page_total

    def footer(self) -> None:
        if not self._page_total or self._page_total < 2:
            return
        self.set_y(-STYLE.margin_bottom + 22)
        self.set_font(STYLE.font, size=8)
        self.set_text_color(*STYLE.muted)
        label = pdf_safe_text(self._footer_label)
        self.cell(self.epw / 2, 10, label, align="L")
        self.cell(self.epw / 2, 10, f"Page {self.page_no()} of {self._page_total}", align="R")

    # -- primitives -------------------------------------------------------------------
    def use(self, size: float, style: str = "", color: tuple[int, int, int] = STYLE.ink) -> None:
        self.set_font(STYLE.font, style=style, size=size)
        self.set_text_color(*color)

    def paragraph(self, text: str, line_height: float, *, align: str = "L") -> None:
        text = pdf_safe_text(text)
        if not text:
            return
        self.set_x(self.l_margin)
        self.multi_cell(self.epw, line_height, text, align=align, new_x=XPos.LMARGIN, new_y=YPos.NEXT)

    def rule(self, *, color: tuple[int, int, int] = STYLE.rule, width: float = 0.75) -> None:
        self.set_draw_color(*color)
        self.set_line_width(width)
        self.line(self.l_margin, self.y, self.w - self.r_margin, self.y)

    def ensure_room(self, height: float) -> None:
        if self.y + height > self.page_break_trigger:
            self.add_page()

    def bullet_item(self, text: str, line_height: float, indent: float = 14.0) -> None:
        text = pdf_safe_text(text)
        if not text:
            return
        width = self.epw - indent
        height = self.multi_cell(
            width, line_height, text, align="L", dry_run=True, output=MethodReturnValue.HEIGHT
        )
        # Keep a short item on one page; a very long one may still flow across pages.
        self.ensure_room(height if height <= self.eph / 3 else line_height)
        radius = 1.35
        center_y = self.y + line_height / 2
        self.set_fill_color(*STYLE.accent)
        self.circle(self.l_margin + 4.5, center_y, radius, style="F")
        self.set_x(self.l_margin + indent)
        self.multi_cell(
            width,
            line_height,
            text,
            align="L",
            new_x=XPos.LMARGIN,
            new_y=YPos.NEXT,
        )


def _new_pdf(
    *,
    page_size: PageSize,
    title: str,
    author: str,
    subject: str,
    created: datetime,
    footer_label: str,
    page_total: int | None,
) -> _Pdf:
    if page_size not in ("letter", "a4"):
        raise ValueError(f"unsupported page size: {page_size!r}")
    pdf = _Pdf(page_size, footer_label, page_total)
    pdf.set_title(title)
    pdf.set_author(author)
    pdf.set_subject(subject)
    pdf.set_creator(CREATOR)
    pdf.set_lang("en")
    pdf.set_creation_date(created)
    pdf.add_page()
    return pdf


def _creation_date(value: datetime | None) -> datetime:
    if value is None:
        return datetime.now(UTC).replace(microsecond=0)
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)  # never the machine's local zone: stay deterministic
    return value


def _contact_block(pdf: _Pdf, lines: Sequence[str], size: float) -> None:
    """Contact items flow left to right separated by small dots; an item never breaks
    across lines unless it is wider than the whole line on its own."""
    items = [pdf_safe_text(line).replace("\n", " ") for line in lines]
    items = [item for item in items if item]
    if not items:
        return
    pdf.use(size, color=STYLE.muted)
    line_height = size * 1.5
    gap = 16.0  # dot in the middle of the gap
    rows: list[list[str]] = [[]]
    width = 0.0
    for item in items:
        item_width = pdf.get_string_width(item)
        needed = item_width if not rows[-1] else width + gap + item_width
        if rows[-1] and needed > pdf.epw:
            rows.append([])
            needed = item_width
        rows[-1].append(item)
        width = needed
    pdf.set_fill_color(*STYLE.muted)
    for row in rows:
        pdf.ensure_room(line_height)
        x = pdf.l_margin
        for index, item in enumerate(row):
            if index:
                pdf.circle(x + gap / 2, pdf.y + line_height / 2, 0.9, style="F")
                x += gap
            item_width = min(pdf.get_string_width(item), pdf.epw)
            if item_width >= pdf.epw:  # a single over-long item wraps on its own
                pdf.set_x(pdf.l_margin)
                pdf.multi_cell(pdf.epw, line_height, item, align="L")
                break
            pdf.set_xy(x, pdf.y)
            pdf.cell(item_width, line_height, item)
            x += item_width
        else:
            pdf.ln(line_height)


def _draw_resume(pdf: _Pdf, resume: ResumeDocument) -> None:
    pdf.use(22, "B", STYLE.accent)
    pdf.paragraph(resume.name, 27)
    if pdf_safe_text(resume.headline):
        pdf.ln(1)
        pdf.use(11.5, color=STYLE.ink)
        pdf.paragraph(resume.headline, 15)
    pdf.ln(3)
    _contact_block(pdf, resume.contact_lines, 9)
    pdf.ln(7)
    pdf.rule(color=STYLE.accent, width=1.1)
    pdf.ln(10)

    if pdf_safe_text(resume.summary):
        pdf.use(10)
        pdf.paragraph(resume.summary, 14)
        pdf.ln(4)

    for section in resume.sections:
        items = [item for item in section.items if pdf_safe_text(item)]
        if not pdf_safe_text(section.title) and not items:
            continue
        pdf.ensure_room(12 + 16 + 10 + 14 * 2)  # never strand a heading at a page foot
        pdf.ln(8)
        pdf.use(10.5, "B", STYLE.accent)
        pdf.set_char_spacing(0.8)
        pdf.paragraph(section.title.upper(), 14)
        pdf.set_char_spacing(0)
        pdf.ln(2)
        pdf.rule()
        pdf.ln(6)
        pdf.use(10)
        for item in items:
            pdf.bullet_item(item, 14)
            pdf.ln(2.5)


def _draw_cover_letter(pdf: _Pdf, letter: CoverLetterDocument) -> None:
    pdf.use(20, "B", STYLE.accent)
    pdf.paragraph(letter.sender_name, 25)
    pdf.ln(3)
    _contact_block(pdf, letter.sender_contact, 9)
    pdf.ln(7)
    pdf.rule(color=STYLE.accent, width=1.1)
    pdf.ln(26)

    pdf.use(10.5)
    if pdf_safe_text(letter.date_line):
        pdf.paragraph(letter.date_line, 15)
        pdf.ln(16)
    recipients = [pdf_safe_text(line) for line in letter.recipient_lines]
    recipients = [line for line in recipients if line]
    if recipients:
        pdf.paragraph("\n".join(recipients), 15)
        pdf.ln(16)
    if pdf_safe_text(letter.salutation):
        pdf.paragraph(letter.salutation, 15)
        pdf.ln(9)
    for text in letter.paragraphs:
        if pdf_safe_text(text):
            pdf.paragraph(text, 15.5)
            pdf.ln(9)
    pdf.ensure_room(15 * 3 + 30)  # keep closing and signature together
    pdf.ln(6)
    pdf.paragraph(letter.closing, 15)
    pdf.ln(24)
    pdf.use(10.5, "B")
    pdf.paragraph(letter.signature, 15)


# --------------------------------------------------------------------------- output


def _write_atomic(data: bytes, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
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


def _render(draw, document, path: Path, *, page_size: PageSize, meta: dict) -> PdfInfo:
    pdf = _new_pdf(page_size=page_size, page_total=None, **meta)
    draw(pdf, document)
    pages = pdf.pages_count
    if pages > 1:  # second pass, now knowing the total for "Page n of N" footers
        pdf = _new_pdf(page_size=page_size, page_total=pages, **meta)
        draw(pdf, document)
        pages = pdf.pages_count
    data = bytes(pdf.output())
    target = Path(path)
    _write_atomic(data, target)
    return PdfInfo(path=target, pages=pages, bytes=len(data), sha256=hashlib.sha256(data).hexdigest())


def render_resume_pdf(
    resume: ResumeDocument,
    path: Path,
    *,
    page_size: PageSize = "letter",
    creation_date: datetime | None = None,
) -> PdfInfo:
    """Render ``resume`` to ``path`` (atomically). Same input + same ``creation_date``
    → byte-identical output."""
    meta = {
        "title": f"{resume.name} - Resume",
        "author": resume.name,
        "subject": resume.headline,
        "created": _creation_date(creation_date),
        "footer_label": resume.name,
    }
    return _render(_draw_resume, resume, path, page_size=page_size, meta=meta)


def render_cover_letter_pdf(
    letter: CoverLetterDocument,
    path: Path,
    *,
    page_size: PageSize = "letter",
    creation_date: datetime | None = None,
) -> PdfInfo:
    """Render ``letter`` to ``path`` (atomically). Same input + same ``creation_date``
    → byte-identical output."""
    meta = {
        "title": f"{letter.sender_name} - Cover letter",
        "author": letter.sender_name,
        "subject": "Cover letter",
        "created": _creation_date(creation_date),
        "footer_label": letter.sender_name,
    }
    return _render(_draw_cover_letter, letter, path, page_size=page_size, meta=meta)
