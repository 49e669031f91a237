"""Inputs and outputs passed between workflows and activities (pydantic, via the
pydantic data converter). Pure data: safe to import inside the workflow sandbox."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from backend.domain.model import CamelModel
from backend.sources.config import SourceConfig


class DiscoveryExecutionRef(CamelModel):
    """The immutable identity of one Discover execution. The run id is required because
    the deterministic workflow id ``discover-local`` is started again and again."""

    tenant_id: str
    discover_workflow_id: str
    discover_run_id: str


class DiscoverInput(CamelModel):
    source_ids: list[str] | None = None


class PlanInput(CamelModel):
    ref: DiscoveryExecutionRef
    source_ids: list[str] | None = None


class DiscoveryPlan(CamelModel):
    sources: list[SourceConfig]


class FamilyInput(CamelModel):
    ref: DiscoveryExecutionRef
    source: SourceConfig
    index: int = Field(ge=0)


class FamilyOutcome(CamelModel):
    family: str
    status: Literal["succeeded", "failed"]
    new_jobs: int = 0
    existing_jobs: int = 0
    error_code: str | None = None


class FamilyFailureInput(CamelModel):
    ref: DiscoveryExecutionRef
    family: str
    index: int
    error_code: str


class FinalizeInput(CamelModel):
    ref: DiscoveryExecutionRef
    outcomes: list[FamilyOutcome]
    canceled: bool = False
    error_code: str | None = None


class DiscoverResult(CamelModel):
    status: Literal["completed", "completed_with_issues", "failed", "canceled"]
    jobs_observed: int
    jobs_new: int
    families_failed: list[str]
