"""Materials rendering cost: résumé + cover-letter PDFs with Typst against the old fpdf2 renderer.

Each round renders ``--docs`` résumés (3 roles × 5 bullets, every document slightly
different so no cache can hand back a previous page) and as many letters, with:

- ``fpdf2`` — the pre-Typst renderer, ``bench/baseline_fpdf_render.py`` (the baseline);
- ``typst classic`` / ``typst compact`` — ``backend.pipeline.pdf`` as the app uses it (one
  font book and one Compiler per template, reused across calls);
- ``typst, no reuse`` — the same templates with a new font book and Compiler for every
  document, to show what the reuse buys.

Both sides write the file the same way (temp file + fsync + ``os.replace``). Rounds alternate
which side goes first. The very first document of each side is timed separately (imports,
font scan, template parse) and left out of the medians.

    .venv/bin/python bench/materials_render.py
    .venv/bin/python bench/materials_render.py --docs 20 --rounds 5 --json materials.json
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_info, summary, write_json  # noqa: E402

FIXED = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def sample_resume(n: int):
    from backend.pipeline.documents import ResumeDoc

    roles = [("Senior Backend Engineer", "Nordlys Payments", "2021-03", None),
             ("Backend Engineer", "Fjord Logistics", "2017-06", "2021-02"),
             ("Software Developer", "Københavns Kommune", "2015-08", "2017-05")]
    return ResumeDoc.model_validate({
        "name": f"Zoë Nørgaard {n}",
        "headline": "Senior Backend Engineer · Distributed Systems",
        "contact": {"email": f"zoe{n}@example.com", "phone": "+45 20 12 34 56",
                    "locations": ["Copenhagen, Denmark"], "links": ["github.com/zoenorgaard"]},
        "summary": f"Backend engineer (profile {n}) with nine years of experience building payment "
                   "and logistics platforms in Python and Go; boring, observable systems.",
        "experience": [
            {"position": position, "employer": employer, "location": "Denmark", "startDate": start,
             "endDate": end,
             "bullets": [f"Delivered improvement {n}.{b} to a production system used by thousands of "
                         "people every day, measured and written up for the team." for b in range(5)]}
            for position, employer, start, end in roles
        ],
        "skills": [{"group": "Languages", "items": ["Python", "Go", "SQL"]},
                   {"group": "Platforms", "items": ["PostgreSQL", "Kafka", "Temporal", "Kubernetes"]}],
        "education": [{"institution": "Technical University of Denmark", "degree": "M.Sc. Computer Science",
                       "startDate": "2013", "endDate": "2015"}],
        "languages": ["Danish (native)", "English (fluent)"],
        "certifications": ["Certified Kubernetes Application Developer (2020)"],
    })


def sample_letter(n: int):
    from backend.pipeline.documents import CoverLetterDoc

    return CoverLetterDoc.model_validate({
        "senderName": f"Zoë Nørgaard {n}",
        "senderContact": [f"zoe{n}@example.com", "+45 20 12 34 56", "Copenhagen, Denmark"],
        "dateLine": "1 December 2026",
        "recipientLines": ["Hiring Team", f"Acme Analytics {n} ApS", "Vesterbrogade 12"],
        "salutation": "Dear Hiring Team,",
        "paragraphs": [{"text": f"Paragraph {p} of letter {n}: I built and ran payment backends in Python "
                                "and Go, and your posting reads like the work I enjoy most." * 2}
                       for p in range(4)],
        "closing": "Kind regards,",
        "signature": f"Zoë Nørgaard {n}",
    })


# --------------------------------------------------------------------------- renderers


def fpdf_renderer():
    import baseline_fpdf_render as old

    def as_old_resume(resume):
        sections = []
        for entry in resume.experience:
            dates = f"{entry.start_date} – {entry.end_date or 'Present'}"
            title = f"{entry.position}, {entry.employer} · {dates}"
            sections.append(old.ResumeSection(title=title, items=list(entry.bullets)))
        sections.append(old.ResumeSection(title="Skills", items=[
            f"{line.group}: {', '.join(line.items)}" for line in resume.skills]))
        sections.append(old.ResumeSection(title="Education", items=[
            f"{line.institution}, {line.degree}" for line in resume.education]))
        sections.append(old.ResumeSection(title="Languages", items=list(resume.languages)))
        contact = resume.contact
        return old.ResumeDocument(name=resume.name, headline=resume.headline,
                                  contact_lines=[contact.email, contact.phone, *contact.locations],
                                  summary=resume.summary, sections=sections)

    def as_old_letter(letter):
        return old.CoverLetterDocument(**{**letter.model_dump(exclude={"edited"}),
                                          "paragraphs": [p.text for p in letter.paragraphs]})

    def resume(doc, path):
        return old.render_resume_pdf(as_old_resume(doc), path, page_size="a4", creation_date=FIXED)

    def letter(doc, path):
        return old.render_cover_letter_pdf(as_old_letter(doc), path, page_size="a4", creation_date=FIXED)

    return resume, letter


def typst_renderer(template: str, *, reuse: bool):
    from backend.pipeline import pdf

    def fresh():
        if not reuse:  # what every call would pay without the module-level caches
            pdf._fonts.cache_clear()
            pdf._compilers.clear()

    def resume(doc, path):
        fresh()
        return pdf.render_resume_pdf(doc, path, template=template, creation_date=FIXED)

    def letter(doc, path):
        fresh()
        return pdf.render_cover_letter_pdf(doc, path, creation_date=FIXED)

    return resume, letter


# --------------------------------------------------------------------------- timing


def timed(render: Callable, doc, path: Path) -> tuple[float, int]:
    started = time.perf_counter()
    info = render(doc, path)
    return time.perf_counter() - started, info.pages


def first_call(name: str, make: Callable, folder: Path) -> dict:
    """Import + first résumé + first letter: what the worker pays once per process."""
    started = time.perf_counter()
    resume, letter = make()
    resume(sample_resume(0), folder / f"{name}-first-resume.pdf")
    letter(sample_letter(0), folder / f"{name}-first-letter.pdf")
    return {"first_pair_s": time.perf_counter() - started}


def run(args) -> dict:
    variants = {
        "fpdf2": fpdf_renderer,
        "typst classic": lambda: typst_renderer("classic", reuse=True),
        "typst compact": lambda: typst_renderer("compact", reuse=True),
        "typst, no reuse": lambda: typst_renderer("classic", reuse=False),
    }
    resumes = [sample_resume(n) for n in range(1, args.docs + 1)]
    letters = [sample_letter(n) for n in range(1, args.docs + 1)]
    results = {name: {"resume": [], "letter": [], "pages": set()} for name in variants}
    with tempfile.TemporaryDirectory(prefix="materials-bench-") as tmp:
        folder = Path(tmp)
        firsts = {name: first_call(name.replace(" ", "_").replace(",", ""), make, folder)
                  for name, make in variants.items()}
        renderers = {name: make() for name, make in variants.items()}
        for round_no in range(args.rounds):
            order = list(renderers) if round_no % 2 == 0 else list(reversed(renderers))
            for name in order:
                render_resume, render_letter = renderers[name]
                for n, (resume, letter) in enumerate(zip(resumes, letters, strict=True)):
                    seconds, pages = timed(render_resume, resume, folder / f"r{n}.pdf")
                    results[name]["resume"].append(seconds)
                    results[name]["pages"].add(pages)
                    seconds, _ = timed(render_letter, letter, folder / f"l{n}.pdf")
                    results[name]["letter"].append(seconds)
    return {name: {"resume": summary(r["resume"]), "letter": summary(r["letter"]),
                   "resume_pages": sorted(r["pages"]), **firsts[name]}
            for name, r in results.items()}


def print_table(table: dict) -> None:
    base = table["fpdf2"]
    print(f"{'renderer':<16} {'résumé ms':>10} {'ratio':>6} {'letter ms':>10} {'ratio':>6} "
          f"{'pair ratio':>10} {'first pair s':>13} pages")
    for name, row in table.items():
        resume_ms, letter_ms = row["resume"]["median"] * 1e3, row["letter"]["median"] * 1e3
        pair = (row["resume"]["median"] + row["letter"]["median"]) / (
            base["resume"]["median"] + base["letter"]["median"])
        print(f"{name:<16} {resume_ms:>10.1f} {resume_ms / (base['resume']['median'] * 1e3):>5.2f}× "
              f"{letter_ms:>10.1f} {letter_ms / (base['letter']['median'] * 1e3):>5.2f}× "
              f"{pair:>9.2f}× {row['first_pair_s']:>13.2f} {row['resume_pages']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=10, help="documents of each kind per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", help="also write the raw results here")
    args = parser.parse_args()
    table = run(args)
    print_table(table)
    write_json(args.json, {"machine": machine_info(), "docs": args.docs, "rounds": args.rounds,
                           "results": table})
    return 0


if __name__ == "__main__":
    sys.exit(main())
