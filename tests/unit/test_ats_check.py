"""The applicant-tracking-system check: every résumé template, for twelve people in
different lines of work and countries, reads back whole as PDF and as Word, by JobCtrl's
importer and as plain text. A template that does not is a failing test. And the check
names what did not come back."""

from __future__ import annotations

from functools import cache

import pytest

from backend.pipeline import pdf as pdf_module
from backend.pipeline import word
from backend.pipeline.ats_check import AtsCheck, check_resume
from backend.pipeline.documents import ExperienceEntry, ResumeDoc
from backend.pipeline.score import offline_score
from backend.pipeline.tailor import offline_tailor
from backend.store.materials import resume_ats_check
from tests.fit_evaluation import TODAY, label_of, load_postings, load_seekers

SEEKERS = [seeker.id for seeker in load_seekers()]


@cache
def tailored(seeker_id: str) -> ResumeDoc:
    """The seeker's résumé as the offline writer tailors it for a posting that fits them."""
    seeker = next(s for s in load_seekers() if s.id == seeker_id)
    postings = load_postings()
    posting = next((p for p in postings if label_of(p, seeker_id)["label"] == "good"), postings[0])
    job = posting.job
    return offline_tailor(seeker.profile, job, offline_score(seeker.profile, job, today=TODAY))


def test_the_personas_cover_many_lines_of_work():
    assert len(SEEKERS) >= 12
    assert all(len(tailored(seeker).experience) >= 3 for seeker in SEEKERS[:3])


@pytest.mark.parametrize("seeker", SEEKERS)
@pytest.mark.parametrize("template", pdf_module.TEMPLATES)
def test_every_template_reads_back_whole_as_pdf(seeker, template):
    resume = tailored(seeker)
    check = check_resume(resume, pdf_module.resume_pdf_bytes(resume, template=template), "pdf")
    assert check.ok, check.missing


@pytest.mark.parametrize("seeker", SEEKERS)
def test_the_word_file_reads_back_whole(seeker):
    resume = tailored(seeker)
    check = check_resume(resume, word.resume_docx_bytes(resume), "docx")
    assert check.ok, check.missing


def _shown_one_way_checked_another(changed: ResumeDoc, file_format: str) -> AtsCheck:
    rendered = tailored("data_analyst_toronto")
    data = (pdf_module.resume_pdf_bytes(rendered) if file_format == "pdf"
            else word.resume_docx_bytes(rendered))
    return check_resume(changed, data, file_format)


@pytest.mark.parametrize(("file_format", "name"), [("pdf", "PDF"), ("docx", "Word file")])
def test_the_check_names_what_did_not_come_back(file_format, name):
    resume = tailored("data_analyst_toronto")
    first = resume.experience[0]
    label = f"{first.position} at {first.employer}"
    changed = resume.model_copy(update={"experience": [
        first.model_copy(update={"start_date": "2011-01",
                                 "bullets": [*first.bullets, "Ran the Calgary office alone"]}),
        *resume.experience[1:],
        ExperienceEntry(position="Analyst", employer="Shopify", start_date="2009-01",
                        end_date="2010-01", bullets=["Wrote the pricing model"]),
    ]})
    missing = _shown_one_way_checked_another(changed, file_format).missing
    bullet = len(first.bullets) + 1
    assert f"the dates of '{label}' ({name}, plain text)" in missing
    assert f"the dates of '{label}' ({name}, read into entries)" in missing
    assert (f"bullet {bullet} (“Ran the Calgary office alone”) of '{label}' ({name}, plain text)"
            in missing)
    assert f"'Analyst at Shopify' ({name}, read into entries)" in missing
    assert f"the employer of 'Analyst at Shopify' ({name}, plain text)" in missing
    assert f"the dates of 'Analyst at Shopify' ({name}, plain text)" in missing


def test_bullets_out_of_order_do_not_read_back():
    resume = tailored("data_analyst_toronto")
    first = resume.experience[0]
    swapped = resume.model_copy(update={"experience": [
        first.model_copy(update={"bullets": [*reversed(first.bullets[:2]), *first.bullets[2:]]}),
        *resume.experience[1:]]})
    assert not _shown_one_way_checked_another(swapped, "pdf").ok


def test_a_file_that_cannot_be_read_is_named_whole():
    check = check_resume(tailored("rn_houston"), b"%PDF-1.7 not really", "pdf")
    assert check.missing == ("the whole PDF: its text could not be read",
                             "the whole PDF: the importer could not read it")
    with pytest.raises(ValueError):
        check_resume(tailored("rn_houston"), b"", "odt")


def test_a_check_as_stored():
    bad = AtsCheck(("the dates of 'Analyst at Shopify' (PDF, plain text)",))
    assert bad.to_json() == {"ok": False, "missing": list(bad.missing)}
    assert AtsCheck().to_json() == {"ok": True, "missing": []}


def test_the_job_detail_shows_the_latest_resume_files_checks_together():
    def row(kind, generation, check):
        return {"kind": kind, "generation": generation, "atsCheck": check}

    bad = {"ok": False, "missing": ["the dates of 'Analyst at Shopify' (Word file, plain text)"]}
    good = {"ok": True, "missing": []}
    assert resume_ats_check([row("resume_pdf", 2, good), row("resume_docx", 2, bad),
                             row("cover_letter_pdf", 2, None)]) == bad
    assert resume_ats_check([row("resume_pdf", 3, good), row("resume_docx", 2, bad)]) == good
    assert resume_ats_check([row("resume_pdf", 1, None), row("cover_letter_pdf", 1, None)]) is None
    assert resume_ats_check([]) is None
