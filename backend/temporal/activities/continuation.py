"""Condition-driven preparation: the contracts of ``PreparationContinuationWorkflow`` and
its one own activity, the selection of the jobs a resolved condition resumes. The stages
themselves run through the existing preparation activities."""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from temporalio import activity

from backend.domain.model import CamelModel
from backend.store.condition_jobs import jobs_awaiting_profile, jobs_blocked_by
from backend.store.db import Database

WORKFLOW_TYPE = "PreparationContinuationWorkflow"
StageName = Literal["enrich", "score", "tailor", "cover", "pdf"]
# What each trigger resumes (the spec): a profile change needs no new description; a
# resolved Enrich block starts at Enrich. Neither reruns Discover.
PROFILE_STAGES: list[StageName] = ["score", "tailor", "cover"]
CONDITION_STAGES: list[StageName] = ["enrich", "score", "tailor", "cover"]


class ContinuationInput(CamelModel):
    trigger: Literal["profile", "enrich_condition"]
    profile_revision: int | None = None
    condition_code: Literal["ENRICH_ROBOTS_DISALLOWED"] | None = None
    host: str | None = None
    heartbeat_timeout_s: int = Field(default=120, ge=5, le=600)

    def stages(self) -> list[StageName]:
        return list(PROFILE_STAGES if self.trigger == "profile" else CONDITION_STAGES)

    def summary(self) -> dict[str, str | int | list[str] | None]:
        if self.trigger == "profile":
            return {"trigger": self.trigger, "profileRevision": self.profile_revision,
                    "stages": self.stages()}
        return {"trigger": self.trigger, "conditionCode": self.condition_code,
                "host": self.host, "stages": self.stages()}


class ContinuationResult(CamelModel):
    trigger: str
    job_ids: list[str]
    failed_job_ids: list[str] = Field(default_factory=list)


class ContinuationActivities:
    def __init__(self, db: Database):
        self._db = db

    @activity.defn(name="select_continuation_jobs")
    async def select_continuation_jobs(self, input: ContinuationInput) -> list[str]:
        if input.trigger == "profile":
            return await jobs_awaiting_profile(self._db)
        return await jobs_blocked_by(self._db, input.condition_code or "", input.host or "")
