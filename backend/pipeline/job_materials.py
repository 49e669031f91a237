"""One job's materials, as the preparation stages make them: the writers' output through
the truthfulness gate, then both materials as PDF and as Word, each résumé file read back
by the applicant-tracking-system check.

The stage activities (backend/temporal/activities/preparation.py) call these one stage at a
time, storing each result in between; :func:`offline_materials` runs the offline stages
for one job in a row, for the review set and the benchmarks.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path

from backend.domain.errors import TypedFailure
from backend.domain.profile import CandidateProfile
from backend.pipeline import cover, score, tailor, truth
from backend.pipeline.documents import CoverLetterDoc, ResumeDoc
from backend.pipeline.text import JobText


def gated_resume(resume: ResumeDoc, profile: CandidateProfile, fit: score.ScoreResult,
                 job: JobText, *, today: date | None = None) -> ResumeDoc:
    """A written résumé, once the truthfulness gate let it through (``UnsupportedClaim``)."""
    truth.gate_materials(resume, None, profile, fit.ledger, job, today=today)
    return resume


def gated_letter(letter: CoverLetterDoc, profile: CandidateProfile, fit: score.ScoreResult,
                 job: JobText, *, today: date) -> CoverLetterDoc:
    """A written letter, once the truthfulness gate let it through."""
    truth.gate_materials(None, letter, profile, fit.ledger, job, today=today)
    return letter


def offline_resume(profile: CandidateProfile, job: JobText, fit: score.ScoreResult, *,
                   today: date | None = None) -> ResumeDoc:
    return gated_resume(tailor.offline_tailor(profile, job, fit), profile, fit, job, today=today)


def offline_letter(profile: CandidateProfile, job: JobText, fit: score.ScoreResult, resume: ResumeDoc,
                   today: date) -> CoverLetterDoc:
    return gated_letter(cover.offline_cover(profile, job, fit, resume, today), profile, fit, job,
                        today=today)


@dataclass(frozen=True)
class Materials:
    fit: score.ScoreResult
    resume: ResumeDoc
    letter: CoverLetterDoc


def offline_materials(profile: CandidateProfile, job: JobText, *, today: date,
                      fit: score.ScoreResult | None = None) -> Materials:
    """Score (unless ``fit`` is given), Tailor and Cover offline, each writer's output gated."""
    fit = fit if fit is not None else score.offline_score(profile, job, today=today)
    resume = offline_resume(profile, job, fit, today=today)
    return Materials(fit, resume, offline_letter(profile, job, fit, resume, today))


# -- rendering ---------------------------------------------------------------------------


class RendererUnavailable(TypedFailure):
    """The PDF renderer (Typst) cannot be loaded in this worker: a broken or partial
    install. Retrying in the same process cannot help; a retry after it is repaired does."""

    code = "renderer_unavailable"
    retryable = False


def pdf_module():
    try:
        from backend.pipeline import pdf
    except ImportError:
        raise RendererUnavailable("the PDF renderer could not be loaded") from None
    return pdf


@dataclass(frozen=True)
class RenderChoices:
    template: str
    paper: str
    company: str


def render_choices(profile: CandidateProfile | None, company: str, *, template: str = "classic",
                   paper: str = "auto") -> RenderChoices:
    """The template, the paper (``auto``: the profile's country's) and the company the
    files are named after."""
    location = profile.basics.location if profile else None
    country = location.country_code if location else None
    return RenderChoices(template=template, paper=pdf_module().paper_for(country, paper), company=company)


@dataclass(frozen=True)
class RenderedFile:
    kind: str  # resume_pdf | cover_letter_pdf | resume_docx | cover_letter_docx
    info: object  # PdfInfo or DocxInfo: path, bytes, pages, sha256
    ats_check: dict | None = None  # résumé files: read back by the importer and as text


def render_both(resume: ResumeDoc, letter: CoverLetterDoc, folder: Path,
                choices: RenderChoices) -> list[RenderedFile]:
    """Both materials as PDF and as Word, under the same names; each résumé file read
    back by the applicant-tracking-system check. CPU work: keep it off an event loop."""
    pdf_logic = pdf_module()
    from backend.pipeline import ats_check, word

    def path(name: str, kind: str, extension: str):
        return folder / pdf_logic.material_file_name(name, kind, choices.company, extension=extension)

    resume_pdf = pdf_logic.resume_pdf_bytes(resume, template=choices.template, paper=choices.paper)
    resume_docx = word.resume_docx_bytes(resume, paper=choices.paper)
    return [
        RenderedFile("resume_pdf", pdf_logic.save_pdf(resume_pdf, path(resume.name, "resume", ".pdf")),
                     ats_check.check_resume(resume, resume_pdf, "pdf").to_json()),
        RenderedFile("cover_letter_pdf", pdf_logic.render_cover_letter_pdf(
            letter, path(letter.sender_name, "cover_letter", ".pdf"), paper=choices.paper)),
        RenderedFile("resume_docx", word.save_docx(resume_docx, path(resume.name, "resume", ".docx")),
                     ats_check.check_resume(resume, resume_docx, "docx").to_json()),
        RenderedFile("cover_letter_docx", word.render_cover_letter_docx(
            letter, path(letter.sender_name, "cover_letter", ".docx"), paper=choices.paper)),
    ]
