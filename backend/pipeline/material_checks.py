"""A checklist for one job's materials, as a reader would judge them: no run-on sentence,
no sentence said twice, no sentence without a purpose for this posting, every claim traced
to the profile, and the files reading back as an applicant-tracking system reads them.

"A purpose for this posting", checkably, for a letter sentence: it names the posting's
role or company (the opening and closing frames), names a requirement the fit check
found met ("You ask for Python and SQL."), says again a profile item its paragraph cites
as evidence when that item answers a met requirement (a work entry or bullet: the
posting's title, skills or years; a language, licence, degree or place: the posting asks
for one), or is the letter's last sentence (the thanks). A sentence about the languages
spoken only when the posting asks for a language, about remote work only when the
posting's arrangement is not one the job seeker asked for, about relocating never. For a
résumé: every must-have term of the posting the profile proves is shown (its text is the
profile's own, chosen for the posting; see ``coverage``).

Each item is the list of what fails it (empty: passed). Used by the review set
(bench/materials_review.py) and the tests of the letter's prose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date

from backend.domain.profile import CandidateProfile
from backend.pipeline import ats_check, coverage, truth
from backend.pipeline.documents import CoverLetterDoc, ResumeDoc
from backend.pipeline.fit.places import posting_arrangement
from backend.pipeline.score import ScoreResult
from backend.pipeline.text import JobText

MAX_WORDS = 45
ITEMS = ("short_sentences", "no_repeats", "purposeful", "traced", "ats")
ITEM_NAMES = {
    "short_sentences": f"no sentence over {MAX_WORDS} words",
    "no_repeats": "no repeated sentence",
    "purposeful": "every sentence has a purpose for this posting",
    "traced": "every claim traced to the profile",
    "ats": "reads back (ATS check)",
}
# Requirement kinds a work entry or one of its bullets answers.
WORK_KINDS = frozenset(("title", "seniority", "experience_years", "skill", "management"))
_ALLOWED_MODES = {"remote_only": {"remote"}, "remote_or_hybrid": {"remote", "hybrid"}}
REMOTE = re.compile(r"remote|homeoffice|télétravail|en remoto", re.I)
RELOCATION = re.compile(r"reloca|umzug|umzieh|déménag|mudarme|traslad", re.I)
SPEAK = re.compile(r"\b(?:I speak|Ich spreche|Je parle|Hablo)\b")
_BULLET_MARKS = re.compile(r"\.\s*\.|[•▪◦]|(?:^|\s)[-*]\s")
# Words too common to tie a sentence to the item it cites.
_COMMON = frozenset((
    "with", "that", "this", "from", "there", "also", "have", "were", "been", "into", "their", "about",
    "which", "while", "work", "role", "team", "same", "after", "before", "later", "when", "years", "year",
    "most", "more", "over", "than", "made"))


def sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-ZÀ-Ý¿¡])", text) if s.strip()]


def body(letter: CoverLetterDoc) -> list[str]:
    """The paragraphs between the opening and the closing."""
    return [p.text for p in letter.paragraphs[1:-1]]


def letter_sentences(letter: CoverLetterDoc, job: JobText) -> list[str]:
    """Every sentence of the letter, the posting's title and company (its own words, not
    the writer's) each replaced by one letter."""
    return [s for p in letter.paragraphs
            for s in sentences(p.text.replace(job.title, "T").replace(job.company, "C"))]


def resume_sentences(resume: ResumeDoc) -> list[str]:
    return [*sentences(resume.summary),
            *(s for entry in resume.experience for bullet in entry.bullets for s in sentences(bullet))]


def long_sentences(said: list[str], limit: int = MAX_WORDS) -> list[str]:
    return [s for s in said if len(s.split()) > limit]


def list_punctuation(said: list[str]) -> list[str]:
    """Sentences joined by a semicolon or marked up as a list (bullets, "..")."""
    return [s for s in said if ";" in s or _BULLET_MARKS.search(s)]


def repeated(said: list[str]) -> list[str]:
    seen: set[str] = set()
    twice = []
    for sentence in said:
        key = " ".join(ats_check.words(sentence))
        if key in seen:
            twice.append(sentence)
        seen.add(key)
    return twice


# -- purpose -----------------------------------------------------------------------------


def unasked(sentence: str, fit: ScoreResult, job: JobText, profile: CandidateProfile) -> str | None:
    """Why a sentence answers nothing the posting asked (languages, remote, relocation)."""
    requirements = fit.ledger.requirements if fit.ledger else []
    if SPEAK.search(sentence) and not any(r.kind == "language" for r in requirements):
        return "languages the posting does not ask for"
    mode = posting_arrangement(job.remote, job.location, job.description).mode
    if REMOTE.search(sentence) and mode in _ALLOWED_MODES.get(profile.remote_preference,
                                                              {"remote", "hybrid", "onsite"}):
        return "remote work, which the posting's arrangement already suits"
    if RELOCATION.search(sentence):
        return "relocation"
    return None


def _content(text: str) -> set[str]:
    return {w for w in ats_check.words(text) if len(w) >= 4 and w not in _COMMON and not w.isdigit()}


def evidence_kinds(profile: CandidateProfile, resume: ResumeDoc, fit: ScoreResult) -> dict[str, str]:
    """What each item a letter may cite is: ``work``, or the requirement kind it answers."""
    kinds: dict[str, str] = {}
    for entry in resume.experience:
        kinds[truth.entry_heading(entry)] = "work"
        kinds.update({bullet: "work" for bullet in entry.bullets})
    source = truth.source_resume(profile)
    kinds.update({truth.language_text(x): "language" for x in source.languages})
    kinds.update({text: "licence" for c in source.certificates
                  for text in (c.name or "", truth.certificate_text(c)) if text})
    kinds.update({s.institution: "degree" for s in source.education if s.institution})
    for requirement in fit.ledger.met() if fit.ledger else []:
        if requirement.evidence:
            kinds.setdefault(requirement.evidence, requirement.kind)
    return kinds


def _answers(kind: str | None, met_kinds: set[str]) -> bool:
    return kind in met_kinds or (kind == "work" and bool(met_kinds & WORK_KINDS))


def aimless_sentences(letter: CoverLetterDoc, profile: CandidateProfile, resume: ResumeDoc,
                      fit: ScoreResult, job: JobText) -> list[str]:
    """The letter's sentences without a purpose for this posting (see the module's rule)."""
    met = fit.ledger.met() if fit.ledger else []
    met_kinds = {r.kind for r in met}
    kinds = evidence_kinds(profile, resume, fit)
    labels = [r.label for r in met if r.kind in ("skill", "language")]
    last = len(letter.paragraphs) - 1
    out = []
    for number, paragraph in enumerate(letter.paragraphs):
        said = sentences(paragraph.text)
        cited = [_content(item) for item in paragraph.evidence if _answers(kinds.get(item), met_kinds)]
        for index, sentence in enumerate(said):
            # The posting's own title ("Account Executive (Remote, UK)") is not the writer's.
            why_not = unasked(sentence.replace(job.title, "T").replace(job.company, "C"), fit, job, profile)
            if why_not is not None:
                out.append(f"{sentence} ({why_not})")
                continue
            names_posting = job.title in sentence or job.company in sentence
            thanks = number == last and index == len(said) - 1
            names_met = any(coverage.names_term(sentence, label) for label in labels)
            restates = any(_content(sentence) & item for item in cited)
            if not (names_posting or thanks or names_met or restates):
                out.append(sentence)
    return out


def uncovered_terms(resume: ResumeDoc, profile: CandidateProfile, fit: ScoreResult,
                    today: date) -> list[str]:
    """Must-have terms the profile proves that the résumé does not show."""
    return [f"{t.term} (proven, not shown)" for t in coverage.keyword_coverage(
        fit.ledger, profile, resume, today=today) if t.proven and not t.in_resume]


# -- traced and read back ----------------------------------------------------------------


def refused_claims(resume: ResumeDoc | None, letter: CoverLetterDoc | None, profile: CandidateProfile,
                   fit: ScoreResult, job: JobText, today: date) -> list[str]:
    """What the truthfulness gate refuses, and letter body paragraphs that cite nothing."""
    problems = []
    try:
        truth.gate_materials(resume, letter, profile, fit.ledger, job, today=today)
    except truth.UnsupportedClaim as refused:
        problems.append(f"{refused.code}: {refused.claim}")
    if letter is not None:
        problems += [f"cites no profile item: {p.text}" for p in letter.paragraphs[1:-1] if not p.evidence]
    return problems


def letter_unread(letter: CoverLetterDoc, data: bytes, file_format: ats_check.FileFormat) -> list[str]:
    """The letter's paragraphs whose words do not come back, in order, from the file's text."""
    haystack = ats_check.words(ats_check.plain_text(data, file_format))
    missing, cursor = [], 0
    for number, paragraph in enumerate(letter.paragraphs, start=1):
        end = ats_check.find_run(haystack, ats_check.words(paragraph.text), cursor)
        if end is None:
            missing.append(f"paragraph {number} ({ats_check.FORMAT_NAMES[file_format]})")
        else:
            cursor = end
    return missing


# -- the checklist -----------------------------------------------------------------------


@dataclass
class Checklist:
    document: str  # resume | letter
    problems: dict[str, list[str]] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return not any(self.problems.values())

    def to_json(self) -> dict:
        return {"document": self.document, "passed": self.passed,
                "items": {item: {"check": ITEM_NAMES[item], "passed": not self.problems.get(item),
                                 "problems": self.problems.get(item, [])} for item in ITEMS}}


def resume_checklist(resume: ResumeDoc, profile: CandidateProfile, fit: ScoreResult, job: JobText,
                     today: date, ats: list[dict]) -> Checklist:
    """``ats``: the ATS check of each rendered résumé file (``AtsCheck.to_json()``)."""
    said = resume_sentences(resume)
    return Checklist("resume", {
        "short_sentences": long_sentences(said),
        "no_repeats": repeated(said),
        "purposeful": uncovered_terms(resume, profile, fit, today),
        "traced": refused_claims(resume, None, profile, fit, job, today),
        "ats": [m for check in ats for m in check["missing"]] + (["no file checked"] if not ats else []),
    })


def letter_checklist(letter: CoverLetterDoc, resume: ResumeDoc, profile: CandidateProfile,
                     fit: ScoreResult, job: JobText, today: date,
                     files: dict[ats_check.FileFormat, bytes]) -> Checklist:
    """``files``: the rendered letter by format, each read back as plain text."""
    said = letter_sentences(letter, job)
    return Checklist("letter", {
        "short_sentences": long_sentences(said) + list_punctuation(said),
        "no_repeats": repeated(said),
        "purposeful": aimless_sentences(letter, profile, resume, fit, job),
        "traced": refused_claims(None, letter, profile, fit, job, today),
        "ats": [m for fmt, data in files.items() for m in letter_unread(letter, data, fmt)]
               + (["no file checked"] if not files else []),
    })
