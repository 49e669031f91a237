"""Inputs and outputs passed between workflows and activities (pydantic, via the
pydantic data converter). Pure data: safe to import inside the workflow sandbox."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from backend.domain.model import CamelModel
from backend.domain.source_config import SourceConfig


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
    heartbeat_timeout_s: int = 120


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
    job_ids: list[str] = Field(default_factory=list, description="Jobs this family observed")
    skipped_over_cap: int = Field(
        default=0, ge=0,
        description="Postings of this source left out over the per-board or per-run cap")


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
    skipped_over_cap: int = Field(
        default=0, ge=0, description="Postings left out over the caps, all sources together")


class PrepInput(CamelModel):
    """Input of ``JobPreparationWorkflow`` (id ``prep-{idempotencyKey}``)."""

    job_id: str
    idempotency_key: str
    stages: list[Literal["enrich", "score", "tailor", "cover", "pdf"]] = Field(
        default_factory=lambda: ["enrich", "score", "tailor", "cover", "pdf"]
    )
    force_stages: list[str] = Field(default_factory=list)
    heartbeat_timeout_s: int = Field(default=120, ge=5, le=600)
    discover_workflow_id: str | None = None
    discover_run_id: str | None = None


class RunRef(CamelModel):
    workflow_id: str
    run_id: str
    workflow_type: str


class StageInput(CamelModel):
    run: RunRef
    job_id: str
    stage: Literal["enrich", "score", "tailor", "cover", "pdf"]
    force: bool = False


class StageOutcome(CamelModel):
    stage: str
    status: Literal["succeeded", "done", "blocked", "skipped", "deferred"]
    reason: str | None = None


class StageFailureInput(CamelModel):
    run: RunRef
    job_id: str
    stage: Literal["enrich", "score", "tailor", "cover", "pdf"]
    error_code: str
    retryable: bool
    attempts: int


class WorkflowLifecycleInput(CamelModel):
    run: RunRef
    job_id: str | None = None
    outcome: Literal["started", "completed", "failed", "canceled"]
    error_code: str | None = None
    input_summary: dict[str, str | int | list[str] | None] = Field(default_factory=dict)


class FanoutInput(CamelModel):
    """``plan_preparation``: plan (and record in the execution lineage) the preparation of
    ``job_ids``. ``item_key`` names the ``preparation_fanout`` step (``fanout:family:{id}``
    after a family, ``fanout:sweep`` for the terminal fan-out; None: an input from before
    pipeline steps existed, no step events). With ``sweep``, the activity first runs the
    ``existing_backlog_sweep`` step (links pre-existing eligible jobs as
    ``existing_backlog``) and then plans that whole cohort; ``job_ids`` is then ignored."""

    ref: DiscoveryExecutionRef
    job_ids: list[str]
    item_key: str | None = Field(default=None, pattern=r"^[a-z0-9][a-z0-9_.:-]{0,127}$")
    sweep: bool = False


class FanoutPlan(CamelModel):
    job_ids: list[str]
    heartbeat_timeout_s: int = 120
    required_steps: dict[str, list[Literal["enrich", "score", "tailor", "cover", "pdf"]]] = Field(
        default_factory=dict,
        description="The immutable planned stages of each job (what its child will run)",
    )


class PrepResult(CamelModel):
    job_id: str
    outcomes: list[StageOutcome]


def prep_workflow_id(idempotency_key: str) -> str:
    """A job's preparation workflow id (the discovery fan-out, dispatch and the loops start
    or address the run by it)."""
    return f"prep-{idempotency_key}"
