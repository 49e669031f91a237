"""The offline ledger (rules-v1) and the deal-breaker caps every ledger gets.

``build_ledger`` reads the posting's needs, matches each to the profile and sets the cap.
``enforce_deal_breakers`` is what a model's ledger goes through: our own checks of the
facts a model must not overlook (deal-breaker words, an on-site or hybrid role for a
remote-only job seeker) replace or join the model's lines, and the cap follows.
"""

from __future__ import annotations

from datetime import date

from backend.domain.fit import CAPS, DEAL_BREAKER_CAP, FitLedger, Requirement, ScoreCap
from backend.domain.profile import CandidateProfile
from backend.pipeline.fit import evidence as ev
from backend.pipeline.fit.places import Arrangement, country_of, location_requirement, posting_arrangement
from backend.pipeline.fit.requirements import extract_needs
from backend.pipeline.text import JobText, contains_term, normalize

MAX_REQUIREMENTS = 80  # FitLedger's limit
MAX_MENTIONED_SKILLS = 12  # skills only named in passing: enough to show, not to drown the musts


def build_ledger(profile: CandidateProfile, job: JobText, *, today: date) -> FitLedger:
    facts = ev.profile_facts(profile, today)
    needs = extract_needs(job.title, job.description)
    arrangement = posting_arrangement(job.remote, job.location, job.description)
    found: list[Requirement | None] = [
        ev.title_requirement(facts, job.title, needs.family),
        ev.seniority_requirement(facts, needs.level) if needs.level is not None else None,
        location_requirement(profile, arrangement),
        ev.years_requirement(facts, needs.years, needs.family) if needs.years else None,
    ]
    musts = [name for name, importance in needs.skills.items() if importance == "must"]
    nices = [name for name, importance in needs.skills.items() if importance == "nice"]
    found += [ev.skill_requirement(facts, name, "must") for name in musts]
    found += [ev.phrase_requirement(facts, phrase, importance)
              for phrase, importance in needs.phrases.items()]
    found += [ev.skill_requirement(facts, name, "nice") for name in nices[:MAX_MENTIONED_SKILLS]]
    found += [ev.language_requirement(facts, need) for need in needs.languages.values()]
    if needs.degree:
        found.append(ev.degree_requirement(facts, needs.degree))
    found += [ev.licence_requirement(facts, need) for need in needs.licences.values()]
    if needs.management is not None:
        found.append(ev.management_requirement(facts, needs.management))
    if needs.authorization:
        country = country_of(arrangement.city or job.location or "")
        found.append(ev.authorization_requirement(facts, needs.authorization, country))
    found.append(ev.salary_requirement(profile, job.salary_min, job.salary_max, job.salary_currency))
    # The job seeker's own words are matched in the normalized text (only built when needed).
    text = normalize(f"{job.title} {job.description}") if _has_keywords(profile) else ""
    found += must_have_requirements(profile, text)
    # Deal-breaker words first: they decide the cap, and the checklist shows them on top.
    found = [*deal_breaker_requirements(profile, text), *found]
    requirements = [r for r in found if r is not None][:MAX_REQUIREMENTS]
    cap = cap_for(requirements, arrangement, preference=profile.remote_preference)
    return FitLedger(requirements=requirements, cap=cap, method="rules-v1")


def _has_keywords(profile: CandidateProfile) -> bool:
    return bool(profile.must_have_keywords or profile.deal_breaker_keywords)


def must_have_requirements(profile: CandidateProfile, text: str) -> list[Requirement]:
    """The job seeker's own must-have words: the posting has to say them."""
    return [
        ev.requirement("keyword", word, "must", "met", evidence=f"Your must-have “{word}” is in the posting")
        if contains_term(text, word) else
        ev.requirement("keyword", word, "must", "missing", detail="One of your must-haves; the posting "
                                                                  "does not mention it")
        for word in profile.must_have_keywords
    ]


def deal_breaker_requirements(profile: CandidateProfile, text: str) -> list[Requirement]:
    """Only the deal-breaker words the posting does contain become lines (the others are
    not requirements of this posting)."""
    return [ev.requirement("keyword", f"No “{word}”", "must", "missing", deal_breaker=True,
                           detail=f"The posting mentions “{word}”, one of your deal-breakers")
            for word in profile.deal_breaker_keywords if contains_term(text, word)]


def _cap_score(requirement: Requirement, arrangement: Arrangement | None, preference: str) -> int:
    if requirement.kind == "keyword":
        return CAPS["deal_breaker_keyword"]
    if requirement.kind == "location" and arrangement is not None:
        if preference == "remote_only" and arrangement.mode in ("onsite", "hybrid"):
            return CAPS[f"{arrangement.mode}_for_remote_only"]
        if preference == "remote_or_hybrid" and arrangement.mode == "onsite":
            return CAPS["onsite_for_remote_or_hybrid"]
        return CAPS["outside_your_places"]
    if requirement.kind == "title":
        return CAPS["far_title_family"]
    if requirement.kind in ("seniority", "management"):
        return CAPS["seniority_gap"]
    if requirement.kind == "salary":
        return CAPS["salary_below_floor"]
    if requirement.kind in ("licence", "degree"):
        return CAPS["licence"]
    if requirement.kind == "language":
        return CAPS["language"]
    return DEAL_BREAKER_CAP  # flagged by a model: a deal-breaker of a kind we do not rank


def cap_for(requirements: list[Requirement], arrangement: Arrangement | None, *,
            preference: str) -> ScoreCap | None:
    """The lowest cap among the missing deal-breakers, with the reason the user reads."""
    caps = [(_cap_score(r, arrangement, preference), r) for r in requirements
            if r.deal_breaker and r.status == "missing"]
    if not caps:
        return None
    score, worst = min(caps, key=lambda item: item[0])
    reason = f"{worst.label} — {worst.detail}" if worst.detail else worst.label
    return ScoreCap(score=score, reason=reason[:300])


def enforce_deal_breakers(ledger: FitLedger, profile: CandidateProfile, job: JobText) -> FitLedger:
    """A model's ledger with our deal-breaker checks applied: a model cannot skip them.
    The place and the salary are facts we compute (distances, ECB rates), not judgement."""
    arrangement = posting_arrangement(job.remote, job.location, job.description)
    requirements = list(ledger.requirements)
    salary = ev.salary_requirement(profile, job.salary_min, job.salary_max, job.salary_currency)
    for ours in (location_requirement(profile, arrangement), salary):
        if ours is not None and ours.deal_breaker:
            requirements = [r for r in requirements if r.kind != ours.kind]
            requirements.insert(0, ours)
    text = normalize(f"{job.title} {job.description}")
    for breaker in deal_breaker_requirements(profile, text):
        requirements = [r for r in requirements if not (r.kind == "keyword" and r.label == breaker.label)]
        requirements.insert(0, breaker)
    requirements = requirements[:MAX_REQUIREMENTS]
    return FitLedger(requirements=requirements, method=ledger.method,
                     cap=cap_for(requirements, arrangement, preference=profile.remote_preference))
