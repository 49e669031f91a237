"""Decoding one exact Discover workflow/run history into PipelineStep* events (decoder v3).

Plain functions over ``temporalio.api.history.v1.HistoryEvent`` objects: no server, no
database. :func:`decode_history` reads the Discover workflow's step activities
(``ACTIVITY_TASK_SCHEDULED`` / ``STARTED`` / ``COMPLETED`` / ``FAILED`` / ``TIMED_OUT`` /
``CANCELED``), reads their inputs and results through the workflow's payload converter, and
maps each activity to (step kind, item key, attempt) exactly as the native emitters in
``backend/temporal/activities/discovery.py`` do, so the decoded events carry the native
dedupe keys (``backend.projections.pipeline_steps.dedupe_key``) and merge idempotently:

* ``plan_discovery`` → ``source_planning`` / ``planning``; its result queues one
  ``source_family`` per planned family plus ``existing_backlog_sweep`` / ``sweep`` and
  ``preparation_fanout`` / ``fanout:sweep`` (attempt 1, at the planning completion);
* ``discover_source_family`` → ``source_family`` / ``family:{id}``; a completed family
  that returned job ids queues ``preparation_fanout`` / ``fanout:family:{id}``;
* ``plan_preparation`` → ``preparation_fanout`` / its ``itemKey`` (none for a legacy input
  without one); with ``sweep`` also ``existing_backlog_sweep`` / ``sweep``, which runs
  first inside the same activity;
* ``finalize_discovery`` → fails the steps still queued (code per the final status, as
  ``_close_unstarted_steps`` does) and, for a completed execution, queues and starts the
  ``enrichment_pass`` / ``pdf_render`` boundaries (their settlement is judged from the
  database, never from history).

Temporal attempts stay distinct: history records only the final attempt's start and end,
so the decoder emits Started / Completed / Failed for that attempt and Queued only for
attempt 1 (the scheduled time is that attempt's queue time); a retried attempt's
``queuedAt`` stays unknown rather than fabricated. A terminal activity is failed with
``retryable = false`` (Temporal recorded the end of its last attempt).

Membership evidence: the job ids each completed family returned (``observed_this_run``)
and the jobs each sweep fan-out planned (``existing_backlog``). Ambiguous facts are not
guessed: an input naming another execution, an undecodable payload, or a failed sweep
activity (history cannot say whether the sweep or its fan-out failed) are reported for the
repair to judge.

Work-plan evidence (:func:`plan_evidence`): a job is proven ``planned`` when a completed
``plan_preparation`` with an ``itemKey`` (the native fan-out, which records its plans in
the same transaction as its step) returned it with its required steps, every fan-out that
returned it agrees on them, and the Discover workflow initiated its JobPreparationWorkflow
child as ``prep-{idempotencyKey}`` with ``idempotencyKey`` = the JobId, this execution's
ids and exactly those stages. Its plan time is the completion of the first such fan-out:
the native ``planned_at`` was stamped inside that activity (so it is not later), and the
child starts only after it (so every preparation event is not earlier). A job a completed
fan-out was asked to plan but did not return was planned ``not_eligible`` with a reason
history does not carry, or its plan cannot be tied to a child: it is reported unproven,
never guessed. A finalize that completed with status ``failed`` proves the members still
pending then were failed with ``planning_failed`` at that time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.converter import PayloadConverter

from backend.domain import events as ev
from backend.domain.clock import parse_iso, to_iso
from backend.store.coverage import step_key
from backend.temporal.activities.discovery import (
    FANOUT_SWEEP_KEY,
    PLANNING_KEY,
    SWEEP_KEY,
    bounded_code,
    family_item_key,
    fanout_item_key,
    final_status,
)
from backend.temporal.contracts import (
    DiscoverResult,
    DiscoveryPlan,
    FamilyFailureInput,
    FamilyInput,
    FamilyOutcome,
    FanoutInput,
    FanoutPlan,
    FinalizeInput,
    PlanInput,
    PrepInput,
    prep_workflow_id,
)
from backend.temporal.workflows.preparation import WORKFLOW_TYPE as PREP_WORKFLOW_TYPE

DECODER_VERSION = 3
PASS_KINDS = ("enrichment_pass", "pdf_render")
WORKFLOW_CLOSED_CODE = "workflow_closed"

# Bounded problem codes (what the repair may publish as the checkpoint's error code).
IDENTITY_CONFLICT = "identity_conflict"
UNDECODABLE_PAYLOAD = "undecodable_payload"
AMBIGUOUS_SWEEP_FAILURE = "ambiguous_sweep_failure"
# Bounded codes of a member whose work plan history does not prove.
PLAN_UNPROVEN = "member_plan_unproven"    # no returned plan / no child start for it
PLAN_CONFLICT = "member_plan_conflict"    # fan-outs or child starts disagree

_INPUTS = {
    "plan_discovery": PlanInput,
    "discover_source_family": FamilyInput,
    "record_family_failure": FamilyFailureInput,
    "plan_preparation": FanoutInput,
    "finalize_discovery": FinalizeInput,
}
_RESULTS = {
    "plan_discovery": DiscoveryPlan,
    "discover_source_family": FamilyOutcome,
    "plan_preparation": FanoutPlan,
    "finalize_discovery": DiscoverResult,
}
_CLOSE_TYPES = {
    EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: "completed",
    EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED: "failed",
    EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: "timed_out",
    EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED: "canceled",
}
_WORKFLOW_CLOSED = {
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED,
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED,
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED,
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TIMED_OUT,
    EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW,
}


@dataclass
class ActivityRecord:
    """One scheduled activity and what history says about its final attempt."""

    scheduled_event_id: int
    activity_type: str
    scheduled_at: str
    input: Any = None                   # the decoded input model (None: undecodable)
    attempt: int | None = None          # the final attempt (from ACTIVITY_TASK_STARTED)
    started_at: str | None = None
    close: str | None = None            # completed | failed | timed_out | canceled
    closed_at: str | None = None
    result: Any = None                  # the decoded result of a completed activity
    failure_type: str | None = None     # ApplicationError type of a failed activity
    cancel_requested: bool = False


@dataclass
class ChildStart:
    """One JobPreparationWorkflow start the Discover workflow initiated."""

    event_id: int
    workflow_id: str
    input: PrepInput | None             # None: undecodable


@dataclass(frozen=True)
class PlanEvidence:
    """A ``planned`` work plan history proves, with the time it proves."""

    required_steps: tuple[str, ...]
    prep_workflow_id: str
    planned_at: str


@dataclass
class DecodedHistory:
    """Everything one history proves about its execution's steps and membership."""

    events: list[ev.DomainEvent] = field(default_factory=list)
    step_keys: set[str] = field(default_factory=set)
    observed_job_ids: set[str] = field(default_factory=set)
    backlog_planned_job_ids: set[str] = field(default_factory=set)
    # (step kind, item key, attempt) whose terminal only a persisted native event may prove.
    unproven_terminals: list[tuple[str, str, int]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    # Work plans (see plan_evidence): proven plans, and JobIds whose plan is not proven.
    plans: dict[str, PlanEvidence] = field(default_factory=dict)
    unproven_plans: dict[str, str] = field(default_factory=dict)   # JobId → bounded code
    planning_failed_at: str | None = None   # a failed finalize's time (pending → failed)
    watermark: int = 0                  # the last history event id decoded
    workflow_closed_at: str | None = None   # the workflow's close event time (None: open)

    @property
    def workflow_closed(self) -> bool:
        return self.workflow_closed_at is not None


def _time(event) -> str:
    return to_iso(event.event_time.ToDatetime(tzinfo=UTC))


def _decode(converter: PayloadConverter, payloads, model) -> Any:
    values = converter.from_payloads(list(payloads.payloads), [model])
    return values[0] if values else None


def collect_activities(history: Iterable, converter: PayloadConverter,
                       children: list[ChildStart] | None = None
                       ) -> tuple[dict[int, ActivityRecord], int, str | None, list[str]]:
    """Pass 1: every Discover step activity by scheduled event id, the last event id, when
    the workflow closed (None: still open), and decoding problems. The preparation child
    starts are appended to ``children`` when given."""
    records: dict[int, ActivityRecord] = {}
    watermark, closed, problems = 0, None, []
    children = children if children is not None else []
    for event in history:
        watermark = max(watermark, event.event_id)
        kind = event.event_type
        if kind in _WORKFLOW_CLOSED:
            closed = _time(event)
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            attributes = event.activity_task_scheduled_event_attributes
            name = attributes.activity_type.name
            if name not in _INPUTS:
                continue
            record = ActivityRecord(event.event_id, name, _time(event))
            try:
                record.input = _decode(converter, attributes.input, _INPUTS[name])
            except Exception:  # noqa: BLE001 - reported, never guessed
                problems.append(UNDECODABLE_PAYLOAD)
            records[event.event_id] = record
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
            attributes = event.activity_task_started_event_attributes
            record = records.get(attributes.scheduled_event_id)
            if record is not None:
                record.attempt = max(1, attributes.attempt)
                record.started_at = _time(event)
        elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED:
            attributes = event.activity_task_cancel_requested_event_attributes
            record = records.get(attributes.scheduled_event_id)
            if record is not None:
                record.cancel_requested = True
        elif kind in _CLOSE_TYPES:
            _close(records, event, _CLOSE_TYPES[kind], converter, problems)
        elif kind == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
            _child_start(children, event, converter)
    return records, watermark, closed, problems


def _child_start(children: list[ChildStart], event, converter) -> None:
    attributes = event.start_child_workflow_execution_initiated_event_attributes
    if attributes.workflow_type.name != PREP_WORKFLOW_TYPE:
        return
    try:
        value = _decode(converter, attributes.input, PrepInput)
    except Exception:  # noqa: BLE001 - an unreadable start proves no plan (plan_evidence)
        value = None
    children.append(ChildStart(event.event_id, attributes.workflow_id, value))


def _close(records, event, close: str, converter, problems: list[str]) -> None:
    attributes = {
        "completed": event.activity_task_completed_event_attributes,
        "failed": event.activity_task_failed_event_attributes,
        "timed_out": event.activity_task_timed_out_event_attributes,
        "canceled": event.activity_task_canceled_event_attributes,
    }[close]
    record = records.get(attributes.scheduled_event_id)
    if record is None:
        return
    record.close, record.closed_at = close, _time(event)
    if close == "completed" and record.activity_type in _RESULTS:
        try:
            record.result = _decode(converter, attributes.result,
                                    _RESULTS[record.activity_type])
        except Exception:  # noqa: BLE001 - reported, never guessed
            problems.append(UNDECODABLE_PAYLOAD)
    if close == "failed" and attributes.failure.HasField("application_failure_info"):
        record.failure_type = attributes.failure.application_failure_info.type or None


class _Emitter:
    """Pass 2: builds the step events of one execution in history order."""

    def __init__(self, ref, decoded: DecodedHistory):
        self.ref = ref
        self.decoded = decoded
        self.open: dict[str, tuple[str, str, int, bool]] = {}  # key → kind, item, attempt, started

    def _ids(self, kind: str, item: str, attempt: int) -> dict:
        return {"discover_workflow_id": self.ref.discover_workflow_id,
                "discover_run_id": self.ref.discover_run_id, "step_kind": kind,
                "item_key": item, "attempt": attempt}

    def queued(self, kind: str, item: str, at: str) -> None:
        key = step_key(kind, item)
        self.decoded.step_keys.add(key)
        self.decoded.events.append(ev.PipelineStepQueued(**self._ids(kind, item, 1),
                                                         queued_at=at, occurred_at=at))
        self.open.setdefault(key, (kind, item, 1, False))

    def started(self, kind: str, item: str, attempt: int, at: str) -> None:
        self.decoded.step_keys.add(step_key(kind, item))
        self.decoded.events.append(ev.PipelineStepStarted(**self._ids(kind, item, attempt),
                                                          started_at=at, occurred_at=at))
        self.open[step_key(kind, item)] = (kind, item, attempt, True)

    def completed(self, kind: str, item: str, attempt: int, at: str,
                  started_at: str | None, **counts: int) -> None:
        event = ev.PipelineStepCompleted(
            **self._ids(kind, item, attempt), counts=ev.PipelineStepCounts(**counts),
            duration_ms=_duration_ms(started_at, at), occurred_at=at)
        self._terminal(event)

    def failed(self, kind: str, item: str, attempt: int, at: str, code: str) -> None:
        event = ev.PipelineStepFailed(**self._ids(kind, item, attempt),
                                      error_code=bounded_code(code), retryable=False,
                                      occurred_at=at)
        self._terminal(event)

    def _terminal(self, event) -> None:
        # Every decoded fact carries the time Temporal recorded it, not the decoding time.
        self.decoded.step_keys.add(step_key(event.step_kind, event.item_key))
        self.decoded.events.append(event)
        self.open.pop(step_key(event.step_kind, event.item_key), None)

    def close_open(self, at: str, code: str, *, queued_only: bool) -> None:
        """Fail what is still open (the finalize rule, or a closed workflow's leftovers)."""
        for kind, item, attempt, started in list(self.open.values()):
            if kind in PASS_KINDS or (queued_only and started):
                continue
            self.failed(kind, item, attempt, at, code)


def _duration_ms(started_at: str | None, finished_at: str) -> int | None:
    if not started_at:
        return None
    delta = parse_iso(finished_at) - parse_iso(started_at)
    return max(0, round(delta.total_seconds() * 1000))


def _same_execution(ref, other) -> bool:
    return (other is not None and other.tenant_id == ref.tenant_id
            and other.discover_workflow_id == ref.discover_workflow_id
            and other.discover_run_id == ref.discover_run_id)


def _failure_code(record: ActivityRecord, family_codes: dict[str, str]) -> str:
    if record.close == "failed":
        return record.failure_type or "activity_failed"
    if record.close == "canceled":
        return "canceled"
    # Timed out: the native record_family_failure records the workflow's bounded code.
    family = getattr(getattr(record.input, "source", None), "id", None)
    return family_codes.get(family, "timed_out") if family else "timed_out"


def _steps_of(record: ActivityRecord) -> list[tuple[str, str]]:
    """The (kind, item) steps one activity runs, in the order it runs them."""
    value = record.input
    if record.activity_type == "plan_discovery":
        return [("source_planning", PLANNING_KEY)]
    if record.activity_type == "discover_source_family":
        return [("source_family", family_item_key(value.source.id))]
    if record.activity_type == "plan_preparation":
        found = [("existing_backlog_sweep", SWEEP_KEY)] if value.sweep else []
        if value.item_key is not None:
            found.append(("preparation_fanout", value.item_key))
        return found
    return []


def _emit_activity(emit: _Emitter, record: ActivityRecord, family_codes: dict[str, str]
                   ) -> None:
    steps = _steps_of(record)
    for kind, item in steps:
        emit.queued(kind, item, record.scheduled_at)
    if record.attempt is None or not steps:
        return
    # In one attempt the sweep runs before its fan-out, so both started.
    for kind, item in steps:
        emit.started(kind, item, record.attempt, record.started_at)
    if record.close == "completed":
        for kind, item in steps:
            emit.completed(kind, item, record.attempt, record.closed_at, record.started_at,
                           **_counts(kind, record.result))
    elif record.close is not None:
        if len(steps) > 1:
            # A failed sweep activity: history cannot say which of its steps failed.
            for kind, item in steps:
                emit.decoded.unproven_terminals.append((kind, item, record.attempt))
                emit.open.pop(step_key(kind, item), None)
            return
        kind, item = steps[0]
        emit.failed(kind, item, record.attempt, record.closed_at,
                    _failure_code(record, family_codes))


def _counts(kind: str, result: Any) -> dict[str, int]:
    """Only the counts the result itself proves (unknown counts stay absent)."""
    if kind == "source_planning" and isinstance(result, DiscoveryPlan):
        return {"family_count": len(result.sources)}
    if kind == "source_family" and isinstance(result, FamilyOutcome):
        return {"new_jobs": result.new_jobs, "existing_jobs": result.existing_jobs,
                "observed_jobs": len(result.job_ids)}
    return {}


def _after_completion(emit: _Emitter, record: ActivityRecord) -> None:
    """What a completed activity's result queues, and its membership evidence."""
    decoded, result = emit.decoded, record.result
    if record.activity_type == "plan_discovery" and isinstance(result, DiscoveryPlan):
        for source in result.sources:
            emit.queued("source_family", family_item_key(source.id), record.closed_at)
        emit.queued("existing_backlog_sweep", SWEEP_KEY, record.closed_at)
        emit.queued("preparation_fanout", FANOUT_SWEEP_KEY, record.closed_at)
    elif record.activity_type == "discover_source_family" and isinstance(result, FamilyOutcome):
        decoded.observed_job_ids.update(result.job_ids)
        if result.job_ids:
            emit.queued("preparation_fanout", fanout_item_key(result.family), record.closed_at)
    elif record.activity_type == "plan_preparation" and isinstance(result, FanoutPlan):
        if record.input.sweep:
            decoded.backlog_planned_job_ids.update(result.job_ids)
    elif record.activity_type == "finalize_discovery":
        _finalized(emit, record)


def _finalized(emit: _Emitter, record: ActivityRecord) -> None:
    status = final_status(record.input)
    code = {"canceled": "workflow_canceled", "failed": "workflow_failed"}.get(
        status, "not_started")
    emit.close_open(record.closed_at, code, queued_only=True)
    if status in ("completed", "completed_with_issues"):
        for kind in PASS_KINDS:  # membership closed: both boundaries open (passes.py)
            emit.queued(kind, kind, record.closed_at)
            emit.started(kind, kind, 1, record.closed_at)


def _fanout_claims(fanouts: list[ActivityRecord]
                   ) -> tuple[dict[str, list[tuple[tuple[str, ...] | None, str]]], set[str]]:
    """What the native fan-outs returned: JobId → [(required steps, completion time)], in
    history order, and the JobIds they were asked to plan (a sweep's cohort is unnamed)."""
    claims: dict[str, list[tuple[tuple[str, ...] | None, str]]] = {}
    targets: set[str] = set()
    for record in fanouts:
        if not record.input.sweep:
            targets.update(record.input.job_ids)
        for job_id in record.result.job_ids:
            steps = record.result.required_steps.get(job_id)
            claims.setdefault(job_id, []).append(
                (tuple(steps) if steps else None, record.closed_at))
    return claims, targets


def _child_matches(ref, child: ChildStart, job_id: str, steps: tuple[str, ...]) -> bool:
    value = child.input
    return (value is not None and value.job_id == job_id and value.idempotency_key == job_id
            and child.workflow_id == prep_workflow_id(value.idempotency_key)
            and value.discover_workflow_id == ref.discover_workflow_id
            and value.discover_run_id == ref.discover_run_id
            and tuple(value.stages) == steps)


def plan_evidence(ref, fanouts: list[ActivityRecord], children: list[ChildStart],
                  decoded: DecodedHistory) -> None:
    """Fill ``decoded.plans`` / ``unproven_plans`` from the completed native fan-outs of
    this execution (in completion order) and the preparation children it started."""
    claims, targets = _fanout_claims(fanouts)
    starts: dict[str, list[ChildStart]] = {}
    for child in children:
        key = child.input.job_id if child.input is not None else None
        starts.setdefault(key, []).append(child)
    unreadable = None in starts   # an unreadable start may be any job's: none is proven
    for job_id, found in claims.items():
        returned = {steps for steps, _ in found}
        mine = starts.get(job_id, [])
        if len(returned) != 1:
            decoded.unproven_plans[job_id] = PLAN_CONFLICT
        elif None in returned or not mine or unreadable:
            decoded.unproven_plans[job_id] = PLAN_UNPROVEN
        elif not all(_child_matches(ref, child, job_id, found[0][0])
                     for child in mine):
            decoded.unproven_plans[job_id] = PLAN_CONFLICT
        else:
            decoded.plans[job_id] = PlanEvidence(found[0][0], prep_workflow_id(job_id),
                                                 found[0][1])
    for job_id in targets - claims.keys():
        decoded.unproven_plans[job_id] = PLAN_UNPROVEN


def _is_native_fanout(record: ActivityRecord) -> bool:
    return (record.activity_type == "plan_preparation" and record.close == "completed"
            and record.input.item_key is not None and isinstance(record.result, FanoutPlan))


def decode_history(ref, history: Iterable, converter: PayloadConverter) -> DecodedHistory:
    """Decode one exact Discover workflow/run history (an iterable of HistoryEvent)."""
    children: list[ChildStart] = []
    records, watermark, closed, problems = collect_activities(history, converter, children)
    decoded = DecodedHistory(watermark=watermark, workflow_closed_at=closed,
                             problems=list(problems))
    emit = _Emitter(ref, decoded)
    family_codes = {r.input.family: r.input.error_code for r in records.values()
                    if r.activity_type == "record_family_failure" and r.input is not None}
    fanouts: list[ActivityRecord] = []
    for record in sorted(records.values(), key=lambda r: r.scheduled_event_id):
        if record.input is None:
            continue  # already reported as undecodable
        if not _same_execution(ref, record.input.ref):
            decoded.problems.append(IDENTITY_CONFLICT)
            continue
        _emit_activity(emit, record, family_codes)
        if record.close == "completed":
            _after_completion(emit, record)
        if _is_native_fanout(record):
            fanouts.append(record)
        elif (record.activity_type == "finalize_discovery" and record.close == "completed"
              and final_status(record.input) == "failed"):
            decoded.planning_failed_at = record.closed_at
    # Ordered by completion: the first fan-out that returned a job is when it was planned.
    fanouts.sort(key=lambda r: r.closed_at)
    plan_evidence(ref, fanouts, children, decoded)
    if decoded.unproven_terminals:
        decoded.problems.append(AMBIGUOUS_SWEEP_FAILURE)
    if closed:
        # Temporal proves the workflow is over: nothing it owned can still run.
        emit.close_open(closed, WORKFLOW_CLOSED_CODE, queued_only=False)
    decoded.problems = sorted(set(decoded.problems))
    return decoded
