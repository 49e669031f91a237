"""The materials a job gets: a tailored resume and a cover letter, as stored JSON."""

from __future__ import annotations

from pydantic import Field

from backend.domain.model import CamelModel


class ResumeSection(CamelModel):
    title: str = Field(min_length=1, max_length=120)
    items: list[str] = Field(default_factory=list, max_length=60)


class ResumeDoc(CamelModel):
    name: str = Field(min_length=1, max_length=200)
    headline: str = Field(default="", max_length=300)
    contact_lines: list[str] = Field(default_factory=list, max_length=10)
    summary: str = Field(default="", max_length=3000)
    sections: list[ResumeSection] = Field(default_factory=list, max_length=20)


class CoverLetterDoc(CamelModel):
    sender_name: str = Field(min_length=1, max_length=200)
    sender_contact: list[str] = Field(default_factory=list, max_length=10)
    date_line: str
    recipient_lines: list[str] = Field(default_factory=list, max_length=10)
    salutation: str
    paragraphs: list[str] = Field(min_length=1, max_length=12)
    closing: str
    signature: str
