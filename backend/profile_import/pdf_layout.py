"""A PDF's pages → text lines that keep the layout's meaning.

pdfplumber gives every glyph with its font and position; this module turns them into the
lines a reader sees:

- glyphs of icon fonts (Font Awesome, academicons...) and private-use code points are
  dropped; a glyph the PDF does not map to text (``(cid:N)``) or a bullet-shaped symbol at
  the start of a line reads as a bullet;
- words are split where the gap is wide *for the font size* (justified LaTeX text has
  no space glyphs and gaps of ~0.15 em; a fixed tolerance glues its words together);
- soft hyphens are resolved: between spaces they are the range dash some fonts draw with
  that code point, inside a word a visible hyphen, at the end of a line a hyphenation
  break;
- lines repeated at the top or bottom of several pages (running headers and footers)
  and bare page numbers are dropped;
- two independent columns (a sidebar) read one after the other, but a narrow column of
  dates or places beside the text (moderncv, Word table layouts) and right-aligned
  dates stay on the row they belong to, set apart by two spaces.

Tolerances are measured on the résumé corpus (tests/fixtures/resumes): see
``WORD_GAP_EM``.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from statistics import median
from typing import Any

from backend.domain import resume_vocabulary as vocab

BULLET = "• "
# Measured on the corpus by bench/pdf_word_gaps.py: inside a word 99 % of glyph gaps are
# under 0.055 em (kerning); between words with a space glyph 99.9 % are over 0.199 em, and
# TeX's justified lines without space glyphs leave at least ~0.15 em (Awesome-CV 9 pt:
# 1.38 pt). A fixed tolerance in points glued those words together.
WORD_GAP_EM = 0.1
# A gap wider than this many line heights separates two items on one line (a right-aligned
# date, contact items set apart by drawn dots); they are joined by two spaces.
ITEM_GAP_LINES = 1.2
# Headings set at least this much larger than the body text (moderncv 1.2×, Word's
# Heading 1 ~1.3×) also tell unknown headings of the same size; entry titles stay under
# it (Awesome-CV's employer 1.11×).
HEADING_SIZE = 1.18
# Running headers and footers live in this share of the page height at the top / bottom.
MARGIN_SHARE = 0.11

_ICON_FONTS = re.compile(
    r"awesome|fontello|academicons|icomoon|glyphicons|octicons|ionicons|entypo|feather"
    r"|material(?:icons|symbols|design)|simpleicons|simple-icons|tabler|remixicon|bootstrap-?icons",
    re.IGNORECASE)
_CONTACT_LIKE = re.compile(r"\S@\S|https?://|www\.|\+\d[\d\s().-]{6,}\d")
_ICON_BULLETS = frozenset("•●○◦▪▫■□◆◇►▸▹➢➤✓✔")
_CID = re.compile(r"\(cid:\d+\)")
_BULLET_SYMBOLS = frozenset("•·▪▫◦‣⁃●○■□◆◇►▸▹➢➤➔→✓✔✗❖◼◾⦁∙-–*o§")
_PAGE_OF = re.compile(r"(?:page|seite|página|pagina)\s*\d{1,3}\s*(?:of|/|von|de|sur|di)\s*\d{1,3}$",
                      re.IGNORECASE)
_PAGE_NUMBER = re.compile(
    r"^(?:[-–—]\s*)?(?:(?:page|seite|página|pagina|page n°)\s*)?\d{1,3}"
    r"(?:\s*(?:of|/|von|de|sur|di)\s*\d{1,3})?(?:\s*[-–—])?$", re.IGNORECASE)


# --------------------------------------------------------------------------- glyphs


def _private_use(char: str) -> bool:
    return any(unicodedata.category(c) == "Co" for c in char)


def _keep_glyph(obj: dict) -> bool:
    """pdfplumber filter: drop icon-font glyphs (a phone, an envelope, a logo) but keep
    the ones shaped like bullets (moderncv's list circle); keep everything not a char."""
    if obj.get("object_type") != "char" or not _ICON_FONTS.search(obj.get("fontname") or ""):
        return True
    return obj.get("text", "") in _ICON_BULLETS


def _word_text(text: str) -> str:
    """A word's text with unmapped glyphs marked and pictographs dropped."""
    # Unmapped glyphs and private-use code points (Word's Symbol bullet is U+F0B7) become a
    # placeholder: a bullet at a line's start, dropped anywhere else.
    text = _CID.sub("\ufffc", text).replace("\u2011", "-").replace("\u2010", "-")
    return "".join("\ufffc" if _private_use(c) else c for c in text if not _pictograph(c))


def _pictograph(char: str) -> bool:
    if char in _BULLET_SYMBOLS or char == "\ufffc":
        return False
    category = unicodedata.category(char)
    # Symbols "So" are phone, envelope, pin and flag icons (📱 ✉ ☎ ⌂); variation selectors
    # and joiners come with emoji.
    return category == "So" or category == "Mn" and 0xFE00 <= ord(char) <= 0xFE0F or char == "\u200d"


# --------------------------------------------------------------------------- words and rows


def page_words(page: Any) -> list[dict]:
    """The page's words with their font size, icon glyphs dropped, and a link's address
    in place of a handle that stands for it ("praman" → "https://github.com/praman")."""
    kept = page.filter(_keep_glyph)
    words = kept.extract_words(x_tolerance=1.5, x_tolerance_ratio=WORD_GAP_EM, y_tolerance=2.0,
                               extra_attrs=["size"], expand_ligatures=True)
    out = []
    for word in words:
        text = _word_text(word["text"])
        if text:
            out.append({**word, "text": text})
    return _with_link_targets(out, page.hyperlinks)


def _with_link_targets(words: list[dict], links: list[dict]) -> list[dict]:
    """A web link whose visible text is not an address (a user name beside a GitHub icon,
    "LinkedIn") shows its address instead: that is what the profile needs."""
    shown: set[str] = set()
    for link in links:
        uri = (link.get("uri") or "").strip()
        if not re.match(r"https?://", uri, re.IGNORECASE) or len(uri) > 300:
            continue
        inside = [w for w in words if _inside(w, link)]
        visible = " ".join(w["text"] for w in inside)
        if inside and uri in shown and visible.rstrip("-") in uri:
            # the rest of an address the line wrapped ("linke-" / "din.com/in/…")
            words = [w for w in words if not any(w is other for other in inside)]
            continue
        if not inside or "." in visible or len(inside) > 3:
            continue  # no text, or the address is already written out
        inside[0]["text"] = uri
        shown.add(uri)
        words = [w for w in words if not any(w is other for other in inside[1:])]
    return words


def _inside(word: dict, box: dict) -> bool:
    middle_x = (word["x0"] + word["x1"]) / 2
    middle_y = (word["top"] + word["bottom"]) / 2
    return box["x0"] - 1 <= middle_x <= box["x1"] + 1 and box["top"] - 1 <= middle_y <= box["bottom"] + 1


def rows_of(words: list[dict]) -> list[list[dict]]:
    """Group words into visual lines: a word whose vertical middle falls inside the
    current line's band joins it. Each row is sorted left to right."""
    rows: list[list[dict]] = []
    band: tuple[float, float] | None = None
    for word in sorted(words, key=lambda w: ((w["top"] + w["bottom"]) / 2, w["x0"])):
        middle = (word["top"] + word["bottom"]) / 2
        if band is not None and band[0] <= middle <= band[1]:
            rows[-1].append(word)
            band = (min(band[0], word["top"]), max(band[1], word["bottom"]))
        else:
            rows.append([word])
            band = (word["top"], word["bottom"])
    return [sorted(row, key=lambda w: w["x0"]) for row in rows]


def _row_text(row: list[dict]) -> str:
    return " ".join(w["text"] for w in row)


# --------------------------------------------------------------------------- running headers


def _margin_key(text: str) -> str:
    """Digits and spacing do not make a running header different (page numbers, dates)."""
    return re.sub(r"[\d\s]+", "", text).casefold()


def drop_running_lines(pages: list[tuple[float, list[list[dict]]]]) -> list[list[list[dict]]]:
    """Each page's rows without repeated headers / footers and bare page numbers."""
    def in_margin(row: list[dict], height: float) -> bool:
        top = min(w["top"] for w in row)
        return top < height * MARGIN_SHARE or top > height * (1 - MARGIN_SHARE)

    seen: Counter[str] = Counter()
    page_keys = []
    for height, rows in pages:
        keys = {_margin_key(_row_text(row)) for row in rows if in_margin(row, height)}
        keys.discard("")
        page_keys.append(keys)
        seen.update(keys)
    repeated = {key for key, count in seen.items() if count >= 2} if len(pages) >= 2 else set()

    def running(key: str, page: int) -> bool:
        # The same words on another page's margin, or a longer line starting with them
        # ("Curriculum vitae" on page 1, "Curriculum vitae  Name" on page 2).
        return key in repeated or any(
            len(other) >= 8 and (key.startswith(other) or other.startswith(key))
            for number, keys in enumerate(page_keys) if number != page for other in keys)

    def dropped(row: list[dict], page: int, height: float) -> bool:
        text = _row_text(row)
        if not in_margin(row, height):
            return False
        if _PAGE_NUMBER.match(text) or _PAGE_OF.search(text):
            return True
        # A Word page header repeats the name and contact details: the first page keeps it.
        first_page_header = page == 0 and min(w["top"] for w in row) < height * MARGIN_SHARE
        return running(_margin_key(text), page) and not first_page_header

    return [[row for row in rows if not dropped(row, page, height)]
            for page, (height, rows) in enumerate(pages)]


# --------------------------------------------------------------------------- columns


def find_gutter(rows: list[list[dict]], bin_width: float = 2.0, *, edge: float = 0.15,
                side_share: float = 0.2, crossing: float = 0.08,
                by_count: bool = False, min_band: float = 6.0) -> tuple[float, float] | None:
    """The widest vertical band that almost no line crosses (at most ``crossing`` of the
    lines' height, or of their number ``by_count``) while both sides carry a good share of
    the lines (``side_share``), at least ``edge`` of the width in from either side: the
    space between two columns."""
    if len(rows) < 6:
        return None
    x_min = min(w["x0"] for row in rows for w in row)
    x_max = max(w["x1"] for row in rows for w in row)
    width = x_max - x_min
    if width <= 0:
        return None
    heights = [1.0 if by_count else max(w["bottom"] for w in row) - min(w["top"] for w in row)
               for row in rows]
    total = sum(heights) or 1.0
    bins = int(width // bin_width)
    crossed = [0.0] * bins
    for row, height in zip(rows, heights, strict=True):
        for index in _covered_bins(row, x_min, bin_width, bins):
            crossed[index] += height
    best: tuple[float, float] | None = None
    start = None
    for index in range(bins + 1):
        open_bin = index < bins and crossed[index] / total <= crossing
        inside = x_min + edge * width <= x_min + index * bin_width <= x_max - edge * width
        if open_bin and inside:
            start = index if start is None else start
            continue
        if start is not None:
            band = (x_min + start * bin_width, x_min + index * bin_width)
            wider = best is None or band[1] - band[0] > best[1] - best[0]
            wide_enough = band[1] - band[0] >= min_band - 0.01
            if wide_enough and wider and _both_sides_carry(rows, heights, total, band, side_share):
                best = band
            start = None
    return best


def _covered_bins(row: list[dict], x_min: float, bin_width: float, bins: int) -> set[int]:
    covered: set[int] = set()
    for word in row:
        first = max(0, int((word["x0"] - x_min) // bin_width))
        last = min(bins - 1, int((word["x1"] - x_min) // bin_width))
        covered.update(range(first, last + 1))
    return covered


def _both_sides_carry(rows: list[list[dict]], heights: list[float], total: float,
                      band: tuple[float, float], share: float) -> bool:
    left = sum(h for row, h in zip(rows, heights, strict=True) if any(w["x1"] <= band[0] for w in row))
    right = sum(h for row, h in zip(rows, heights, strict=True) if any(w["x0"] >= band[1] for w in row))
    return left / total >= share and right / total >= share


def side_column(rows: list[list[dict]], band: tuple[float, float]) -> str | None:
    """"left" or "right" when that side of the band is not a text column of its own but
    dates or places set beside the text (moderncv's date column, a Word table's left
    cells): those belong to the row they sit on. None for two real columns."""
    if _labels_on_the_left(rows, band):
        return "left"
    for side in ("left", "right"):
        parts = [_row_text(_side_words(row, band, side)) for row in rows]
        parts = [part for part in parts if part]
        if not parts:
            continue
        dated = sum(1 for part in parts if vocab.find_range(part) or vocab.SINGLE_DATE.search(part)
                    or vocab.is_place(part) or vocab.is_present_word(part))
        if dated / len(parts) >= 0.5:
            return side
    return None


def contact_sidebar(rows: list[list[dict]], band: tuple[float, float]) -> bool:
    """A line of contact details wholly left of the band: a sidebar."""
    alone = [row for row in rows if len(_side_words(row, band, "left")) == len(row)]
    return sum(1 for row in alone if _CONTACT_LIKE.search(_row_text(row))) >= 1


def _labels_on_the_left(rows: list[list[dict]], band: tuple[float, float]) -> bool:
    """A left column set flush right against the text (Europass, moderncv): labels and
    dates for the rows beside them. A sidebar is set flush left."""
    ends = [max(w["x1"] for w in side) for row in rows if (side := _side_words(row, band, "left"))]
    starts = [min(w["x0"] for w in side) for row in rows if (side := _side_words(row, band, "left"))]
    if len(ends) < 3:
        return False
    flush_right = sum(1 for end in ends if max(ends) - end <= 3) / len(ends)
    flush_left = sum(1 for start in starts if start - min(starts) <= 3) / len(starts)
    return flush_right >= 0.8 and flush_left < 0.8


def _side_words(row: list[dict], band: tuple[float, float], side: str) -> list[dict]:
    """The row's words on that side of the band (a word may reach into the band by the
    width of the bins it was measured with)."""
    middle = (band[0] + band[1]) / 2
    if side == "left":
        return [w for w in row if w["x1"] <= middle]
    return [w for w in row if w["x0"] >= middle]


def attach_side_cells(rows: list[list[dict]], band: tuple[float, float], side: str) -> list[list[dict]]:
    """Rows with their side cell first and set apart; a date range the narrow column
    wrapped ("03/2021–" over "present") is put back together on its first row."""
    cells: list[tuple[list[dict], list[dict]]] = []  # (side words, main words) per row
    last_side: list[dict] | None = None
    for row in rows:
        side_words = _side_words(row, band, side)
        middle = (band[0] + band[1]) / 2
        if _spaced_across(row, band) or any(w["x0"] < middle < w["x1"] for w in row):
            side_words = []  # a line across the band (the name, the headline) stays whole
        main = [w for w in row if not any(w is s for s in side_words)]
        if side_words and last_side is not None and (
                _range_goes_on(last_side, side_words)
                or not main and _heading_goes_on(last_side, side_words)):
            last_side.extend(side_words)
            side_words = []
        elif side_words:
            last_side = side_words
        cells.append((side_words, main))
    out = []
    for side_words, main in cells:
        if main and side_words:
            main = [{**main[0], "cell_start": True}, *main[1:]]
        if side_words or main:
            out.append(side_words + main)
    return out


def _heading_goes_on(before: list[dict], after: list[dict]) -> bool:
    """A heading the narrow column wrapped ("EXPÉRIENCE" / "PROFESSIONNELLE")."""
    joined = " ".join(f"{_row_text(before)} {_row_text(after)}".casefold().split())
    return joined in vocab.HEADINGS or joined in vocab.OTHER_HEADINGS


def _range_goes_on(before: list[dict], after: list[dict]) -> bool:
    """The cell below goes on with a range the cell above started ("03/2021–" / "present",
    "Aug." / "2019–May" / "2022"); a heading above a date ("WORK EXPERIENCE" / "since
    2020") is not a range started."""
    side_text, after_text = _row_text(before), _row_text(after)
    if vocab.find_range(side_text) or len(after_text.split()) > 3:
        return False
    found = vocab.find_range(f"{side_text} {after_text}")
    if found is not None:
        return found.start() < len(side_text) < found.end()
    return vocab.date_fragment(side_text) and vocab.date_fragment(after_text)


def _spaced_across(row: list[dict], gutter: tuple[float, float]) -> bool:
    """Words either side of the gutter no further apart than a word space of their size
    (a large name in the header) belong to one line, not to two columns."""
    middle = (gutter[0] + gutter[1]) / 2
    left = [w for w in row if w["x1"] <= middle]
    right = [w for w in row if w["x0"] >= middle]
    if not left or not right:
        return False
    before, after = left[-1], right[0]
    size = min(before["bottom"] - before["top"], after["bottom"] - after["top"])
    return after["x0"] - before["x1"] < 0.6 * size


def column_blocks(rows: list[list[dict]], gutter: tuple[float, float]) -> list[list[list[dict]]]:
    """Header, left column, right column, footer. Rows crossing the gutter above the
    columns (a full-width name and contact line) are the header, below them the footer."""
    left, right = gutter
    crossing = {id(row) for row in rows
                if any(w["x0"] < right and w["x1"] > left for w in row) or _spaced_across(row, gutter)}
    column_rows = [row for row in rows if id(row) not in crossing]
    if not column_rows:
        return [rows]
    first_top = min(row[0]["top"] for row in column_rows)
    last_top = max(row[0]["top"] for row in column_rows)
    # Rows above the first one with words on both sides are the page's header, whichever
    # half they sit in (AltaCV sets the web address right of the gutter line, over the
    # right column's first heading).
    both = [row[0]["top"] for row in column_rows
            if any(w["x1"] <= left for w in row) and any(w["x0"] >= right for w in row)]
    if both and min(both) > first_top:
        early = {id(row) for row in column_rows if row[0]["top"] < min(both)}
        crossing |= early
        column_rows = [row for row in column_rows if id(row) not in early]
        first_top = min(both)
    spanning = [row for row in rows if id(row) in crossing]
    header = [row for row in spanning if row[0]["top"] < first_top]
    footer = [row for row in spanning if row[0]["top"] > last_top]
    # Between them, a word that reaches into the gutter (a long email address in the
    # sidebar) belongs to the column it starts in; its neighbours keep their own columns.
    inline = [row for row in spanning if first_top <= row[0]["top"] <= last_top]
    middle = (left + right) / 2
    words = [w for row in column_rows + inline for w in row]
    return [header, rows_of([w for w in words if w["x0"] < middle]),
            rows_of([w for w in words if w["x0"] >= middle]), footer]


# --------------------------------------------------------------------------- bullets drawn as shapes


def bullet_shapes(page: Any) -> list[tuple[float, float]]:
    """Small filled dots and squares drawn as vector shapes (not characters): the
    bullets of many generators, JobCtrl's own PDFs included. Returned as (x, y middle)."""
    shapes = list(page.curves) + list(page.rects)
    found = []
    for shape in shapes:
        width, height = shape["x1"] - shape["x0"], shape["bottom"] - shape["top"]
        if 1.0 <= width <= 7.0 and 1.0 <= height <= 7.0 and shape.get("fill"):
            found.append((shape["x1"], (shape["top"] + shape["bottom"]) / 2))
    return found


def _has_marker(row: list[dict], markers: list[tuple[float, float]]) -> bool:
    top = min(w["top"] for w in row)
    bottom = max(w["bottom"] for w in row)
    first_x = row[0]["x0"]
    return any(top <= y <= bottom and 0 <= first_x - x <= 20 for x, y in markers)


# --------------------------------------------------------------------------- rendering


def render(rows: list[list[dict]], markers: list[tuple[float, float]],
           style: tuple[float, bool] | None = None) -> list[str]:
    """Rows → text lines. A large vertical gap becomes an empty line (a paragraph or
    entry break) and a wide horizontal gap two spaces (a separate item, such as
    contact details set apart by drawn dots or a right-aligned date)."""
    if not rows:
        return []
    heights = [max(w["bottom"] for w in row) - min(w["top"] for w in row) for row in rows]
    typical = median(heights) or 10.0
    lines: list[str] = []
    previous_bottom = None
    hanging: float | None = None  # where the text of the bullet being read starts
    for row, height in zip(rows, heights, strict=True):
        top = min(w["top"] for w in row)
        gap = previous_bottom is not None and top - previous_bottom > 0.8 * typical
        if gap:
            lines.append("")
        previous_bottom = max(w["bottom"] for w in row)
        text, bulleted = _join_words(row, height)
        if not text:
            continue
        bulleted = bulleted or _has_marker(row, markers)
        if not bulleted and not gap and hanging is not None and abs(row[0]["x0"] - hanging) <= 2.5:
            lines[-1] = _continue_line(lines[-1], text)  # the bullet's wrapped text
            continue
        hanging = _text_start(row) if bulleted else None
        if bulleted and not text.startswith(BULLET):
            text = BULLET + text
        elif style is not None and _set_as_heading(row, text, style):
            text = "## " + text  # a heading by its size: the section rules read its level
        lines.append(text)
    return lines


def _set_as_heading(row: list[dict], text: str, style: tuple[float, bool]) -> bool:
    """A short line set like the page's known headings (their size, and all capitals
    when they are): a section heading whatever its words ("Publications")."""
    size, capitals = style
    if len(row) > 5 or re.search(r"[\d@/]|[.,;:]$", text) or capitals and not text.isupper():
        return False
    return all(abs(word.get("size", 0) - size) <= 0.3 for word in row)


def heading_style(rows: list[list[dict]]) -> tuple[float, bool] | None:
    """The size of the page's headings, and whether they are set in capitals, read off
    the lines whose words name a section ("Experience", "BERUFSERFAHRUNG")."""
    known = []
    for row in rows:
        text = _row_text(row)
        key = " ".join(text.casefold().split())
        if key in vocab.HEADINGS or key in vocab.OTHER_HEADINGS:
            known.append((row[0].get("size", 0), text.isupper()))
    if len(known) < 2:
        return None
    sizes = sorted(size for size, _ in known)
    size = sizes[len(sizes) // 2]
    body = sorted(word.get("size", 0) for row in rows for word in row)
    if size < HEADING_SIZE * body[len(body) // 2]:
        return None  # headings told apart by weight or colour only: their words decide
    return size, all(capitals for _, capitals in known)


def _text_start(row: list[dict]) -> float:
    """x of a bullet's text: after a glyph set apart, else a little after the row's start."""
    first = row[0]["text"]
    if len(row) > 1 and all(c in _BULLET_SYMBOLS or c == "\ufffc" for c in first):
        return row[1]["x0"]
    return row[0]["x0"] if first[:1] not in _BULLET_SYMBOLS and first[:1] != "\ufffc" else -1e9


def _continue_line(line: str, text: str) -> str:
    if line.endswith("\u00ad") and text[:1].islower():
        return line[:-1] + text  # a hyphenation break
    if line.endswith(("-", "/")) and line[-2:-1].isalpha():
        return line + "\u200b" + text  # a hyphen that may be a break: decided per document
    return f"{line} {text}"


def _letter_spaced(words: list[dict]) -> list[dict]:
    """Words set letter by letter ("k a t r i n . h o f f m a n n"): a run of five or
    more one-character words close together is one word."""
    out: list[dict] = []
    run: list[dict] = []
    for word in [*words, None]:
        close = word is not None and run and word["x0"] - run[-1]["x1"] < 0.5 * (word["bottom"] - word["top"])
        if word is not None and len(word["text"]) == 1 and (not run or close):
            run.append(word)
            continue
        if len(run) >= 5:
            out.append({**run[0], "text": "".join(w["text"] for w in run), "x1": run[-1]["x1"]})
        else:
            out.extend(run)
        run = []
        if word is not None:
            if len(word["text"]) == 1:
                run.append(word)
            else:
                out.append(word)
    return out


def _join_words(row: list[dict], height: float) -> tuple[str, bool]:
    """The row's text, and whether it starts with a bullet glyph (then left out)."""
    words = [dict(w) for w in _letter_spaced(row)]
    bulleted = False
    first = words[0]["text"]
    if first[0] in _BULLET_SYMBOLS or first[0] == "\ufffc":
        lead = first.lstrip("".join(_BULLET_SYMBOLS) + "\ufffc")
        # "-" or "o" alone opens a list; glued to a word it is part of it ("-5%", "on").
        if len(first) == 1 or first[0] not in "-o*§" or lead != first[1:]:
            bulleted = len(words) > 1 or bool(lead)
            words[0]["text"] = lead
    parts: list[str] = []
    previous = None
    for word in words:
        text = word["text"].replace("\ufffc", "")
        if text:
            if previous is not None:
                wide = word.get("cell_start") or word["x0"] - previous["x1"] > ITEM_GAP_LINES * height
                parts.append("  " if wide else " ")
            parts.append(text)
        previous = word
    return resolve_soft_hyphens("".join(parts)).strip(), bulleted


def resolve_soft_hyphens(text: str) -> str:
    """U+00AD as drawn: between spaces a range dash, inside a word a hyphen; at the end of
    a line it stays, for :func:`resolve_line_breaks` to undo the break."""
    text = re.sub(r"(?<=\s)\u00ad(?=\s)", "–", text)
    return re.sub(r"\u00ad(?=\S)", "-", text)


def hyphenating_producer(metadata: dict) -> bool:
    """TeX and Typst break words at line ends with a plain hyphen; word processors do not
    unless asked, so there a hyphen at a line's end belongs to the word ("Elektro-")."""
    made_by = f"{metadata.get('Producer') or ''} {metadata.get('Creator') or ''}"
    return bool(re.search(r"tex|typst", str(made_by), re.IGNORECASE))


def resolve_line_breaks(lines: list[str], *, plain_hyphens: bool = False) -> list[str]:
    """Undo hyphenation breaks. Between lines: "oper\u00ad" / "ation network" →
    "operation network" when the break is a soft hyphen (or, with ``plain_hyphens``, a
    hyphen) before a lower-case letter. Inside a bullet whose wrapped lines were joined
    (marked "-\u200b"), with ``plain_hyphens``: gone before a lower-case letter
    ("Commu-nity"), and before a capital when the document writes the word whole
    elsewhere ("Solid-Works" where the skills say "SolidWorks")."""
    breaks = "\u00ad-" if plain_hyphens else "\u00ad"
    out: list[str] = []
    for line in lines:
        if out and out[-1] and line and re.search(rf"[^\W\d_][{breaks}]$", out[-1]) \
                and line.lstrip()[:1].islower():
            head, _, rest = line.lstrip().partition(" ")
            out[-1] = out[-1][:-1] + head
            line = rest
            if not line:
                continue
        out.append(line)
    if plain_hyphens:
        words = frozenset(re.findall(r"[^\W\d_]{3,}", "\n".join(out)))
        out = [_JOINED_BREAK.sub(lambda m: _joined_break(m, words), line) for line in out]
    return [line.replace("\u200b", "").replace("\u00ad", "-") for line in out]


_JOINED_BREAK = re.compile(r"([^\W\d_]+)-\u200b([^\W\d_]+)")


def _joined_break(match: re.Match, words: frozenset[str]) -> str:
    head, tail = match.group(1), match.group(2)
    if tail[:1].islower() or head + tail in words:
        return head + tail
    return f"{head}-{tail}"


# --------------------------------------------------------------------------- pages


def page_rows(page: Any) -> list[list[dict]]:
    return rows_of(page_words(page))


def page_lines(rows: list[list[dict]], markers: list[tuple[float, float]]) -> list[str]:
    """One page's lines; a two-column page reads its left column, then its right."""
    if not rows:
        return []
    gutter = find_gutter(rows)
    side = side_column(rows, gutter) if gutter is not None else None
    if gutter is None:  # a narrow column of dates beside the text (moderncv, Word tables)
        narrow = find_gutter(rows, 1.0, edge=0.04, side_share=0.06, crossing=0.1, by_count=True,
                             min_band=4.0)
        side = side_column(rows, narrow) if narrow is not None else None
        # A narrow band beside a contact sidebar (moderncv oldstyle) is a real gutter.
        sidebar = narrow is not None and side is None and contact_sidebar(rows, narrow)
        gutter = narrow if side is not None or sidebar else None
    if side == "right":  # right-aligned dates and places: already on their rows
        blocks = [rows]
    elif side == "left":
        blocks = [attach_side_cells(rows, gutter, side)]
    else:
        blocks = [rows] if gutter is None else column_blocks(rows, gutter)
    style = heading_style(rows)
    lines: list[str] = []
    for block in blocks:
        if block:
            if lines:
                lines.append("")
            lines.extend(render(block, markers, style))
    return lines
