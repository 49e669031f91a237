"""The materials review set: for every job seeker of the fit evaluation set
(``tests/fixtures/fit_eval``), the three postings labelled best for them (good before
acceptable, then by posting id), each prepared as the pipeline prepares a job offline
(``backend.pipeline.job_materials``: Score, Tailor, Cover, the truthfulness gate, PDF and
Word) and judged by ``backend.pipeline.material_checks``' checklist.

``bench/materials_review.py`` writes the files and a README table into
bench/materials_review/; ``tests/unit/test_materials_review.py`` asserts every item
passes for every document.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from backend.pipeline import job_materials, material_checks
from tests.fit_evaluation import GAIN, TODAY, Posting, Seeker, label_of, load_postings, load_seekers

PER_SEEKER = 3


@dataclass
class Reviewed:
    seeker: Seeker
    posting: Posting
    label: str
    materials: job_materials.Materials
    files: dict[str, Path]  # resume_pdf | cover_letter_pdf | resume_docx | cover_letter_docx
    resume_check: material_checks.Checklist
    letter_check: material_checks.Checklist


def best_postings(seeker: Seeker, postings: list[Posting], count: int = PER_SEEKER) -> list[Posting]:
    """The postings labelled best for ``seeker``: good first, then acceptable, by id."""
    wanted = [p for p in postings if label_of(p, seeker.id)["label"] != "no"]
    return sorted(wanted, key=lambda p: (-GAIN[label_of(p, seeker.id)["label"]], p.id))[:count]


def review_pairs() -> Iterator[tuple[Seeker, Posting]]:
    postings = load_postings()
    for seeker in load_seekers():
        for posting in best_postings(seeker, postings):
            yield seeker, posting


def review(seeker: Seeker, posting: Posting, folder: Path) -> Reviewed:
    """One job's materials, rendered into ``folder`` and checked."""
    profile, job = seeker.profile, posting.job
    made = job_materials.offline_materials(profile, job, today=TODAY)
    folder.mkdir(parents=True, exist_ok=True)
    rendered = job_materials.render_both(made.resume, made.letter, folder,
                                         job_materials.render_choices(profile, job.company))
    files = {file.kind: Path(file.info.path) for file in rendered}
    resume_check = material_checks.resume_checklist(
        made.resume, profile, made.fit, job, TODAY,
        ats=[file.ats_check for file in rendered if file.ats_check is not None])
    letter_check = material_checks.letter_checklist(
        made.letter, made.resume, profile, made.fit, job, TODAY,
        files={"pdf": files["cover_letter_pdf"].read_bytes(),
               "docx": files["cover_letter_docx"].read_bytes()})
    return Reviewed(seeker, posting, label_of(posting, seeker.id)["label"], made, files,
                    resume_check, letter_check)
