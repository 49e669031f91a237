"""Reading the candidate's own resume (JSON Resume or plain text) into sections.

The tailored resume only ever reorders and selects from what the candidate wrote:
nothing is invented."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from backend.domain.profile import CandidateProfile


@dataclass
class SourceResume:
    summary: str = ""
    experience: list[tuple[str, list[str]]] = field(default_factory=list)  # heading, bullets
    education: list[str] = field(default_factory=list)
    other_sections: list[tuple[str, list[str]]] = field(default_factory=list)


def read_source_resume(profile: CandidateProfile) -> SourceResume:
    if profile.resume.work or not profile.resume_text:
        return _from_json_resume(profile.resume.export())
    return _from_text(profile.resume_text or "")


def _from_json_resume(document: dict) -> SourceResume:
    basics = document.get("basics") or {}
    resume = SourceResume(summary=str(basics.get("summary") or ""))
    for work in document.get("work") or []:
        if not isinstance(work, dict):
            continue
        dates = "–".join(d for d in (work.get("startDate"), work.get("endDate") or "present") if d)
        heading = f"{work.get('position', '')}, {work.get('name') or work.get('company', '')}"
        heading = f"{heading.strip(', ')} ({dates})" if dates else heading.strip(", ")
        bullets = [str(h) for h in work.get("highlights") or []]
        if work.get("summary"):
            bullets.insert(0, str(work["summary"]))
        resume.experience.append((heading, bullets))
    for school in document.get("education") or []:
        if isinstance(school, dict):
            parts = [school.get("studyType"), school.get("area"), school.get("institution")]
            resume.education.append(", ".join(str(p) for p in parts if p))
    return resume


HEADING = re.compile(r"^(?:#+\s*)?([A-Za-z][A-Za-z &/]{1,40}):?\s*$")
BULLET = re.compile(r"^\s*(?:[-*•·]|\d+[.)])\s+")


def _from_text(text: str) -> SourceResume:
    resume = SourceResume()
    current: tuple[str, list[str]] | None = None
    sections: list[tuple[str, list[str]]] = []
    preamble: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        heading = HEADING.match(line)
        if heading and (line.endswith(":") or line.isupper() or line.startswith("#")):
            current = (heading.group(1).strip().title(), [])
            sections.append(current)
        elif current is None:
            preamble.append(line)
        else:
            current[1].append(BULLET.sub("", line))
    resume.summary = " ".join(preamble[1:] if len(preamble) > 1 else preamble)
    for title, lines in sections:
        key = title.lower()
        if key in ("summary", "profile", "about"):
            resume.summary = " ".join(lines)
        elif key in ("experience", "work experience", "employment", "work history"):
            resume.experience.append(("", lines))
        elif key in ("education",):
            resume.education.extend(lines)
        elif key not in ("skills",):
            resume.other_sections.append((title, lines))
    return resume
