"""Small text helpers shared by the offline scoring and writing heuristics, and the
posting text they all read (:class:`JobText`)."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class JobText:
    """What the writing and scoring stages know about a posting."""

    title: str
    company: str
    location: str | None
    remote: str | None
    description: str
    salary_min: int | None = None
    salary_max: int | None = None
    salary_currency: str | None = None


def normalize(text: str) -> str:
    return " ".join(text.lower().split())


def contains_term(haystack: str, term: str) -> bool:
    """Whole-word, case-insensitive match that still works for terms like C++, .NET, CI/CD."""
    needle = normalize(term)
    if not needle:
        return False
    pattern = r"(?<![a-z0-9])" + re.escape(needle) + r"(?![a-z0-9])"
    return re.search(pattern, haystack) is not None


def title_tokens(title: str) -> set[str]:
    return {token for token in re.findall(r"[a-z0-9+#]+", title.lower()) if len(token) > 1}


SENIORITY = {"junior", "senior", "staff", "principal", "lead", "head", "of", "sr", "jr", "ii", "iii"}


def title_similarity(target: str, title: str) -> float:
    """Share of the target title's meaningful words found in the posting's title."""
    wanted = title_tokens(target) - SENIORITY
    if not wanted:
        return 0.0
    return len(wanted & title_tokens(title)) / len(wanted)


def first_sentences(text: str, limit: int = 2) -> str:
    sentences = re.split(r"(?<=[.!?])\s+", text.strip())
    return " ".join(sentences[:limit]).strip()


def human_list(items: list[str]) -> str:
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    return ", ".join(items[:-1]) + " and " + items[-1]
