"""The skill synonym index: canonical names and aliases from ``resources/skill_synonyms.json``.

"postgres", "psql" and "PostgreSQL" are one skill; so are "k8s" and "Kubernetes". The
index is built once per process (lazily, on first use) into prefix-factored regexes — one
for the case-insensitive spellings, one for the exact-case ones such as "Go" or "Excel"
that are also plain English words — so finding every skill in a posting is two scans.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

SYNONYMS_FILE = "skill_synonyms.json"

# Whole words only, but "C++", ".NET" and "CI/CD" start or end with punctuation, so the
# boundary is "no letter or digit next to the match" rather than \b.
_BEFORE = r"(?<![A-Za-z0-9])"
WORD_END = r"(?![A-Za-z0-9]|\.[A-Za-z0-9])"


@dataclass(frozen=True)
class SkillIndex:
    canonical: dict[str, str]
    """Lower-case spelling (name or alias) → canonical name."""
    exact: dict[str, str]
    """Exact-case spelling → canonical name (matched with case)."""
    lower_source: str
    """The case-insensitive spellings as one prefix-factored regex (no boundaries), for
    scanners that look for skills and other things in one pass over lower-cased text."""
    lower_pattern: re.Pattern[str]
    """``lower_source`` with word boundaries, run over lower-cased text (faster than re.I)."""
    anycase_pattern: re.Pattern[str]
    """The same with re.I, for the rare text whose lower-casing changes its length."""
    exact_pattern: re.Pattern[str] | None

    def spelled(self, lowered_match: str) -> str:
        """The canonical name of a match of ``lower_source``."""
        name = self.canonical.get(lowered_match)
        return name if name is not None else self.canonical[" ".join(lowered_match.split())]

    def hits(self, text: str) -> list[tuple[int, str]]:
        """(offset, canonical name) of every skill mention in ``text``, in text order."""
        lowered = text.lower()
        if len(lowered) == len(text):
            found = [(m.start(), m.group(0)) for m in self.lower_pattern.finditer(lowered)]
        else:
            found = [(m.start(), m.group(0).lower()) for m in self.anycase_pattern.finditer(text)]
        out = [(start, self.spelled(spelling)) for start, spelling in found]
        if self.exact_pattern is not None:
            out.extend((m.start(), self.exact[m.group(0)]) for m in self.exact_pattern.finditer(text))
            out.sort()
        return out

    def find(self, text: str) -> list[str]:
        """Canonical skills mentioned in ``text``, first mention first, each once."""
        return list(dict.fromkeys(name for _, name in self.hits(text)))

    def canonical_name(self, skill: str) -> str:
        """The canonical spelling of a profile's skill ("postgres" → "PostgreSQL"); an
        unknown skill keeps its own spelling."""
        text = " ".join(skill.split())
        return self.exact.get(text) or self.canonical.get(text.lower()) or text


def trie(spellings: list[str]) -> str:
    """One regex for many words, factored by common prefixes ("post(?:gres(?:ql)?|man)"):
    the engine then tests one branch per character instead of every word at every offset."""
    root: dict = {}
    for spelling in spellings:
        node = root
        for char in spelling:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: dict) -> str:
        branches = [(r"\s+" if char == " " else re.escape(char)) + emit(child)
                    for char, child in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return emit(root)


def _alternation(spellings: list[str], flags: int = 0) -> re.Pattern[str]:
    return re.compile(f"{_BEFORE}(?:{trie(spellings)}){WORD_END}", flags)


def build_index(document: dict) -> SkillIndex:
    canonical: dict[str, str] = {}
    exact: dict[str, str] = {}
    for entry in document["skills"]:
        name = entry["name"]
        exact_case = set(entry.get("exactCase", []))
        for spelling in {name, *entry.get("aliases", []), *exact_case}:
            if spelling in exact_case:
                exact[spelling] = name
            else:
                canonical[spelling.lower()] = name
    return SkillIndex(
        canonical=canonical, exact=exact,
        lower_source=trie(list(canonical)),
        lower_pattern=_alternation(list(canonical)),
        anycase_pattern=_alternation(list(canonical), re.IGNORECASE),
        exact_pattern=_alternation(list(exact)) if exact else None,
    )


@cache
def skill_index() -> SkillIndex:
    """The bundled index, built on first use and kept for the life of the process."""
    text = (resources.files("resources") / SYNONYMS_FILE).read_text(encoding="utf-8")
    return build_index(json.loads(text))
