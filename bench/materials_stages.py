"""Tailor → Cover → gate → PDF (and Word, where the tree has it) offline over the demo
board, as the preparation stages of *the tree it is run in* do it; one side of
``materials_vs_commit.py``.

For every demo posting at or above the default fit threshold (50) with the sample profile
(``materials_pipeline.py``'s jobs, scored once up front, not timed): the tailored résumé
and the letter, each through the truthfulness gate, then the render step of that tree's PDF
stage — with ``backend.pipeline.job_materials`` (this tree): both materials as PDF and
Word and each résumé file read back by the ATS check; without it (a commit before it):
the PDF stage's own ``_render_both`` (two PDFs). Writes CPU and wall seconds per round as
JSON.

    PYTHONPATH=<tree> .venv/bin/python bench/materials_stages.py --rounds 3 --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # this tree's bench, in either tree

from materials_pipeline import TODAY, board_jobs, sample_profile  # noqa: E402


def stages(profile):
    """``prepare(job, fit, folder)``: the tree's Tailor, Cover and PDF stages for one job,
    and what its PDF stage writes."""
    try:
        from backend.pipeline import job_materials
    except ImportError:  # before the stages' logic was a plain module
        from backend.pipeline import cover, tailor, truth
        from backend.temporal.activities import preparation

        def prepare(job, fit, folder: Path) -> None:
            resume = tailor.offline_tailor(profile, job, fit)
            truth.gate_materials(resume, None, profile, fit.ledger, job)
            letter = cover.offline_cover(profile, job, fit, resume, TODAY)
            truth.gate_materials(None, letter, profile, fit.ledger, job, today=TODAY)
            paper = preparation._pdf_module().paper_for(profile.basics.location.country_code
                                                        if profile.basics.location else None, "auto")
            preparation._render_both(resume, letter, folder,
                                     preparation.RenderChoices("classic", paper, job.company))

        return prepare, "résumé and letter PDFs"

    def prepare(job, fit, folder: Path) -> None:
        resume = job_materials.offline_resume(profile, job, fit)
        letter = job_materials.offline_letter(profile, job, fit, resume, TODAY)
        job_materials.render_both(resume, letter, folder, job_materials.render_choices(profile, job.company))

    return prepare, "résumé and letter PDFs and Word files, ATS check of both résumé files"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--limit", type=int, default=60, help="at most this many jobs a round")
    parser.add_argument("--json", required=True)
    args = parser.parse_args()
    import backend

    profile = sample_profile()
    jobs = board_jobs(profile, args.limit)
    prepare, renders = stages(profile)
    cpu, wall = [], []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        prepare(*jobs[0], folder)  # warm-up: imports, fonts, templates
        for _ in range(args.rounds):
            started_cpu, started = time.process_time(), time.perf_counter()
            for job, fit in jobs:
                prepare(job, fit, folder)
            cpu.append(time.process_time() - started_cpu)
            wall.append(time.perf_counter() - started)
    Path(args.json).write_text(json.dumps({
        "backend": str(Path(backend.__file__).parent), "jobs": len(jobs), "renders": renders,
        "cpu_s": cpu, "wall_s": wall}), encoding="utf-8")


if __name__ == "__main__":
    main()
