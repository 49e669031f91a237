"""pipeline_step_projections: the pure, attempt-aware fold; native write-through appends;
the watermark-driven builder and its rebuild; and the Discover activities emitting the
steps and the lineage end to end (ActivityEnvironment, no Temporal server)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from temporalio.testing import ActivityEnvironment

from backend.config import AppPaths
from backend.domain import events as ev
from backend.projections import pipeline_steps as steps
from backend.projections.coverage import read_coverage
from backend.projections.pipeline_steps import StepRow, fold_step
from backend.store import coverage, lineage
from backend.store.events import EVENT_INSERT_SQL, StoredEvent, append_event, event_params
from backend.temporal.activities.discovery import DiscoveryActivities
from backend.temporal.contracts import (
    DiscoveryExecutionRef,
    FamilyInput,
    FanoutInput,
    FinalizeInput,
    PlanInput,
)

RUN = "run-1"
REF = DiscoveryExecutionRef(tenant_id="local", discover_workflow_id="discover-local",
                            discover_run_id=RUN)
T0, T1, T2, T3 = ("2026-03-01T10:00:00.000Z", "2026-03-01T10:00:01.000Z",
                  "2026-03-01T10:00:03.500Z", "2026-03-01T10:00:09.000Z")
DEMO_DISTINCT_JOBS = 234


def event(cls, attempt=1, *, kind="source_family", item="family:demo_board", at=T0, **fields):
    return cls(discover_workflow_id=REF.discover_workflow_id, discover_run_id=RUN,
               step_kind=kind, item_key=item, attempt=attempt, occurred_at=at, **fields)


def queued(attempt=1, at=T0, **kw):
    return event(ev.PipelineStepQueued, attempt, queued_at=at, at=at, **kw)


def started(attempt=1, at=T1, **kw):
    return event(ev.PipelineStepStarted, attempt, started_at=at, at=at, **kw)


def completed(attempt=1, at=T2, *, kind="source_family", item="family:demo_board", **counts):
    return event(ev.PipelineStepCompleted, attempt, at=at, kind=kind, item=item,
                 counts=ev.PipelineStepCounts(**counts), duration_ms=2500)


def failed(attempt=1, at=T2, code="source_unavailable", retryable=True):
    return event(ev.PipelineStepFailed, attempt, at=at, error_code=code, retryable=retryable)


def fold_all(*events: ev.DomainEvent, row: StepRow | None = None) -> StepRow | None:
    for index, item in enumerate(events, start=1):
        stored = StoredEvent(id=index, type=item.event_type, job_id=None,
                             workflow_id=REF.discover_workflow_id, run_id=RUN,
                             payload_json=item.payload_json(), created_at=item.occurred_at)
        row = fold_step(row, stored)
    return row


# --- fold rules --------------------------------------------------------------------------


def test_one_attempt_from_queued_to_succeeded():
    row = fold_all(queued(), started(), completed(new_jobs=234, existing_jobs=0))
    assert (row.status, row.attempt) == ("succeeded", 1)
    assert (row.queued_at, row.started_at, row.finished_at) == (T0, T1, T2)
    assert row.duration_ms == 2500 and row.counts == {"newJobs": 234, "existingJobs": 0}
    assert row.error_code is None and row.retryable is None and row.last_event_id == 3


def test_a_higher_attempt_replaces_the_row():
    row = fold_all(queued(), started(), failed(retryable=True), started(2, at=T3))
    assert (row.attempt, row.status, row.started_at) == (2, "running", T3)
    assert row.queued_at is None and row.error_code is None and row.finished_at is None
    done = fold_all(completed(2, at=T3), row=row)
    assert (done.attempt, done.status) == (2, "succeeded")


def test_a_late_lower_attempt_is_ignored():
    row = fold_all(started(2, at=T3), completed(2, at=T3, new_jobs=3))
    late = fold_all(queued(1), started(1), failed(1), row=row)
    assert late == row
    assert (late.attempt, late.status, late.counts) == (2, "succeeded", {"newJobs": 3})


def test_the_first_terminal_result_of_an_attempt_wins():
    row = fold_all(queued(), started(), completed(target_count=5), failed(at=T3))
    assert row.status == "succeeded" and row.counts == {"targetCount": 5}
    row = fold_all(queued(), started(), failed(code="activity_failed", retryable=False),
                   completed(target_count=5))
    assert (row.status, row.error_code, row.retryable) == ("failed", "activity_failed", False)
    assert row.finished_at == T2 and row.duration_ms == 2500  # T1 → T2


def test_started_after_a_terminal_of_the_same_attempt_is_ignored():
    row = fold_all(queued(), failed(code="workflow_canceled", retryable=False))
    assert row.status == "failed" and row.started_at is None
    assert fold_all(started(), row=row) == row


def test_a_repeated_start_keeps_the_first_and_queued_only_fills_a_gap():
    row = fold_all(started(at=T1), started(at=T3), queued(at=T0))
    assert (row.status, row.started_at, row.queued_at) == ("running", T1, T0)
    assert fold_all(queued(at=T3), row=row) == row


def test_refolding_the_same_events_is_idempotent():
    events = (queued(), started(), failed(), started(2), completed(2, observed_jobs=9))
    once = fold_all(*events)
    assert fold_all(*events, row=once) == once


def test_events_of_another_step_or_type_leave_the_row_alone():
    row = fold_all(queued(), started())
    other = fold_all(completed(item="family:other"), row=row)
    assert other == row
    unrelated = StoredEvent(id=9, type="WorkflowCompleted", job_id=None, workflow_id="w",
                            run_id=RUN, payload_json="{}", created_at=T0)
    assert fold_step(row, unrelated) == row
    broken = StoredEvent(id=10, type="PipelineStepStarted", job_id=None, workflow_id="w",
                         run_id=RUN, payload_json='{"attempt": "x"}', created_at=T0)
    assert fold_step(row, broken) == row


def test_step_payloads_are_bounded():
    with pytest.raises(ValueError):
        event(ev.PipelineStepFailed, error_code="Traceback (most recent call last): ...",
              retryable=True)
    with pytest.raises(ValueError):
        event(ev.PipelineStepQueued, item="family: spaces and stuff", queued_at=T0)
    with pytest.raises(ValueError):
        event(ev.PipelineStepQueued, kind="finalize", queued_at=T0)
    with pytest.raises(ValueError):
        ev.PipelineStepCounts(rawPayload=1)  # only allowlisted counts
    with pytest.raises(ValueError):
        ev.PipelineStepCounts(new_jobs=-1)
    payload = json.loads(completed(target_count=2).payload_json())
    assert payload["counts"] == {"targetCount": 2}
    assert set(payload) == {"occurredAt", "discoverWorkflowId", "discoverRunId", "stepKind",
                            "itemKey", "attempt", "counts", "durationMs"}


# --- native appends and the builder -----------------------------------------------------


async def table(db) -> dict[tuple[str, str], StepRow]:
    return {(row.step_kind, row.item_key): row for row in await steps.list_steps(db, REF)}


async def test_native_appends_fold_through_and_deduplicate(db):
    async with db.transaction() as conn:
        assert await steps.append_step_event(conn, queued()) is not None
        assert await steps.append_step_event(conn, started()) is not None
        assert await steps.append_step_event(conn, started(at=T3)) is None  # same attempt/phase
        await steps.append_step_event(conn, completed(new_jobs=1))
        assert await steps.append_step_event(conn, failed()) is None  # one terminal per attempt
    row = (await table(db))[("source_family", "family:demo_board")]
    assert (row.status, row.started_at, row.counts) == ("succeeded", T1, {"newJobs": 1})
    with sqlite3.connect(db.path) as raw:
        keys = [k for (k,) in raw.execute("SELECT dedupe_key FROM job_events ORDER BY id")]
    assert keys == [f"PipelineStep:{RUN}:source_family:family:demo_board:1:{phase}"
                    for phase in ("queued", "started", "terminal")]
    with pytest.raises(ValueError):
        async with db.transaction() as conn:
            await steps.append_step_event(
                conn, ev.WorkflowCompleted(workflow_id="w", run_id="r", workflow_type="x"))


def insert_behind_the_builders_back(db, *events: ev.DomainEvent, **ids) -> None:
    """Rows of job_events written without ``append_event`` (as a migration's data step
    does, on a plain sqlite3 connection): no projection folds them at write."""
    with sqlite3.connect(db.path) as raw:
        for item in events:
            raw.execute(EVENT_INSERT_SQL, event_params(item, **ids))


async def test_append_folds_at_write_and_the_builder_catches_up_what_bypassed_it(db):
    async with db.transaction() as conn:
        await append_event(conn, queued(kind="source_planning", item="planning"),
                           workflow_id=REF.discover_workflow_id, run_id=RUN)
    assert set(await table(db)) == {("source_planning", "planning")}
    assert await steps.read_watermark(db) == 1
    insert_behind_the_builders_back(db, queued(), started(), workflow_id="w", run_id=RUN)
    async with db.transaction() as conn:  # the next step append folds the backlog first
        await append_event(conn, failed(), workflow_id=REF.discover_workflow_id, run_id=RUN)
    folded = await table(db)
    assert folded[("source_family", "family:demo_board")].status == "failed"
    assert await steps.read_watermark(db) == 4


async def test_refresh_folds_by_the_operations_watermark_and_rebuilds_equal(db):
    insert_behind_the_builders_back(
        db, queued(), started(), failed(), started(2), completed(2, new_jobs=4),
        queued(kind="source_planning", item="planning"),
        started(1, at=T0, kind="source_planning", item="planning"),
        started(1, at=T0, kind="source_planning", item="planning"),
        workflow_id=REF.discover_workflow_id, run_id=RUN)
    insert_behind_the_builders_back(db, ev.WorkflowCompleted(workflow_id="w", run_id="r",
                                                             workflow_type="x"))
    assert await table(db) == {}
    watermark = await steps.refresh_pipeline_steps(db, page_size=3)
    assert watermark == 9 and await steps.read_watermark(db) == 9
    with sqlite3.connect(db.path) as raw:
        assert raw.execute("SELECT name FROM projection_watermarks").fetchall() == [
            ("operations:local",)]
    folded = await table(db)
    assert folded[("source_family", "family:demo_board")].attempt == 2
    assert folded[("source_family", "family:demo_board")].status == "succeeded"
    assert folded[("source_planning", "planning")].status == "running"
    assert await steps.refresh_pipeline_steps(db) == 9 and await table(db) == folded
    await steps.rebuild_pipeline_steps(db, page_size=2)
    assert await table(db) == folded


async def test_the_builder_advances_a_native_checkpoint_for_new_keys(db):
    async with db.transaction() as conn:
        await coverage.open_native_checkpoint(conn, REF)
        await steps.append_step_event(conn, queued(kind="source_planning", item="planning"))
    insert_behind_the_builders_back(db, queued(item="family:late"),
                                    workflow_id="discover-local", run_id=RUN)
    before = await coverage.read_checkpoint(db, REF)
    assert before.expected_steps == 1
    await steps.refresh_pipeline_steps(db)  # the start-up catch-up
    read = await read_coverage(db, REF)
    assert read.ready and read.expected_steps == read.persisted_steps == 2
    assert read.digest == coverage.canonical_digest(
        [], ["source_planning|planning", "source_family|family:late"])


# --- the Discover activities, end to end without a server -----------------------------


@pytest.fixture
async def app(tmp_path, db):
    (tmp_path / "settings.json").write_text(json.dumps({
        "sources": [{"kind": "demo_board", "id": "demo_board"},
                    {"kind": "json_file", "id": "missing", "path": str(tmp_path / "nope.json"),
                     "enabled": False}],
    }), encoding="utf-8")
    return db, DiscoveryActivities(db, AppPaths(tmp_path))


async def test_the_activities_emit_steps_and_lineage(app):
    db, activities = app
    env = ActivityEnvironment()
    plan = await env.run(activities.plan_discovery, PlanInput(ref=REF))
    assert [source.id for source in plan.sources] == ["demo_board"]
    rows = await table(db)
    assert rows[("source_planning", "planning")].status == "succeeded"
    assert rows[("source_planning", "planning")].counts == {"familyCount": 1}
    assert {key: row.status for key, row in rows.items() if key[1] != "planning"} == {
        ("source_family", "family:demo_board"): "queued",
        ("existing_backlog_sweep", "sweep"): "queued",
        ("preparation_fanout", "fanout:sweep"): "queued",
    }
    outcome = await env.run(activities.discover_source_family,
                            FamilyInput(ref=REF, source=plan.sources[0], index=0))
    assert len(outcome.job_ids) == DEMO_DISTINCT_JOBS
    members = await lineage.read_members(db, REF)
    assert len(members) == DEMO_DISTINCT_JOBS
    assert {m.cohort for m in members.values()} == {"observed_this_run"}
    fanout = await env.run(activities.plan_preparation, FanoutInput(
        ref=REF, job_ids=outcome.job_ids, item_key="fanout:family:demo_board"))
    assert sorted(fanout.job_ids) == sorted(outcome.job_ids)
    assert set(map(tuple, fanout.required_steps.values())) == {
        ("enrich", "score", "tailor", "cover", "pdf")}
    # A retried fan-out keeps the immutable plans and returns the same work.
    again = await env.run(activities.plan_preparation, FanoutInput(
        ref=REF, job_ids=outcome.job_ids, item_key="fanout:family:demo_board"))
    assert again.required_steps == fanout.required_steps
    members = await lineage.read_members(db, REF)
    assert {(m.plan_state, m.preparation_workflow_id == f"prep-{m.job_id}")
            for m in members.values()} == {("planned", True)}
    swept = await env.run(activities.plan_preparation, FanoutInput(
        ref=REF, job_ids=[], item_key="fanout:sweep", sweep=True))
    assert swept.job_ids == []
    await env.run(activities.finalize_discovery, FinalizeInput(ref=REF, outcomes=[outcome]))
    rows = await table(db)
    assert {key: row.status for key, row in rows.items()} == {
        ("source_planning", "planning"): "succeeded",
        ("source_family", "family:demo_board"): "succeeded",
        ("preparation_fanout", "fanout:family:demo_board"): "succeeded",
        ("existing_backlog_sweep", "sweep"): "succeeded",
        ("preparation_fanout", "fanout:sweep"): "succeeded",
        # Opened as membership closes; they settle when the members' preparations do.
        ("enrichment_pass", "enrichment_pass"): "running",
        ("pdf_render", "pdf_render"): "running",
    }
    assert rows[("source_family", "family:demo_board")].counts == {
        "newJobs": DEMO_DISTINCT_JOBS, "existingJobs": 0, "observedJobs": DEMO_DISTINCT_JOBS}
    assert rows[("preparation_fanout", "fanout:family:demo_board")].counts == {
        "targetCount": DEMO_DISTINCT_JOBS, "plannedCount": DEMO_DISTINCT_JOBS,
        "notEligibleCount": 0}
    assert rows[("existing_backlog_sweep", "sweep")].counts == {
        "eligibleCount": 0, "sweptCount": 0, "deferredCount": 0}
    read = await read_coverage(db, REF)
    assert read.ready and read.expected_members == DEMO_DISTINCT_JOBS
    assert read.expected_steps == 7


async def test_a_second_execution_sweeps_backlog_and_plans_it(app):
    db, activities = app
    env = ActivityEnvironment()
    plan = await env.run(activities.plan_discovery, PlanInput(ref=REF))
    outcome = await env.run(activities.discover_source_family,
                            FamilyInput(ref=REF, source=plan.sources[0], index=0))
    failed_jobs, skipped_job, done_job = outcome.job_ids[:3], outcome.job_ids[3], outcome.job_ids[4]
    async with db.transaction() as conn:  # pretend preparation ran: most done, some failed
        await conn.execute("INSERT INTO job_stage_states (tenant_id, job_id, stage, status,"
                           " updated_at) SELECT 'local', job_id, s.stage, 'succeeded', 'x'"
                           " FROM jobs, (SELECT 'enrich' AS stage UNION SELECT 'score'"
                           " UNION SELECT 'tailor' UNION SELECT 'cover' UNION SELECT 'pdf') s")
        for job_id in [*failed_jobs, skipped_job]:
            await conn.execute("UPDATE job_stage_states SET status = 'failed'"
                               " WHERE job_id = ? AND stage = 'score'", (job_id,))
        await conn.execute("UPDATE jobs SET user_status = 'skipped' WHERE job_id = ?",
                           (skipped_job,))
    second = DiscoveryExecutionRef(tenant_id="local", discover_workflow_id="discover-local",
                                   discover_run_id="run-2")
    await env.run(activities.plan_discovery, PlanInput(ref=second, source_ids=["demo_board"]))
    # The second execution observes nothing this time (the family is not crawled).
    swept = await env.run(activities.plan_preparation, FanoutInput(
        ref=second, job_ids=[], item_key="fanout:sweep", sweep=True))
    assert sorted(swept.job_ids) == sorted(failed_jobs)
    assert set(map(tuple, swept.required_steps.values())) == {("score",)}
    members = await lineage.read_members(db, second)
    assert set(members) == set(failed_jobs) and done_job not in members
    assert {(m.cohort, m.plan_state) for m in members.values()} == {
        ("existing_backlog", "planned")}
    # A source of the same execution observing a swept job promotes its one row.
    async with db.transaction() as conn:
        await lineage.link_job(conn, second, failed_jobs[0], "observed_this_run")
    promoted = await lineage.read_members(db, second)
    assert len(promoted) == 3 and promoted[failed_jobs[0]].cohort == "observed_this_run"
    assert promoted[failed_jobs[0]].required_steps == ("score",)
    assert (await read_coverage(db, second)).ready


async def test_a_failing_family_records_its_attempt_failure(app, tmp_path):
    db, activities = app
    env = ActivityEnvironment()
    plan = await env.run(activities.plan_discovery, PlanInput(ref=REF, source_ids=["missing"]))
    with pytest.raises(Exception):  # noqa: B017 - the ApplicationError propagates
        await env.run(activities.discover_source_family,
                      FamilyInput(ref=REF, source=plan.sources[0], index=0))
    row = (await table(db))[("source_family", "family:missing")]
    assert (row.status, row.error_code, row.retryable) == ("failed", "configuration", False)
    broken_ref = DiscoveryExecutionRef(tenant_id="local", discover_workflow_id="discover-local",
                                       discover_run_id="run-broken")
    with pytest.raises(Exception):  # noqa: B017 - an unknown source id: configuration
        await env.run(activities.plan_discovery, PlanInput(ref=broken_ref, source_ids=["nope"]))
    planning = await steps.list_steps(db, broken_ref)
    assert [(r.step_kind, r.status, r.error_code, r.retryable) for r in planning] == [
        ("source_planning", "failed", "configuration", False)]
    assert planning[0].started_at and planning[0].queued_at
    assert (await read_coverage(db, broken_ref)).ready  # the execution is proven
    canceled_ref = DiscoveryExecutionRef(tenant_id="local", discover_workflow_id="discover-local",
                                         discover_run_id="run-3")
    await env.run(activities.plan_discovery, PlanInput(ref=canceled_ref))
    await env.run(activities.finalize_discovery,
                  FinalizeInput(ref=canceled_ref, outcomes=[], canceled=True))
    rows = {(r.step_kind, r.item_key): r for r in await steps.list_steps(db, canceled_ref)}
    assert {key: (r.status, r.error_code) for key, r in rows.items()
            if key[0] != "source_planning"} == {
        ("source_family", "family:demo_board"): ("failed", "workflow_canceled"),
        ("existing_backlog_sweep", "sweep"): ("failed", "workflow_canceled"),
        ("preparation_fanout", "fanout:sweep"): ("failed", "workflow_canceled"),
    }
