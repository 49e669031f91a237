"""How sure the import is of each section of a draft, and when the draft looks wrong.

A plain function of the import result (the draft résumé, the lines it could not place, the
extracted text, the file's format and pages): per section (contact, work, education,
skills, languages) a level — ``high``, ``medium`` or ``low`` — with a short note in plain
words ("3 jobs found, each with dates", "2 of 4 jobs have no dates", "No e-mail found"),
and the draft's *warnings*: what looks wrong, in plain words, each with what to do about
it. No I/O, no Qt; the thresholds are named below with the reason for each.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from backend.domain.model import CamelModel
from backend.domain.resume import JsonResume
from backend.domain.resume_structure import read_lines, split_sections

Level = Literal["high", "medium", "low"]
SectionName = Literal["contact", "work", "education", "skills", "languages"]
WarningCode = Literal["few_entries", "many_unplaced", "work_without_dates",
                      "work_without_employer"]

# Text that is not work: name and contact, a short summary, education, skills. Measured
# on the corpus (tests/fixtures/resumes): 400-700 characters; beyond this much, a résumé
# without any job has lost them.
NON_WORK_CHARACTERS = 800
# The most text one job takes: a heading and six to eight long bullets (real résumés run
# 400-1,200 characters a job). More text than this per job found means jobs were missed
# or merged into one.
MAX_CHARACTERS_PER_JOB = 1_500
# Lines that could not be placed, as a share of the text. Projects, hobbies or references
# are unplaced by design and rarely take a fifth of a résumé; a quarter means sections or
# jobs were not recognised.
UNPLACED_SHARE_WARNING = 0.25
# ... and never for a handful of lines (a short file's footer is not a failed reading).
MIN_UNPLACED_LINES = 4
# A "skill" longer than this is a sentence or several skills glued together.
MAX_SKILL_CHARACTERS = 60


class SectionConfidence(CamelModel):
    section: SectionName
    level: Level = Field(description="high: looks complete; medium: check it; low: probably "
                         "wrong or incomplete")
    note: str = Field(description="What was found, in plain words: \"3 jobs found, each "
                      "with dates\", \"No e-mail found\"")


class DraftWarning(CamelModel):
    code: WarningCode
    message: str = Field(description="What looks wrong, in plain words")
    suggestion: str = Field(description="What to do about it")


class DraftAssessment(CamelModel):
    sections: list[SectionConfidence]
    warnings: list[DraftWarning]


def assess_import(result) -> DraftAssessment:
    """:func:`assess` of a :class:`backend.profile_import.ImportResult`."""
    return assess(result.resume, result.unplaced, result.text, format=result.format,
                  pages=result.pages)


def assess(resume: JsonResume, unplaced: list[str], text: str, *, format: str,
           pages: int | None = None) -> DraftAssessment:
    structured = format == "jsonresume"  # the file's own structure: no reading to doubt
    headed = set() if structured else _headed_sections(text)
    characters = len(text.strip())
    few = not structured and _too_few_jobs(len(resume.work), characters)
    sections = [
        _contact(resume),
        _work(resume, few=few, characters=characters, pages=pages),
        _education(resume, headed="education" in headed),
        _skills(resume, headed="skills" in headed),
        _languages(resume, headed="languages" in headed),
    ]
    warnings = _warnings(resume, unplaced, characters, format=format, few=few, pages=pages)
    return DraftAssessment(sections=sections, warnings=warnings)


# --------------------------------------------------------------------------- sections


def _plural(count: int, noun: str, plural: str | None = None) -> str:
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


_HAVING = {"dates": "dates", "employer": "an employer"}


def _has(count: int, total: int, what: str) -> str:
    """"1 of 4 jobs has no dates", "2 of 4 jobs have no dates", "None of the 3 jobs has
    dates", "The job found has no employer"."""
    if count == total:
        return f"The job found has no {what}" if total == 1 else \
            f"None of the {total} jobs has {_HAVING[what]}"
    return f"{count} of {_plural(total, 'job')} {'has' if count == 1 else 'have'} no {what}"


def _contact(resume: JsonResume) -> SectionConfidence:
    basics = resume.basics
    missing = [word for word, value in (("name", basics.name), ("e-mail", basics.email),
                                        ("phone number", basics.phone)) if not value]
    if not missing:
        return SectionConfidence(section="contact", level="high",
                                 note="Name, e-mail and phone found")
    level: Level = "medium" if missing == ["phone number"] else "low"
    return SectionConfidence(section="contact", level=level,
                             note="No " + " or ".join(missing) + " found")


def _too_few_jobs(jobs: int, characters: int) -> bool:
    expected = -(-max(characters - NON_WORK_CHARACTERS, 0) // MAX_CHARACTERS_PER_JOB)  # ceil
    return jobs < expected


def _undated(resume: JsonResume) -> int:
    return sum(1 for entry in resume.work if not entry.start_date)


def _no_employer(resume: JsonResume) -> int:
    return sum(1 for entry in resume.work if not entry.name)


def _work(resume: JsonResume, *, few: bool, characters: int, pages: int | None) -> SectionConfidence:
    total = len(resume.work)
    if not total:
        return SectionConfidence(section="work", level="low", note="No jobs found")
    undated, no_employer = _undated(resume), _no_employer(resume)
    problems = [_has(count, total, what) for count, what in ((undated, "dates"),
                                                             (no_employer, "employer")) if count]
    if few:
        amount = _plural(pages, "page") if pages and pages > 1 else f"{characters:,} characters"
        problems.insert(0, f"Only {_plural(total, 'job')} found in {amount} of text")
    if not problems:
        each = "with dates" if total == 1 else "each with dates"
        return SectionConfidence(section="work", level="high",
                                 note=f"{_plural(total, 'job')} found, {each}")
    # More than half of the jobs incomplete, or jobs missing: the section is doubtful.
    level: Level = "low" if few or 2 * max(undated, no_employer) > total else "medium"
    return SectionConfidence(section="work", level=level, note="; ".join(problems))


def _education(resume: JsonResume, *, headed: bool) -> SectionConfidence:
    entries = resume.education
    if not entries:
        if headed:
            return SectionConfidence(section="education", level="low",
                                     note="There is an education section, but no school was read")
        return SectionConfidence(section="education", level="medium", note="No education found")
    unnamed = sum(1 for entry in entries if not entry.institution)
    if unnamed:
        return SectionConfidence(section="education", level="medium",
                                 note=f"{unnamed} of {len(entries)} without a school name")
    return SectionConfidence(section="education", level="high",
                             note=f"{_plural(len(entries), 'school')} found")


def _skills(resume: JsonResume, *, headed: bool) -> SectionConfidence:
    names = resume.skill_names()
    if not names:
        if headed:
            return SectionConfidence(section="skills", level="low",
                                     note="There is a skills section, but no skill was read")
        return SectionConfidence(section="skills", level="medium", note="No skills found")
    odd = [name for name in names if len(name) > MAX_SKILL_CHARACTERS or "(cid" in name]
    groups = len(resume.skills)
    found = _plural(len(names), "skill") + " found" + (f", in {groups} groups" if groups > 1 else "")
    if odd:
        return SectionConfidence(section="skills", level="medium",
                                 note=f"{found}; {_plural(len(odd), 'looks', 'look')} like "
                                      "a sentence, not a skill")
    return SectionConfidence(section="skills", level="high", note=found)


def _languages(resume: JsonResume, *, headed: bool) -> SectionConfidence:
    entries = [entry for entry in resume.languages if entry.language]
    if not entries:
        if headed:
            return SectionConfidence(section="languages", level="low",
                                     note="There is a languages section, but no language was read")
        return SectionConfidence(section="languages", level="medium", note="No languages found")
    return SectionConfidence(section="languages", level="high",
                             note=f"{_plural(len(entries), 'language')} found")


def _headed_sections(text: str) -> set[str]:
    """The kinds of the sections the text has a heading for ("education", "skills"…)."""
    return {section.kind for section in split_sections(read_lines(text.splitlines()))
            if section.heading is not None}


# --------------------------------------------------------------------------- warnings


def _better_source(format: str) -> str:
    if format == "pdf":
        return "If your résumé is also a Word file, importing that usually reads better"
    return "Check the file's section headings (Experience, Education, Skills…) and import it again"


def _type_in(what: str, format: str) -> str:
    extra = f" {_better_source(format)}." if format == "pdf" else ""
    return f"Type {what} under Work.{extra}"


def _warnings(resume: JsonResume, unplaced: list[str], characters: int, *, format: str,
              few: bool, pages: int | None) -> list[DraftWarning]:
    warnings: list[DraftWarning] = []
    total = len(resume.work)
    if few:
        found = "No jobs were found" if not total else f"Only {_plural(total, 'job')} found"
        length = _plural(pages, "page") if pages and pages > 1 else "this much text"
        warnings.append(DraftWarning(
            code="few_entries", message=f"{found} in {length} — some jobs were probably missed.",
            suggestion=f"{_better_source(format)} — or type the missing jobs in under Work."))
    share = sum(len(line.strip()) for line in unplaced) / characters if characters else 0.0
    if len(unplaced) >= MIN_UNPLACED_LINES and share >= UNPLACED_SHARE_WARNING:
        warnings.append(DraftWarning(
            code="many_unplaced",
            message=f"{len(unplaced)} lines — about {round(share * 100)} % of the text — "
                    "could not be placed in a section.",
            suggestion=f"Open “Show lines” and copy them where they belong. "
                       f"{_better_source(format)}."))
    undated = _undated(resume)
    if undated:
        warnings.append(DraftWarning(
            code="work_without_dates",
            message=f"{_has(undated, total, 'dates')} — your years of experience are counted "
                    "from them.",
            suggestion=_type_in("the start (and end) date of each job", format)))
    no_employer = _no_employer(resume)
    if no_employer:
        warnings.append(DraftWarning(
            code="work_without_employer",
            message=f"{_has(no_employer, total, 'employer')}.",
            suggestion=_type_in("the employer of each job", format)))
    return warnings
