"""The skill synonym index: canonical names and aliases from ``resources/skill_synonyms.json``.

"postgres", "psql" and "PostgreSQL" are one skill; so are "k8s" and "Kubernetes". The
index is built once per process (lazily, on first use) into two compiled alternations —
one case-insensitive, one for the exact-case spellings such as "Go" or "Excel" that are
also plain English words — so finding every skill in a posting is two regex scans.
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
_AFTER = r"(?![A-Za-z0-9]|\.[A-Za-z0-9])"


@dataclass(frozen=True)
class SkillIndex:
    canonical: dict[str, str]
    """Lower-case spelling (name or alias) → canonical name."""
    exact: dict[str, str]
    """Exact-case spelling → canonical name (matched with case)."""
    anycase_pattern: re.Pattern[str]
    exact_pattern: re.Pattern[str] | None

    def find(self, text: str) -> list[str]:
        """Canonical skills mentioned in ``text``, first mention first, each once."""
        hits: list[tuple[int, str]] = [
            (m.start(), self.canonical[" ".join(m.group(0).lower().split())]) for m in self.anycase_pattern.finditer(text)]
        if self.exact_pattern is not None:
            hits.extend((m.start(), self.exact[m.group(0)]) for m in self.exact_pattern.finditer(text))
        hits.sort()
        return list(dict.fromkeys(name for _, name in hits))

    def canonical_name(self, skill: str) -> str:
        """The canonical spelling of a profile's skill ("postgres" → "PostgreSQL"); an
        unknown skill keeps its own spelling."""
        text = " ".join(skill.split())
        return self.exact.get(text) or self.canonical.get(text.lower()) or text


def _alternation(spellings: list[str], flags: int) -> re.Pattern[str]:
    # Longest first: the regex takes the first alternative that matches ("React Native"
    # before "React").
    ordered = sorted(set(spellings), key=lambda s: (-len(s), s))
    body = "|".join(re.escape(s).replace(r"\ ", r"\s+") for s in ordered)
    return re.compile(f"{_BEFORE}(?:{body}){_AFTER}", flags)


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
        anycase_pattern=_alternation(list(canonical), re.IGNORECASE),
        exact_pattern=_alternation(list(exact), 0) if exact else None,
    )


@cache
def skill_index() -> SkillIndex:
    """The bundled index, built on first use and kept for the life of the process."""
    text = (resources.files("resources") / SYNONYMS_FILE).read_text(encoding="utf-8")
    return build_index(json.loads(text))
