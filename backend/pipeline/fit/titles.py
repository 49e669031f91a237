"""Title families and seniority: what kind of job a title names, and at what level.

A family groups titles that do the same work ("Backend Engineer", "Software Engineer,
Backend", "Head of Backend Engineering"). Families sit in clusters (engineering, data,
product, go-to-market, people and operations); the distance between two families says how
far a job is from the one the job seeker wants: 0 the same, 1 a neighbour (backend ↔
full-stack), 2 the same cluster, 3 another line of work (backend ↔ sales).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

from backend.pipeline.text import title_similarity

# (family, readable name, cluster, title pattern). Order matters: the first match wins, so
# specific titles ("Sales Engineer", "Engineering Manager") come before generic ones.
_FAMILIES: tuple[tuple[str, str, str, str], ...] = (
    ("eng_management", "engineering management", "engineering",
     r"engineering manager|head of engineering|director of engineering|vp,? (?:of )?engineering|\bcto\b"),
    ("sales_engineering", "solutions engineering", "gtm",
     r"sales engineer|solutions? (?:engineer|architect|consultant)|head of solutions|pre-?sales"),
    ("devrel", "developer relations", "engineering", r"developer relations|developer advocate|devrel"),
    ("support", "support", "gtm",
     r"support|customer success|help ?desk|service desk"),
    ("qa", "QA", "engineering",
     r"\bqa\b|quality assurance|in test\b|\bsdet\b|test (?:automation )?engineer"),
    ("security", "security", "engineering", r"secur|appsec|penetration|\bsoc\b"),
    ("ml", "machine learning", "engineering",
     r"machine learning|\bml\b|\bai\b|deep learning|applied scientist|\bmlops\b|computer vision|\bnlp\b"),
    ("data_science", "data science", "data", r"data scien|research scientist|statistic"),
    ("data_engineering", "data engineering", "engineering",
     r"data engineer|analytics engineer|data platform"),
    ("analytics", "analytics", "data", r"analyst|analytics|business intelligence|\bbi\b"),
    ("sre", "platform / SRE", "engineering",
     r"site reliability|\bsre\b|devops|dev ops|platform|infrastructure|cloud engineer|systems engineer"),
    ("mobile", "mobile", "engineering", r"mobile|\bios\b|android|react native|flutter"),
    ("fullstack", "full-stack", "engineering", r"full[- ]?stack"),
    ("frontend", "frontend", "engineering", r"front[- ]?end|\bui engineer|web (?:developer|engineer)"),
    ("backend", "backend", "engineering", r"back[- ]?end|\bapi\b|server[- ]side|distributed systems"),
    ("writing", "technical writing", "product", r"writer|documentation|editor"),
    ("product", "product management", "product", r"product (?:manager|owner|lead|director)|head of product"
     r"|\bpm\b|program manager"),
    ("design", "design", "product", r"design|\bux\b|user research"),
    ("marketing", "marketing", "gtm", r"marketing|growth|\bseo\b|content|brand|communications|\bpr\b"),
    ("sales", "sales", "gtm",
     r"sales|account (?:executive|manager)|business development|\bsdr\b|\bbdr\b|\bae\b"),
    ("recruiting", "recruiting", "people", r"recruit|talent|sourcer|people partner|human resources|\bhr\b"),
    ("operations", "operations", "people",
     r"operations|\bops\b|finance|account(?:ant|ing)|controller|legal|coordinator|office manager"),
    ("software", "software engineering", "engineering",
     r"software|developer|programmer|engineer|\bswe\b"),
)
_COMPILED = tuple((family, re.compile(pattern, re.IGNORECASE)) for family, _, _, pattern in _FAMILIES)
FAMILY_NAMES = {family: name for family, name, _, _ in _FAMILIES}
_CLUSTER = {family: cluster for family, _, cluster, _ in _FAMILIES}

# Neighbours: the same skills carry over (distance 1).
_NEAR = {frozenset(pair) for pair in (
    ("backend", "fullstack"), ("backend", "sre"), ("backend", "data_engineering"), ("backend", "software"),
    ("frontend", "fullstack"), ("frontend", "software"), ("frontend", "mobile"), ("fullstack", "software"),
    ("mobile", "software"), ("sre", "software"), ("sre", "security"), ("security", "software"),
    ("qa", "software"), ("ml", "software"), ("ml", "data_engineering"), ("ml", "data_science"),
    ("data_engineering", "software"), ("data_engineering", "analytics"), ("data_science", "analytics"),
    ("devrel", "software"), ("product", "design"), ("sales", "sales_engineering"), ("sales", "marketing"),
    ("support", "sales_engineering"), ("recruiting", "operations"),
)}
# Clusters that share enough work to be "the same line of work, another role" (distance 2).
_BRIDGES = {frozenset(pair) for pair in (
    ("engineering", "data"), ("product", "data"), ("gtm", "engineering"),
)}


@lru_cache(maxsize=4096)  # titles repeat: targets, positions, the board's own titles
def title_family(title: str) -> str | None:
    for family, pattern in _COMPILED:
        if pattern.search(title):
            return family
    return None


def family_distance(a: str, b: str) -> int:
    if a == b:
        return 0
    if frozenset((a, b)) in _NEAR:
        return 1
    cluster_a, cluster_b = _CLUSTER[a], _CLUSTER[b]
    if cluster_a == cluster_b:
        return 2
    # Technical go-to-market roles (support / solutions engineers) sit next to engineering;
    # selling and marketing do not.
    if frozenset((cluster_a, cluster_b)) in _BRIDGES and {a, b} & {
            "support", "sales_engineering", "data_engineering", "ml", "analytics", "data_science",
            "product"}:
        return 2
    return 3


# --------------------------------------------------------------------------- seniority

LEVEL_NAMES = {0: "intern", 1: "junior", 2: "mid-level", 3: "senior", 4: "staff / lead",
               5: "principal / head"}
_LEVELS: tuple[tuple[int, re.Pattern[str]], ...] = tuple(
    (level, re.compile(pattern, re.IGNORECASE)) for level, pattern in (
        (5, r"\bprincipal\b|\bdistinguished\b|\bhead of\b|\bdirector\b|\bvp\b|vice president|\bchief\b"),
        (4, r"\bstaff\b|\blead\b|\barchitect\b"),
        (3, r"\bsenior\b|\bsr\b\.?|\biii\b"),
        (0, r"\bintern(?:ship)?\b|\btrainee\b|\bapprentice\b|\bworking student\b"),
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
