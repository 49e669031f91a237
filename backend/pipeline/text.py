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


def vocabulary(words: str) -> frozenset[str]:
    return frozenset(words.split())


# Short function words that tell the languages JobCtrl writes letters in apart. Words
# two languages share ("de", "la", "en") count for both; the most hits wins, English on a tie.
_FUNCTION_WORDS = {
    "en": vocabulary("the and of to in for with on is was my our i we this that from by"),
    "de": vocabulary("der die das und mit für von zu im den des ist ich bei auf eine einer und sowie"),
    "fr": vocabulary("le la les des et pour avec dans une du au sur je aux ses ces est"),
    "es": vocabulary("el la los las y de con para en una del por que mi al es como"),
    "nl": vocabulary("de het een en van met voor op ik bij naar zijn"),
}


def text_language(text: str) -> str:
    """The language a text is written in ("en", "de", "fr", "es", "nl"), by its function
    words; "en" when it cannot tell."""
    words = re.findall(r"[^\W\d_]+", text.lower())
    counts = {code: sum(word in vocabulary for word in words) for code, vocabulary in _FUNCTION_WORDS.items()}
    best = max(counts, key=lambda code: (counts[code], code == "en"))
    return best if counts[best] > counts["en"] else "en"
