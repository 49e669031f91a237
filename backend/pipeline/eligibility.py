"""Pickup rules: may this stage of this job run now? Pure: the activity gathers the facts.

- Score, Tailor and Cover need a canonical enriched description that is not empty.
- Tailor (and so Cover and PDF) stays blocked by Enrich while the posting is low-confidence.
- A downstream stage never starts while its upstream stage is queued or running.
- A succeeded stage is not redone unless explicitly forced (rescore, re-tailor, retry).
- Tailor (and so Cover and PDF) is skipped below the fit threshold, unless the user asked
  to prepare this job anyway.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from backend.domain import stages as st


@dataclass(frozen=True)
class StageFacts:
    status: str
    owner_run_id: str | None
    blocked_reason: str | None = None


@dataclass(frozen=True)
class EnrichmentFacts:
    current_status: str  # enriched | blocked | failed
    has_description: bool
    confidence: str | None
    blocked_reason: str | None


@dataclass(frozen=True)
class PickupFacts:
    stage: st.Stage
    states: dict[str, StageFacts]
    enrichment: EnrichmentFacts | None
    latest_score: int | None
    min_fit_score: int
    has_profile: bool
    user_status: str | None
    force: bool
    current_run_id: str
    prepare_anyway: bool = False  # the user asked for materials whatever the fit


@dataclass(frozen=True)
class Decision:
    kind: Literal["run", "done", "blocked", "skipped", "deferred"]
    reason: str | None = None


RUN = Decision("run")
DONE = Decision("done")


def decide_pickup(facts: PickupFacts) -> Decision:
    own = facts.states.get(facts.stage)
    # A retry of the run that already committed this result never redoes it.
    if own and own.status == "succeeded" and (
        not facts.force or own.owner_run_id == facts.current_run_id
    ):
        return DONE
    if facts.user_status == "skipped":
        return Decision("skipped", st.USER_SKIPPED)
    upstream = st.UPSTREAM[facts.stage]
    if upstream is None:
        return RUN
    upstream_state = facts.states.get(upstream)
    if upstream_state and upstream_state.status in st.ACTIVE_STATUSES:
        return Decision("deferred", st.UPSTREAM_ACTIVE)
    enrichment_block = _enrichment_block(facts)
    if enrichment_block:
        return enrichment_block
    if upstream_state is None or upstream_state.status != "succeeded":
        if upstream_state and upstream_state.status == "skipped":
            return Decision("skipped", st.UPSTREAM_NOT_SUCCEEDED)
        if upstream_state and upstream_state.status == "blocked" and upstream_state.blocked_reason:
            # Carry the root cause down (e.g. profile_missing), so the user sees one reason.
            return Decision("blocked", upstream_state.blocked_reason)
        return Decision("blocked", st.UPSTREAM_NOT_SUCCEEDED)
    if not facts.has_profile and facts.stage in ("score", "tailor", "cover"):
        return Decision("blocked", st.PROFILE_MISSING)
    if (facts.stage == "tailor" and not facts.prepare_anyway
            and (facts.latest_score or 0) < facts.min_fit_score):
        return Decision("skipped", st.BELOW_MIN_FIT_SCORE)
    return RUN


def _enrichment_block(facts: PickupFacts) -> Decision | None:
    enrichment = facts.enrichment
    if enrichment is None:
        return None  # Enrich has not run: the upstream check reports it
    if enrichment.current_status != "enriched" or not enrichment.has_description:
        return Decision("blocked", enrichment.blocked_reason or st.BLOCKED_BY_ENRICH)
    if facts.stage in ("tailor", "cover", "pdf") and enrichment.confidence != "high":
        return Decision("blocked", st.ENRICH_LOW_CONFIDENCE)
    return None
