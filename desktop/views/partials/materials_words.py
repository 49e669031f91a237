"""The words of the materials area, Qt-free: an experience entry's fixed heading, what
tailoring left out, why the writer's output was refused, a refused save in plain words.

The documents are ``ResumeDoc`` / ``CoverLetterDoc`` JSON (``backend/pipeline/documents.py``);
one stored before that shape (``sections``, string paragraphs) is read through the same
model, so the editor only ever sees the current shape.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from backend.desktop_contract import CoverLetterDoc, ResumeDoc

KIND_WORDS = {"bullet": ("bullet", "bullets"), "skill": ("skill", "skills"),
              "entry": ("role", "roles")}
MATERIAL_NAMES = {"resume": "résumé", "cover_letter": "cover letter"}
CLAIM = re.compile(r'^\s*["“](?P<claim>.+?)["”]\s*[—–-]+\s*(?P<why>.+?)\s*$')


def current_shape(kind: str, content: dict[str, Any]) -> dict[str, Any]:
    """``content`` as it is, unless it is the first stored shape: then read by the model."""
    old = "sections" in content if kind == "resume" else any(
        isinstance(p, str) for p in content.get("paragraphs") or [])
    if not old:
        return content
    model = ResumeDoc if kind == "resume" else CoverLetterDoc
    try:
        return model.model_validate(content).model_dump(mode="json", by_alias=True)
    except ValidationError:
        return content


def dates_text(start: str | None, end: str | None) -> str:
    """"2021-03 – present"; "2016 – 2020"; "" when neither is known."""
    if not start:
        return end or ""
    return f"{start} – {end or 'present'}"


def entry_heading(entry: dict[str, Any]) -> str:
    """"Senior Backend Engineer — Northwind · Berlin · 2021 – present"."""
    who = " — ".join(part for part in (entry.get("position"), entry.get("employer")) if part)
    rest = [part for part in (entry.get("location"),
                              dates_text(entry.get("startDate"), entry.get("endDate"))) if part]
    return " · ".join([who or "Experience", *rest])


def education_line(line: dict[str, Any]) -> str:
    what = " — ".join(part for part in (line.get("degree"), line.get("institution")) if part)
    when = dates_text(line.get("startDate"), line.get("endDate"))
    return " · ".join(part for part in (what or "Education", when) if part)


def _count(kind: str, n: int) -> str:
    one, many = KIND_WORDS.get(kind, ("item", "items"))
    return f"{n} {one if n == 1 else many}"


def dropped_summary(dropped: list[dict[str, Any]]) -> str | None:
    """"Left out: 3 bullets, 1 skill — why"; None when nothing was."""
    counts: dict[str, int] = {}
    for item in dropped:
        counts[item.get("kind") or "item"] = counts.get(item.get("kind") or "item", 0) + 1
    if not counts:
        return None
    return "Left out: " + ", ".join(_count(kind, n) for kind, n in counts.items()) + " — why"


def dropped_lines(dropped: list[dict[str, Any]]) -> list[str]:
    """"Kubernetes — not asked for by this posting"."""
    return [f"{item.get('text') or '?'} — {item.get('reason') or 'no reason given'}"
            for item in dropped]


def rejection_text(rejection: dict[str, Any]) -> str:
    """"The résumé was not written: it claimed “10 years of Go”, your profile shows 3 years."
    """
    name = MATERIAL_NAMES.get(rejection.get("kind") or "", "document")
    claim = str(rejection.get("claim") or "").strip()
    match = CLAIM.match(claim)
    if match:
        why = match["why"].rstrip(".")
        said = f"it claimed “{match['claim']}”, {why}."
    elif claim:
        said = f"it stated something your profile does not show: {claim.rstrip('.')}."
    else:
        said = "it stated something your profile does not show."
    return f"The {name} was not written: {said}"


def _field_words(path: str) -> str:
    """``experience.0.bullets.3`` -> ``Experience 1, bullets 4``."""
    words: list[str] = []
    for part in path.split("."):
        if part.isdigit() and words:
            words[-1] += f" {int(part) + 1}"
        elif part and part != "body":
            words.append(re.sub(r"(?<!^)(?=[A-Z])", " ", part).lower())
    text = ", ".join(words)
    return text[:1].upper() + text[1:]


def validation_words(message: str) -> str:
    """A refused save (``path: reason; path: reason``) as lines a person reads."""
    lines = []
    for part in message.split("; "):
        path, sep, reason = part.partition(": ")
        if not sep:
            lines.append(part)
            continue
        where = _field_words(path)
        reason = reason.removeprefix("Value error, ")
        lines.append(f"{where}: {reason}" if where else reason)
    return "\n".join(lines)
