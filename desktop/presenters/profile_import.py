"""The words of an imported draft's review. Qt-free.

The import answer (``POST /v1/profile/import``) says how sure the reading is per section
(``sections``: level and note), what looks wrong (``warnings``: message and suggestion)
and which preferences it took from the résumé (``suggestedPreferences``). These functions
turn that into what the review shows: a note beside each section (a low one marked), the
warning banner's lines, the "suggested from your résumé" marks, and the question asked
before a second import would replace an unsaved draft.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# The API's section → the editor's section that shows it.
EDITOR_SECTION = {"contact": "basics", "work": "work", "education": "education",
                  "skills": "skills", "languages": "languages"}
# The tone of each level (status_indicators.COLORS): sure is quiet, low is marked.
LEVEL_TONES = {"high": "ok", "medium": "idle", "low": "bad"}
LOW_MARK = "⚠"
SUGGESTED_MARK = "Suggested from your résumé — check it"
PREFERENCE_KEYS = ("targetTitles", "locations", "remotePreference", "salaryFloor",
                   "salaryCurrency")


@dataclass(frozen=True)
class SectionNote:
    section: str  # the editor's section key
    text: str
    tone: str
    tip: str


def section_notes(answer: Mapping[str, Any]) -> list[SectionNote]:
    """One note per section the answer judged: "✓ 3 jobs found, each with dates",
    "2 of 4 jobs have no dates", "⚠ No e-mail found — check this section"."""
    notes = []
    for item in answer.get("sections") or []:
        section = EDITOR_SECTION.get(str(item.get("section")))
        level = str(item.get("level"))
        note = str(item.get("note") or "").strip()
        if section is None or level not in LEVEL_TONES or not note:
            continue
        if level == "high":
            text, tip = f"✓ {note}", "The import read this section with confidence"
        elif level == "medium":
            text, tip = note, "Check this section against your résumé"
        else:
            text = f"{LOW_MARK} {note} — check this section"
            tip = "The import is unsure of this section: compare it with your résumé"
        notes.append(SectionNote(section, text, LEVEL_TONES[level], tip))
    return notes


def warning_lines(answer: Mapping[str, Any]) -> list[str]:
    """Each warning as one paragraph: what looks wrong, then what to do."""
    lines = []
    for warning in answer.get("warnings") or []:
        message = str(warning.get("message") or "").strip()
        suggestion = str(warning.get("suggestion") or "").strip()
        if message:
            lines.append(f"{message} {suggestion}".strip())
    return lines


def warning_title(count: int) -> str:
    return ("This draft looks incomplete:" if count == 1
            else f"This draft looks incomplete ({count} things to check):")


def suggested_fields(answer: Mapping[str, Any]) -> list[str]:
    """The preference fields the draft filled from the résumé (camelCase keys)."""
    suggested = answer.get("suggestedPreferences") or {}
    return [key for key in PREFERENCE_KEYS if suggested.get(key) not in (None, "", [])]


def draft_name(answer: Mapping[str, Any]) -> str:
    """What the draft came from, as the replace question names it."""
    if (answer.get("profile") or {}).get("sample"):
        return "the sample profile"
    return (answer.get("source") or {}).get("fileName") or "your file"


@dataclass(frozen=True)
class ReplaceQuestion:
    title: str
    text: str
    detail: str
    replace: str = "Replace"
    keep: str = "Keep editing"


def replace_question(current: str | None, new: str, *, edited: bool) -> ReplaceQuestion:
    """Asked when an import starts while the editor holds unsaved work: a draft from
    ``current`` (None: edits of the saved profile). ``edited``: the user changed it."""
    if current is None:
        return ReplaceQuestion(
            "Replace your unsaved changes?",
            f"Replace your unsaved changes with a draft from {new}?",
            "Your changes to the profile have not been saved and would be lost.")
    detail = ("Your edits to it have not been saved and would be lost." if edited
              else "It has not been saved; it would be lost.")
    return ReplaceQuestion("Replace the unsaved draft?",
                           f"Replace the unsaved draft from {current} with {new}?", detail)
