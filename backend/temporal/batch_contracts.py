"""Inputs and outputs of ``BatchStageWorkflow`` (pure data, sandbox-safe)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from backend.domain.model import CamelModel
from backend.temporal.contracts import RunRef

BatchStage = Literal["tailor", "cover", "pdf"]


class BatchInput(CamelModel):
    """Run ``stages`` (a chain starting at Tailor or Cover) for the selected jobs, in waves
    of at most ``workers`` jobs. Each stage passes only its successful jobs downstream."""

    stages: list[BatchStage] = Field(min_length=1)
    job_ids: list[str] = Field(min_length=1, max_length=500)
    workers: int = Field(ge=1, le=16)
    heartbeat_timeout_s: int = Field(default=120, ge=5, le=600)


class BatchItem(CamelModel):
    job_id: str
    stage: str
    status: Literal["succeeded", "blocked", "skipped", "deferred", "failed", "exhausted",
                    "not_started"]
    reason: str | None = None


class BatchResult(CamelModel):
    stages: list[str]
    workers: int
    waves: int = Field(description="Waves actually run, over every stage")
    items: list[BatchItem]
    succeeded_job_ids: list[str] = Field(
        description="Jobs that came through the last stage of the chain")


class BatchCancelInput(CamelModel):
    run: RunRef
    job_ids: list[str]
