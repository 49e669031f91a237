"""How sure a draft is, per section, and the warnings of a draft that looks wrong: the
plain function over made-up import results (no files, no services)."""

from __future__ import annotations

from backend.domain.resume import JsonResume
from backend.profile_import.confidence import (
    MAX_CHARACTERS_PER_JOB,
    NON_WORK_CHARACTERS,
    assess,
)

CONTACT = {"name": "Ada Example", "email": "ada@example.org", "phone": "+49 30 1234567"}


def job(n: int, *, dated: bool = True, employer: bool = True) -> dict:
    return {"name": f"Employer {n}" if employer else None, "position": f"Engineer {n}",
            "startDate": f"20{10 + n}-01" if dated else None, "highlights": ["Did things"]}


def resume(*, basics=CONTACT, work=(), education=(), skills=(), languages=()) -> JsonResume:
    return JsonResume.model_validate({
        "basics": basics, "work": list(work), "education": list(education),
        "skills": list(skills), "languages": list(languages)})


GOOD = resume(work=[job(1), job(2), job(3)],
              education=[{"institution": "TU Berlin", "studyType": "MSc"}],
              skills=[{"name": "Backend", "keywords": ["Python", "SQL"]},
                      {"name": "Ops", "keywords": ["Docker"]}],
              languages=[{"language": "German", "fluency": "Native"}])
TEXT = "x" * 3_000  # a one-page résumé's worth of text


def by_section(assessment) -> dict[str, tuple[str, str]]:
    return {s.section: (s.level, s.note) for s in assessment.sections}


def codes(assessment) -> list[str]:
    return [w.code for w in assessment.warnings]


def test_a_complete_draft_is_sure_of_every_section_and_warns_of_nothing():
    result = assess(GOOD, ["Hobbies: sailing"], TEXT, format="pdf", pages=1)
    assert by_section(result) == {
        "contact": ("high", "Name, e-mail and phone found"),
        "work": ("high", "3 jobs found, each with dates"),
        "education": ("high", "1 school found"),
        "skills": ("high", "3 skills found, in 2 groups"),
        "languages": ("high", "1 language found"),
    }
    assert result.warnings == []


def test_a_missing_email_is_low_a_missing_phone_only_medium():
    no_email = assess(resume(basics={"name": "Ada"}, work=[job(1)]), [], TEXT, format="docx")
    assert by_section(no_email)["contact"] == ("low", "No e-mail or phone number found")
    no_phone = assess(resume(basics={"name": "Ada", "email": "a@b.org"}, work=[job(1)]), [],
                      TEXT, format="docx")
    assert by_section(no_phone)["contact"] == ("medium", "No phone number found")


def test_jobs_without_dates_are_counted_and_warned_with_what_to_do():
    draft = resume(work=[job(1), job(2, dated=False), job(3), job(4, dated=False)])
    result = assess(draft, [], TEXT, format="pdf", pages=1)
    assert by_section(result)["work"] == ("medium", "2 of 4 jobs have no dates")
    warning = next(w for w in result.warnings if w.code == "work_without_dates")
    assert warning.message.startswith("2 of 4 jobs have no dates")
    assert "Type the start (and end) date of each job under Work" in warning.suggestion
    assert "Word file" in warning.suggestion  # a PDF: the Word file usually reads better

    mostly_undated = assess(resume(work=[job(1, dated=False), job(2, dated=False), job(3)]),
                            [], TEXT, format="docx")
    assert by_section(mostly_undated)["work"] == ("low", "2 of 3 jobs have no dates")
    assert "Word file" not in mostly_undated.warnings[0].suggestion  # it is the Word file


def test_a_job_without_employer_is_warned():
    result = assess(resume(work=[job(1), job(2, employer=False)]), [], TEXT, format="pdf")
    assert by_section(result)["work"] == ("medium", "1 of 2 jobs has no employer")
    assert codes(result) == ["work_without_employer"]


def test_few_jobs_for_the_amount_of_text_is_low_and_suggests_the_word_file():
    two_pages = "x" * (NON_WORK_CHARACTERS + 2 * MAX_CHARACTERS_PER_JOB + 10)  # 3 jobs' worth
    result = assess(resume(work=[job(1)]), [], two_pages, format="pdf", pages=2)
    level, note = by_section(result)["work"]
    assert (level, note) == ("low", "Only 1 job found in 2 pages of text")
    warning = result.warnings[0]
    assert warning.code == "few_entries"
    assert warning.message == "Only 1 job found in 2 pages — some jobs were probably missed."
    assert warning.suggestion == ("If your résumé is also a Word file, importing that usually "
                                  "reads better — or type the missing jobs in under Work.")


def test_no_job_in_a_page_of_text_warns_but_a_short_text_with_its_one_job_does_not():
    assert codes(assess(resume(), [], TEXT, format="pdf", pages=1)) == ["few_entries"]
    assert by_section(assess(resume(), [], TEXT, format="pdf"))["work"] == ("low", "No jobs found")
    one_job = "x" * (NON_WORK_CHARACTERS + MAX_CHARACTERS_PER_JOB)
    assert codes(assess(resume(work=[job(1)]), [], one_job, format="pdf", pages=1)) == []
    assert codes(assess(resume(work=[job(1)]), [], one_job + "x", format="pdf")) == ["few_entries"]
    # A short file with no job (a student's): low, but nothing says jobs were missed.
    assert codes(assess(resume(), [], "x" * NON_WORK_CHARACTERS, format="text")) == []


def test_many_unplaced_lines_warn_with_their_share_of_the_text():
    lines = ["A line of about forty characters, unplaced"] * 20  # 860 of 3000: 28 %
    result = assess(GOOD, lines, TEXT, format="pdf", pages=1)
    assert codes(result) == ["many_unplaced"]
    assert result.warnings[0].message == ("20 lines — about 28 % of the text — could not be "
                                          "placed in a section.")
    assert "Show lines" in result.warnings[0].suggestion
    # A few unplaced lines (hobbies, references) are no reason to doubt the draft.
    assert codes(assess(GOOD, lines[:10], TEXT, format="pdf")) == []
    assert codes(assess(GOOD, ["Page 1 of 1"] * 3, "x" * 40, format="pdf")) == []


def test_a_section_with_a_heading_but_nothing_read_is_low_without_heading_medium():
    text = "Ada Example\nada@example.org\n\nEDUCATION\nsomething unreadable\n\nLanguages\n??"
    result = by_section(assess(resume(work=[job(1)]), [], text, format="text"))
    assert result["education"] == ("low", "There is an education section, but no school was read")
    assert result["languages"][0] == "low"
    assert result["skills"] == ("medium", "No skills found")


def test_glued_or_garbled_skills_are_doubted():
    garbled = resume(work=[job(1)], skills=[{"name": "(cid", "keywords": [
        "(cid:127) Built and maintain 40+ dbt models", "Python"]}])
    assert by_section(assess(garbled, [], TEXT, format="pdf"))["skills"] == (
        "medium", "2 skills found; 1 looks like a sentence, not a skill")


def test_a_json_resume_is_not_judged_by_its_text_length():
    text = "{" + "x" * 20_000 + "}"
    result = assess(resume(work=[job(1)]), [], text, format="jsonresume")
    assert codes(result) == []
    assert by_section(result)["work"] == ("high", "1 job found, with dates")


def test_when_every_job_lacks_dates_the_note_says_none_has_them():
    result = assess(resume(work=[job(1, dated=False), job(2, dated=False, employer=False)]), [],
                    TEXT, format="text")
    assert by_section(result)["work"] == (
        "low", "None of the 2 jobs has dates; 1 of 2 jobs has no employer")
    single = assess(resume(work=[job(1, employer=False)]), [], "x" * 900, format="text")
    assert by_section(single)["work"] == ("low", "The job found has no employer")
