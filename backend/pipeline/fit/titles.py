"""Title families and seniority: what kind of job a title names, and at what level.

A family is an occupation of the taxonomy (``occupations``): an ISCO-08 group reached
through ESCO's titles, so "Ward Sister", "Registered Nurse" and "infirmier" are one family
and "Konstrukteur" is a mechanical engineer. The distance between two families says how
far a job is from the one the job seeker wants: 0 the same work, 1 the same field, 2 a
neighbouring field (data ↔ software), 3 another line of work (nursing ↔ data).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

from backend.pipeline.fit.occupations import Occupation, field_of, occupation_distance, occupation_of
from backend.pipeline.text import title_similarity


def title_family(title: str, *, by_head: bool = True) -> str | None:
    """The ISCO-08 group a title names ("2221" for "Ward Sister"), or None."""
    occupation = occupation_of(title, by_head=by_head)
    return occupation.code if occupation else None


@lru_cache(maxsize=4096)
def family_distance(a: str, b: str) -> int:
    return occupation_distance(Occupation(a, field_of(a), ""), Occupation(b, field_of(b), ""))


def family_name(family: str) -> str:
    """The line of work in words: "nursing", "data and analytics"."""
    return Occupation(family, field_of(family), "").field_name


# --------------------------------------------------------------------------- seniority

LEVEL_NAMES = {0: "intern", 1: "junior", 2: "mid-level", 3: "senior", 4: "staff / lead",
               5: "principal / head"}
_LEVELS: tuple[tuple[int, re.Pattern[str]], ...] = tuple(
    (level, re.compile(pattern, re.IGNORECASE)) for level, pattern in (
        (5, r"\bprincipal\b|\bdistinguished\b|\bhead of\b|\bdirector\b|\bvp\b|vice president|\bchief\b"
            r"|\bleiter(?:in)?\b|\bleitung\b|\bdirect(?:eur|rice)\b|\bdirector(?:a)?\b|\bjef[ea] de\b"),
        (4, r"\bstaff\b|\blead\b|\barchitect\b"),
        (3, r"\bsenior\b|\bsr\b\.?|\biii\b"),
        (0, r"\bintern(?:ship)?\b|\btrainee\b|\bapprentice(?:ship)?\b|\bworking student\b|\bco-?op\b"
            r"|\bwerkstudent(?:in)?\b|\bpraktikum\b|\bpraktikant(?:in)?\b|\bausbildung\b|\bstage\b"
            r"|\bstagiaire\b|\bstagiair\b|\b\w*stage\b|\balternan(?:ce|t)\b|\bpr[áa]cticas\b|\bbecari[oa]\b|\bstudent\b"),
        (1, r"\bjunior\b|\bjr\b\.?|\bentry[- ]level\b|\bgraduate\b|\bnew grad\b|\bassociate\b"),
        (2, r"\bmid[- ]level\b|\bintermediate\b|\bii\b"),
    ))


@lru_cache(maxsize=4096)
def title_level(title: str) -> int | None:
    """The seniority a title states (None when it states none: "Backend Engineer")."""
    for level, pattern in _LEVELS:
        if pattern.search(title):
            return level
    return None


def level_from_years(years: float) -> int:
    """A level for an untitled career: the years say junior, mid-level or senior — never
    staff, which is a title, not a duration."""
    if years < 2:
        return 1
    if years < 5:
        return 2
    return 3


def level_label(level: int) -> str:
    return LEVEL_NAMES[level]


# --------------------------------------------------------------------------- preparation order


def likely_fit_first(titles: Mapping[str, str], target_titles: Sequence[str]) -> list[str]:
    """Job ids, the titles nearest the profile's targets first (the same line of work,
    then the most target words), the board's order kept among equals. Only an order for
    the queue, from the title alone: Score still decides every job's fit."""
    targets = [family for target in target_titles if (family := title_family(target))]

    def distance(job_id: str) -> tuple[int, float]:
        title = titles[job_id]
        family = title_family(title)
        nearest = min((family_distance(t, family) for t in targets), default=3) if family else 3
        words = max((title_similarity(t, title) for t in target_titles), default=0.0)
        return nearest, -words

    return sorted(titles, key=distance)
