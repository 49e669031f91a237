"""The candidate profile: what every score, résumé and letter is measured against.

Two parts: the résumé itself, stored as a JSON Resume document (``resume``), and the
job seeker's preferences (titles, places, remote, salary, words). ``resumeText`` keeps
the original text of a profile that was pasted or imported, so nothing is lost when the
structure is a best effort.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from backend.domain.model import CamelModel
from backend.domain.resume import Basics, JsonResume, SkillGroup, Term

RemotePreference = Literal["remote_only", "remote_or_hybrid", "any", "onsite"]

# Flat fields of the first profile shape (before the résumé was structured).
_LEGACY_BASICS = {"name": "name", "email": "email", "phone": "phone", "headline": "label"}


def _clean_keywords(values: list[str]) -> list[str]:
    seen: dict[str, str] = {}
    for value in values:
        text = " ".join(value.split())
        if text and text.lower() not in seen:
            seen[text.lower()] = text
    return list(seen.values())


class ImportOrigin(CamelModel):
    file_name: str | None = Field(default=None, max_length=300)
    format: Literal["pdf", "docx", "text", "markdown", "jsonresume", "pasted"]
    imported_at: str | None = Field(default=None, max_length=40)


class CandidateProfile(CamelModel):
    model_config = ConfigDict(extra="forbid")

    resume: JsonResume = JsonResume()
    resume_text: str | None = Field(
        default=None, max_length=60_000,
        description="The original text of a pasted or imported résumé, kept as it was")
    imported_from: ImportOrigin | None = None
    sample: bool = Field(default=False, strict=True,
                         description="The bundled sample profile, not the user's")
    target_titles: list[Term] = Field(default_factory=list, max_length=50)
    locations: list[Term] = Field(default_factory=list, max_length=50)
    remote_preference: RemotePreference = "any"
    # strict (here and on ``sample``): "90000" is not a number nor 1 a boolean; the schema
    # says integer / boolean, so must validation.
    salary_floor: int | None = Field(default=None, ge=0, le=10_000_000, strict=True)
    salary_currency: str | None = Field(default=None, pattern=r"^[A-Z]{3}$")
    work_authorization: list[Term] = Field(
        default_factory=list, max_length=20,
        description="Countries or regions the candidate may work in without sponsorship")
    must_have_keywords: list[Term] = Field(default_factory=list, max_length=100)
    deal_breaker_keywords: list[Term] = Field(default_factory=list, max_length=100)

    @model_validator(mode="before")
    @classmethod
    def _from_legacy_shape(cls, data: Any) -> Any:
        """Profiles saved before the résumé was structured (flat name / email / skills and
        an optional ``jsonResume``) read as the structured shape."""
        if not isinstance(data, dict):
            return data
        legacy_keys = {*_LEGACY_BASICS, "skills", "json_resume", "jsonResume"}
        if not legacy_keys & data.keys():
            return data
        data = dict(data)
        legacy = data.pop("json_resume", None) or data.pop("jsonResume", None)
        resume = dict(data.get("resume") or legacy or {})  # the structured shape wins
        basics = dict(resume.get("basics") or {})
        for old, new in _LEGACY_BASICS.items():
            value = data.pop(old, None)
            if value and not basics.get(new):
                basics[new] = value
        resume["basics"] = basics
        skills = [s for s in data.pop("skills", None) or [] if isinstance(s, str)]
        listed = JsonResume.model_validate({"skills": resume.get("skills") or []}).skill_names()
        extra = [s for s in skills if s.lower() not in {n.lower() for n in listed}]
        if extra:
            resume["skills"] = [*(resume.get("skills") or []), {"name": "Skills", "keywords": extra}]
        data["resume"] = resume
        return data

    @field_validator("target_titles", "locations", "must_have_keywords",
                     "deal_breaker_keywords", "work_authorization")
    @classmethod
    def _normalize_lists(cls, values: list[str]) -> list[str]:
        return _clean_keywords(values)

    @property
    def basics(self) -> Basics:
        return self.resume.basics

    @property
    def email(self) -> str | None:
        return self.resume.basics.email

    @property
    def phone(self) -> str | None:
        return self.resume.basics.phone

    @property
    def headline(self) -> str | None:
        return self.resume.basics.label

    def all_skills(self) -> list[str]:
        """Every skill the résumé lists, deduplicated, in résumé order."""
        return _clean_keywords(self.resume.skill_names())

    def display_name(self) -> str:
        return self.resume.basics.name or "Candidate"

    def is_empty(self) -> bool:
        return not (self.resume_text or not self.resume.is_empty() or self.target_titles)

    def with_skills(self, skills: list[str]) -> CandidateProfile:
        """A copy whose résumé lists ``skills`` as one group (tests and the sample use it)."""
        groups = [SkillGroup(name="Skills", keywords=_clean_keywords(skills))]
        return self.model_copy(update={"resume": self.resume.model_copy(update={"skills": groups})})
