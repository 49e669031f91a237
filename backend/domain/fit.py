"""The fit evidence ledger: each posting requirement, matched to the profile's evidence.

The score is derived from the ledger (``score_from_ledger``), whoever built it: the
offline rules or a model. The job detail shows it as a checklist; the tailored résumé and
letter lean on its evidence.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from backend.domain.model import CamelModel

RequirementKind = Literal[
    "title", "seniority", "skill", "experience_years", "language", "location",
    "work_authorization", "degree", "salary", "keyword", "licence", "management",
]
Importance = Literal["must", "nice"]
Status = Literal["met", "missing", "unknown"]


class Requirement(CamelModel):
    kind: RequirementKind
    label: str = Field(min_length=1, max_length=200, description='"Python", "On-site in Berlin"')
    importance: Importance = "must"
    status: Status
    evidence: str | None = Field(
        default=None, max_length=300,
        description='What proves it: "Senior Backend Engineer, Northwind (2021–)"')
    detail: str | None = Field(
        default=None, max_length=300,
        description='Why it is missing or unknown: "you want remote or Berlin"')
    deal_breaker: bool = Field(default=False, description="Missing it caps the score")


class ScoreCap(CamelModel):
    score: int = Field(ge=0, le=100)
    reason: str = Field(min_length=1, max_length=300)


class FitLedger(CamelModel):
    requirements: list[Requirement] = Field(default_factory=list, max_length=80)
    cap: ScoreCap | None = None
    method: str = Field(default="rules-v1", max_length=40,
                        description="rules-v1 (offline) or model")

    def met(self) -> list[Requirement]:
        return [r for r in self.requirements if r.status == "met"]

    def missing(self) -> list[Requirement]:
        return [r for r in self.requirements if r.status == "missing"]


# A must-have weighs three times a nice-to-have; unknown earns half. Some kinds weigh more
# than one skill: the line of work and the place decide whether the job is possible at all.
WEIGHTS = {"must": 3.0, "nice": 1.0}
KIND_WEIGHTS: dict[str, float] = {"title": 2.0, "location": 2.0, "seniority": 1.5,
                                  "experience_years": 1.5, "language": 1.5, "work_authorization": 1.5}
STATUS_CREDIT = {"met": 1.0, "unknown": 0.5, "missing": 0.0}
# A missing deal-breaker caps the score. The rules set the cap per deal-breaker (the lowest
# wins); DEAL_BREAKER_CAP is for a ledger that flags one without setting a cap.
DEAL_BREAKER_CAP = 15
CAPS = {
    "deal_breaker_keyword": 10,   # a word the job seeker refuses ("crypto")
    "onsite_for_remote_only": 20,
    "far_title_family": 25,       # sales or marketing for a backend engineer
    "hybrid_for_remote_only": 35,
    "onsite_for_remote_or_hybrid": 30,
    "outside_your_places": 30,    # an office in another city, remote only from elsewhere
    "seniority_gap": 40,          # a junior role for a staff engineer, or the reverse
    "salary_below_floor": 40,     # the top of the range is below the job seeker's floor
    "language": 30,               # a language asked for that the profile lacks, or two levels short
    "licence": 30,                # a licence, registration or essential degree the profile lacks
}


def requirement_weight(requirement: Requirement) -> float:
    return WEIGHTS[requirement.importance] * KIND_WEIGHTS.get(requirement.kind, 1.0)


def score_from_ledger(ledger: FitLedger) -> int:
    """0–100: the weighted share of requirements met, capped by a deal-breaker."""
    total = sum(requirement_weight(r) for r in ledger.requirements)
    if total == 0:
        score = 50  # nothing to measure against: neither a fit nor a misfit
    else:
        earned = sum(requirement_weight(r) * STATUS_CREDIT[r.status] for r in ledger.requirements)
        score = round(100 * earned / total)
    if ledger.cap is not None:
        score = min(score, ledger.cap.score)
    elif any(r.deal_breaker and r.status == "missing" for r in ledger.requirements):
        score = min(score, DEAL_BREAKER_CAP)
    return max(0, min(100, score))
