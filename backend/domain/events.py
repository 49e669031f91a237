"""The typed domain-event registry: one pydantic model per event type, in one ordered tuple.

Payloads are camelCase on the wire and in ``job_events.payload_json``. They carry
identities, bounded codes, counts and timing; never raw provider payloads, prompts or
exception text. Later issues extend ``EVENT_TYPES``; the desktop's event router must
handle every member (a test enforces it).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import ConfigDict, Field, model_serializer
from pydantic.alias_generators import to_camel

from backend.domain.clock import utc_now_iso
from backend.domain.contacts import SourceAttempt as ContactSourceAttempt
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
    # upstream_succeeded: a row its upstream's earlier failure had blocked runs again.
    source: Literal["retry_stage", "rescore", "retailor", "run_stage", "upstream_succeeded"]
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
    # The claims of a user's edit that the profile does not hold and the user kept
    # ("Keep it — I can back this up"); empty for a writer's generation.
    kept_claims: list[str] = Field(default_factory=list)


class ResumeFailed(_JobEvent):
    error_code: str


class CoverLetterGenerated(_JobEvent):
    generation: int
    provider: str
    model: str
    # The claims of a user's edit that the profile does not hold and the user kept
    # ("Keep it — I can back this up"); empty for a writer's generation.
    kept_claims: list[str] = Field(default_factory=list)


class PdfRendered(_JobEvent):
    kind: Literal["resume_pdf", "cover_letter_pdf"]
    generation: int
    pages: int
    bytes: int


class JobUserStatusChanged(_JobEvent):
    user_status: Literal["applied", "skipped"] | None


class CandidateProfileUpdated(DomainEvent):
    revision: int


class ProfileContinuationIntended(DomainEvent):
    """The durable dispatch-intent fact of condition-driven preparation after a genuine
    profile change, committed before Temporal is asked to start ``workflowId``.
    ``coalescedRevisions`` never started and are covered by this continuation."""

    revision: int
    outbox_id: int
    workflow_id: str
    coalesced_revisions: list[int] = Field(default_factory=list)


class PreparationInterruptedResumed(DomainEvent):
    """The durable dispatch-intent fact of the interrupted-preparation pass: this job's
    preparation ended for an infrastructure reason (``interruptedRunId`` failed with
    ``errorCode``, e.g. ``activity_timeout`` when its worker vanished mid-task) with stage
    work left and no owner, and starts again under ``workflowId``. Committed before
    Temporal is asked; at most one per interrupted run, and at most ``attempt`` 3 per job."""

    job_id: str
    workflow_id: str
    interrupted_run_id: str
    error_code: str
    stages: list[str]
    attempt: int


class PreparationBudgetResumed(DomainEvent):
    """The durable dispatch-intent fact of the budget-resume pass: this job's preparation,
    halted by the daily ceiling (``haltedRunId`` failed ``budget_exceeded``), starts again
    under ``workflowId`` now that the budget has room. Committed before Temporal is asked;
    at most one per job and ``budgetEpisode`` (``{spend day}:{ceiling micro-USD}``, or
    ``{spend day}:unlimited``)."""

    job_id: str
    workflow_id: str
    halted_run_id: str
    budget_episode: str
    stages: list[str]


class BatchBudgetResumed(DomainEvent):
    """The budget-resume pass's dispatch intent for a selected batch: the batch
    ``batchId`` (its selection's deterministic id) whose run ``haltedRunId`` the daily
    ceiling refused, at its preflight or for ``jobIds`` mid-run, runs again for
    ``jobIds`` as ``workflowId``. Committed before Temporal is asked; at most one per
    batch and ``budgetEpisode``."""

    batch_id: str
    workflow_id: str
    halted_run_id: str
    budget_episode: str
    stages: list[str]
    job_ids: list[str]
    workers: int


class ContactResearchBudgetResumed(DomainEvent):
    """The budget-resume pass's dispatch intent for contact research: the job's task
    ``haltedTaskId`` failed ``budget_exceeded``; research continues as the new task
    ``taskId`` (workflow ``workflowId``), committed with it before Temporal is asked. At
    most one per job and ``budgetEpisode``."""

    job_id: str
    task_id: str
    workflow_id: str
    halted_task_id: str
    halted_run_id: str
    budget_episode: str


class EnrichConditionResolved(DomainEvent):
    """The user resolved a typed Enrich block for one host (allowed JobCtrl to fetch its
    posting pages); the jobs carrying it continue under ``workflowId``."""

    code: Literal["ENRICH_ROBOTS_DISALLOWED"]
    host: str
    workflow_id: str
    job_count: int = Field(ge=0)


# --- Pipeline-step lifecycle (execution-scoped orchestration steps) -----------------------

PipelineStepKind = Literal[
    "source_planning", "source_family", "enrichment_pass", "preparation_fanout",
    "existing_backlog_sweep", "pdf_render",
]
# Bounded item keys (``planning``, ``family:demo_board``, ``fanout:family:demo_board``,
# ``sweep``, ``fanout:sweep``) and error codes: identifiers, never free text.
STEP_ITEM_KEY_PATTERN = r"^[a-z0-9][a-z0-9_.:-]{0,127}$"
STEP_ERROR_CODE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$"
_COUNT = Field(default=None, ge=0, le=10_000_000)


class PipelineStepCounts(CamelModel):
    """The allowlisted counts a completed step may report (absent counts are omitted)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, frozen=True,
                              extra="forbid")

    target_count: int | None = _COUNT
    planned_count: int | None = _COUNT
    not_eligible_count: int | None = _COUNT
    new_jobs: int | None = _COUNT
    existing_jobs: int | None = _COUNT
    observed_jobs: int | None = _COUNT
    family_count: int | None = _COUNT
    eligible_count: int | None = _COUNT
    swept_count: int | None = _COUNT
    deferred_count: int | None = _COUNT
    # enrichment_pass / pdf_render: how the execution's members settled the stage.
    succeeded_count: int | None = _COUNT
    failed_count: int | None = _COUNT
    blocked_count: int | None = _COUNT
    skipped_count: int | None = _COUNT
    not_reached_count: int | None = _COUNT

    @model_serializer(mode="wrap")
    def _only_present(self, handler):
        return {key: value for key, value in handler(self).items() if value is not None}


class _PipelineStepEvent(DomainEvent):
    """One Discover execution's orchestration step, keyed by (discoverRunId, stepKind,
    itemKey) and the Temporal activity attempt. No payloads, no exception text."""

    discover_workflow_id: str
    discover_run_id: str
    step_kind: PipelineStepKind
    item_key: str = Field(pattern=STEP_ITEM_KEY_PATTERN)
    attempt: int = Field(ge=1)


class PipelineStepQueued(_PipelineStepEvent):
    queued_at: str


class PipelineStepStarted(_PipelineStepEvent):
    started_at: str


class PipelineStepCompleted(_PipelineStepEvent):
    counts: PipelineStepCounts = Field(default_factory=PipelineStepCounts)
    duration_ms: int | None = Field(default=None, ge=0)


class PipelineStepFailed(_PipelineStepEvent):
    error_code: str = Field(pattern=STEP_ERROR_CODE_PATTERN)
    retryable: bool


# --- Apply lifecycle (per job; folded into apply_run_projections) -------------------------

ApplyTargetKind = Literal["browser_form", "email", "unknown"]


class ApplyApproved(_JobEvent):
    """The user approved this job in Apply Review; for email, the exact recipient and
    attachment list."""

    recipient: str | None = None
    attachments: list[str] = Field(default_factory=list)


class ApplyRejected(_JobEvent):
    reason: str | None = Field(default=None, max_length=500)


class ApplyStarted(_JobEvent):
    """An ApplyWorkflow run claimed the job: its one live attempt."""

    target_kind: ApplyTargetKind


class ApplyAwaitingApproval(_JobEvent):
    """The claim was given back: the job needs (a new) approval first."""

    reason: str


class ApplyPacketReady(_JobEvent):
    """Packet built; the job waits for the user to complete and mark it applied."""

    target_kind: ApplyTargetKind
    target_url: str | None = None
    resume_pdf: str
    cover_letter_pdf: str
    answers: dict[str, str] = Field(default_factory=dict)
    dry_run: bool = False


class ApplySubmitted(_JobEvent):
    channel: Literal["email"]
    recipient: str
    message_id: str


class ApplyMarkedApplied(_JobEvent):
    pass


class ApplyFailed(_JobEvent):
    error_code: str = Field(pattern=STEP_ERROR_CODE_PATTERN)
    retryable: bool


class ApplyCanceled(_JobEvent):
    pass


# --- After applying: the application board (per job; folded into application_projections)

ApplicationStageName = Literal["applied", "heard_back", "interviewing", "offer", "rejected",
                               "withdrawn", "ghosted"]


class ApplicationTracked(_JobEvent):
    """The job was applied to (an email sent, a packet marked applied, or "mark applied"
    on the job): its card appears on the board. ``appliedOn`` is the user's local day;
    the posting as it was then is kept in ``application_snapshots``."""

    via: Literal["email", "apply_review", "job_action"]
    applied_at: str
    applied_on: str
    title: str = Field(max_length=300)
    company: str = Field(max_length=300)


class ApplicationUntracked(_JobEvent):
    """The user cleared the job's "applied" mark: its card leaves the board (its history
    stays in the log and returns if the job is marked applied again)."""


class ApplicationOutcomeRecorded(_JobEvent):
    """A move on the board: the application reached ``stage`` on ``date`` (the user's
    local day), with the user's note."""

    stage: ApplicationStageName
    date: str
    note: str | None = Field(default=None, max_length=1000)


class ApplicationOutcomeUndone(_JobEvent):
    """Undo: the move recorded as event ``undoneEventId`` no longer counts. A newer
    event, never a deleted one."""

    undone_event_id: int


class FollowUpScheduled(_JobEvent):
    """The next step: follow up on ``dueOn`` (local day), ``daysAfterApplying`` after
    applying if nothing was heard."""

    due_on: str
    days_after_applying: int


class FollowUpSnoozed(_JobEvent):
    due_on: str
    previous_due_on: str | None = None


class FollowUpDone(_JobEvent):
    via: Literal["user", "email_sent"]


class FollowUpEmailRequested(_JobEvent):
    """The durable dispatch-intent fact of a follow-up email (round ``round``), committed
    before Temporal is asked to start ``workflowId``; its text passed the honest-claims
    gate."""

    round: int
    recipient: str = Field(max_length=320)


class FollowUpEmailSent(_JobEvent):
    round: int
    recipient: str = Field(max_length=320)
    message_id: str


class FollowUpEmailFailed(_JobEvent):
    round: int
    error_code: str = Field(pattern=STEP_ERROR_CODE_PATTERN)


class InterviewScheduled(_JobEvent):
    """An interview round at ``startsAt`` (UTC); recording the same ``interviewId`` again
    reschedules it or changes its notes."""

    interview_id: str
    round: int
    starts_at: str
    duration_minutes: int
    location: str | None = Field(default=None, max_length=300)
    notes: str | None = Field(default=None, max_length=2000)


class InterviewCanceled(_JobEvent):
    interview_id: str


# --- Contact & Outreach: supervised contact research (ContactResearchWorkflow) ------------


class _ContactTaskEvent(DomainEvent):
    """One research task for one job. ``runId`` is null for the API's request fact."""

    job_id: str
    task_id: str
    workflow_id: str
    run_id: str | None = None


class ContactResearchRequested(_ContactTaskEvent):
    pass


class ContactResearchStarted(_ContactTaskEvent):
    pass


class ContactCandidateFound(_ContactTaskEvent):
    """A person (or named inbox) the sources name; absent facts stay null."""

    candidate_id: str
    contact_id: str
    name: str | None = None
    title: str | None = None
    email: str | None = None
    source_url: str | None = None
    confidence_pct: int = Field(ge=0, le=100)
    evidence: str = Field(max_length=300)


class ContactResearchCompleted(_ContactTaskEvent):
    candidate_count: int = Field(ge=0)
    source_attempts: list[ContactSourceAttempt] = Field(default_factory=list)
    provider: str
    model: str


class ContactResearchFailed(_ContactTaskEvent):
    status: Literal["failed", "canceled"]
    error_code: str
    source_attempts: list[ContactSourceAttempt] = Field(default_factory=list)


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
    ProfileContinuationIntended,
    EnrichConditionResolved,
    PreparationBudgetResumed,
    BatchBudgetResumed,
    ContactResearchBudgetResumed,
    PreparationInterruptedResumed,
    WorkflowReconciled,
    PipelineStepQueued,
    PipelineStepStarted,
    PipelineStepCompleted,
    PipelineStepFailed,
    ApplyApproved,
    ApplyRejected,
    ApplyStarted,
    ApplyAwaitingApproval,
    ApplyPacketReady,
    ApplySubmitted,
    ApplyMarkedApplied,
    ApplyFailed,
    ApplyCanceled,
    ContactResearchRequested,
    ContactResearchStarted,
    ContactCandidateFound,
    ContactResearchCompleted,
    ContactResearchFailed,
    ApplicationTracked,
    ApplicationUntracked,
    ApplicationOutcomeRecorded,
    ApplicationOutcomeUndone,
    FollowUpScheduled,
    FollowUpSnoozed,
    FollowUpDone,
    FollowUpEmailRequested,
    FollowUpEmailSent,
    FollowUpEmailFailed,
    InterviewScheduled,
    InterviewCanceled,
)

EVENT_BY_NAME: dict[str, type[DomainEvent]] = {cls.event_type: cls for cls in EVENT_TYPES}


def parse_event(event_type: str, payload_json: str) -> DomainEvent:
    """Validate a stored or streamed payload against its registered model."""
    try:
        model = EVENT_BY_NAME[event_type]
    except KeyError:
        raise ValueError(f"unknown event type {event_type!r}") from None
    return model.model_validate_json(payload_json)
