"""Decoder v3 over Discover histories: a real one (fetched once from a dev-server run of two
json_file families, ``tests/unit/data/discover_history.json``) and edge cases built as
``HistoryEvent`` protos (retried / failed / timed-out / canceled activities, a failed sweep,
a terminated workflow, an input naming another execution, an undecodable payload); then
the repair's merge on a real SQLite database: idempotent, resumable, proven by digest."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from google.protobuf.json_format import Parse
from temporalio.api.common.v1 import ActivityType, Payloads, WorkflowType
from temporalio.api.enums.v1 import EventType
from temporalio.api.failure.v1 import ApplicationFailureInfo, Failure
from temporalio.api.history.v1 import History, HistoryEvent
from temporalio.contrib.pydantic import pydantic_data_converter

from backend.domain import events as ev
from backend.domain.source_config import DemoBoardSource, SourceConfig
from backend.projections import pipeline_steps as steps
from backend.projections.coverage import read_coverage
from backend.store import coverage, lineage
from backend.store.events import StoredEvent
from backend.temporal.contracts import (
    DiscoveryExecutionRef,
    DiscoveryPlan,
    FamilyFailureInput,
    FamilyInput,
    FamilyOutcome,
    FanoutInput,
    FanoutPlan,
    FinalizeInput,
    PlanInput,
    PrepInput,
)
from backend.temporal.loops import history_decoder as decoder
from backend.temporal.loops import history_repair

DATA = Path(__file__).parent / "data"
CONVERTER = pydantic_data_converter.payload_converter
REAL_REF = DiscoveryExecutionRef.model_validate_json(
    (DATA / "discover_history.ref.json").read_text(encoding="utf-8"))
REF = DiscoveryExecutionRef(tenant_id="local", discover_workflow_id="discover-local",
                            discover_run_id="run-1")
T0 = datetime(2026, 3, 1, 10, 0, 0, tzinfo=UTC)


def real_history() -> list[HistoryEvent]:
    text = (DATA / "discover_history.json").read_text(encoding="utf-8")
    return list(Parse(text, History()).events)


def decode(events, ref=REF) -> decoder.DecodedHistory:
    return decoder.decode_history(ref, events, CONVERTER)


def by_key(decoded) -> dict[tuple, ev.DomainEvent]:
    found: dict[tuple, ev.DomainEvent] = {}
    for event in decoded.events:
        key = (event.event_type, event.step_kind, event.item_key, event.attempt)
        found.setdefault(key, event)
    return found


# --- the real history ---------------------------------------------------------------------

REAL_KEYS = {
    "source_planning|planning", "source_family|family:alpha", "source_family|family:beta",
    "preparation_fanout|fanout:family:alpha", "preparation_fanout|fanout:family:beta",
    "existing_backlog_sweep|sweep", "preparation_fanout|fanout:sweep",
    "enrichment_pass|enrichment_pass", "pdf_render|pdf_render",
}


def test_real_history_decodes_every_step_key_with_its_native_item_key():
    events = real_history()
    decoded = decode(events, REAL_REF)
    assert decoded.problems == [] and decoded.unproven_terminals == []
    assert decoded.step_keys == REAL_KEYS
    assert decoded.watermark == events[-1].event_id
    assert decoded.workflow_closed
    assert len(decoded.observed_job_ids) == 5      # 3 alpha + 2 beta postings
    assert decoded.backlog_planned_job_ids == set()  # a first run sweeps nothing


def test_real_history_events_fold_to_the_native_terminal_states():
    decoded = decode(real_history(), REAL_REF)
    rows: dict[tuple, steps.StepRow | None] = {}
    for index, event in enumerate(decoded.events, start=1):
        stored = StoredEvent(id=index, type=event.event_type, job_id=None,
                             workflow_id=event.discover_workflow_id,
                             run_id=event.discover_run_id, payload_json=event.payload_json(),
                             created_at=event.occurred_at)
        key = (event.step_kind, event.item_key)
        rows[key] = steps.fold_step(rows.get(key), stored)
    status = {f"{kind}|{item}": row.status for (kind, item), row in rows.items()}
    passes = {"enrichment_pass|enrichment_pass", "pdf_render|pdf_render"}
    assert {key for key, value in status.items() if value == "succeeded"} == REAL_KEYS - passes
    assert {status[key] for key in passes} == {"running"}  # settled from the database
    family = rows[("source_family", "family:alpha")]
    assert family.counts == {"existingJobs": 0, "newJobs": 3, "observedJobs": 3}
    assert family.queued_at and family.started_at and family.duration_ms is not None


def test_real_history_uses_one_dedupe_key_per_phase_and_history_times():
    decoded = decode(real_history(), REAL_REF)
    keys = [steps.dedupe_key(event) for event in decoded.events]
    # Repeats (a family queued by the plan and again by its own scheduling) share a key,
    # which is exactly what makes the merge a no-op for them.
    run = REAL_REF.discover_run_id
    assert f"PipelineStep:{run}:source_family:family:beta:1:queued" in keys
    terminal = [e for e in decoded.events if isinstance(e, ev.PipelineStepCompleted)]
    assert len({steps.dedupe_key(e) for e in terminal}) == len(terminal)
    first_time = real_history()[0].event_time.ToDatetime(tzinfo=UTC)
    assert all(event.occurred_at >= first_time.strftime("%Y-%m-%dT%H:%M:%S")
               for event in decoded.events)


def test_a_running_history_leaves_open_steps_open():
    events = real_history()
    # Cut right after the alpha family's scheduling: planning done, alpha in flight.
    cut = next(e.event_id for e in events
               if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
               and e.activity_task_scheduled_event_attributes.activity_type.name
               == "discover_source_family")
    decoded = decode([e for e in events if e.event_id <= cut], REAL_REF)
    assert not decoded.workflow_closed and decoded.watermark == cut
    assert not any(isinstance(e, ev.PipelineStepFailed) for e in decoded.events)
    assert decoded.step_keys == {"source_planning|planning", "source_family|family:alpha",
                                 "source_family|family:beta", "existing_backlog_sweep|sweep",
                                 "preparation_fanout|fanout:sweep"}


# --- built histories ------------------------------------------------------------------------


class Builder:
    """A minimal Discover history, one event at a time (ids from 1)."""

    def __init__(self):
        self.events: list[HistoryEvent] = []

    def _event(self, kind, seconds: float, **attributes) -> HistoryEvent:
        event = HistoryEvent(event_id=len(self.events) + 1, event_type=kind, **attributes)
        event.event_time.FromDatetime(T0 + timedelta(seconds=seconds))
        self.events.append(event)
        return event

    def schedule(self, name: str, value, at: float = 0) -> int:
        payloads = Payloads(payloads=CONVERTER.to_payloads([value]))
        event = self._event(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, at,
                            activity_task_scheduled_event_attributes={
                                "activity_type": ActivityType(name=name), "input": payloads})
        return event.event_id

    def start(self, scheduled: int, attempt: int = 1, at: float = 1) -> None:
        self._event(EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED, at,
                    activity_task_started_event_attributes={
                        "scheduled_event_id": scheduled, "attempt": attempt})

    def complete(self, scheduled: int, result, at: float = 2) -> None:
        self._event(EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, at,
                    activity_task_completed_event_attributes={
                        "scheduled_event_id": scheduled,
                        "result": Payloads(payloads=CONVERTER.to_payloads([result]))})

    def fail(self, scheduled: int, error_type: str, at: float = 2) -> None:
        failure = Failure(message="boom", application_failure_info=ApplicationFailureInfo(
            type=error_type, non_retryable=True))
        self._event(EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED, at,
                    activity_task_failed_event_attributes={
                        "scheduled_event_id": scheduled, "failure": failure})

    def time_out(self, scheduled: int, at: float = 2) -> None:
        self._event(EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT, at,
                    activity_task_timed_out_event_attributes={"scheduled_event_id": scheduled})

    def close(self, kind=EventType.EVENT_TYPE_WORKFLOW_EXECUTION_TERMINATED, at: float = 9):
        self._event(kind, at)

    def child(self, value, workflow_id: str | None = None, at: float = 3) -> None:
        """The Discover workflow initiates one JobPreparationWorkflow start."""
        self._event(EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED, at,
                    start_child_workflow_execution_initiated_event_attributes={
                        "workflow_id": workflow_id or f"prep-{value.idempotency_key}",
                        "workflow_type": WorkflowType(name="JobPreparationWorkflow"),
                        "input": Payloads(payloads=CONVERTER.to_payloads([value]))})


def source(family: str) -> SourceConfig:  # type: ignore[valid-type]
    return DemoBoardSource(kind="demo_board", id=family)


def planned(builder: Builder, *families: str) -> None:
    scheduled = builder.schedule("plan_discovery", PlanInput(ref=REF))
    builder.start(scheduled)
    builder.complete(scheduled, DiscoveryPlan(sources=[source(f) for f in families]))


def test_a_retried_family_that_completed_is_its_final_attempt_without_a_queue_time():
    builder = Builder()
    planned(builder, "alpha")
    scheduled = builder.schedule("discover_source_family",
                                 FamilyInput(ref=REF, source=source("alpha"), index=0), at=3)
    builder.start(scheduled, attempt=3, at=20)
    builder.complete(scheduled, FamilyOutcome(family="alpha", status="succeeded", new_jobs=1,
                                              job_ids=["job-1"]), at=25)
    found = by_key(decode(builder.events))
    assert ("PipelineStepQueued", "source_family", "family:alpha", 3) not in found
    assert found[("PipelineStepStarted", "source_family", "family:alpha", 3)].started_at \
        == "2026-03-01T10:00:20.000Z"
    completed = found[("PipelineStepCompleted", "source_family", "family:alpha", 3)]
    assert completed.duration_ms == 5000 and completed.counts.observed_jobs == 1
    # The fan-out the family's result queues.
    assert ("PipelineStepQueued", "preparation_fanout", "fanout:family:alpha", 1) in found


def test_a_failed_family_fails_its_final_attempt_with_the_bounded_type_not_retryable():
    builder = Builder()
    planned(builder, "alpha")
    scheduled = builder.schedule("discover_source_family",
                                 FamilyInput(ref=REF, source=source("alpha"), index=0))
    builder.start(scheduled, attempt=2)
    builder.fail(scheduled, "http_error")
    failed = by_key(decode(builder.events))[
        ("PipelineStepFailed", "source_family", "family:alpha", 2)]
    assert (failed.error_code, failed.retryable) == ("http_error", False)
    builder2 = Builder()
    planned(builder2, "alpha")
    scheduled = builder2.schedule("discover_source_family",
                                  FamilyInput(ref=REF, source=source("alpha"), index=0))
    builder2.start(scheduled)
    builder2.fail(scheduled, "free text, not a code!")
    failed = by_key(decode(builder2.events))[
        ("PipelineStepFailed", "source_family", "family:alpha", 1)]
    assert failed.error_code == "step_failed"


def test_a_timed_out_family_takes_the_code_the_workflow_recorded():
    builder = Builder()
    planned(builder, "alpha")
    scheduled = builder.schedule("discover_source_family",
                                 FamilyInput(ref=REF, source=source("alpha"), index=0))
    builder.start(scheduled, attempt=3)
    builder.time_out(scheduled)
    builder.schedule("record_family_failure",
                     FamilyFailureInput(ref=REF, family="alpha", index=0,
                                        error_code="source_failed"), at=3)
    failed = by_key(decode(builder.events))[
        ("PipelineStepFailed", "source_family", "family:alpha", 3)]
    assert failed.error_code == "source_failed" and failed.retryable is False


def test_a_terminated_workflow_fails_what_it_left_queued_or_running():
    builder = Builder()
    planned(builder, "alpha", "beta")
    # alpha's attempt is in flight (no start recorded yet) when the workflow is terminated.
    builder.schedule("discover_source_family",
                     FamilyInput(ref=REF, source=source("alpha"), index=0), at=3)
    builder.close(at=9)
    decoded = decode(builder.events)
    failed = {(e.step_kind, e.item_key): e for e in decoded.events
              if isinstance(e, ev.PipelineStepFailed)}
    assert set(failed) == {("source_family", "family:alpha"), ("source_family", "family:beta"),
                           ("existing_backlog_sweep", "sweep"),
                           ("preparation_fanout", "fanout:sweep")}
    assert {(e.error_code, e.retryable, e.occurred_at) for e in failed.values()} == {
        ("workflow_closed", False, "2026-03-01T10:00:09.000Z")}


def test_a_failed_sweep_activity_is_not_attributed_to_either_step():
    builder = Builder()
    planned(builder)
    scheduled = builder.schedule("plan_preparation", FanoutInput(
        ref=REF, job_ids=[], item_key="fanout:sweep", sweep=True), at=3)
    builder.start(scheduled, attempt=1, at=4)
    builder.fail(scheduled, "activity_failed", at=5)
    decoded = decode(builder.events)
    assert decoded.problems == [decoder.AMBIGUOUS_SWEEP_FAILURE]
    assert set(decoded.unproven_terminals) == {("existing_backlog_sweep", "sweep", 1),
                                               ("preparation_fanout", "fanout:sweep", 1)}
    assert not any(isinstance(e, ev.PipelineStepFailed) for e in decoded.events)


def test_a_completed_sweep_reports_the_jobs_it_planned_as_backlog_evidence():
    builder = Builder()
    planned(builder)
    scheduled = builder.schedule("plan_preparation", FanoutInput(
        ref=REF, job_ids=[], item_key="fanout:sweep", sweep=True), at=3)
    builder.start(scheduled, at=4)
    builder.complete(scheduled, FanoutPlan(job_ids=["old-1", "old-2"]), at=5)
    decoded = decode(builder.events)
    assert decoded.backlog_planned_job_ids == {"old-1", "old-2"}
    found = by_key(decoded)
    assert ("PipelineStepCompleted", "existing_backlog_sweep", "sweep", 1) in found
    assert ("PipelineStepCompleted", "preparation_fanout", "fanout:sweep", 1) in found


def test_an_input_naming_another_execution_is_refused():
    builder = Builder()
    other = REF.model_copy(update={"discover_run_id": "run-2"})
    scheduled = builder.schedule("plan_discovery", PlanInput(ref=other))
    builder.start(scheduled)
    builder.complete(scheduled, DiscoveryPlan(sources=[source("alpha")]))
    decoded = decode(builder.events)
    assert decoded.problems == [decoder.IDENTITY_CONFLICT] and decoded.events == []


def test_an_undecodable_input_is_reported_not_guessed():
    builder = Builder()
    scheduled = builder.schedule("discover_source_family", {"not": "a family input"})
    builder.start(scheduled)
    decoded = decode(builder.events)
    assert decoded.problems == [decoder.UNDECODABLE_PAYLOAD] and decoded.events == []


STEPS = ["enrich", "score", "tailor", "cover", "pdf"]


def prep(job_id: str, stages=STEPS, **changes) -> PrepInput:
    return PrepInput(job_id=job_id, idempotency_key=job_id, stages=stages,
                     discover_workflow_id=REF.discover_workflow_id,
                     discover_run_id=REF.discover_run_id).model_copy(update=changes)


def fanned_out(builder: Builder, job_ids, plan: dict[str, list[str]], *,
               item_key: str = "fanout:family:alpha", at: float = 3) -> None:
    """A native fan-out asked to plan ``job_ids`` returns ``plan`` (JobId → steps)."""
    scheduled = builder.schedule("plan_preparation", FanoutInput(
        ref=REF, job_ids=list(job_ids), item_key=item_key), at=at)
    builder.start(scheduled, at=at + 1)
    builder.complete(scheduled, FanoutPlan(job_ids=list(plan), required_steps=plan),
                     at=at + 2)


def test_a_returned_plan_with_its_child_start_is_proven_at_the_fanout_completion():
    builder = Builder()
    fanned_out(builder, ["job-1", "job-2"], {"job-1": ["score", "tailor"]}, at=3)
    builder.child(prep("job-1", ["score", "tailor"]), at=6)
    # A second fan-out returns the planned job again (its child already runs).
    fanned_out(builder, ["job-1"], {"job-1": ["score", "tailor"]},
               item_key="fanout:family:beta", at=10)
    builder.child(prep("job-1", ["score", "tailor"]), at=13)
    decoded = decode(builder.events)
    assert decoded.plans == {"job-1": decoder.PlanEvidence(
        ("score", "tailor"), "prep-job-1", "2026-03-01T10:00:05.000Z")}
    # job-2 was asked for but not returned: not_eligible for a reason history lacks.
    assert decoded.unproven_plans == {"job-2": decoder.PLAN_UNPROVEN}
    assert decoded.problems == []   # the step verdict does not depend on plans


@pytest.mark.parametrize("child, code", [
    (None, decoder.PLAN_UNPROVEN),                                       # no child start
    (prep("job-1", ["score"]), decoder.PLAN_CONFLICT),                   # other stages
    (prep("job-1", idempotency_key="job-9"), decoder.PLAN_CONFLICT),     # other identity
    (prep("job-1", discover_run_id="run-2"), decoder.PLAN_CONFLICT),     # other execution
])
def test_a_plan_without_its_exact_child_start_is_not_proven(child, code):
    builder = Builder()
    fanned_out(builder, ["job-1"], {"job-1": STEPS})
    if child is not None:
        builder.child(child, at=6)
    decoded = decode(builder.events)
    assert decoded.plans == {} and decoded.unproven_plans == {"job-1": code}


def test_a_child_id_that_is_not_prep_of_its_key_is_a_conflict():
    builder = Builder()
    fanned_out(builder, ["job-1"], {"job-1": STEPS})
    builder.child(prep("job-1"), workflow_id="prep-someone-else", at=6)
    assert decode(builder.events).unproven_plans == {"job-1": decoder.PLAN_CONFLICT}


def test_an_unreadable_child_start_proves_no_plan():
    builder = Builder()
    fanned_out(builder, ["job-1"], {"job-1": STEPS})
    builder.child(prep("job-1"), at=6)
    builder.child({"not": "a prep input"}, workflow_id="prep-job-2", at=7)
    decoded = decode(builder.events)
    assert decoded.plans == {} and decoded.unproven_plans == {"job-1": decoder.PLAN_UNPROVEN}


def test_fanouts_returning_different_steps_are_a_conflict():
    builder = Builder()
    fanned_out(builder, ["job-1"], {"job-1": STEPS}, at=3)
    builder.child(prep("job-1"), at=6)
    fanned_out(builder, ["job-1"], {"job-1": ["pdf"]}, item_key="fanout:family:beta", at=7)
    assert decode(builder.events).unproven_plans == {"job-1": decoder.PLAN_CONFLICT}


def test_a_legacy_fanout_without_an_item_key_proves_no_plan():
    builder = Builder()
    scheduled = builder.schedule("plan_preparation", FanoutInput(ref=REF, job_ids=["job-1"]))
    builder.start(scheduled)
    builder.complete(scheduled, FanoutPlan(job_ids=["job-1"], required_steps={"job-1": STEPS}))
    builder.child(prep("job-1"), at=3)
    decoded = decode(builder.events)
    assert decoded.plans == {} and decoded.unproven_plans == {}


def test_a_failed_finalize_proves_pending_plans_failed_at_its_time():
    builder = Builder()
    scheduled = builder.schedule("finalize_discovery", FinalizeInput(
        ref=REF, outcomes=[], error_code="planning_failed"), at=7)
    builder.start(scheduled, at=7)
    builder.complete(scheduled, {"status": "failed", "jobsObserved": 0, "jobsNew": 0,
                                 "familiesFailed": []}, at=8)
    assert decode(builder.events).planning_failed_at == "2026-03-01T10:00:08.000Z"


# --- the repair's merge on a real database ------------------------------------------------


async def link_observed(db, ref, job_ids) -> None:
    async with db.transaction() as conn:
        await conn.executemany(
            "INSERT INTO discovery_execution_jobs (tenant_id, discover_workflow_id,"
            " discover_run_id, job_id, cohort, plan_state, linked_at)"
            " VALUES (?, ?, ?, ?, 'observed_this_run', 'pending', '2026-03-01T10:00:00.000Z')",
            [(ref.tenant_id, ref.discover_workflow_id, ref.discover_run_id, job)
             for job in job_ids])


async def step_event_count(db, ref) -> int:
    row = await db.fetchone("SELECT COUNT(*) FROM job_events WHERE run_id = ? AND type LIKE"
                            " 'PipelineStep%'", (ref.discover_run_id,))
    return row[0]


async def prep_finished(db, job_id: str, at: str) -> None:
    """The job's preparation child started and failed at ``at`` (its stage rows stay
    pending: it settles the passes as not reached, judged by ``created_at >= planned_at``)."""
    ids = {"workflow_id": f"prep-{job_id}", "run_id": f"prep-run-{job_id}",
           "workflow_type": "JobPreparationWorkflow"}
    async with db.transaction() as conn:
        for event in (ev.WorkflowStarted(**ids), ev.WorkflowFailed(**ids, error_code="x")):
            await conn.execute(
                "INSERT INTO job_events (tenant_id, type, job_id, workflow_id, run_id,"
                " payload_json, created_at) VALUES ('local', ?, ?, ?, ?, ?, ?)",
                (event.event_type, job_id, ids["workflow_id"], ids["run_id"],
                 event.payload_json(), at))


def seconds_after(moment: str, seconds: float) -> str:
    from backend.domain.clock import parse_iso, to_iso

    return to_iso(parse_iso(moment) + timedelta(seconds=seconds))


def test_real_history_proves_each_plan_with_its_fanout_time_and_child():
    events = real_history()
    decoded = decode(events, REAL_REF)
    assert decoded.unproven_plans == {} and decoded.planning_failed_at is None
    assert set(decoded.plans) == decoded.observed_job_ids
    fanout_closes = {
        e.event_id: e for e in events
        if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED}
    times = {decoder._time(e) for e in fanout_closes.values()}
    children = {e.start_child_workflow_execution_initiated_event_attributes.workflow_id
                for e in events
                if e.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED}
    for job_id, plan in decoded.plans.items():
        assert plan.required_steps == ("enrich", "score", "tailor", "cover", "pdf")
        assert plan.prep_workflow_id == f"prep-{job_id}" and plan.prep_workflow_id in children
        assert plan.planned_at in times      # an activity completion Temporal recorded
    # alpha's three jobs were planned by the first fan-out, beta's two by the second.
    assert sorted({plan.planned_at for plan in decoded.plans.values()}) == sorted(
        {decoder._time(e) for e in fanout_closes.values()
         if e.event_id in (19, 40)})


@pytest.mark.asyncio
async def test_merge_resumes_after_a_partial_repair_without_duplicates_and_proves_ready(db):
    decoded = decode(real_history(), REAL_REF)
    await link_observed(db, REAL_REF, sorted(decoded.observed_job_ids))
    # Every preparation child ran and failed right after its fan-out (long before repair).
    for job_id, plan in decoded.plans.items():
        await prep_finished(db, job_id, seconds_after(plan.planned_at, 1))
    # A repair killed half-way: some of its events committed, no verdict yet.
    async with db.transaction() as conn:
        for event in decoded.events[: len(decoded.events) // 2]:
            await steps.append_step_event(conn, event)
    async with db.transaction() as conn:
        first = await history_repair._merge_and_prove(conn, REAL_REF, decoded)
    count = await step_event_count(db, REAL_REF)
    async with db.transaction() as conn:
        second = await history_repair._merge_and_prove(conn, REAL_REF, decoded)
    assert await step_event_count(db, REAL_REF) == count
    dupes = await db.fetchone("SELECT COUNT(*) - COUNT(DISTINCT dedupe_key) FROM job_events"
                              " WHERE run_id = ?", (REAL_REF.discover_run_id,))
    assert dupes[0] == 0
    for result in (first, second):
        assert (result.status, result.mode, result.error_code) == (
            "ready", "reconstructed", None)
    members = await coverage.member_keys(db, REAL_REF)
    keys = await coverage.projected_step_keys(db, REAL_REF)
    assert keys == REAL_KEYS
    assert second.digest == coverage.canonical_digest(members, keys)
    assert second.history_event_watermark == decoded.watermark
    assert second.decoder_version == decoder.DECODER_VERSION
    # The lost plans are back with history's times, so the children that finished after
    # their fan-out settle both boundaries from the database.
    members = await lineage.read_members(db, REAL_REF)
    assert {job: (m.plan_state, m.preparation_workflow_id, m.planned_at)
            for job, m in members.items()} == {
        job: ("planned", plan.prep_workflow_id, plan.planned_at)
        for job, plan in decoded.plans.items()}
    rows = {row.step_kind: row for row in await steps.list_steps(db, REAL_REF)}
    assert rows["enrichment_pass"].status == rows["pdf_render"].status == "succeeded"
    assert rows["enrichment_pass"].counts == {"targetCount": 5, "notReachedCount": 5}
    assert (await read_coverage(db, REAL_REF)).ready


async def add_jobs(db, job_ids) -> None:
    async with db.transaction() as conn:
        await conn.executemany(
            "INSERT INTO jobs (job_id, tenant_id, canonical_url, url, title, company,"
            " first_source, first_seen_at, last_seen_at) VALUES (?, 'local', ?, ?, 'Engineer',"
            " 'Example', 'alpha', '2026-03-01T10:00:00.000Z', '2026-03-01T10:00:00.000Z')",
            [(job, f"https://jobs.example.org/{job}", f"https://jobs.example.org/{job}")
             for job in job_ids])


@pytest.mark.asyncio
async def test_merge_without_an_observed_member_or_its_job_is_retrying_never_ready(db):
    decoded = decode(real_history(), REAL_REF)
    await link_observed(db, REAL_REF, sorted(decoded.observed_job_ids)[1:])
    async with db.transaction() as conn:
        result = await history_repair._merge_and_prove(conn, REAL_REF, decoded)
    # No job row to link: the missing member is not invented.
    assert (result.status, result.error_code) == ("retrying", "member_job_missing")
    assert (result.expected_members, result.persisted_members) == (5, 4)
    assert (result.expected_steps, result.persisted_steps) == (9, 9)


@pytest.mark.asyncio
async def test_merge_relinks_an_observed_member_whose_job_exists_and_proves_ready(db):
    decoded = decode(real_history(), REAL_REF)
    observed = sorted(decoded.observed_job_ids)
    await add_jobs(db, observed)
    await link_observed(db, REAL_REF, observed[1:])
    async with db.transaction() as conn:
        result = await history_repair._merge_and_prove(conn, REAL_REF, decoded)
    assert (result.status, result.mode, result.error_code) == ("ready", "reconstructed", None)
    assert (result.expected_members, result.persisted_members) == (5, 5)
    assert await coverage.member_keys(db, REAL_REF) == {
        coverage.member_key(job, "observed_this_run") for job in observed}


@pytest.mark.asyncio
async def test_a_failed_sweep_is_retrying_until_native_events_prove_its_terminal(db):
    builder = Builder()
    planned(builder)
    scheduled = builder.schedule("plan_preparation", FanoutInput(
        ref=REF, job_ids=[], item_key="fanout:sweep", sweep=True), at=3)
    builder.start(scheduled, at=4)
    builder.fail(scheduled, "activity_failed", at=5)
    builder.close(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED, at=9)
    decoded = decode(builder.events)
    async with db.transaction() as conn:
        refused = await history_repair._merge_and_prove(conn, REF, decoded)
    assert (refused.status, refused.error_code) == ("retrying", "ambiguous_sweep_failure")
    # Never guessed: both steps stay running until a native terminal proves them.
    rows = {row.item_key: row for row in await steps.list_steps(db, REF)}
    assert rows["sweep"].status == rows["fanout:sweep"].status == "running"
    native = [ev.PipelineStepCompleted(discover_workflow_id=REF.discover_workflow_id,
                                       discover_run_id=REF.discover_run_id,
                                       step_kind="existing_backlog_sweep", item_key="sweep",
                                       attempt=1),
              ev.PipelineStepFailed(discover_workflow_id=REF.discover_workflow_id,
                                    discover_run_id=REF.discover_run_id,
                                    step_kind="preparation_fanout", item_key="fanout:sweep",
                                    attempt=1, error_code="activity_failed", retryable=False)]
    async with db.transaction() as conn:
        for event in native:
            await steps.append_step_event(conn, event)
        proven = await history_repair._merge_and_prove(conn, REF, decoded)
    assert (proven.status, proven.mode) == ("ready", "reconstructed")
