"""The pickup rules of per-job stages (pure function, every branch)."""

from __future__ import annotations

import pytest

from backend.pipeline.eligibility import (
    EnrichmentFacts,
    PickupFacts,
    StageFacts,
    decide_pickup,
)

ENRICHED = EnrichmentFacts("enriched", True, "high", None)


def facts(stage: str, *, states=None, enrichment=ENRICHED, score=80, min_fit=0,
          profile=True, user_status=None, force=False, run="run-2") -> PickupFacts:
    default = {name: StageFacts("succeeded", "run-1") for name in
               ("enrich", "score", "tailor", "cover", "pdf")}
    default[stage] = StageFacts("pending", None)
    default.update(states or {})
    return PickupFacts(stage=stage, states=default, enrichment=enrichment, latest_score=score,
                       min_fit_score=min_fit, has_profile=profile, user_status=user_status,
                       force=force, current_run_id=run)


def test_a_pending_stage_with_everything_ready_runs():
    assert decide_pickup(facts("score")).kind == "run"
    assert decide_pickup(facts("enrich", enrichment=None)).kind == "run"


def test_a_succeeded_stage_is_done_unless_forced():
    done = facts("score", states={"score": StageFacts("succeeded", "run-1")})
    assert decide_pickup(done).kind == "done"
    forced = facts("score", states={"score": StageFacts("succeeded", "run-1")}, force=True)
    assert decide_pickup(forced).kind == "run"


def test_a_forced_retry_of_the_run_that_committed_never_redoes_it():
    own = facts("score", states={"score": StageFacts("succeeded", "run-2")}, force=True)
    assert decide_pickup(own).kind == "done"


@pytest.mark.parametrize("status", ["queued", "running"])
def test_downstream_never_starts_while_upstream_is_active(status):
    decision = decide_pickup(facts("tailor", states={"score": StageFacts(status, "run-9")}))
    assert (decision.kind, decision.reason) == ("deferred", "upstream_active")


@pytest.mark.parametrize("stage", ["score", "tailor", "cover"])
def test_score_tailor_cover_need_a_canonical_enriched_description(stage):
    empty = EnrichmentFacts("enriched", False, "high", None)
    assert decide_pickup(facts(stage, enrichment=empty)).kind == "blocked"
    robots = EnrichmentFacts("blocked", False, None, "ENRICH_ROBOTS_DISALLOWED")
    decision = decide_pickup(facts(stage, enrichment=robots))
    assert (decision.kind, decision.reason) == ("blocked", "ENRICH_ROBOTS_DISALLOWED")


def test_low_confidence_blocks_tailor_cover_and_pdf_but_not_score():
    low = EnrichmentFacts("enriched", True, "low", None)
    assert decide_pickup(facts("score", enrichment=low)).kind == "run"
    for stage in ("tailor", "cover", "pdf"):
        decision = decide_pickup(facts(stage, enrichment=low))
        assert (decision.kind, decision.reason) == ("blocked", "ENRICH_LOW_CONFIDENCE")


def test_a_missing_profile_blocks_and_the_reason_carries_downstream():
    decision = decide_pickup(facts("score", profile=False))
    assert (decision.kind, decision.reason) == ("blocked", "profile_missing")
    downstream = facts("tailor", states={"score": StageFacts("blocked", "r", "profile_missing")})
    assert decide_pickup(downstream).reason == "profile_missing"


def test_a_failed_upstream_blocks_with_a_bounded_reason():
    decision = decide_pickup(facts("cover", states={"tailor": StageFacts("failed", "r")}))
    assert (decision.kind, decision.reason) == ("blocked", "upstream_not_succeeded")


def test_a_low_score_skips_tailor_and_skips_cascade():
    decision = decide_pickup(facts("tailor", score=30, min_fit=50))
    assert (decision.kind, decision.reason) == ("skipped", "below_min_fit_score")
    cascade = facts("cover", states={"tailor": StageFacts("skipped", "r", "below_min_fit_score")})
    assert decide_pickup(cascade).kind == "skipped"


def test_prepare_anyway_lifts_the_threshold_for_that_job_only():
    below = facts("tailor", score=30, min_fit=50)
    anyway = PickupFacts(**{**vars(below), "prepare_anyway": True})
    assert decide_pickup(anyway).kind == "run"
    assert decide_pickup(below).kind == "skipped"


def test_the_threshold_defaults_to_fifty():
    from backend.config import AppSettings

    assert AppSettings().min_fit_score == 50
    assert AppSettings.model_validate({"minFitScore": 0}).min_fit_score == 0


def test_a_job_the_user_skipped_is_never_picked_up():
    decision = decide_pickup(facts("enrich", enrichment=None, user_status="skipped"))
    assert (decision.kind, decision.reason) == ("skipped", "user_skipped")
