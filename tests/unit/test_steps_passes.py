"""The enrichment_pass and pdf_render steps: opened when membership closes, completed with
bounded counts once every planned member has settled the stage, idempotently."""

from __future__ import annotations

from backend.domain import events as ev
from backend.domain.postings import Posting
from backend.projections.coverage import read_coverage
from backend.projections.pipeline_steps import list_steps, rebuild_pipeline_steps
from backend.store import coverage, lineage, passes, stages
from backend.store import discovery as runs
from backend.store.events import append_event
from backend.store.jobs import observe_posting
from backend.temporal.contracts import DiscoveryExecutionRef

REF = DiscoveryExecutionRef(tenant_id="local", discover_workflow_id="discover-local",
                            discover_run_id="run-1")
ALL = ["enrich", "score", "tailor", "cover", "pdf"]


async def member(conn, n: int, *, steps=ALL) -> str:
    posting = Posting(source_key=f"k-{n}", url=f"https://x.example/jobs/{n}",
                      title="Backend Engineer", company="Acme", remote="remote")
    job_id = (await observe_posting(conn, posting, source_family="demo_board",
                                    discover_run_id=REF.discover_run_id)).job_id
    await stages.ensure_rows(conn, job_id)
    await lineage.link_job(conn, REF, job_id, "observed_this_run")
    await lineage.record_plan(conn, REF, job_id, "planned", steps, f"prep-{job_id}")
    return job_id


async def set_stage(conn, job_id: str, stage: str, status: str) -> None:
    await conn.execute("UPDATE job_stage_states SET status = ? WHERE job_id = ? AND stage = ?",
                       (status, job_id, stage))


async def prep_run(conn, job_id: str, run_id: str, *, closed: bool) -> None:
    ids = {"workflow_id": f"prep-{job_id}", "run_id": run_id,
           "workflow_type": "JobPreparationWorkflow"}
    await append_event(conn, ev.WorkflowStarted(**ids), job_id=job_id,
                       workflow_id=ids["workflow_id"], run_id=run_id)
    if closed:
        await append_event(conn, ev.WorkflowFailed(**ids, error_code="x"), job_id=job_id,
                           workflow_id=ids["workflow_id"], run_id=run_id)


async def setup(db) -> list[str]:
    async with db.transaction() as conn:
        await runs.insert_run(conn, workflow_id=REF.discover_workflow_id,
                              run_id=REF.discover_run_id, families=["demo_board"])
        await coverage.open_native_checkpoint(conn, REF)
        return [await member(conn, n) for n in range(4)] + [
            await member(conn, 9, steps=["score"])]  # needs neither enrich nor pdf


async def rows(db) -> dict[str, tuple]:
    return {row.step_kind: (row.status, row.counts) for row in await list_steps(db, REF)
            if row.step_kind in passes.PASS_STAGES}


async def test_passes_open_running_and_wait_for_unsettled_members(db):
    jobs = await setup(db)
    async with db.transaction() as conn:
        await passes.open_passes(conn, REF)
    assert await rows(db) == {"enrichment_pass": ("running", {}), "pdf_render": ("running", {})}
    async with db.transaction() as conn:
        for job in jobs[:3]:
            await set_stage(conn, job, "enrich", "succeeded")
        await set_stage(conn, jobs[3], "enrich", "running")  # still moving
        assert await passes.settle_passes(conn, REF) == []
    assert (await rows(db))["enrichment_pass"][0] == "running"


async def test_passes_complete_with_counts_once_every_member_settled(db):
    jobs = await setup(db)
    async with db.transaction() as conn:
        await passes.open_passes(conn, REF)
        await set_stage(conn, jobs[0], "enrich", "succeeded")
        await set_stage(conn, jobs[1], "enrich", "exhausted")
        await set_stage(conn, jobs[2], "enrich", "blocked")
        await set_stage(conn, jobs[3], "enrich", "succeeded")
        await set_stage(conn, jobs[0], "pdf", "succeeded")
        await set_stage(conn, jobs[3], "pdf", "skipped")
        # jobs[1] and jobs[2] never reach PDF: pending, but their preparation closed.
        await prep_run(conn, jobs[1], "r-1", closed=True)
        await prep_run(conn, jobs[2], "r-2", closed=True)
    async with db.transaction() as conn:
        assert await passes.settle_open_passes(conn) == 2
        assert await passes.settle_open_passes(conn) == 0  # idempotent
    assert await rows(db) == {
        "enrichment_pass": ("succeeded", {"targetCount": 4, "succeededCount": 2,
                                          "failedCount": 1, "blockedCount": 1}),
        "pdf_render": ("succeeded", {"targetCount": 4, "succeededCount": 1,
                                     "skippedCount": 1, "notReachedCount": 2}),
    }
    completed = (await db.fetchone(
        "SELECT COUNT(*) FROM job_events WHERE type = 'PipelineStepCompleted'"))[0]
    assert completed == 2
    # The rows fold again from the log exactly, and the coverage proof counts the steps.
    await rebuild_pipeline_steps(db)
    assert (await rows(db))["pdf_render"][0] == "succeeded"
    read = await read_coverage(db, REF)
    assert read.status == "ready" and read.expected_steps == read.persisted_steps == 2


async def test_a_pending_member_whose_preparation_still_runs_holds_the_pass(db):
    jobs = await setup(db)
    async with db.transaction() as conn:
        await passes.open_passes(conn, REF)
        for job in jobs:
            await set_stage(conn, job, "enrich", "succeeded")
        await set_stage(conn, jobs[0], "pdf", "succeeded")
        for index, job in enumerate(jobs[1:4]):
            await prep_run(conn, job, f"r-{index}", closed=index != 0)  # one still running
        assert await passes.settle_passes(conn, REF) == ["enrichment_pass"]
    assert (await rows(db))["pdf_render"][0] == "running"
