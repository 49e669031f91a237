"""The typed domain-event registry: one pydantic model per event type, in one ordered tuple.

Payloads are camelCase on the wire and in ``job_events.payload_json``. They carry
identities, bounded codes, counts and timing; never raw provider payloads, prompts or
exception text. Later issues extend ``EVENT_TYPES``; the desktop's event router must
handle every member (a test enforces it).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from backend.domain.clock import utc_now_iso
from backend.domain.model import CamelModel


class DomainEvent(CamelModel):
    event_type: ClassVar[str]
    occurred_at: str = Field(default_factory=utc_now_iso)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.event_type = cls.__name__

    def payload_json(self) -> str:
        return self.model_dump_json(by_alias=True)


class _DiscoveryEvent(DomainEvent):
    discover_workflow_id: str
    discover_run_id: str


class FamilyFailure(CamelModel):
    family: str
    error_code: str


class DiscoveryRunStarted(_DiscoveryEvent):
    families: list[str]
    progress_total: int


class JobDiscovered(_DiscoveryEvent):
    job_id: str
    title: str
    company: str
    location: str | None = None
    remote: str
    source_family: str


class DiscoveryRunCompleted(_DiscoveryEvent):
    status: Literal["completed", "completed_with_issues"]
    jobs_observed: int
    jobs_new: int
    families_succeeded: list[str]
    families_failed: list[FamilyFailure]


class DiscoveryRunFailed(_DiscoveryEvent):
    status: Literal["failed", "canceled"]
    error_code: str
    families_failed: list[FamilyFailure]


class _WorkflowEvent(DomainEvent):
    workflow_id: str
    run_id: str
    workflow_type: str


class WorkflowStarted(_WorkflowEvent):
    input_summary: dict[str, str | int | list[str] | None] = Field(default_factory=dict)


class WorkflowCompleted(_WorkflowEvent):
    pass


class WorkflowFailed(_WorkflowEvent):
    error_code: str


class WorkflowCanceled(_WorkflowEvent):
    pass


class WorkflowCancellationRequested(_WorkflowEvent):
    requester: str
    source_boundary: Literal["request_intent", "temporal_history", "recovered_temporal_history"]
    reason: str | None = None
    requested_at: str


class WorkflowReconciled(_WorkflowEvent):
    """The reconciler's verdict on a run the worker could not see finish.
    ``reconciled_not_found`` is provisional: Temporal could not find the exact run right
    now. ``recovered`` marks that the history is reachable again (``observedStatus`` is
    what Temporal reports); the real outcome then follows as its own event, and the
    provisional verdict stays in the timeline."""

    verdict: Literal["reconciled_not_found", "recovered"]
    observed_status: str | None = None


class _JobEvent(DomainEvent):
    """Per-job events. ``workflowId`` / ``runId`` name the run that recorded the event;
    both are null for events recorded outside a run (a local reset, a user action)."""

    job_id: str
    workflow_id: str | None = None
    run_id: str | None = None


class _StageEvent(_JobEvent):
    stage: Literal["enrich", "score", "tailor", "cover", "pdf"]


class StageStarted(_StageEvent):
    attempt: int


class StageCompleted(_StageEvent):
    duration_ms: int | None = None


class StageFailed(_StageEvent):
    error_code: str
    retryable: bool


class StageExhausted(_StageEvent):
    error_code: str
    attempts: int


class StageReset(_StageEvent):
    source: Literal["retry_stage", "rescore", "retailor", "run_stage"]
    previous_status: str


class StageBlocked(_StageEvent):
    reason: str


class StageSkipped(_StageEvent):
    reason: str


class StageCanceled(_StageEvent):
    pass


class JobEnriched(_JobEvent):
    origin: Literal["source", "page"]
    word_count: int
    confidence: Literal["high", "low"]
    low_confidence_reason: str | None = None


class EnrichmentFailed(_JobEvent):
    error_code: str
    blocked: bool


class JobScored(_JobEvent):
    score: int
    rationale: str
    version: int
    provider: str
    model: str


class ResumeApproved(_JobEvent):
    generation: int
    provider: str
    model: str


class ResumeFailed(_JobEvent):
    error_code: str


class CoverLetterGenerated(_JobEvent):
    generation: int
    provider: str
    model: str


class PdfRendered(_JobEvent):
    kind: Literal["resume_pdf", "cover_letter_pdf"]
    generation: int
    pages: int
    bytes: int


class JobUserStatusChanged(_JobEvent):
    user_status: Literal["applied", "skipped"] | None


class CandidateProfileUpdated(DomainEvent):
    revision: int


EVENT_TYPES: tuple[type[DomainEvent], ...] = (
    DiscoveryRunStarted,
    JobDiscovered,
    DiscoveryRunCompleted,
    DiscoveryRunFailed,
    WorkflowStarted,
    WorkflowCompleted,
    WorkflowFailed,
    WorkflowCanceled,
    WorkflowCancellationRequested,
    StageStarted,
    StageCompleted,
    StageFailed,
    StageExhausted,
    StageReset,
    StageBlocked,
    StageSkipped,
    StageCanceled,
    JobEnriched,
    EnrichmentFailed,
    JobScored,
    ResumeApproved,
    ResumeFailed,
    CoverLetterGenerated,
    PdfRendered,
    JobUserStatusChanged,
    CandidateProfileUpdated,
    WorkflowReconciled,
)

EVENT_BY_NAME: dict[str, type[DomainEvent]] = {cls.event_type: cls for cls in EVENT_TYPES}


def parse_event(event_type: str, payload_json: str) -> DomainEvent:
    """Validate a stored or streamed payload against its registered model."""
    try:
        model = EVENT_BY_NAME[event_type]
    except KeyError:
        raise ValueError(f"unknown event type {event_type!r}") from None
    return model.model_validate_json(payload_json)
