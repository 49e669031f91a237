"""The materials a job gets: a tailored résumé and a cover letter, as stored JSON.

The résumé keeps the profile's structure: each work entry with its employer, title,
dates, location and its own bullets. Tailoring only selects, orders and (with a model)
rephrases; ``dropped`` records every skill or bullet left out and why. The letter's
paragraphs carry the evidence each one cites. ``edited`` marks a generation the user
wrote by hand (a re-tailor never overwrites it unless asked).

Materials stored before this shape (``contactLines`` + titled ``sections``; paragraphs as
plain strings) still read: ``_from_first_shape`` maps them.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from backend.domain.model import CamelModel


class ResumeContact(CamelModel):
    email: str | None = Field(default=None, max_length=200)
    phone: str | None = Field(default=None, max_length=60)
    locations: list[str] = Field(default_factory=list, max_length=10)
    links: list[str] = Field(default_factory=list, max_length=10)


class ExperienceEntry(CamelModel):
    position: str | None = Field(default=None, max_length=200)
    employer: str | None = Field(default=None, max_length=200)
    location: str | None = Field(default=None, max_length=200)
    start_date: str | None = Field(default=None, max_length=40)
    end_date: str | None = Field(default=None, max_length=40, description="None: present")
    bullets: list[str] = Field(default_factory=list, max_length=30)


class EducationLine(CamelModel):
    institution: str | None = Field(default=None, max_length=200)
    degree: str | None = Field(default=None, max_length=300, description="studyType + area")
    start_date: str | None = Field(default=None, max_length=40)
    end_date: str | None = Field(default=None, max_length=40)


class SkillLine(CamelModel):
    group: str | None = Field(default=None, max_length=120)
    items: list[str] = Field(default_factory=list, max_length=200)


class DroppedItem(CamelModel):
    """Something from the profile the tailored résumé leaves out, and why."""

    kind: str = Field(max_length=40, description="skill | bullet | entry")
    text: str = Field(max_length=600)
    reason: str = Field(max_length=300)


class ResumeDoc(CamelModel):
    name: str = Field(min_length=1, max_length=200)
    headline: str = Field(default="", max_length=300)
    contact: ResumeContact = ResumeContact()
    summary: str = Field(default="", max_length=3000)
    skills: list[SkillLine] = Field(default_factory=list, max_length=30)
    experience: list[ExperienceEntry] = Field(default_factory=list, max_length=30)
    education: list[EducationLine] = Field(default_factory=list, max_length=20)
    languages: list[str] = Field(default_factory=list, max_length=20)
    certifications: list[str] = Field(default_factory=list, max_length=40)
    dropped: list[DroppedItem] = Field(default_factory=list, max_length=400)
    edited: bool = False

    @model_validator(mode="before")
    @classmethod
    def _from_first_shape(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "sections" not in data:
            return data
        data = dict(data)
        lines = data.pop("contactLines", None) or data.pop("contact_lines", None) or []
        data.setdefault("contact", {"email": next((x for x in lines if "@" in x), None),
                                    "locations": [x for x in lines if "@" not in x][1:2]})
        for section in data.pop("sections") or []:
            title, items = str(section.get("title", "")), list(section.get("items") or [])
            if "skill" in title.lower():
                data.setdefault("skills", []).append({"items": items})
            elif title.lower() == "education":
                data.setdefault("education", []).extend({"institution": item} for item in items)
            else:
                data.setdefault("experience", []).append({"bullets": items[:30]})
        return data

    def all_bullets(self) -> list[str]:
        return [bullet for entry in self.experience for bullet in entry.bullets]

    def skill_items(self) -> list[str]:
        return [item for line in self.skills for item in line.items]


class LetterParagraph(CamelModel):
    text: str = Field(min_length=1, max_length=2000)
    evidence: list[str] = Field(
        default_factory=list, max_length=10,
        description="The profile items this paragraph's claims rest on")


class CoverLetterDoc(CamelModel):
    sender_name: str = Field(min_length=1, max_length=200)
    sender_contact: list[str] = Field(default_factory=list, max_length=10)
    date_line: str
    recipient_lines: list[str] = Field(default_factory=list, max_length=10)
    salutation: str
    paragraphs: list[LetterParagraph] = Field(min_length=1, max_length=12)
    closing: str
    signature: str
    edited: bool = False

    @model_validator(mode="before")
    @classmethod
    def _from_first_shape(cls, data: Any) -> Any:
        if isinstance(data, dict) and any(isinstance(p, str) for p in data.get("paragraphs") or []):
            data = {**data, "paragraphs": [{"text": p} if isinstance(p, str) else p
                                           for p in data["paragraphs"]]}
        return data

    def text(self) -> str:
        return "\n\n".join(p.text for p in self.paragraphs)
