"""Tailor → Cover → PDF offline over the demo board, today's writers against the ones
before the faithful-materials rework, in the same run.

For every demo posting at or above the default fit threshold (50) with the sample
profile (resources/sample), each side writes a résumé and a letter and renders both PDFs:

- ``before`` — bench/baseline_writers (the old tailor / cover) and
  bench/baseline_fpdf_render.py (the old fpdf2 renderer);
- ``now`` — backend.pipeline.tailor / cover, the truthfulness gate on both, and the
  Typst renderer (classic template).

Scoring is shared (it is not part of what changed here) and done once up front. Prints
jobs per minute for each side and the ratio of their times; the target is now/before
≤ 1.5.

    .venv/bin/python bench/materials_pipeline.py [--rounds 3] [--limit 60]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_info  # noqa: E402

TODAY = date(2026, 12, 1)
THRESHOLD = 50


def sample_profile():
    from backend.profile_import import import_resume
    from backend.profile_import.draft import draft_profile, sample_resume_file

    path = sample_resume_file()
    result = import_resume(path.read_bytes(), file_name=path.name, content_type="text/markdown")
    return draft_profile(result, current=None, file_name=path.name, sample=True)


def board_jobs(profile, limit: int):
    from backend.pipeline.posting_text import demo_board_jobs
    from backend.pipeline.score import offline_score

    jobs = []
    for job in demo_board_jobs():
        fit = offline_score(profile, job, today=TODAY)
        if fit.score >= THRESHOLD:
            jobs.append((job, fit))
    return jobs[:limit]


def before_side(profile, folder: Path):
    import baseline_fpdf_render as old_pdf
    from baseline_writers import cover as old_cover
    from baseline_writers import tailor as old_tailor

    def prepare(index: int, job, fit) -> None:
        resume = old_tailor.offline_tailor(profile, job, fit)
        letter = old_cover.offline_cover(profile, job, fit, resume, TODAY)
        old_pdf.render_resume_pdf(old_pdf.ResumeDocument(
            name=resume.name, headline=resume.headline, contact_lines=list(resume.contact_lines),
            summary=resume.summary,
            sections=[old_pdf.ResumeSection(s.title, list(s.items)) for s in resume.sections]),
            folder / f"before-{index}-resume.pdf")
        old_pdf.render_cover_letter_pdf(old_pdf.CoverLetterDocument(**letter.model_dump()),
                                        folder / f"before-{index}-letter.pdf")

    return prepare


def now_side(profile, folder: Path):
    from backend.pipeline import cover, pdf, tailor, truth

    def prepare(index: int, job, fit) -> None:
        resume = tailor.offline_tailor(profile, job, fit)
        truth.gate_materials(resume, None, profile, fit.ledger, job)
        letter = cover.offline_cover(profile, job, fit, resume, TODAY)
        truth.gate_materials(None, letter, profile, fit.ledger, job, today=TODAY)
        pdf.render_resume_pdf(resume, folder / f"now-{index}-resume.pdf", template="classic")
        pdf.render_cover_letter_pdf(letter, folder / f"now-{index}-letter.pdf")

    return prepare


def timed(prepare, jobs) -> float:
    started = time.perf_counter()
    for index, (job, fit) in enumerate(jobs):
        prepare(index, job, fit)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--limit", type=int, default=60, help="at most this many jobs a round")
    args = parser.parse_args()
    profile = sample_profile()
    jobs = board_jobs(profile, args.limit)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        sides = {"before": before_side(profile, folder), "now": now_side(profile, folder)}
        for prepare in sides.values():  # warm-up: imports, fonts, templates
            prepare(-1, *jobs[0])
        times: dict[str, list[float]] = {name: [] for name in sides}
        for round_number in range(args.rounds):
            order = list(sides) if round_number % 2 == 0 else list(reversed(sides))
            for name in order:
                times[name].append(timed(sides[name], jobs))
    print("machine:", machine_info())
    print(f"{len(jobs)} demo jobs at or above fit {THRESHOLD}, {args.rounds} rounds (median)")
    medians = {name: statistics.median(values) for name, values in times.items()}
    for name, seconds in medians.items():
        print(f"  {name:7s} {seconds:6.2f} s  {60 * len(jobs) / seconds:7.1f} jobs/min")
    ratio = medians["now"] / medians["before"]
    print(f"  now / before: {ratio:.2f}x (target <= 1.5x) -> {'OK' if ratio <= 1.5 else 'SLOWER'}")


if __name__ == "__main__":
    main()
