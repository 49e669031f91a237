"""The posting's must-have terms against the profile and the tailored résumé: for each term,
whether the profile proves it (the same rules as the fit checklist, on the profile as it is
now) and whether the résumé's text shows it. Tailoring puts every proven term in; a term the
profile does not prove is never added, so it stays "not in your profile"."""

from __future__ import annotations

import re
from datetime import date

from pydantic import Field

from backend.domain.fit import FitLedger
from backend.domain.model import CamelModel
from backend.domain.profile import CandidateProfile
from backend.pipeline.documents import ResumeDoc
from backend.pipeline.fit import evidence as ev
from backend.pipeline.fit.synonyms import skill_index
from backend.pipeline.text import contains_term, normalize
from backend.pipeline.truth import SUMMARY_ROLE, certificate_text, source_resume

_ROLE_SENTENCE = re.compile(re.escape(SUMMARY_ROLE).replace(r"\{title\}", ".+?").replace(
    r"\{company\}", ".+?") + "$")


class TermCoverage(CamelModel):
    term: str = Field(max_length=200)
    proven: bool = Field(description="The profile proves it (work history, skills or own titles)")
    in_resume: bool | None = Field(description="The tailored résumé shows it; null: no résumé yet")


def must_have_terms(ledger: FitLedger | None) -> list[str]:
    """The skills and abilities the posting requires, in the checklist's order, each once."""
    if ledger is None:
        return []
    terms = [r.label for r in ledger.requirements if r.kind == "skill" and r.importance == "must"]
    return list(dict.fromkeys(terms))


def proves(profile: CandidateProfile, facts: ev.ProfileFacts, term: str) -> bool:
    """The checklist's rule (a work entry, the skills list, a title in another form), or
    the job seeker's own summary or certificates name it: what the résumé may say."""
    index = skill_index()
    canonical = index.canonical_name(term)
    rule = (ev.skill_requirement(facts, canonical, "must") if index.find(canonical)
            else ev.phrase_requirement(facts, term, "must"))
    if rule.status == "met":
        return True
    resume = source_resume(profile)
    own = "\n".join(filter(None, (resume.basics.label, resume.basics.summary,
                                  *(certificate_text(c) for c in resume.certificates))))
    return _names(own, term, ())


def resume_text(resume: ResumeDoc) -> str:
    """Everything a reader of the résumé sees that can name a skill, less the summary's
    closing words naming the posting ("… to the Payroll Specialist role at Acme."): the
    posting's title there is not a claim."""
    summary = _ROLE_SENTENCE.sub("", resume.summary)
    return "\n".join(filter(None, (
        resume.headline, summary, *resume.skill_items(),
        *(line for entry in resume.experience for line in (entry.position, *entry.bullets)),
        *resume.certifications)))


def shows(resume: ResumeDoc, term: str) -> bool:
    """The résumé names ``term``: as a known skill (any of its spellings), word for word, or
    in another form in a title ("Analytics" in "Data Analyst")."""
    titles = tuple(t for t in (resume.headline, *(e.position for e in resume.experience)) if t)
    return _names(resume_text(resume), term, titles)


def names_term(text: str, term: str) -> bool:
    """``text`` names ``term`` (a known skill by its own spellings, else word for word)."""
    return _names(text, term, ())


def _names(text: str, term: str, titles: tuple[str, ...]) -> bool:
    index = skill_index()
    canonical = index.canonical_name(term)
    if index.find(canonical):  # a known skill: only its own spellings count ("Go" is not "go")
        if canonical.lower() in {name.lower() for name in index.find(text)}:
            return True
    elif contains_term(normalize(text), normalize(term)):
        return True
    return ev.word_form_in(term, titles) is not None


def keyword_coverage(ledger: FitLedger | None, profile: CandidateProfile, resume: ResumeDoc | None, *,
                     today: date) -> list[TermCoverage]:
    """Per must-have term of the posting: proven by the profile? shown in the résumé?"""
    facts = ev.profile_facts(profile, today)
    return [TermCoverage(term=term, proven=proves(profile, facts, term),
                         in_resume=None if resume is None else shows(resume, term))
            for term in must_have_terms(ledger)]
