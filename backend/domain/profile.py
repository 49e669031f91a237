"""The candidate profile: what every score, resume and letter is measured against."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from backend.domain.model import CamelModel

RemotePreference = Literal["remote_only", "remote_or_hybrid", "any", "onsite"]


def _clean_keywords(values: list[str]) -> list[str]:
    seen: dict[str, str] = {}
    for value in values:
        text = " ".join(value.split())
        if text and text.lower() not in seen:
            seen[text.lower()] = text
    return list(seen.values())


class CandidateProfile(CamelModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(default="", max_length=200)
    email: str | None = Field(default=None, max_length=200)
    phone: str | None = Field(default=None, max_length=60)
    headline: str | None = Field(default=None, max_length=200)
    resume_text: str | None = Field(default=None, max_length=60_000)
    json_resume: dict[str, Any] | None = Field(
        default=None, description="A JSON Resume document (jsonresume.org schema)"
    )
    target_titles: list[str] = Field(default_factory=list, max_length=50)
    locations: list[str] = Field(default_factory=list, max_length=50)
    remote_preference: RemotePreference = "any"
    salary_floor: int | None = Field(default=None, ge=0, le=10_000_000)
    salary_currency: str | None = Field(default=None, pattern=r"^[A-Z]{3}$")
    skills: list[str] = Field(default_factory=list, max_length=300)
    must_have_keywords: list[str] = Field(default_factory=list, max_length=100)
    deal_breaker_keywords: list[str] = Field(default_factory=list, max_length=100)

    @field_validator("target_titles", "locations", "skills", "must_have_keywords",
                     "deal_breaker_keywords")
    @classmethod
    def _normalize_lists(cls, values: list[str]) -> list[str]:
        return _clean_keywords(values)

    @model_validator(mode="after")
    def _json_resume_shape(self) -> CandidateProfile:
        if self.json_resume is not None and not isinstance(self.json_resume.get("basics", {}), dict):
            raise ValueError("jsonResume.basics must be an object")
        return self

    def all_skills(self) -> list[str]:
        """Skills from the profile and the JSON Resume, deduplicated, in profile order."""
        skills = list(self.skills)
        for group in (self.json_resume or {}).get("skills", []) or []:
            if isinstance(group, dict):
                skills.append(str(group.get("name", "")))
                skills.extend(str(k) for k in group.get("keywords", []) or [])
        return _clean_keywords(skills)

    def display_name(self) -> str:
        basics = (self.json_resume or {}).get("basics") or {}
        return self.name or str(basics.get("name") or "") or "Candidate"

    def is_empty(self) -> bool:
        return not (self.resume_text or self.json_resume or self.skills or self.target_titles)
