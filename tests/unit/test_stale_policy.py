"""Which jobs the bulk rescore / re-tailor policy actions pick, on a real migrated database."""

from __future__ import annotations

from backend.domain import events as ev
from backend.domain.postings import Posting
from backend.domain.profile import CandidateProfile
from backend.domain.stages import BELOW_MIN_FIT_SCORE
from backend.store import discovery, materials, stages
from backend.store.events import append_event
from backend.store.jobs import observe_posting
from backend.store.profile import save_profile
from backend.store.staleness import (
    busy_jobs,
    existing_jobs,
    stale_material_jobs,
    stale_score_jobs,
    threshold_cleared_jobs,
    undispatched_threshold_cleared_jobs,
)


async def add_job(conn, n: int) -> str:
    await discovery.insert_run(conn, workflow_id="discover-local", run_id="run-1",
                               families=["demo_board"])
    posting = Posting(source_key=f"k-{n}", url=f"https://x.example/jobs/{n}",
                      title="Backend Engineer", company="Acme", remote="remote")
    observed = await observe_posting(conn, posting, source_family="demo_board",
                                     discover_run_id="run-1")
    await stages.ensure_rows(conn, observed.job_id)
    return observed.job_id


async def score(conn, job_id: str, *, version: int, value: int, revision: int) -> None:
    await materials.insert_score(
        conn, job_id, version=version, score=value, rationale="r", matched=[], missing=[],
        provider="offline", model="heuristic", profile_revision=revision,
        workflow_id="prep-x", run_id="run-x")


async def resume(conn, job_id: str, *, generation: int, revision: int) -> None:
    await materials.insert_material(
        conn, job_id, kind="resume", generation=generation, content={}, provider="offline",
        model="heuristic", profile_revision=revision, workflow_id="prep-x", run_id="run-x")


async def set_profile(conn, title: str) -> int:
    return (await save_profile(conn, CandidateProfile(name="Ada", target_titles=[title])))[0]


async def test_a_score_from_an_older_profile_revision_is_stale(db):
    async with db.transaction() as conn:
        assert await set_profile(conn, "Engineer") == 1
        current, old, rescored = [await add_job(conn, n) for n in range(3)]
        await score(conn, current, version=1, value=70, revision=1)
        await score(conn, old, version=1, value=70, revision=1)
        await score(conn, rescored, version=1, value=70, revision=1)
        assert await set_profile(conn, "Staff Engineer") == 2
        await score(conn, current, version=2, value=75, revision=2)  # the latest counts
    assert await stale_score_jobs(db) == sorted([old, rescored])


async def test_marked_or_busy_jobs_are_never_picked(db):
    async with db.transaction() as conn:
        await set_profile(conn, "Engineer")
        applied, busy, idle = [await add_job(conn, n) for n in range(3)]
        for job in (applied, busy, idle):
            await score(conn, job, version=1, value=70, revision=1)
            await resume(conn, job, generation=1, revision=1)
        await set_profile(conn, "Staff Engineer")
        await conn.execute("UPDATE jobs SET user_status = 'applied' WHERE job_id = ?", (applied,))
        await stages.claim(conn, busy, "cover", stages.Owner("prep-b", "run-b", 1))
    assert await stale_score_jobs(db) == [idle]
    assert await stale_material_jobs(db, min_fit_score=0) == [idle]
    assert await busy_jobs(db, [applied, busy, idle]) == {busy}


async def test_materials_from_an_older_profile_and_newly_eligible_skips_are_stale(db):
    async with db.transaction() as conn:
        await set_profile(conn, "Engineer")
        fresh, old, low, now_fits = [await add_job(conn, n) for n in range(4)]
        await score(conn, old, version=1, value=80, revision=1)
        await resume(conn, old, generation=1, revision=1)
        await set_profile(conn, "Staff Engineer")
        await resume(conn, fresh, generation=1, revision=2)
        for job, value in ((low, 30), (now_fits, 65)):
            await score(conn, job, version=1, value=value, revision=2)
            await stages.settle(conn, job, "tailor", status="skipped",
                                reason=BELOW_MIN_FIT_SCORE, owner=None)
    assert await stale_material_jobs(db, min_fit_score=60) == sorted([old, now_fits])
    assert await stale_material_jobs(db, min_fit_score=70) == [old]


async def test_stale_materials_of_a_job_now_below_the_threshold_are_not_stale_work(db):
    """Re-tailoring it would only skip Tailor below the threshold and leave it stale: it
    would be offered again on every "Re-tailor stale". Prepared anyway, it is stale work."""
    async with db.transaction() as conn:
        await set_profile(conn, "Engineer")
        dropped, anyway = [await add_job(conn, n) for n in range(2)]
        for job in (dropped, anyway):
            await score(conn, job, version=1, value=70, revision=1)
            await resume(conn, job, generation=1, revision=1)
        await set_profile(conn, "Staff Engineer")
        for job in (dropped, anyway):
            await score(conn, job, version=2, value=40, revision=2)
        await conn.execute("UPDATE jobs SET prepare_anyway_at = '2026-01-01T00:00:00.000Z'"
                           " WHERE job_id = ?", (anyway,))
    assert await stale_material_jobs(db, min_fit_score=50) == [anyway]
    assert await stale_material_jobs(db, min_fit_score=40) == sorted([dropped, anyway])


async def started_preparation(conn, job_id: str, run_id: str) -> None:
    await append_event(conn, ev.WorkflowStarted(
        workflow_id=f"prep-{job_id}", run_id=run_id, workflow_type="JobPreparationWorkflow"),
        job_id=job_id, workflow_id=f"prep-{job_id}", run_id=run_id)


async def test_threshold_cleared_jobs_no_preparation_started_for_since_their_skip(db):
    """The worker's backstop dispatches these: skipped below an older threshold, and no
    preparation started after the skip (a start before it is the run that skipped)."""
    async with db.transaction() as conn:
        await set_profile(conn, "Engineer")
        never, dispatched = [await add_job(conn, n) for n in range(2)]
        for job in (never, dispatched):
            await started_preparation(conn, job, f"run-{job}-1")
            await score(conn, job, version=1, value=60, revision=1)
            await stages.settle(conn, job, "tailor", status="skipped",
                                reason=BELOW_MIN_FIT_SCORE, owner=None)
        await started_preparation(conn, dispatched, f"run-{dispatched}-2")
    assert await undispatched_threshold_cleared_jobs(db, min_fit_score=50) == [never]
    assert await undispatched_threshold_cleared_jobs(db, min_fit_score=70) == []
    assert sorted(await threshold_cleared_jobs(db, min_fit_score=50)) == sorted(
        [never, dispatched])


async def test_nothing_is_stale_without_a_profile_change(db):
    async with db.transaction() as conn:
        await set_profile(conn, "Engineer")
        job = await add_job(conn, 1)
        await score(conn, job, version=1, value=80, revision=1)
        await resume(conn, job, generation=1, revision=1)
    assert await stale_score_jobs(db) == []
    assert await stale_material_jobs(db, min_fit_score=50) == []
    assert await existing_jobs(db, [job, "nope"]) == {job}
    assert await existing_jobs(db, []) == set()
