"""Inputs and outputs of ``PolicyRerunWorkflow`` (pure data, sandbox-safe)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from backend.domain.model import CamelModel

PolicyAction = Literal["rescore_stale", "retailor_stale", "threshold_cleared"]
StageName = Literal["enrich", "score", "tailor", "cover", "pdf"]


class PolicyRerunInput(CamelModel):
    """Start ``prep-{jobId}`` for each job with ``stages`` (``force_stages`` even when
    done); the job set was selected by the request that started the batch."""

    action: PolicyAction
    job_ids: list[str] = Field(min_length=1)
    stages: list[StageName] = Field(min_length=1)
    force_stages: list[StageName] = Field(default_factory=list)
    heartbeat_timeout_s: int = Field(default=120, ge=5, le=600)


class PolicyRerunResult(CamelModel):
    action: str
    started_job_ids: list[str] = Field(description="Preparations this batch started")
    already_running_job_ids: list[str] = Field(
        description="Jobs whose preparation was already running (they catch up on their own)")
