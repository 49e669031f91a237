"""The candidate's résumé as a JSON Resume document (https://jsonresume.org/schema).

This is the storage model of the profile's history: every score, tailored résumé and
letter reads it. Only the sections JobCtrl works with are typed; every other key
(``projects``, ``awards``, ``meta``, an entry's ``keywords``...) is kept as it came
(``extra="allow"``), so a JSON Resume file imports and exports losslessly.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, Field, field_validator

from backend.domain.model import CamelModel

_KEEP_EXTRA = ConfigDict(extra="allow")

# Every string in a list has a bound too, like every single field: an unbounded title or
# bullet is stored, scored and sent to a model in full.
Term = Annotated[str, Field(max_length=200)]  # a skill, title, place or keyword
Bullet = Annotated[str, Field(max_length=2000)]  # one résumé line


def _text(value: Any) -> Any:
    return " ".join(value.split()) if isinstance(value, str) else value


def _clean_lines(values: list[str]) -> list[str]:
    """Bullets and keywords as typed, without stray whitespace or empty lines."""
    return [" ".join(v.split()) for v in values if isinstance(v, str) and v.strip()]


def _unique(values: list[str]) -> list[str]:
    seen: dict[str, str] = {}
    for value in _clean_lines(values):
        seen.setdefault(value.lower(), value)
    return list(seen.values())


class _Section(CamelModel):
    model_config = _KEEP_EXTRA

    @field_validator("*", mode="before")
    @classmethod
    def _squash_whitespace(cls, value: Any) -> Any:
        return _text(value)


class Location(_Section):
    address: str | None = Field(default=None, max_length=300)
    postal_code: str | None = Field(default=None, max_length=40)
    city: str | None = Field(default=None, max_length=120)
    country_code: str | None = Field(default=None, max_length=60)
    region: str | None = Field(default=None, max_length=120)


class SocialProfile(_Section):
    network: str | None = Field(default=None, max_length=80)
    username: str | None = Field(default=None, max_length=200)
    url: str | None = Field(default=None, max_length=500)


class Basics(_Section):
    name: str | None = Field(default=None, max_length=200)
    label: str | None = Field(default=None, max_length=200, description="The headline")
    image: str | None = Field(default=None, max_length=500)
    email: str | None = Field(default=None, max_length=200)
    phone: str | None = Field(default=None, max_length=60)
    url: str | None = Field(default=None, max_length=500)
    summary: str | None = Field(default=None, max_length=5000)
    location: Location | None = None
    profiles: list[SocialProfile] = Field(default_factory=list, max_length=30)


class WorkEntry(_Section):
    """One employer, with its own bullets (``highlights``)."""

    name: str | None = Field(default=None, max_length=200, description="The employer")
    position: str | None = Field(default=None, max_length=200)
    location: str | None = Field(default=None, max_length=200)
    url: str | None = Field(default=None, max_length=500)
    start_date: str | None = Field(default=None, max_length=40)
    end_date: str | None = Field(default=None, max_length=40)
    summary: str | None = Field(default=None, max_length=3000)
    highlights: list[Bullet] = Field(default_factory=list, max_length=60)

    @field_validator("highlights")
    @classmethod
    def _clean_highlights(cls, values: list[str]) -> list[str]:
        return _clean_lines(values)

    def heading(self) -> str:
        """"Senior Backend Engineer, Northwind (2021–)": how evidence names this entry."""
        who = ", ".join(part for part in (self.position, self.name) if part)
        start = year_of(self.start_date)
        if start is None:
            return who
        end = year_of(self.end_date) if self.end_date else None
        return f"{who} ({start}–{end or ''})"


class EducationEntry(_Section):
    institution: str | None = Field(default=None, max_length=200)
    url: str | None = Field(default=None, max_length=500)
    area: str | None = Field(default=None, max_length=200)
    study_type: str | None = Field(default=None, max_length=120)
    start_date: str | None = Field(default=None, max_length=40)
    end_date: str | None = Field(default=None, max_length=40)
    score: str | None = Field(default=None, max_length=40)
    courses: list[Term] = Field(default_factory=list, max_length=60)


class SkillGroup(_Section):
    name: str | None = Field(default=None, max_length=120)
    level: str | None = Field(default=None, max_length=60)
    keywords: list[Term] = Field(default_factory=list, max_length=200)

    @field_validator("keywords")
    @classmethod
    def _unique_keywords(cls, values: list[str]) -> list[str]:
        return _unique(values)


class LanguageEntry(_Section):
    language: str | None = Field(default=None, max_length=80)
    fluency: str | None = Field(default=None, max_length=80)


class Certificate(_Section):
    name: str | None = Field(default=None, max_length=200)
    date: str | None = Field(default=None, max_length=40)
    issuer: str | None = Field(default=None, max_length=200)
    url: str | None = Field(default=None, max_length=500)


class JsonResume(CamelModel):
    model_config = _KEEP_EXTRA

    basics: Basics = Basics()
    work: list[WorkEntry] = Field(default_factory=list, max_length=60)
    education: list[EducationEntry] = Field(default_factory=list, max_length=30)
    skills: list[SkillGroup] = Field(default_factory=list, max_length=100)
    languages: list[LanguageEntry] = Field(default_factory=list, max_length=30)
    certificates: list[Certificate] = Field(default_factory=list, max_length=60)

    def skill_names(self) -> list[str]:
        """Every skill the résumé lists: group keywords, or the group name when it has none."""
        names: list[str] = []
        for group in self.skills:
            names.extend(group.keywords or ([group.name] if group.name else []))
        return names

    def is_empty(self) -> bool:
        return not (self.work or self.skills or self.education or self.basics.summary
                    or self.basics.label)

    def export(self) -> dict[str, Any]:
        """The document as JSON Resume: no nulls or empty lists that we added."""
        return _prune(self.model_dump(mode="json", by_alias=True))


def _prune(value: Any) -> Any:
    if isinstance(value, dict):
        pruned = {key: _prune(item) for key, item in value.items()}
        # Empty strings stay: a document that had them gets them back (lossless).
        return {key: item for key, item in pruned.items() if item not in (None, [], {})}
    if isinstance(value, list):
        return [_prune(item) for item in value]
    return value


def year_of(date_text: str | None) -> int | None:
    """JSON Resume dates are ISO 8601 prefixes (2021, 2021-04, 2021-04-01)."""
    if not date_text or len(date_text) < 4 or not date_text[:4].isdigit():
        return None
    return int(date_text[:4])
