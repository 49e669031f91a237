"""History repair of a Discover execution against the real stack (Temporal dev server,
worker, API): a family's step rows and PipelineStep* events deleted behind the builder's
back come back exactly once from the exact Temporal history, the checkpoint is published
``ready`` in ``reconstructed`` mode with the digest of the restored key sets, a deleted
checkpoint row is rebuilt by the worker's own pass, and an execution whose history Temporal
cannot serve is never ready. A lost membership row whose job exists is linked again exactly
once (cohort totals and the operations snapshot count it again) with the work plan history
proves — the same required steps and ``prep-{jobId}`` workflow id, planned at the
completion of the fan-out that planned it (history's time, never the repair's) — and one
whose job row is gone is not invented (``retrying`` / ``member_job_missing``). A member a
later Discover planned ``not_eligible`` (a reason history does not carry) comes back
``pending`` and the verdict stays ``retrying`` / ``member_plan_unproven``."""

from __future__ import annotations

import json
import os
import uuid
from datetime import UTC
from pathlib import Path

import pytest
import pytest_asyncio
from temporalio.client import Client
from temporalio.contrib.pydantic import pydantic_data_converter

from backend.config import TemporalSettings
from backend.projections.coverage import read_coverage
from backend.projections.pipeline_steps import STEP_EVENT_TYPES
from backend.store import coverage, passes
from backend.store.db import Database
from backend.supervision.ports import free_port
from backend.supervision.supervisor import Supervisor
from backend.temporal.client import connect_temporal
from backend.temporal.contracts import DiscoveryExecutionRef
from backend.temporal.loops import history_decoder, history_repair
from desktop.client import ApiClient
from tests.app_db import connect_db
from tests.integration.conftest import write_settings
from tests.integration.test_lineage import discover, preparations_settled, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session"),
              pytest.mark.timeout(600)]

# Set to a path to save the fixture history the unit tests decode (done once).
SAVE_HISTORY = os.environ.get("JOBCTRL_SAVE_DISCOVER_HISTORY")


def board(path: Path, start: int, count: int) -> None:
    from backend.sources.board_file import demo_board_text

    postings = json.loads(demo_board_text())["postings"][start:start + count]
    path.write_text(json.dumps({"postings": postings}), encoding="utf-8")


def db_rows(app_dir: Path, sql: str, params=()) -> list[tuple]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute(sql, params).fetchall()


def db_write(app_dir: Path, sql: str, params=()) -> int:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute(sql, params).rowcount


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def stack(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("history-repair-app")
    board(app_dir / "alpha.json", 0, 3)
    board(app_dir / "beta.json", 3, 2)
    write_settings(app_dir, sources=[
        {"kind": "json_file", "id": "alpha", "path": str(app_dir / "alpha.json")},
        {"kind": "json_file", "id": "beta", "path": str(app_dir / "beta.json")},
    ])
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    api = ApiClient.from_runtime(supervisor.info)
    db = await Database.open(app_dir / "jobctrl.db")
    client = await connect_temporal(TemporalSettings(), supervisor.info.temporal_address,
                                    app_dir=supervisor.paths.app_dir)
    ref = await discover(api, app_dir)
    # No profile: every child preparation settles quickly, so the passes settle too.
    await wait_until(lambda: preparations_settled(app_dir, 5), timeout=300,
                     what="the preparations")

    def passes_settled() -> bool:  # the reconciler settles the two execution boundaries
        return db_rows(app_dir, "SELECT COUNT(*) FROM pipeline_step_projections"
                                " WHERE discover_run_id = ? AND status = 'succeeded' AND"
                                " step_kind IN ('enrichment_pass', 'pdf_render')",
                       (ref.discover_run_id,)) == [(2,)]

    await wait_until(passes_settled, timeout=120, what="the settled passes")
    yield {"app_dir": app_dir, "api": api, "db": db, "client": client, "ref": ref,
           "address": supervisor.info.temporal_address}
    await db.close()
    await api.close()
    await supervisor.stop()


def step_event_counts(app_dir: Path, ref) -> dict[tuple, int]:
    """(type, stepKind, itemKey, attempt) → how many events the log holds."""
    rows = db_rows(
        app_dir,
        "SELECT type, json_extract(payload_json, '$.stepKind'),"
        " json_extract(payload_json, '$.itemKey'), json_extract(payload_json, '$.attempt'),"
        f" COUNT(*) FROM job_events WHERE run_id = ? AND type IN ({','.join('?' * 4)})"
        " GROUP BY 1, 2, 3, 4", (ref.discover_run_id, *STEP_EVENT_TYPES))
    return {tuple(row[:4]): row[4] for row in rows}


def step_rows(app_dir: Path, ref) -> dict[tuple[str, str], tuple]:
    rows = db_rows(app_dir, "SELECT step_kind, item_key, attempt, status, error_code"
                            " FROM pipeline_step_projections WHERE discover_run_id = ?",
                   (ref.discover_run_id,))
    return {(row[0], row[1]): row[2:] for row in rows}


def delete_family(app_dir: Path, ref, family: str) -> None:
    """The family's step rows and PipelineStep* events vanish behind the builder's back."""
    items = (f"family:{family}", f"fanout:family:{family}")
    assert db_write(app_dir, "DELETE FROM pipeline_step_projections WHERE discover_run_id = ?"
                             " AND item_key IN (?, ?)", (ref.discover_run_id, *items)) == 2
    assert db_write(app_dir, "DELETE FROM job_events WHERE run_id = ?"
                             f" AND type IN ({','.join('?' * 4)})"
                             " AND json_extract(payload_json, '$.itemKey') IN (?, ?)",
                    (ref.discover_run_id, *STEP_EVENT_TYPES, *items)) >= 4


def member_row(app_dir: Path, ref, job_id: str) -> tuple | None:
    """(cohort, plan_state) of the job's membership row in the run (None: no row); a
    second row for the same job would fail the unpacking."""
    rows = db_rows(app_dir, "SELECT cohort, plan_state FROM discovery_execution_jobs"
                            " WHERE discover_run_id = ? AND job_id = ?",
                   (ref.discover_run_id, job_id))
    assert len(rows) <= 1
    return rows[0] if rows else None


def cohort_counts(app_dir: Path, ref) -> dict[str, list[tuple]]:
    """The execution's maintained totals (migration 0013), zero rows dropped."""
    key = (ref.discover_workflow_id, ref.discover_run_id)
    return {
        "jobs": db_rows(app_dir, "SELECT cohort, n FROM execution_cohort_job_counts"
                                 " WHERE discover_workflow_id = ? AND discover_run_id = ?"
                                 " AND n <> 0 ORDER BY 1", key),
        "stages": db_rows(app_dir, "SELECT cohort, stage, status, n"
                                   " FROM execution_cohort_stage_counts"
                                   " WHERE discover_workflow_id = ? AND discover_run_id = ?"
                                   " AND n <> 0 ORDER BY 1, 2, 3", key),
    }


def plan_row(app_dir: Path, ref, job_id: str) -> tuple:
    """(plan_state, required_steps_json, preparation_workflow_id, not_eligible_reason,
    planned_at) of the job's membership row."""
    return db_rows(app_dir, "SELECT plan_state, required_steps_json, preparation_workflow_id,"
                            " not_eligible_reason, planned_at FROM discovery_execution_jobs"
                            " WHERE discover_run_id = ? AND job_id = ?",
                   (ref.discover_run_id, job_id))[0]


def fanout_completion(events: list, job_id: str) -> str:
    """When Temporal recorded the completion of the first plan_preparation that returned
    ``job_id`` (read from the raw history, not through the decoder)."""
    from temporalio.api.enums.v1 import EventType

    from backend.domain.clock import to_iso
    from backend.temporal.contracts import FanoutPlan

    fanouts = {e.event_id for e in events
               if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
               and e.activity_task_scheduled_event_attributes.activity_type.name
               == "plan_preparation"}
    for event in events:
        attributes = event.activity_task_completed_event_attributes
        if (event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED
                and attributes.scheduled_event_id in fanouts):
            plan = pydantic_data_converter.payload_converter.from_payloads(
                list(attributes.result.payloads), [FanoutPlan])[0]
            if job_id in plan.job_ids:
                return to_iso(event.event_time.ToDatetime(tzinfo=UTC))
    raise AssertionError(f"no fan-out returned {job_id}")


async def settlements(db: Database, ref) -> dict:
    async with db.transaction() as conn:
        return {stage: await passes.member_settlement(conn, ref, stage)
                for stage in ("enrich", "pdf")}


def run_event_count(app_dir: Path, ref) -> int:
    return db_rows(app_dir, "SELECT COUNT(*) FROM job_events WHERE run_id = ?",
                   (ref.discover_run_id,))[0][0]


def observed_job(app_dir: Path, ref, position: int) -> str:
    return db_rows(app_dir, "SELECT job_id FROM discovery_execution_jobs"
                            " WHERE discover_run_id = ? AND cohort = 'observed_this_run'"
                            " ORDER BY job_id LIMIT 1 OFFSET ?",
                   (ref.discover_run_id, position))[0][0]


async def history(stack) -> list:
    return await history_repair.fetch_history(stack["client"], stack["ref"])


async def test_real_history_decodes_to_the_native_key_sets(stack):
    app_dir, ref, db = stack["app_dir"], stack["ref"], stack["db"]
    events = await history(stack)
    if SAVE_HISTORY:
        from google.protobuf.json_format import MessageToJson
        from temporalio.api.history.v1 import History

        Path(SAVE_HISTORY).write_text(MessageToJson(History(events=events)), encoding="utf-8")
        Path(SAVE_HISTORY).with_suffix(".ref.json").write_text(ref.model_dump_json())
    decoded = history_decoder.decode_history(ref, events,
                                             pydantic_data_converter.payload_converter)
    assert decoded.problems == [] and decoded.workflow_closed
    assert decoded.watermark == events[-1].event_id
    assert decoded.step_keys == await coverage.projected_step_keys(db, ref)
    observed = {key.split("|")[0] for key in await coverage.member_keys(db, ref)
                if key.endswith("|observed_this_run")}
    assert decoded.observed_job_ids == observed and len(observed) == 5
    # The native checkpoint is untouched by decoding.
    assert (await read_coverage(db, ref)).mode == "native"
    assert step_rows(app_dir, ref)[("source_family", "family:beta")][1] == "succeeded"


async def test_deleted_family_steps_are_restored_once_and_proven_ready(stack):
    app_dir, ref, db, client = stack["app_dir"], stack["ref"], stack["db"], stack["client"]
    before_rows = step_rows(app_dir, ref)
    before_counts = step_event_counts(app_dir, ref)
    assert (await read_coverage(db, ref)).ready
    delete_family(app_dir, ref, "beta")
    downgraded = await read_coverage(db, ref)
    assert downgraded.status == "recovering" and downgraded.downgraded

    first = await history_repair.repair_execution(db, client, ref)
    assert (first.status, first.mode, first.error_code) == ("ready", "reconstructed", None)
    restored = step_rows(app_dir, ref)
    assert restored.keys() == before_rows.keys()
    for key in (("source_family", "family:beta"), ("preparation_fanout", "fanout:family:beta")):
        assert restored[key] == before_rows[key]   # same attempt, status, error code
    counts = step_event_counts(app_dir, ref)
    assert set(counts.values()) == {1}              # one event per type / step / attempt
    # Every deleted (type, step, attempt) fact is back; nothing else was added.
    assert set(counts) == set(before_counts)

    second = await history_repair.repair_execution(db, client, ref)
    assert step_event_counts(app_dir, ref) == counts
    assert second.status == "ready"

    members = await coverage.member_keys(db, ref)
    step_keys = await coverage.projected_step_keys(db, ref)
    events = await history(stack)
    assert second.digest == coverage.canonical_digest(members, step_keys)
    assert second.decoder_version == history_decoder.DECODER_VERSION
    assert second.history_event_watermark == events[-1].event_id
    assert (second.expected_members, second.persisted_members) == (len(members),) * 2
    assert (second.expected_steps, second.persisted_steps) == (len(step_keys),) * 2
    # A read revalidates the reconstructed proof and keeps it.
    assert (await read_coverage(db, ref)).ready

    snapshot = await stack["api"]._json("GET", "/v1/pipeline/operations")
    assert snapshot["execution"]["discoverRunId"] == ref.discover_run_id
    assert snapshot["projectionCoverage"]["status"] == "ready"
    assert snapshot["projectionCoverage"]["mode"] == "reconstructed"


async def test_worker_pass_rebuilds_a_deleted_checkpoint(stack):
    app_dir, ref, db = stack["app_dir"], stack["ref"], stack["db"]
    delete_family(app_dir, ref, "alpha")
    assert db_write(app_dir, "DELETE FROM discovery_execution_recoveries"
                             " WHERE discover_run_id = ?", (ref.discover_run_id,)) == 1
    missing = await read_coverage(db, ref)
    assert (missing.status, missing.error_code) == ("recovering", "checkpoint_missing")

    def repaired() -> bool:
        rows = db_rows(app_dir, "SELECT status FROM discovery_execution_recoveries"
                                " WHERE discover_run_id = ?", (ref.discover_run_id,))
        return rows == [("ready",)]

    # The worker's reconcile pass (every 15 s, runs at least 30 s old) does the repair.
    await wait_until(repaired, timeout=120, what="the worker's history repair")
    read = await read_coverage(db, ref)
    assert (read.status, read.mode) == ("ready", "reconstructed")
    rows = step_rows(app_dir, ref)
    assert rows[("source_family", "family:alpha")][1] == "succeeded"
    assert rows[("preparation_fanout", "fanout:family:alpha")][1] == "succeeded"
    assert set(step_event_counts(app_dir, ref).values()) == {1}


async def test_a_closed_run_with_rows_history_does_not_name_is_not_ready(stack):
    app_dir, ref, db, client = stack["app_dir"], stack["ref"], stack["db"], stack["client"]
    # A step key history never produced: the immutable history disagrees with the rows.
    db_write(app_dir, "INSERT INTO pipeline_step_projections (tenant_id, discover_workflow_id,"
                      " discover_run_id, step_kind, item_key, attempt, status, counts_json,"
                      " last_event_id) VALUES ('local', ?, ?, 'source_family', 'family:ghost',"
                      " 1, 'queued', '{}', 0)", (ref.discover_workflow_id, ref.discover_run_id))
    assert (await read_coverage(db, ref)).status == "recovering"
    # The repair rebuilds the rows from the log, so the stray row is gone and it is ready.
    result = await history_repair.repair_execution(db, client, ref)
    assert result.status == "ready"
    assert ("source_family", "family:ghost") not in step_rows(app_dir, ref)
    # A member the history cannot name is a conflict: retried, never ready. Here it
    # replaced a proven member's row: the proven one is linked again, the outsider stays.
    job_id = db_rows(app_dir, "SELECT job_id FROM jobs ORDER BY job_id LIMIT 1")[0][0]
    outsider = db_rows(app_dir, "SELECT COUNT(*) FROM discovery_execution_jobs"
                                " WHERE discover_run_id = ? AND job_id = ?",
                       (ref.discover_run_id, job_id))[0][0]
    assert outsider == 1   # every job of this app came from this run
    db_write(app_dir, "UPDATE discovery_execution_jobs SET job_id = 'job-not-observed'"
                      " WHERE discover_run_id = ? AND job_id = ?", (ref.discover_run_id, job_id))
    try:
        conflict = await history_repair.repair_execution(db, client, ref)
        assert (conflict.status, conflict.error_code) == ("retrying", "key_set_mismatch")
        assert conflict.persisted_members == conflict.expected_members + 1
        assert member_row(app_dir, ref, job_id)[0] == "observed_this_run"
    finally:
        db_write(app_dir, "DELETE FROM discovery_execution_jobs"
                          " WHERE discover_run_id = ? AND job_id = 'job-not-observed'",
                 (ref.discover_run_id,))
    assert (await history_repair.repair_execution(db, client, ref)).status == "ready"


async def test_unreachable_history_is_retried_never_ready(stack):
    db, client = stack["db"], stack["client"]
    gone = DiscoveryExecutionRef(tenant_id="local", discover_workflow_id="discover-local",
                                 discover_run_id=str(uuid.uuid4()))
    not_found = await history_repair.repair_execution(db, client, gone)
    assert (not_found.status, not_found.error_code) == ("retrying", "history_not_found")
    assert (await read_coverage(db, gone)).status == "retrying"

    # A Temporal that does not answer at all (nothing listens on that port): the run keeps
    # the mode it had (reconstructed after the tests above, native when this one runs alone).
    mode_before = (await read_coverage(db, stack["ref"])).mode
    dead = await Client.connect(f"127.0.0.1:{free_port()}", lazy=True,
                                data_converter=pydantic_data_converter)
    unavailable = await history_repair.repair_execution(db, dead, stack["ref"])
    assert (unavailable.status, unavailable.error_code) == ("retrying", "history_unavailable")
    assert unavailable.mode == mode_before
    # Reachable again: the next repair proves it.
    assert (await history_repair.repair_execution(db, client, stack["ref"])).status == "ready"
    db_write(stack["app_dir"], "DELETE FROM discovery_execution_recoveries"
                               " WHERE discover_run_id = ?", (gone.discover_run_id,))


# --- membership restored from the exact history ---------------------------------------


async def test_a_lost_membership_row_is_restored_once_and_proven_ready(stack):
    app_dir, ref, db, client = stack["app_dir"], stack["ref"], stack["db"], stack["client"]
    assert (await history_repair.repair_execution(db, client, ref)).status == "ready"
    job_id = observed_job(app_dir, ref, 1)
    counts_before, events_before = cohort_counts(app_dir, ref), run_event_count(app_dir, ref)
    members_before = await coverage.member_keys(db, ref)
    plan_before = plan_row(app_dir, ref, job_id)
    assert plan_before[:4] == ("planned", json.dumps(["enrich", "score", "tailor", "cover",
                                                      "pdf"]), f"prep-{job_id}", None)
    settled_before = await settlements(db, ref)
    assert None not in settled_before.values()   # the settled passes' own evidence
    # The process died between the job upsert and the link (or the row was lost).
    assert db_write(app_dir, "DELETE FROM discovery_execution_jobs"
                             " WHERE discover_run_id = ? AND job_id = ?",
                    (ref.discover_run_id, job_id)) == 1
    assert cohort_counts(app_dir, ref) != counts_before
    assert (await read_coverage(db, ref)).status == "recovering"

    first = await history_repair.repair_execution(db, client, ref)
    assert (first.status, first.mode, first.error_code) == ("ready", "reconstructed", None)
    # Back exactly once, as the native link writes it, with the plan history proves.
    assert member_row(app_dir, ref, job_id) == ("observed_this_run", "planned")
    restored = plan_row(app_dir, ref, job_id)
    assert restored[:4] == plan_before[:4]     # same required steps and prep workflow id
    # planned_at is history's time: the completion of the fan-out that planned the job.
    # The native stamp was taken inside that activity, so it is not later; the child
    # started after it, so the child's events are not earlier — member settlement (events
    # created at or after planned_at) judges exactly as before the loss.
    assert restored[4] == fanout_completion(await history(stack), job_id)
    assert plan_before[4] <= restored[4]
    child_start = db_rows(app_dir, "SELECT MIN(created_at) FROM job_events WHERE"
                                   " type = 'WorkflowStarted' AND workflow_id = ?",
                          (f"prep-{job_id}",))[0][0]
    assert restored[4] <= child_start
    assert await settlements(db, ref) == settled_before
    assert await coverage.member_keys(db, ref) == members_before
    assert (first.expected_members, first.persisted_members) == (len(members_before),) * 2
    # The execution's cohort totals count it again (the 0013 triggers fired).
    assert cohort_counts(app_dir, ref) == counts_before
    rows_after_first = db_rows(app_dir, "SELECT * FROM discovery_execution_jobs"
                                        " WHERE discover_run_id = ? ORDER BY job_id",
                               (ref.discover_run_id,))

    second = await history_repair.repair_execution(db, client, ref)
    assert (second.status, second.digest) == ("ready", first.digest)
    assert db_rows(app_dir, "SELECT * FROM discovery_execution_jobs WHERE discover_run_id = ?"
                            " ORDER BY job_id", (ref.discover_run_id,)) == rows_after_first
    assert cohort_counts(app_dir, ref) == counts_before
    assert run_event_count(app_dir, ref) == events_before   # no event added, none repeated
    assert (await read_coverage(db, ref)).ready


async def test_a_member_whose_job_row_is_gone_is_not_invented(stack):
    app_dir, ref, db, client = stack["app_dir"], stack["ref"], stack["db"], stack["client"]
    assert (await history_repair.repair_execution(db, client, ref)).status == "ready"
    job_id = observed_job(app_dir, ref, 2)
    counts_before = cohort_counts(app_dir, ref)
    members_before = await coverage.member_keys(db, ref)
    job_row = db_rows(app_dir, "SELECT * FROM jobs WHERE job_id = ?", (job_id,))
    assert len(job_row) == 1
    assert db_write(app_dir, "DELETE FROM discovery_execution_jobs"
                             " WHERE discover_run_id = ? AND job_id = ?",
                    (ref.discover_run_id, job_id)) == 1
    # Foreign keys are off on this raw connection: only the job row goes.
    assert db_write(app_dir, "DELETE FROM jobs WHERE job_id = ?", (job_id,)) == 1
    try:
        for _ in range(2):   # refused again on every pass, never guessed
            refused = await history_repair.repair_execution(db, client, ref)
            assert (refused.status, refused.error_code) == ("retrying", "member_job_missing")
            assert refused.mode == "reconstructed"
            assert member_row(app_dir, ref, job_id) is None
            assert refused.expected_members == len(members_before)
            assert refused.persisted_members == len(members_before) - 1
        assert (await read_coverage(db, ref)).status == "retrying"
    finally:
        db_write(app_dir, f"INSERT INTO jobs VALUES ({','.join('?' * len(job_row[0]))})",
                 job_row[0])
    # The job row is back, so history's proof holds again: the member is linked.
    restored = await history_repair.repair_execution(db, client, ref)
    assert (restored.status, restored.error_code) == ("ready", None)
    assert member_row(app_dir, ref, job_id) == ("observed_this_run", "planned")
    assert await coverage.member_keys(db, ref) == members_before
    assert cohort_counts(app_dir, ref) == counts_before


def stage_totals(scope: dict) -> dict[str, int]:
    """How many jobs each stage block of a snapshot scope counts (its ``eligible``)."""
    return {stage: block["eligible"] for stage, block in scope.items()
            if isinstance(block, dict)}


async def test_the_operations_snapshot_counts_the_restored_member(stack):
    app_dir, ref, db, client, api = (stack["app_dir"], stack["ref"], stack["db"],
                                     stack["client"], stack["api"])
    assert (await history_repair.repair_execution(db, client, ref)).status == "ready"
    before = await api._json("GET", "/v1/pipeline/operations")
    assert before["execution"]["discoverRunId"] == ref.discover_run_id
    current = stage_totals(before["scopes"]["current_execution"])
    assert current and set(current.values()) == {5}
    job_id = observed_job(app_dir, ref, 3)
    assert db_write(app_dir, "DELETE FROM discovery_execution_jobs"
                             " WHERE discover_run_id = ? AND job_id = ?",
                    (ref.discover_run_id, job_id)) == 1

    damaged = await api._json("GET", "/v1/pipeline/operations")
    assert damaged["projectionCoverage"]["status"] == "recovering"
    assert set(stage_totals(damaged["scopes"]["current_execution"]).values()) == {4}
    # The unlinked job falls outside the execution until the repair links it again.
    outside = stage_totals(before["scopes"]["global_outside_execution"])
    assert stage_totals(damaged["scopes"]["global_outside_execution"]) == {
        stage: n + 1 for stage, n in outside.items()}

    assert (await history_repair.repair_execution(db, client, ref)).status == "ready"
    after = await api._json("GET", "/v1/pipeline/operations")
    assert after["projectionCoverage"]["status"] == "ready"
    assert after["projectionCoverage"]["mode"] == "reconstructed"
    assert after["scopes"]["current_execution"] == before["scopes"]["current_execution"]
    assert (after["scopes"]["global_outside_execution"]
            == before["scopes"]["global_outside_execution"])


async def test_the_worker_pass_restores_a_lost_member(stack):
    app_dir, ref, db, client = stack["app_dir"], stack["ref"], stack["db"], stack["client"]
    assert (await history_repair.repair_execution(db, client, ref)).status == "ready"
    job_id = observed_job(app_dir, ref, 4)
    assert db_write(app_dir, "DELETE FROM discovery_execution_jobs"
                             " WHERE discover_run_id = ? AND job_id = ?",
                    (ref.discover_run_id, job_id)) == 1
    # The read reports it (and writes nothing); the worker's pass revalidates the ready
    # proof itself, persists the downgrade and so selects it for repair.
    assert (await read_coverage(db, ref)).status == "recovering"

    def restored() -> bool:
        rows = db_rows(app_dir, "SELECT status FROM discovery_execution_recoveries"
                                " WHERE discover_run_id = ?", (ref.discover_run_id,))
        return rows == [("ready",)] and member_row(app_dir, ref, job_id) is not None

    # The worker's reconcile pass (every 15 s) links the member again and proves it.
    await wait_until(restored, timeout=120, what="the worker's membership repair")
    assert member_row(app_dir, ref, job_id) == ("observed_this_run", "planned")
    assert plan_row(app_dir, ref, job_id)[2] == f"prep-{job_id}"
    assert (await read_coverage(db, ref)).ready


async def test_a_member_planned_not_eligible_is_not_guessed(stack):
    """A second Discover observes the same (already prepared) jobs: its fan-outs plan them
    ``not_eligible``. History names the jobs a fan-out was asked for, not the reason, so a
    lost row comes back ``pending`` and the verdict is refused on every pass."""
    app_dir, db, client, api = stack["app_dir"], stack["db"], stack["client"], stack["api"]
    ref = await discover(api, app_dir)
    assert ref.discover_run_id != stack["ref"].discover_run_id
    plans = db_rows(app_dir, "SELECT job_id, plan_state, not_eligible_reason, planned_at"
                             " FROM discovery_execution_jobs WHERE discover_run_id = ?"
                             " AND cohort = 'observed_this_run' ORDER BY job_id",
                    (ref.discover_run_id,))
    assert len(plans) == 5 and {row[1] for row in plans} == {"not_eligible"}
    assert (await history_repair.repair_execution(db, client, ref)).status == "ready"
    job_id, _, reason, planned_at = plans[0]
    assert db_write(app_dir, "DELETE FROM discovery_execution_jobs"
                             " WHERE discover_run_id = ? AND job_id = ?",
                    (ref.discover_run_id, job_id)) == 1
    for _ in range(2):   # the same refusal on every pass: the row stays pending
        refused = await history_repair.repair_execution(db, client, ref)
        assert (refused.status, refused.error_code) == ("retrying", "member_plan_unproven")
        assert member_row(app_dir, ref, job_id) == ("observed_this_run", "pending")
        assert plan_row(app_dir, ref, job_id)[4] is None
    # With the recorded plan back in the row, history has nothing to refuse.
    db_write(app_dir, "UPDATE discovery_execution_jobs SET plan_state = 'not_eligible',"
                      " not_eligible_reason = ?, planned_at = ? WHERE discover_run_id = ?"
                      " AND job_id = ?", (reason, planned_at, ref.discover_run_id, job_id))
    proven = await history_repair.repair_execution(db, client, ref)
    assert (proven.status, proven.error_code) == ("ready", None)
    assert plan_row(app_dir, ref, job_id)[0] == "not_eligible"
