"""The execution phase and the per-job counts around an exhausted upstream stage.

* An exhausted (or failed) stage explicitly blocks its pending downstream stages with the
  typed ``upstream_not_succeeded`` reason (``StageBlocked`` through the store), so they are
  counted as blocked, not waiting, and the execution can settle.
* Resetting the upstream (retry-stage) or its success reopens exactly those rows.
* The phase is ``draining`` while an ``enrichment_pass`` / ``pdf_render`` boundary is
  open, never ``completed``.
"""

from __future__ import annotations

import json

import pytest

from backend.domain.postings import Posting
from backend.operations.phase import (
    PhaseFacts,
    execution_phase,
    failed_step_count,
    open_boundary_count,
)
from backend.operations.stage_counts import Scope, remaining, stage_counts
from backend.projections.pipeline_steps import StepRow
from backend.store import discovery as runs
from backend.store import stages
from backend.store.jobs import observe_posting

DOWNSTREAM = ("score", "tailor", "cover", "pdf")
OWNER = stages.Owner("prep-job", "run-prep-1", 4)


def facts(**changes) -> PhaseFacts:
    """A closed, successful execution with nothing left, changed as the test says."""
    base = {"workflow_status": "completed", "families_planned": 1, "families_reported": 1,
            "families_failed": 0, "unresolved_jobs": 0, "stage_failures": 0,
            "open_boundaries": 0, "failed_steps": 0}
    return PhaseFacts(**{**base, **changes})


def step(kind: str, status: str, item: str | None = None, attempt: int = 1) -> StepRow:
    return StepRow(tenant_id="local", discover_workflow_id="discover-local",
                   discover_run_id="run-1", step_kind=kind, item_key=item or kind,
                   attempt=attempt, status=status)


# --- the pure phase ----------------------------------------------------------------------


def test_a_closed_execution_with_an_open_boundary_is_draining_not_completed():
    assert execution_phase(facts(open_boundaries=1)) == "draining"
    assert execution_phase(facts(open_boundaries=2, stage_failures=1)) == "draining"
    assert execution_phase(facts()) == "completed"


def test_unresolved_jobs_keep_a_closed_execution_draining():
    assert execution_phase(facts(unresolved_jobs=3)) == "draining"
    assert execution_phase(facts(workflow_status="failed", unresolved_jobs=1)) == "draining"


def test_blocked_and_exhausted_work_settles_as_completed_with_issues():
    # An exhausted Enrich is a stage failure; its blocked downstream is not unresolved.
    assert execution_phase(facts(stage_failures=1)) == "completed_with_issues"
    assert execution_phase(facts(families_failed=1)) == "completed_with_issues"
    # A closed membership with a failed terminal step is not a clean completion either.
    assert execution_phase(facts(failed_steps=1)) == "completed_with_issues"


def test_running_and_terminal_workflow_states():
    assert execution_phase(facts(workflow_status="running", families_reported=0)) == (
        "discovering")
    assert execution_phase(facts(workflow_status="running")) == "draining"
    assert execution_phase(facts(workflow_status="canceled")) == "canceled"
    assert execution_phase(facts(workflow_status="failed")) == "failed"
    assert execution_phase(facts(workflow_status="reconciled_not_found")) == "failed"


def test_only_unsettled_enrichment_and_pdf_boundaries_count_as_open():
    rows = [step("enrichment_pass", "succeeded"), step("pdf_render", "running"),
            step("source_family", "running", "family:demo_board"),
            step("preparation_fanout", "queued", "fanout:sweep")]
    assert open_boundary_count(rows) == 1
    assert open_boundary_count([step("pdf_render", "queued"),
                                step("enrichment_pass", "running")]) == 2
    assert open_boundary_count([step("pdf_render", "succeeded")]) == 0
    assert open_boundary_count([]) == 0  # no boundary recorded: nothing holds the phase


def test_failed_steps_count_only_the_newest_terminal_failures():
    rows = [step("source_family", "failed", "family:a", attempt=3),
            step("source_family", "succeeded", "family:b", attempt=2),
            step("preparation_fanout", "running", "fanout:sweep")]
    assert failed_step_count(rows) == 1


# --- the store: an exhausted upstream blocks its downstream, a reset reopens it ----------


async def new_job(db, n: int = 1) -> str:
    posting = Posting(source_key=f"k-{n}", url=f"https://x.example/jobs/{n}",
                      title="Backend Engineer", company="Acme", remote="remote")
    async with db.transaction() as conn:
        if not await db_has_run(conn):
            await runs.insert_run(conn, workflow_id="discover-local", run_id="run-1",
                                  families=["demo_board"])
        job_id = (await observe_posting(conn, posting, source_family="demo_board",
                                        discover_run_id="run-1")).job_id
        await stages.ensure_rows(conn, job_id)
    return job_id


async def db_has_run(conn) -> bool:
    cursor = await conn.execute("SELECT 1 FROM discovery_runs WHERE discover_run_id = 'run-1'")
    return await cursor.fetchone() is not None


async def exhaust(db, job_id: str, stage: str = "enrich") -> str:
    owner = stages.Owner(OWNER.workflow_id, OWNER.run_id, 1)
    async with db.transaction() as conn:
        await stages.claim(conn, job_id, stage, owner)
        return await stages.reconcile_failure(conn, job_id, stage, OWNER,
                                              error_code="enrich_unavailable", retryable=True)


async def statuses(db, job_id: str) -> dict[str, tuple[str, str | None]]:
    async with db.transaction() as conn:
        rows = await stages.read_rows(conn, job_id)
    return {name: (row.status, row.blocked_reason) for name, row in rows.items()}


async def events(db, job_id: str, event_type: str) -> list[dict]:
    rows = await db.fetchall("SELECT payload_json FROM job_events WHERE job_id = ? AND type = ?"
                             " ORDER BY id", (job_id, event_type))
    return [json.loads(row[0]) for row in rows]


def job_scope(job_id: str) -> Scope:
    return Scope("j.job_id = ?", (job_id,))


@pytest.mark.parametrize("retryable, terminal", [(True, "exhausted"), (False, "failed")])
async def test_a_given_up_enrich_blocks_every_pending_downstream_stage(db, retryable, terminal):
    job_id = await new_job(db)
    owner = stages.Owner(OWNER.workflow_id, OWNER.run_id, 1)
    async with db.transaction() as conn:
        await stages.claim(conn, job_id, "enrich", owner)
        assert await stages.reconcile_failure(conn, job_id, "enrich", OWNER,
                                              error_code="enrich_unavailable",
                                              retryable=retryable) == terminal
    rows = await statuses(db, job_id)
    assert rows["enrich"] == (terminal, None)
    for stage in DOWNSTREAM:
        assert rows[stage] == ("blocked", "upstream_not_succeeded")
    blocked = await events(db, job_id, "StageBlocked")
    assert [(e["stage"], e["reason"], e["runId"]) for e in blocked] == [
        (stage, "upstream_not_succeeded", OWNER.run_id) for stage in DOWNSTREAM]

    counts = await stage_counts(db, job_scope(job_id))
    assert counts["enrich"].exhausted + counts["enrich"].failed == 1
    for stage in DOWNSTREAM:
        block = counts[stage]
        assert (block.blocked, block.waiting, block.unknown) == (1, 0, 0)
    assert sum(remaining(block) for block in counts.values()) == 0


async def test_a_repeated_reconciliation_blocks_once(db):
    job_id = await new_job(db)
    await exhaust(db, job_id)
    async with db.transaction() as conn:
        await stages.reconcile_failure(conn, job_id, "enrich", OWNER,
                                       error_code="enrich_unavailable", retryable=True)
    assert len(await events(db, job_id, "StageBlocked")) == len(DOWNSTREAM)


async def test_downstream_work_that_already_has_a_result_is_not_blocked(db):
    job_id = await new_job(db)
    owner = stages.Owner("prep-job", "run-prep-0", 1)
    async with db.transaction() as conn:
        for stage in ("enrich", "score"):
            await stages.claim(conn, job_id, stage, owner)
            await stages.complete(conn, job_id, stage, owner)
    # A later Score redo exhausts; Tailor onwards never ran and are blocked by it.
    await exhaust(db, job_id, "score")
    rows = await statuses(db, job_id)
    assert rows["enrich"] == ("succeeded", None)
    assert rows["score"] == ("exhausted", None)
    assert [rows[s] for s in ("tailor", "cover", "pdf")] == [
        ("blocked", "upstream_not_succeeded")] * 3


async def test_a_retry_stage_reset_of_the_upstream_reopens_its_blocked_downstream(db):
    job_id = await new_job(db)
    await exhaust(db, job_id)
    async with db.transaction() as conn:
        await stages.reset(conn, job_id, "enrich", source="retry_stage")
    rows = await statuses(db, job_id)
    assert {rows[s] for s in ("enrich", *DOWNSTREAM)} == {("pending", None)}
    reopened = [e for e in await events(db, job_id, "StageReset") if e["stage"] in DOWNSTREAM]
    assert [(e["stage"], e["source"], e["previousStatus"]) for e in reopened] == [
        (stage, "retry_stage", "blocked") for stage in DOWNSTREAM]
    counts = await stage_counts(db, job_scope(job_id))
    assert all(counts[s].waiting == 1 and counts[s].blocked == 0 for s in DOWNSTREAM)


async def test_an_upstream_success_reopens_rows_it_had_blocked(db):
    job_id = await new_job(db)
    await exhaust(db, job_id)
    owner = stages.Owner("prep-job", "run-prep-2", 1)
    async with db.transaction() as conn:  # run again without a reset (run-stage)
        await stages.claim(conn, job_id, "enrich", owner)
        await stages.complete(conn, job_id, "enrich", owner)
    rows = await statuses(db, job_id)
    assert rows["enrich"] == ("succeeded", None)
    assert {rows[s] for s in DOWNSTREAM} == {("pending", None)}
    reopened = [e for e in await events(db, job_id, "StageReset") if e["stage"] in DOWNSTREAM]
    assert {(e["source"], e["previousStatus"], e["runId"]) for e in reopened} == {
        ("upstream_succeeded", "blocked", "run-prep-2")}


async def test_other_blocks_downstream_are_left_alone(db):
    job_id = await new_job(db)
    async with db.transaction() as conn:
        await stages.settle(conn, job_id, "tailor", status="blocked",
                            reason="ENRICH_LOW_CONFIDENCE", owner=None)
    await exhaust(db, job_id, "score")
    rows = await statuses(db, job_id)
    # Tailor keeps its own cause; Cover and PDF behind it cannot run either.
    assert rows["tailor"] == ("blocked", "ENRICH_LOW_CONFIDENCE")
    assert [rows[s] for s in ("cover", "pdf")] == [("blocked", "upstream_not_succeeded")] * 2
    async with db.transaction() as conn:
        await stages.reset(conn, job_id, "score", source="retry_stage")
    rows = await statuses(db, job_id)
    assert rows["tailor"] == ("blocked", "ENRICH_LOW_CONFIDENCE")


# --- rows stranded before the fix: the reconciler blocks them once ----------------------


async def strand(db, job_id: str, stage: str = "enrich") -> None:
    """An upstream that gave up the old way: terminal, its downstream left pending."""
    async with db.transaction() as conn:
        await conn.execute(
            "UPDATE job_stage_states SET status = 'exhausted', owner_workflow_id = 'prep-old',"
            " owner_run_id = 'run-old', error_code = 'enrich_unavailable' WHERE job_id = ?"
            " AND stage = ?", (job_id, stage))


async def test_stranded_pending_downstream_is_blocked_once(db):
    stranded, running, fine = [await new_job(db, n) for n in (1, 2, 3)]
    await strand(db, stranded)
    await strand(db, running)
    async with db.transaction() as conn:  # another run is working on this job right now
        await stages.claim(conn, running, "enrich", stages.Owner("prep-new", "run-new", 1))
        assert await stages.block_stranded_downstream(conn) == len(DOWNSTREAM)
        assert await stages.block_stranded_downstream(conn) == 0
    rows = await statuses(db, stranded)
    assert {rows[s] for s in DOWNSTREAM} == {("blocked", "upstream_not_succeeded")}
    assert [e["runId"] for e in await events(db, stranded, "StageBlocked")] == ["run-old"] * 4
    for job_id in (running, fine):
        assert {(await statuses(db, job_id))[s] for s in DOWNSTREAM} == {("pending", None)}
