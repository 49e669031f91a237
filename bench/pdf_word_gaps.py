"""The gaps between glyphs in the résumé corpus's PDFs, inside words and between them,
in em (gap / font size): what ``backend.profile_import.pdf_layout.WORD_GAP_EM`` is set
from. Ground truth for "inside a word" and "between words" comes from the PDF's own space
glyphs where it has them (Word, LibreOffice, reportlab, fpdf2, Typst write spaces; TeX
does not), so the measure is not circular.

    .venv/bin/python bench/pdf_word_gaps.py
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path
from statistics import quantiles

import pdfplumber

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "resumes"


def gaps(path: Path) -> tuple[list[float], list[float]]:
    """(gaps between two letters of one word, gaps between words with a space glyph),
    from the pages that write their spaces as glyphs."""
    inside, between = [], []
    with pdfplumber.open(path) as pdf:
        for page in pdf.pages:
            lines: dict[int, list[dict]] = defaultdict(list)
            for char in page.chars:
                lines[round(char["top"])].append(char)
            if not any(char["text"] == " " for char in page.chars):
                page.close()
                continue  # no space glyphs (TeX): which gap is a word's end is unknown here
            for chars in lines.values():
                chars.sort(key=lambda c: c["x0"])
                for before, space, after in zip(chars, chars[1:], chars[2:], strict=False):
                    if space["text"] == " " and before["text"].isalpha() and after["text"].isalpha():
                        between.append((after["x0"] - before["x1"]) / before["size"])
                for before, after in zip(chars, chars[1:], strict=False):
                    if before["text"].isalpha() and after["text"].isalpha() and before["size"] > 0:
                        inside.append((after["x0"] - before["x1"]) / before["size"])
            page.close()
    return inside, between


def main() -> None:
    inside, between = [], []
    for path in sorted(CORPUS.glob("*.pdf")):
        a, b = gaps(path)
        inside.extend(a)
        between.extend(b)
    if not inside or not between:
        sys.exit("no PDFs with space glyphs in the corpus")
    cut_inside = quantiles(inside, n=1000)
    cut_between = quantiles(between, n=1000)
    print(f"letter pairs inside words: {len(inside):,}; word gaps with a space glyph: {len(between):,}")
    print(f"inside a word, em:   p50 {cut_inside[499]:.3f}  p99 {cut_inside[989]:.3f}  "
          f"p99.9 {cut_inside[998]:.3f}")
    print(f"between words, em:   p0.1 {cut_between[0]:.3f}  p1 {cut_between[9]:.3f}  "
          f"p50 {cut_between[499]:.3f}")


if __name__ == "__main__":
    main()
