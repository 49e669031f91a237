"""The user's own edit of the résumé or letter: checked by the same truthfulness gate as a
writer's output, but never blocked by it.

``checked_edit`` returns the document as it will be stored and every claim the profile
does not hold (``truth.edit_claims``). The caller shows the claims to the user, who may
remove them, add them to the profile, or keep them ("I can back this up"); kept claims are
recorded on the generation. A letter paragraph whose text the user changed rests on what
its new words name (``cover.rests_on``); an unchanged paragraph keeps what its writer cited.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from backend.domain.fit import FitLedger
from backend.domain.profile import CandidateProfile
from backend.pipeline.cover import rests_on
from backend.pipeline.documents import CoverLetterDoc, ResumeDoc
from backend.pipeline.text import JobText
from backend.pipeline.truth import edit_claims


@dataclass(frozen=True)
class EditFacts:
    """What checking an edit needs, read from the store in one snapshot."""

    profile: CandidateProfile | None
    job: JobText | None
    ledger: FitLedger | None
    resume: dict[str, Any] | None  # the stored résumé (what a letter may cite)
    previous: dict[str, Any] | None  # the stored version of the edited document


@dataclass(frozen=True)
class EditClaim:
    """A claim the profile does not hold: the words that state it, and why, in plain words."""

    claim: str
    why: str

    def as_json(self) -> dict[str, str]:
        return {"claim": self.claim, "why": self.why}


def job_text(job: dict[str, Any], description: str | None) -> JobText:
    return JobText(title=job["title"], company=job["company"], location=job["location"],
                   remote=job["remote"], description=description or "",
                   salary_min=job["salary_min"], salary_max=job["salary_max"],
                   salary_currency=job["salary_currency"])


def with_evidence(letter: CoverLetterDoc, facts: EditFacts) -> CoverLetterDoc:
    """Each paragraph's "Rests on" for the text as the user left it: a paragraph with the
    stored text keeps the stored evidence; any other is worked out from its words."""
    if facts.profile is None or facts.resume is None:
        return letter
    resume = ResumeDoc.model_validate(facts.resume)
    stored = CoverLetterDoc.model_validate(facts.previous) if facts.previous else None
    cited = {p.text: p.evidence for p in stored.paragraphs} if stored else {}
    paragraphs = [p.model_copy(update={"evidence": cited[p.text] if p.text in cited
                                       else rests_on(p.text, facts.profile, resume)})
                  for p in letter.paragraphs]
    return letter.model_copy(update={"paragraphs": paragraphs})


def checked_edit(document: ResumeDoc | CoverLetterDoc, facts: EditFacts, *,
                 today: date | None = None) -> tuple[ResumeDoc | CoverLetterDoc, list[EditClaim]]:
    """The edit as it is stored (a letter's evidence worked out again) and the claims in it
    the profile does not hold. Without a profile there is nothing to check against."""
    if isinstance(document, CoverLetterDoc):
        document = with_evidence(document, facts)
    if facts.profile is None:
        return document, []
    resume = document if isinstance(document, ResumeDoc) else None
    letter = document if isinstance(document, CoverLetterDoc) else None
    found = edit_claims(resume, letter, facts.profile, facts.ledger, facts.job, today=today)
    return document, [EditClaim(c.said or c.claim, c.why or "not in your profile") for c in found]
