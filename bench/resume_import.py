"""Résumé import cost: time and peak memory of ``import_resume`` on files made in the run.

Three inputs are generated first: a 3-page one-column PDF (fpdf2, core Helvetica, ten
employers with five bullets each), a 2-page two-column PDF (typst, sidebar + main column)
and a DOCX with the same content (python-docx, List Bullet paragraphs). Each is imported
``--rounds`` times; the baseline, measured in the same run on the same bytes, is the
library's own plain read with nothing of ours on top: ``pdfplumber`` ``extract_text()`` of
every page, and python-docx opening the file and reading every paragraph's text.

Memory: the Python heap peak of one import under ``tracemalloc`` (a separate call, since
tracing slows everything down), and the process RSS (psutil) before the first import and
after the last, which shows whether repeated imports keep memory.

    .venv/bin/python bench/resume_import.py
    .venv/bin/python bench/resume_import.py --rounds 10 --json resume_import.json
"""

from __future__ import annotations

import argparse
import gc
import io
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_info, summary, write_json  # noqa: E402

from backend.profile_import import import_resume  # noqa: E402

TECH = ["Python", "FastAPI", "PostgreSQL", "Kafka", "Kubernetes", "AWS", "Terraform", "Airflow", "Go"]


def _jobs(count: int) -> list[tuple[str, str, str, list[str]]]:
    jobs = []
    for index in range(count):
        start = 2024 - 2 * index
        bullets = [
            f"Built the {TECH[(index + k) % len(TECH)]} service that handled {10 * (k + 1)} thousand "
            f"requests a minute and cut the error rate by {k + 2} percent for the operations team."
            for k in range(5)
        ]
        jobs.append((f"Backend Engineer {index + 1}", f"Example Company {index + 1} GmbH, Berlin",
                     f"{start - 2} – {start}", bullets))
    return jobs


def make_pdf() -> bytes:
    from fpdf import FPDF

    pdf = FPDF(unit="pt", format="a4")
    pdf.core_fonts_encoding = "windows-1252"
    pdf.set_margins(54, 50, 54)
    pdf.add_page()

    def write(text: str, size: float = 10, style: str = "") -> None:
        pdf.set_font("helvetica", style=style, size=size)
        pdf.multi_cell(pdf.epw, size * 1.4, text, new_x="LMARGIN", new_y="NEXT")

    write("Bench Person", 20, "B")
    write("bench.person@example.com | +49 30 5550 0000 | Berlin, Germany")
    write("EXPERIENCE", 12, "B")
    for title, employer, dates, bullets in _jobs(10):
        pdf.ln(6)
        write(f"{title} — {employer}", 11, "B")
        write(dates)
        for bullet in bullets:
            write(f"• {bullet}")
    write("SKILLS", 12, "B")
    write(", ".join(TECH))
    return bytes(pdf.output())


def make_two_column_pdf(folder: Path) -> bytes:
    import typst

    entries = []
    for title, employer, dates, bullets in _jobs(6):
        items = "\n".join(f"  - {bullet}" for bullet in bullets)
        entries.append(f"  *{title} — {employer}* \\\n  {dates}\n{items}\n")
    source = (
        '#set page(paper: "a4", margin: 1.5cm)\n#set text(size: 10pt)\n'
        "#grid(columns: (1fr, 2fr), column-gutter: 18pt,\n"
        "[\n  == Contact\n  bench.person\\@example.com \\\n  Berlin, Germany\n\n  == Skills\n"
        + "".join(f"  {name} \\\n" for name in TECH)
        + "],\n[\n  == Experience\n" + "\n".join(entries) + "]\n)\n"
    )
    path = folder / "two-column.typ"
    path.write_text(source, encoding="utf-8")
    return typst.compile(str(path))


def make_docx() -> bytes:
    import docx

    document = docx.Document()
    document.add_heading("Bench Person", level=0)
    document.add_paragraph("bench.person@example.com | +49 30 5550 0000 | Berlin, Germany")
    document.add_heading("Experience", level=1)
    for title, employer, dates, bullets in _jobs(10):
        document.add_paragraph(f"{title} — {employer}")
        document.add_paragraph(dates)
        for bullet in bullets:
            document.add_paragraph(bullet, style="List Bullet")
    document.add_heading("Skills", level=1)
    document.add_paragraph(", ".join(TECH))
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def baseline_pdf(data: bytes) -> None:
    import pdfplumber

    with pdfplumber.open(io.BytesIO(data)) as pdf:
        for page in pdf.pages:
            page.extract_text()


def baseline_docx(data: bytes) -> None:
    import docx

    for paragraph in docx.Document(io.BytesIO(data)).paragraphs:
        _ = paragraph.text


def _timed_pair(ours: Callable[[], object], baseline: Callable[[], object],
                rounds: int) -> tuple[list[float], list[float]]:
    """Rounds alternate which side goes first, so a load spike from other work on the
    machine lands on both sides rather than skewing the ratio."""
    ours(), baseline()  # warm-up: imports, font tables
    times: dict[int, list[float]] = {0: [], 1: []}
    for round_index in range(rounds):
        order = (0, 1) if round_index % 2 == 0 else (1, 0)
        for side in order:
            gc.collect()
            start = time.perf_counter()
            (ours if side == 0 else baseline)()
            times[side].append((time.perf_counter() - start) * 1000)
    return times[0], times[1]


def _heap_peak_mb(call: Callable[[], object]) -> float:
    gc.collect()
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def run(rounds: int) -> dict:
    process = psutil.Process()
    with tempfile.TemporaryDirectory(prefix="jobctrl-bench-resume-") as folder:
        inputs = {
            "pdf, 1 column": ("cv.pdf", make_pdf(), baseline_pdf),
            "pdf, 2 columns": ("cv.pdf", make_two_column_pdf(Path(folder)), baseline_pdf),
            "docx": ("cv.docx", make_docx(), baseline_docx),
        }
    rss_before = process.memory_info().rss / 2**20
    results = {}
    for label, (name, data, baseline) in inputs.items():
        def ours(data=data, name=name):
            return import_resume(data, file_name=name, content_type=None)

        def theirs(data=data, baseline=baseline):
            return baseline(data)

        check = ours()
        ours_ms, baseline_ms = _timed_pair(ours, theirs, rounds)
        results[label] = {
            "bytes": len(data),
            "pages": check.pages,
            "work_entries": len(check.resume.work),
            "unplaced": len(check.unplaced),
            "import_ms": summary(ours_ms),
            "baseline_ms": summary(baseline_ms),
            "import_heap_peak_mb": _heap_peak_mb(ours),
            "baseline_heap_peak_mb": _heap_peak_mb(theirs),
        }
    rss_after = process.memory_info().rss / 2**20
    return {"rounds": rounds, "results": results, "rss_mb": {"before": rss_before, "after": rss_after},
            "machine": machine_info()}


def print_table(report: dict) -> None:
    print(f"résumé import, {report['rounds']} rounds each (median ms; heap = tracemalloc peak of one call)")
    header = (f"{'input':<16}{'pages':>6}{'KB':>7}{'jobs':>6}{'unpl.':>6}{'import':>9}{'baseline':>10}"
              f"{'ratio':>8}{'heap MB':>9}{'base MB':>9}")
    print(header)
    print("-" * len(header))
    for label, row in report["results"].items():
        ours, base = row["import_ms"]["median"], row["baseline_ms"]["median"]
        print(f"{label:<16}{row['pages'] or '-':>6}{row['bytes'] / 1024:>7.0f}{row['work_entries']:>6}"
              f"{row['unplaced']:>6}{ours:>9.1f}{base:>10.1f}{ours / base:>7.2f}×"
              f"{row['import_heap_peak_mb']:>9.1f}{row['baseline_heap_peak_mb']:>9.1f}")
    rss = report["rss_mb"]
    print(f"process RSS: {rss['before']:.0f} MB before the first import, "
          f"{rss['after']:.0f} MB after the last")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", help="also write the raw results here")
    args = parser.parse_args()
    report = run(args.rounds)
    print_table(report)
    write_json(args.json, report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
