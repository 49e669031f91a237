"""Score: fit 0–100 with a short rationale, from the profile and the enriched posting.

Offline: transparent keyword heuristics (title, skills, must-haves, deal-breakers,
remote / location, salary), so the number is explainable and costs nothing.
With a model: one JSON completion, validated, clamped and explained.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from pydantic import BaseModel, Field, ValidationError

from backend.domain.errors import TypedFailure
from backend.domain.profile import CandidateProfile
from backend.pipeline.text import contains_term, human_list, normalize, title_similarity


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


@dataclass(frozen=True)
class ScoreResult:
    score: int
    rationale: str
    matched: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def offline_score(profile: CandidateProfile, job: JobText) -> ScoreResult:
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
    return ScoreResult(score=score, rationale=" ".join(reasons), matched=matched, missing=missing)


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


class _ModelScore(BaseModel):
    score: int = Field(ge=0, le=100)
    rationale: str = Field(min_length=1, max_length=1200)
    matched: list[str] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)


SCORE_SYSTEM = (
    "You assess how well a job posting fits a candidate. Be strict and specific. "
    "Answer with one JSON object: {\"score\": integer 0-100, \"rationale\": at most three "
    "short sentences, \"matched\": [skills or requirements the candidate meets], "
    "\"missing\": [requirements the candidate lacks]}. Deal-breakers cap the score at 10."
)


def score_prompt(profile: CandidateProfile, job: JobText) -> str:
    return json.dumps({
        "candidate": {
            "targetTitles": profile.target_titles, "skills": profile.all_skills(),
            "locations": profile.locations, "remotePreference": profile.remote_preference,
            "salaryFloor": profile.salary_floor, "salaryCurrency": profile.salary_currency,
            "mustHave": profile.must_have_keywords, "dealBreakers": profile.deal_breaker_keywords,
            "resume": (profile.resume_text or "")[:6000],
        },
        "job": {
            "title": job.title, "company": job.company, "location": job.location,
            "remote": job.remote, "salary": [job.salary_min, job.salary_max, job.salary_currency],
            "description": job.description[:12000],
        },
    }, ensure_ascii=False)


class ModelOutputInvalid(TypedFailure, ValueError):
    """The model answered, but not with the JSON we asked for (retryable)."""

    code = "provider_response_invalid"


def parse_model_score(text: str) -> ScoreResult:
    try:
        parsed = _ModelScore.model_validate_json(_json_object(text))
    except (ValidationError, ValueError) as error:
        raise ModelOutputInvalid("score reply is not the requested JSON") from error
    return ScoreResult(score=parsed.score, rationale=parsed.rationale.strip(),
                       matched=parsed.matched[:30], missing=parsed.missing[:30])


def _json_object(text: str) -> str:
    """Models sometimes wrap JSON in prose or code fences; take the outermost object."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object")
    return text[start : end + 1]
