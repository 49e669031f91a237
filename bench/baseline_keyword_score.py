"""The pre-ledger offline scorer (keyword counts), kept only as a benchmark baseline.

This is ``backend.pipeline.score.offline_score`` as it was before the evidence ledger
replaced it, copied verbatim apart from the imports, so ``score_board.py`` can measure the
new scorer against it in the same run. Nothing in the product calls it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from backend.domain.profile import CandidateProfile
from backend.pipeline.score import JobText
from backend.pipeline.text import contains_term, human_list, normalize, title_similarity


@dataclass(frozen=True)
class KeywordScore:
    score: int
    rationale: str
    matched: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def keyword_score(profile: CandidateProfile, job: JobText) -> KeywordScore:
    text = normalize(f"{job.title} {job.description}")
    reasons: list[str] = []
    points = 0.0

    best_title = max(profile.target_titles, key=lambda t: title_similarity(t, job.title),
                     default=None)
    title_fit = title_similarity(best_title, job.title) if best_title else 0.0
    points += 30 * title_fit
    if best_title and title_fit >= 0.5:
        reasons.append(f"Title fits your target “{best_title}”.")
    elif profile.target_titles:
        reasons.append("Title is outside your target titles.")

    skills = profile.all_skills()
    matched = [skill for skill in skills if contains_term(text, skill)]
    wanted = max(4, min(len(skills), 10))
    points += 35 * min(1.0, len(matched) / wanted)
    if matched:
        reasons.append(f"{len(matched)} of your skills appear: {human_list(matched[:6])}.")
    else:
        reasons.append("None of your listed skills appear in the posting.")

    missing = [kw for kw in profile.must_have_keywords if not contains_term(text, kw)]
    if profile.must_have_keywords:
        points += 10 * (1 - len(missing) / len(profile.must_have_keywords))
        if missing:
            reasons.append(f"Missing must-haves: {human_list(missing)}.")

    points += _remote_points(profile, job, reasons)
    points += _salary_points(profile, job, reasons)

    breakers = [kw for kw in profile.deal_breaker_keywords if contains_term(text, kw)]
    score = round(max(0.0, min(100.0, points)))
    if breakers:
        score = min(score, 10)
        reasons.insert(0, f"Deal-breaker present: {human_list(breakers)}.")
    return KeywordScore(score=score, rationale=" ".join(reasons), matched=matched, missing=missing)


def _remote_points(profile: CandidateProfile, job: JobText, reasons: list[str]) -> float:
    mode = job.remote or "unknown"
    preference = profile.remote_preference
    location_hit = any(contains_term(normalize(job.location or ""), place)
                       for place in profile.locations)
    if preference == "remote_only":
        fits = mode == "remote"
    elif preference == "remote_or_hybrid":
        fits = mode in ("remote", "hybrid") and (mode == "remote" or location_hit
                                                  or not profile.locations)
    elif preference == "onsite":
        fits = mode in ("onsite", "hybrid") and (location_hit or not profile.locations)
    else:
        fits = mode == "remote" or location_hit or not profile.locations
    if mode == "unknown":
        reasons.append("Work arrangement not stated.")
        return 5
    reasons.append(f"{mode.capitalize()} role {'fits' if fits else 'does not fit'} your "
                   f"location preference.")
    return 15 if fits else 0


def _salary_points(profile: CandidateProfile, job: JobText, reasons: list[str]) -> float:
    if not profile.salary_floor:
        return 5
    top = job.salary_max or job.salary_min
    if top is None:
        reasons.append("Salary not stated.")
        return 3
    if profile.salary_currency and job.salary_currency and \
            profile.salary_currency != job.salary_currency:
        reasons.append(f"Salary is in {job.salary_currency}, your floor in "
                       f"{profile.salary_currency}.")
        return 3
    if top >= profile.salary_floor:
        reasons.append(f"Salary up to {top:,} meets your floor of {profile.salary_floor:,}.")
        return 10
    reasons.append(f"Salary up to {top:,} is below your floor of {profile.salary_floor:,}.")
    return -10
