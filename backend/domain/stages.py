"""Per-job preparation stages, their statuses and what each needs first."""

from __future__ import annotations

from typing import Literal

Stage = Literal["enrich", "score", "tailor", "cover", "pdf"]
STAGES: tuple[Stage, ...] = ("enrich", "score", "tailor", "cover", "pdf")

StageStatus = Literal[
    "pending", "queued", "running", "succeeded", "failed", "exhausted", "blocked", "skipped",
    "canceled",
]
ACTIVE_STATUSES = frozenset({"queued", "running"})
TERMINAL_STATUSES = frozenset({"succeeded", "failed", "exhausted", "blocked", "skipped", "canceled"})

# The stage each one builds on (Score/Tailor/Cover also need a canonical enriched description).
UPSTREAM: dict[Stage, Stage | None] = {
    "enrich": None,
    "score": "enrich",
    "tailor": "score",
    "cover": "tailor",
    "pdf": "cover",
}

# The activity type that runs each stage (names are what operations and heartbeats show).
STAGE_ACTIVITY: dict[Stage, str] = {
    "enrich": "enrich_job",
    "score": "score_job",
    "tailor": "tailor_resume",
    "cover": "write_cover_letter",
    "pdf": "render_pdfs",
}

# Bounded reasons a stage did not run.
BLOCKED_BY_ENRICH = "blocked_by_enrich"
ENRICH_LOW_CONFIDENCE = "ENRICH_LOW_CONFIDENCE"
ENRICH_ROBOTS_DISALLOWED = "ENRICH_ROBOTS_DISALLOWED"
UPSTREAM_NOT_SUCCEEDED = "upstream_not_succeeded"
UPSTREAM_ACTIVE = "upstream_active"
BELOW_MIN_FIT_SCORE = "below_min_fit_score"
PROFILE_MISSING = "profile_missing"
USER_SKIPPED = "user_skipped"


def downstream_of(stage: Stage) -> tuple[Stage, ...]:
    return STAGES[STAGES.index(stage) + 1 :]
