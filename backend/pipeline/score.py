"""Score: fit 0–100 derived from an evidence ledger (``backend.domain.fit``).

Each posting requirement is matched to the profile evidence that proves it, or marked
missing / unknown with the reason; ``score_from_ledger`` turns the ledger into the number
and deal-breakers cap it visibly.

Offline: ``offline_score`` builds the ledger with transparent rules
(``backend.pipeline.fit``), deterministic and free. With a model: ``model_ledger`` asks for
the same ledger as JSON, validates it, makes at most one repair call, and then applies our
own deal-breaker checks, so a model cannot skip them.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import date
from typing import Any, get_args

from pydantic import Field, ValidationError

from backend.domain.errors import TypedFailure
from backend.domain.fit import FitLedger, Requirement, RequirementKind, score_from_ledger
from backend.domain.model import CamelModel
from backend.domain.profile import CandidateProfile
from backend.pipeline.fit.rules import build_ledger, enforce_deal_breakers
from backend.pipeline.text import JobText, human_list  # noqa: F401 - JobText re-exported


@dataclass(frozen=True)
class ScoreResult:
    score: int
    rationale: str
    matched: list[str] = field(default_factory=list)
    """Labels of the met skill / keyword requirements (Tailor and Cover lean on them)."""
    missing: list[str] = field(default_factory=list)
    """Labels of the missing requirements, must-haves first."""
    ledger: FitLedger | None = None
    """The evidence behind the number (None for scores stored before the ledger)."""


def offline_score(profile: CandidateProfile, job: JobText, *, today: date) -> ScoreResult:
    return result_from_ledger(build_ledger(profile, job, today=today))


def result_from_ledger(ledger: FitLedger) -> ScoreResult:
    """The score, its rationale and the matched / missing labels, all from one ledger."""
    met = ledger.met()
    matched = [r.label for r in _must_first(met) if r.kind in ("skill", "keyword")]
    missing = [r.label for r in _must_first(ledger.missing())]
    return ScoreResult(score=score_from_ledger(ledger), rationale=rationale(ledger),
                       matched=matched[:30], missing=missing[:30], ledger=ledger)


def _must_first(requirements: list[Requirement]) -> list[Requirement]:
    return sorted(requirements, key=lambda r: r.importance != "must")


def _listed(labels: list[str]) -> str:
    # Labels such as "Hybrid, 2 days a week in Atlanta" hold commas: then semicolons separate.
    return "; ".join(labels) if any("," in label for label in labels) else human_list(labels)


def rationale(ledger: FitLedger) -> str:
    """Two or three plain sentences from the ledger's top items."""
    musts = [r for r in ledger.requirements if r.importance == "must"]
    met = [r for r in musts if r.status == "met"]
    missing = _must_first(ledger.missing())
    unknown = [r for r in musts if r.status == "unknown"]
    sentences = []
    if ledger.cap is not None:
        sentences.append(f"Capped at {ledger.cap.score}: {ledger.cap.reason}.")
    if musts:
        shown = _listed([r.label for r in met[:3]])
        sentences.append(f"Meets {len(met)} of {len(musts)} must-haves" + (f": {shown}." if met else "."))
    if missing and len(sentences) < 3:
        sentences.append(f"Missing: {_listed([r.label for r in missing[:3]])}.")
    if unknown and len(sentences) < 3:
        sentences.append(f"Not stated: {_listed([r.label for r in unknown[:3]])}.")
    if not sentences:
        sentences.append("The posting states no requirements to check.")
    return " ".join(sentences)


# --------------------------------------------------------------------------- model ledger

_KINDS = " | ".join(f'"{kind}"' for kind in get_args(RequirementKind))

SCORE_SYSTEM = (
    "You check a job posting against a candidate's profile. Answer with one JSON object and "
    "nothing else, in exactly this shape:\n"
    '{"requirements": [{"kind": ' + _KINDS + ', "label": "short name, e.g. PostgreSQL or On-site in '
    'Berlin (max 200 chars)", "importance": "must" | "nice", "status": "met" | "missing" | "unknown", '
    '"evidence": "for met: the profile item that proves it, e.g. the work entry heading '
    '\\"Senior Backend Engineer, Northwind (2021–)\\" or \\"Skills: PostgreSQL\\" (max 300 chars), '
    'else null", "detail": "for missing or unknown: why, in plain words for the candidate (max 300 '
    'chars), else null", "dealBreaker": true only when missing it rules the job out}]}\n'
    "List every requirement the posting states: must-haves from its requirement sections, "
    "nice-to-haves from 'nice to have', 'bonus', 'preferred'; always include the title "
    "(kind title), the seniority when the title states one, the work arrangement and place "
    "(kind location) and the salary against the candidate's floor. Evidence must come from the "
    "profile; never invent experience. Use unknown when neither side says. At most 40 requirements."
)


def _profile_facts(profile: CandidateProfile) -> dict[str, Any]:
    resume = profile.resume
    facts: dict[str, Any] = {
        "headline": resume.basics.label, "summary": (resume.basics.summary or "")[:1500] or None,
        "work": [{"heading": entry.heading(), "location": entry.location,
                  "startDate": entry.start_date, "endDate": entry.end_date,
                  "highlights": entry.highlights[:10]} for entry in resume.work[:15]],
        "skills": [{"group": g.name, "keywords": g.keywords[:40]} for g in resume.skills[:20]],
        "languages": [{"language": x.language, "fluency": x.fluency} for x in resume.languages],
        "education": [{"institution": e.institution, "studyType": e.study_type, "area": e.area,
                       "endDate": e.end_date} for e in resume.education],
        "certificates": [c.name for c in resume.certificates if c.name],
        "preferences": {
            "targetTitles": profile.target_titles, "locations": profile.locations,
            "remotePreference": profile.remote_preference, "salaryFloor": profile.salary_floor,
            "salaryCurrency": profile.salary_currency, "workAuthorization": profile.work_authorization,
            "mustHave": profile.must_have_keywords, "dealBreakers": profile.deal_breaker_keywords,
        },
    }
    if resume.is_empty() and profile.resume_text:
        facts["resumeText"] = profile.resume_text[:6000]  # not structured yet: the text is all there is
    return facts


def score_prompt(profile: CandidateProfile, job: JobText, *, today: date | None = None) -> str:
    return json.dumps({
        "today": today.isoformat() if today else None,
        "candidate": _profile_facts(profile),
        "job": {
            "title": job.title, "company": job.company, "location": job.location,
            "remote": job.remote, "salary": {"min": job.salary_min, "max": job.salary_max,
                                             "currency": job.salary_currency},
            "description": job.description[:12000],
        },
    }, ensure_ascii=False)


class ModelOutputInvalid(TypedFailure, ValueError):
    """The model answered, but not with the JSON we asked for (retryable).

    ``problem`` says what was wrong (field paths and messages, never the reply's text), for
    the repair prompt; the message stays a bounded description."""

    code = "provider_response_invalid"

    def __init__(self, message: str = "model reply is not the requested JSON", *, problem: str = "") -> None:
        super().__init__(message)
        self.problem = problem or message


class _ModelLedger(CamelModel):
    requirements: list[Requirement] = Field(min_length=1, max_length=80)


_TEXT_LIMITS = {"label": 200, "evidence": 300, "detail": 300}


def _trim(data: Any) -> Any:
    """Over-long texts are cut rather than rejected: the content is fine, only long."""
    if isinstance(data, dict) and isinstance(data.get("requirements"), list):
        for item in data["requirements"]:
            if isinstance(item, dict):
                for key, limit in _TEXT_LIMITS.items():
                    if isinstance(item.get(key), str):
                        item[key] = item[key].strip()[:limit]
    return data


def _describe(error: ValidationError) -> str:
    problems = [f"{'.'.join(str(p) for p in e['loc']) or 'reply'}: {e['msg']}"
                for e in error.errors(include_url=False, include_input=False)[:8]]
    return "; ".join(problems)


def parse_model_ledger(text: str) -> FitLedger:
    """The model's ledger, validated; ModelOutputInvalid (with ``problem``) otherwise."""
    try:
        data = json.loads(_json_object(text))
    except ValueError as error:
        problem = f"the reply is not one JSON object ({type(error).__name__})"
        raise ModelOutputInvalid("score reply is not the requested JSON", problem=problem) from None
    try:
        parsed = _ModelLedger.model_validate(_trim(data))
    except ValidationError as error:
        raise ModelOutputInvalid("score reply is not the requested JSON", problem=_describe(error)) from None
    return FitLedger(requirements=parsed.requirements, method="model")


def repair_prompt(bad_text: str, error: str) -> str:
    return (
        "Your previous answer could not be used: " + error[:1000] + ".\n"
        "Here it is:\n" + bad_text[:6000] + "\n\n"
        'Answer again with the corrected JSON object only: {"requirements": [...]} in the shape '
        "described in the instructions, no prose and no code fences."
    )


Complete = Callable[[str, str], Awaitable[str]]


async def model_ledger(complete: Complete, profile: CandidateProfile, job: JobText, *,
                       today: date | None = None) -> FitLedger:
    """Ask the model for the ledger: at most two calls (the answer, and one repair when the
    answer is malformed); a second malformed answer raises ModelOutputInvalid. Our own
    deal-breaker checks are applied to whatever the model said."""
    prompt = score_prompt(profile, job, today=today)
    reply = await complete(SCORE_SYSTEM, prompt)
    try:
        ledger = parse_model_ledger(reply)
    except ModelOutputInvalid as error:
        # The repair call carries the original prompt too: a reply that was prose, not JSON,
        # cannot be fixed without the posting and the profile.
        reply = await complete(SCORE_SYSTEM, f"{prompt}\n\n{repair_prompt(reply, error.problem)}")
        try:
            ledger = parse_model_ledger(reply)
        except ModelOutputInvalid as repaired:
            raise RepairFailed(problem=repaired.problem) from None
    return enforce_deal_breakers(ledger, profile, job)


class RepairFailed(ModelOutputInvalid):
    """Malformed again after the one repair: a typed failure, not retried (another attempt
    would pay for the same two calls again)."""

    retryable = False

    def __init__(self, *, problem: str = "") -> None:
        super().__init__("model reply is not the requested JSON, also after one repair",
                         problem=problem)


def _json_object(text: str) -> str:
    """Models sometimes wrap JSON in prose or code fences; take the outermost object."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("no JSON object")
    return text[start : end + 1]
