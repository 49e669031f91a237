"""Execution lineage (discovery_execution_jobs) and the coverage checkpoint
(discovery_execution_recoveries): promotion, immutable plans, the canonical digest, and a
ready proof that is revalidated — and downgraded — against the durable rows."""

from __future__ import annotations

import hashlib
import sqlite3

import pytest

from backend.domain import events as ev
from backend.projections import pipeline_steps as steps
from backend.projections.coverage import persist_stale_verdicts, read_coverage
from backend.store import coverage, lineage
from backend.temporal.activities.discovery import decide_preparation
from backend.temporal.contracts import DiscoveryExecutionRef
from tests.commit_watch import no_commits

REF = DiscoveryExecutionRef(tenant_id="local", discover_workflow_id="discover-local",
                            discover_run_id="run-1")
OTHER_RUN = DiscoveryExecutionRef(tenant_id="local", discover_workflow_id="discover-local",
                                  discover_run_id="run-2")
JOB_A, JOB_B, JOB_C = "job_aaaaaaaaaaaaaaaaaaaaaaaa", "job_bbbbbbbbbbbbbbbbbbbbbbbb", "job_c"
ALL = ("enrich", "score", "tailor", "cover", "pdf")


async def members(db, ref=REF) -> dict[str, lineage.Member]:
    return await lineage.read_members(db, ref)


# --- linking and promotion ---------------------------------------------------------------


async def test_backlog_then_observed_promotes_the_one_row(db):
    async with db.transaction() as conn:
        assert await lineage.link_job(conn, REF, JOB_A, "existing_backlog") == "inserted"
    async with db.transaction() as conn:
        assert await lineage.link_job(conn, REF, JOB_A, "observed_this_run") == "promoted"
        assert await lineage.link_job(conn, REF, JOB_A, "observed_this_run") == "unchanged"
    rows = await members(db)
    assert list(rows) == [JOB_A]
    assert rows[JOB_A].cohort == "observed_this_run" and rows[JOB_A].plan_state == "pending"


async def test_observed_then_backlog_stays_observed(db):
    async with db.transaction() as conn:
        await lineage.link_job(conn, REF, JOB_A, "observed_this_run")
        assert await lineage.link_job(conn, REF, JOB_A, "existing_backlog") == "unchanged"
    rows = await members(db)
    assert len(rows) == 1 and rows[JOB_A].cohort == "observed_this_run"


async def test_a_promotion_keeps_the_plan_and_link_time(db):
    async with db.transaction() as conn:
        await lineage.link_job(conn, REF, JOB_A, "existing_backlog")
        await lineage.record_plan(conn, REF, JOB_A, "planned", ALL, f"prep-{JOB_A}")
    before = (await members(db))[JOB_A]
    async with db.transaction() as conn:
        result = await lineage.link_jobs(conn, REF, [JOB_A, JOB_B], "observed_this_run")
    assert result.inserted == (JOB_B,) and result.promoted == (JOB_A,)
    after = (await members(db))[JOB_A]
    assert after.cohort == "observed_this_run"
    assert (after.plan_state, after.required_steps, after.linked_at) == (
        "planned", ALL, before.linked_at)


async def test_membership_is_per_exact_execution(db):
    async with db.transaction() as conn:
        await lineage.link_job(conn, REF, JOB_A, "observed_this_run")
        await lineage.link_job(conn, OTHER_RUN, JOB_A, "existing_backlog")
    assert (await members(db))[JOB_A].cohort == "observed_this_run"
    assert (await members(db, OTHER_RUN))[JOB_A].cohort == "existing_backlog"


async def test_the_database_refuses_a_demotion(db):
    async with db.transaction() as conn:
        await lineage.link_job(conn, REF, JOB_A, "observed_this_run")
    with sqlite3.connect(db.path) as raw, pytest.raises(sqlite3.IntegrityError,
                                                        match="lineage_cohort_demotion"):
        raw.execute("UPDATE discovery_execution_jobs SET cohort = 'existing_backlog'")


async def test_an_unknown_cohort_is_refused(db):
    async with db.transaction() as conn:
        with pytest.raises(lineage.InvalidLineage):
            await lineage.link_job(conn, REF, JOB_A, "seen_somewhere")


# --- plans -------------------------------------------------------------------------------


async def test_a_planned_plan_is_immutable(db):
    async with db.transaction() as conn:
        await lineage.link_job(conn, REF, JOB_A, "observed_this_run")
        assert await lineage.record_plan(conn, REF, JOB_A, "planned", ALL,
                                         f"prep-{JOB_A}") == "recorded"
    planned = (await members(db))[JOB_A]
    async with db.transaction() as conn:
        # The same plan again is a no-op ...
        assert await lineage.record_plan(conn, REF, JOB_A, "planned", ALL,
                                         f"prep-{JOB_A}") == "unchanged"
        # ... a different one is refused with a typed error.
        with pytest.raises(lineage.PlanConflict) as refused:
            await lineage.record_plan(conn, REF, JOB_A, "planned", ("score",), f"prep-{JOB_A}")
        assert refused.value.code == "plan_conflict"
        with pytest.raises(lineage.PlanConflict):
            await lineage.record_plan(conn, REF, JOB_A, "not_eligible",
                                      reason="already_prepared")
        with pytest.raises(lineage.PlanConflict):
            await lineage.record_plan(conn, REF, JOB_A, "planned", ALL, "prep-other")
    assert (await members(db))[JOB_A] == planned
    with sqlite3.connect(db.path) as raw, pytest.raises(sqlite3.IntegrityError,
                                                        match="lineage_plan_immutable"):
        raw.execute("UPDATE discovery_execution_jobs SET required_steps_json = '[\"pdf\"]'")


async def test_not_eligible_may_later_become_planned(db):
    async with db.transaction() as conn:
        await lineage.link_job(conn, REF, JOB_A, "observed_this_run")
        await lineage.record_plan(conn, REF, JOB_A, "not_eligible", reason="preparation_active")
        await lineage.record_plan(conn, REF, JOB_A, "planned", ("score", "tailor"),
                                  f"prep-{JOB_A}")
    row = (await members(db))[JOB_A]
    assert (row.plan_state, row.required_steps, row.not_eligible_reason) == (
        "planned", ("score", "tailor"), None)
    assert row.preparation_workflow_id == f"prep-{JOB_A}" and row.planned_at


async def test_a_plan_keeps_the_time_it_is_given(db):
    async with db.transaction() as conn:
        await lineage.link_jobs(conn, REF, [JOB_A, JOB_B], "observed_this_run")
        await lineage.record_plan(conn, REF, JOB_A, "planned", ALL, f"prep-{JOB_A}",
                                  planned_at="2026-03-01T10:00:05.000Z")
        await lineage.record_plan(conn, REF, JOB_B, "failed", reason="planning_failed",
                                  planned_at="2026-03-01T10:00:09.000Z")
        # The same plan at another time is still the same plan: the first time stays.
        assert await lineage.record_plan(conn, REF, JOB_A, "planned", ALL, f"prep-{JOB_A}",
                                         planned_at="2026-03-01T11:00:00.000Z") == "unchanged"
    rows = await members(db)
    assert rows[JOB_A].planned_at == "2026-03-01T10:00:05.000Z"
    assert rows[JOB_B].planned_at == "2026-03-01T10:00:09.000Z"


@pytest.mark.parametrize("state, moment", [
    ("planned", "2026-03-01 10:00:05"),        # not the stored UTC millisecond form
    ("planned", "2026-03-01T10:00:05+00:00"),
    ("planned", "yesterday"),
    ("pending", "2026-03-01T10:00:05.000Z"),   # a pending job has no plan time
])
async def test_a_plan_time_that_would_not_sort_is_refused(db, state, moment):
    async with db.transaction() as conn:
        await lineage.link_job(conn, REF, JOB_A, "observed_this_run")
        with pytest.raises(lineage.InvalidLineage):
            await lineage.record_plan(
                conn, REF, JOB_A, state, ALL if state == "planned" else None,
                f"prep-{JOB_A}" if state == "planned" else None, planned_at=moment)
    assert (await members(db))[JOB_A].plan_state == "pending"


@pytest.mark.parametrize("state, steps_, workflow, reason", [
    ("not_eligible", None, None, "the posting looked weird"),   # unbounded reason
    ("not_eligible", None, None, None),
    ("planned", (), f"prep-{JOB_A}", None),                    # no steps
    ("planned", ("enrich", "bake"), f"prep-{JOB_A}", None),   # unknown stage
    ("planned", ALL, None, None),                             # no workflow id
    ("failed", None, None, "boom"),
    ("exploded", None, None, None),
])
async def test_invalid_plans_are_refused(db, state, steps_, workflow, reason):
    async with db.transaction() as conn:
        await lineage.link_job(conn, REF, JOB_A, "observed_this_run")
        with pytest.raises(lineage.InvalidLineage):
            await lineage.record_plan(conn, REF, JOB_A, state, steps_, workflow, reason)


async def test_a_plan_needs_a_member(db):
    async with db.transaction() as conn:
        with pytest.raises(lineage.UnknownMember):
            await lineage.record_plan(conn, REF, JOB_A, "planned", ALL, f"prep-{JOB_A}")


async def test_a_failed_execution_marks_pending_plans_failed(db):
    async with db.transaction() as conn:
        await lineage.link_jobs(conn, REF, [JOB_A, JOB_B], "observed_this_run")
        await lineage.record_plan(conn, REF, JOB_A, "planned", ALL, f"prep-{JOB_A}")
        assert await lineage.fail_pending_plans(conn, REF) == 1
    rows = await members(db)
    assert rows[JOB_A].plan_state == "planned"
    assert (rows[JOB_B].plan_state, rows[JOB_B].not_eligible_reason) == (
        "failed", "planning_failed")
    assert await lineage.membership_counts(db, REF) == {
        ("observed_this_run", "planned"): 1, ("observed_this_run", "failed"): 1}


def test_preparation_decisions_are_bounded():
    pending = [(stage, "pending", None) for stage in ALL]
    assert decide_preparation(pending, user_status=None).required_steps == ALL
    assert decide_preparation(None, user_status=None).required_steps == ALL  # no rows yet
    done = [(stage, "succeeded", None) for stage in ALL]
    assert decide_preparation(done, user_status=None).reason == "already_prepared"
    failed_score = [("enrich", "succeeded", None), ("score", "failed", None),
                    ("tailor", "blocked", "upstream_not_succeeded"),
                    ("cover", "pending", None), ("pdf", "pending", None)]
    decision = decide_preparation(failed_score, user_status=None)
    assert decision.state == "planned"
    assert decision.required_steps == ("score", "tailor", "cover", "pdf")
    # Downstream of the first stage with work, what has not succeeded is decided again.
    redo_enrich = [("enrich", "failed", None), ("score", "succeeded", None),
                   ("tailor", "skipped", "below_min_fit_score"), ("cover", "succeeded", None),
                   ("pdf", "blocked", "ENRICH_LOW_CONFIDENCE")]
    assert decide_preparation(redo_enrich, user_status=None).required_steps == (
        "enrich", "tailor", "pdf")
    running = [("enrich", "running", None), *pending[1:]]
    assert decide_preparation(running, user_status=None).reason == "preparation_active"
    assert decide_preparation(pending, user_status=None,
                              preparation_running=True).reason == "preparation_active"
    assert decide_preparation(pending, user_status="skipped").reason == "user_skipped"
    robots = [("enrich", "blocked", "ENRICH_ROBOTS_DISALLOWED"),
              *[(stage, "blocked", "ENRICH_ROBOTS_DISALLOWED") for stage in ALL[1:]]]
    assert decide_preparation(robots, user_status=None).reason == "blocked_by_robots"
    no_profile = [("enrich", "succeeded", None),
                  *[(stage, "blocked", "profile_missing") for stage in ALL[1:]]]
    assert decide_preparation(no_profile, user_status=None,
                              lifting_blocks={"upstream_not_succeeded"}).reason == "profile_missing"
    assert decide_preparation(no_profile, user_status=None).required_steps == ALL[1:]
    assert decide_preparation(None, user_status=None, exists=False).reason == "job_missing"
    for decision in (decide_preparation(x, user_status=None) for x in (done, robots)):
        assert decision.reason in lineage.NOT_ELIGIBLE_REASONS


@pytest.mark.parametrize("reason", [
    "ENRICH_ROBOTS_DISALLOWED", "ENRICH_LOW_CONFIDENCE", "profile_missing",
    "below_min_fit_score", "blocked_by_enrich", "something_new",
])
def test_every_not_eligible_reason_is_one_the_lineage_accepts(reason):
    blocked = [("enrich", "succeeded", None), *[(s, "blocked", reason) for s in ALL[1:]]]
    skipped = [("enrich", "succeeded", None), ("score", "succeeded", None),
               *[(s, "skipped", reason) for s in ALL[2:]]]
    for states in (blocked, skipped):
        decision = decide_preparation(states, user_status=None, lifting_blocks=())
        assert decision.state == "not_eligible"
        assert decision.reason in lineage.NOT_ELIGIBLE_REASONS
    for user_status in ("skipped", "applied"):
        assert decide_preparation(None, user_status=user_status).reason in (
            lineage.NOT_ELIGIBLE_REASONS)


# --- the digest --------------------------------------------------------------------------


def test_the_digest_is_the_documented_sha256():
    members_ = [f"{JOB_B}|existing_backlog", f"{JOB_A}|observed_this_run"]
    steps_ = ["source_planning|planning", "source_family|family:demo_board"]
    text = (f"members:2\n{JOB_A}|observed_this_run\n{JOB_B}|existing_backlog\n"
            "steps:2\nsource_family|family:demo_board\nsource_planning|planning\n")
    expected = hashlib.sha256(text.encode()).hexdigest()
    assert coverage.canonical_digest(members_, steps_) == expected
    # Order and duplicates do not matter; the partition between the two sets does.
    assert coverage.canonical_digest(reversed(members_), [*steps_, steps_[0]]) == expected
    assert coverage.canonical_digest([], []) == hashlib.sha256(b"members:0\nsteps:0\n").hexdigest()
    assert coverage.canonical_digest(members_, steps_[:1]) != expected
    assert coverage.canonical_digest(members_ + steps_, []) != expected


# --- the checkpoint ----------------------------------------------------------------------


def step_event(cls, kind="source_family", item="family:demo_board", attempt=1, **fields):
    base = {"discover_workflow_id": REF.discover_workflow_id,
            "discover_run_id": REF.discover_run_id, "step_kind": kind, "item_key": item,
            "attempt": attempt}
    return cls(**base, **fields)


async def open_execution(db) -> None:
    async with db.transaction() as conn:
        await coverage.open_native_checkpoint(conn, REF)
        await steps.append_step_event(conn, step_event(
            ev.PipelineStepQueued, "source_planning", "planning", queued_at="2026-01-01T00:00:00.000Z"))
        await steps.append_step_event(conn, step_event(
            ev.PipelineStepQueued, queued_at="2026-01-01T00:00:00.000Z"))
    async with db.transaction() as conn:
        await lineage.link_jobs(conn, REF, [JOB_A, JOB_B], "observed_this_run")
        await lineage.link_job(conn, REF, JOB_C, "existing_backlog")


def expected_digest() -> str:
    return coverage.canonical_digest(
        [f"{JOB_A}|observed_this_run", f"{JOB_B}|observed_this_run", f"{JOB_C}|existing_backlog"],
        ["source_planning|planning", "source_family|family:demo_board"])


async def test_native_writes_advance_a_ready_checkpoint(db):
    await open_execution(db)
    stored = await coverage.read_checkpoint(db, REF)
    assert (stored.status, stored.mode, stored.decoder_version) == ("ready", "native", 3)
    assert (stored.expected_members, stored.persisted_members) == (3, 3)
    assert (stored.expected_steps, stored.persisted_steps) == (2, 2)
    assert stored.digest == expected_digest()
    read = await read_coverage(db, REF)
    assert read.ready and not read.downgraded and read.digest == expected_digest()
    # A promotion changes the key set; the proof follows in the same transaction.
    async with db.transaction() as conn:
        await lineage.link_job(conn, REF, JOB_C, "observed_this_run")
    promoted = await read_coverage(db, REF)
    assert promoted.ready and promoted.digest != expected_digest()
    assert promoted.digest == coverage.canonical_digest(
        [f"{j}|observed_this_run" for j in (JOB_A, JOB_B, JOB_C)],
        ["source_planning|planning", "source_family|family:demo_board"])
    # Another attempt of a known step adds no key: the digest stands.
    async with db.transaction() as conn:
        await steps.append_step_event(conn, step_event(
            ev.PipelineStepStarted, attempt=2, started_at="2026-01-01T00:00:01.000Z"))
    assert (await read_coverage(db, REF)).digest == promoted.digest


async def test_a_membership_row_deleted_behind_its_back_downgrades_ready(db):
    await open_execution(db)
    assert (await read_coverage(db, REF)).ready
    with sqlite3.connect(db.path) as raw:
        raw.execute("DELETE FROM discovery_execution_jobs WHERE job_id = ?", (JOB_B,))
    with no_commits(db.path):  # the read reports the stale proof and writes nothing
        read = await read_coverage(db, REF)
    assert read.status == "recovering" and read.downgraded
    assert read.error_code == "proof_mismatch"
    assert (read.expected_members, read.persisted_members) == (3, 2)
    assert (await coverage.read_checkpoint(db, REF)).status == "ready"
    # The worker's repair pass persists it, which selects it for repair; from then on
    # a read reports the stored row as it is.
    assert await persist_stale_verdicts(db) == {REF.discover_run_id: "recovering"}
    stored = await coverage.read_checkpoint(db, REF)
    assert (stored.status, stored.error_code, stored.persisted_members) == (
        "recovering", "proof_mismatch", 2)
    again = await read_coverage(db, REF)
    assert again.status == "recovering" and not again.downgraded
    assert await persist_stale_verdicts(db) == {}, "only ready proofs are revalidated"


def test_the_commit_watch_sees_a_commit(tmp_path):
    """The detector the no-write proofs use: another connection's commit is seen."""
    path = tmp_path / "watched.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(AssertionError, match="committed"), no_commits(path), \
            sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO t VALUES (1)")


async def test_a_proven_checkpoint_is_left_alone_by_the_repair_pass(db):
    await open_execution(db)
    with no_commits(db.path):
        assert await persist_stale_verdicts(db) == {}
    assert (await coverage.read_checkpoint(db, REF)).digest == expected_digest()


async def test_a_native_write_never_absorbs_a_change_made_behind_its_back(db):
    await open_execution(db)
    with sqlite3.connect(db.path) as raw:
        raw.execute("DELETE FROM discovery_execution_jobs WHERE job_id = ?", (JOB_B,))
    async with db.transaction() as conn:
        await lineage.link_job(conn, REF, "job_d", "observed_this_run")
    stored = await coverage.read_checkpoint(db, REF)
    assert stored.status == "recovering" and stored.error_code == "proof_mismatch"
    # Once under repair, native writes leave the checkpoint to the reconciler.
    async with db.transaction() as conn:
        await lineage.link_job(conn, REF, "job_e", "observed_this_run")
    assert await coverage.read_checkpoint(db, REF) == stored


async def test_a_swap_with_equal_counts_is_caught_by_the_digest(db):
    await open_execution(db)
    with sqlite3.connect(db.path) as raw:
        raw.execute("UPDATE discovery_execution_jobs SET job_id = 'job_z' WHERE job_id = ?",
                    (JOB_B,))
    read = await read_coverage(db, REF)
    assert read.status == "recovering"
    assert (read.expected_members, read.persisted_members) == (3, 3)


async def test_a_lost_step_row_is_refolded_from_the_log_not_downgraded(db):
    await open_execution(db)
    with sqlite3.connect(db.path) as raw:
        raw.execute("DELETE FROM pipeline_step_projections WHERE item_key = 'planning'")
    # Until the repair pass refolds it, a read says the rows are short, and writes nothing.
    with no_commits(db.path):
        read = await read_coverage(db, REF)
    assert read.status == "recovering" and read.persisted_steps == 1
    assert {row.item_key for row in await steps.list_steps(db, REF)} == {"family:demo_board"}
    # The repair pass refolds the lost row from the log; the proof holds, still ready.
    assert await persist_stale_verdicts(db) == {REF.discover_run_id: "ready"}
    read = await read_coverage(db, REF)
    assert read.ready and not read.downgraded and read.digest == expected_digest()
    assert {row.item_key for row in await steps.list_steps(db, REF)} == {
        "planning", "family:demo_board"}


async def test_a_failed_proof_update_rolls_back_the_canonical_write(db, monkeypatch):
    await open_execution(db)

    async def broken(*args, **kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(coverage, "update_native_checkpoint", broken)
    with pytest.raises(RuntimeError):
        async with db.transaction() as conn:
            await lineage.link_job(conn, REF, "job_d", "observed_this_run")
    assert "job_d" not in await members(db)
    monkeypatch.undo()
    assert (await read_coverage(db, REF)).ready


async def test_a_missing_checkpoint_reads_as_recovering_without_a_row(db):
    read = await read_coverage(db, OTHER_RUN)
    assert (read.status, read.mode, read.error_code) == ("recovering", None, "checkpoint_missing")
    assert await coverage.read_checkpoint(db, OTHER_RUN) is None


async def test_prove_checkpoint_publishes_ready_only_on_exact_sets(db):
    await open_execution(db)
    member_keys = await coverage.member_keys(db, REF)
    step_keys = await coverage.projected_step_keys(db, REF)
    async with db.transaction() as conn:
        short = await coverage.prove_checkpoint(
            conn, REF, mode="reconstructed", decoder_version=2, history_event_watermark=40,
            expected_member_keys=member_keys | {"job_x|observed_this_run"},
            expected_step_keys=step_keys, failure_status="retrying")
    assert (short.status, short.error_code) == ("retrying", "proof_mismatch")
    assert (short.expected_members, short.persisted_members) == (4, 3)
    async with db.transaction() as conn:
        proven = await coverage.prove_checkpoint(
            conn, REF, mode="reconstructed", decoder_version=2, history_event_watermark=41,
            expected_member_keys=member_keys, expected_step_keys=step_keys,
            error_code="legacy_history_recovery")
    assert (proven.status, proven.mode, proven.history_event_watermark) == (
        "ready", "reconstructed", 41)
    assert proven.digest == expected_digest() and proven.error_code == "legacy_history_recovery"
    # Reconstructed checkpoints never take the native path.
    async with db.transaction() as conn:
        await lineage.link_job(conn, REF, "job_d", "observed_this_run")
    assert (await coverage.read_checkpoint(db, REF)).digest == expected_digest()
    payload = proven.to_payload()
    assert payload["status"] == "ready" and payload["decoderVersion"] == 2
    assert all("_" not in key for key in payload)


async def test_get_operations_reports_a_stale_proof_and_writes_nothing(db, tmp_path):
    """``GET /v1/pipeline/operations`` over a real store: a ready proof broken behind its
    back reads as recovering, and nothing commits; the repair pass then persists it."""
    from fastapi.testclient import TestClient

    from backend.api.app import create_app
    from backend.config import AppPaths
    from backend.store import discovery

    await open_execution(db)
    async with db.transaction() as conn:
        await discovery.insert_run(conn, workflow_id=REF.discover_workflow_id,
                                   run_id=REF.discover_run_id, families=["demo_board"])
    with sqlite3.connect(db.path) as raw:
        raw.execute("DELETE FROM discovery_execution_jobs WHERE job_id = ?", (JOB_B,))
    paths = AppPaths(tmp_path)
    assert paths.database == db.path
    app = create_app(paths, api_token="t", temporal_address="127.0.0.1:1")
    with TestClient(app, base_url="http://127.0.0.1") as client:
        client.headers["Authorization"] = "Bearer t"
        with no_commits(db.path):
            for _ in range(2):  # a repeat read is as honest, and as silent
                body = client.get("/v1/pipeline/operations").json()
                coverage_payload = body["projectionCoverage"]
                assert (coverage_payload["status"], coverage_payload["errorCode"]) == (
                    "recovering", "proof_mismatch")
    assert (await coverage.read_checkpoint(db, REF)).status == "ready"
    assert await persist_stale_verdicts(db) == {REF.discover_run_id: "recovering"}
