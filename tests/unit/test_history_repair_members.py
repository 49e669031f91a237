"""History repair's membership restore (``history_repair.restore_members``) on a real
SQLite store: members history proves whose row is missing are linked through the native
writer with their proven cohort, existing rows are never changed, a member whose job row
is gone is returned (never invented), and a repeat changes nothing. Then the work-plan
restore (``history_repair.restore_plans``): a pending member gets the plan history proves
with history's time (so a child that finished before the repair settles the passes), an
unproven or conflicting plan is refused with a bounded code, and a repeat changes
nothing."""

from __future__ import annotations

from backend.store import lineage, passes
from backend.store.db import Database
from backend.temporal.contracts import DiscoveryExecutionRef
from backend.temporal.loops import history_decoder as decoder
from backend.temporal.loops import history_repair
from tests.unit.test_history_decoder import prep_finished

REF = DiscoveryExecutionRef(tenant_id="local", discover_workflow_id="discover-local",
                            discover_run_id="run-1")
NOW = "2026-01-01T00:00:00.000Z"


async def add_jobs(db: Database, *job_ids: str) -> None:
    async with db.transaction() as conn:
        for job_id in job_ids:
            await conn.execute(
                "INSERT INTO jobs (job_id, tenant_id, canonical_url, url, title, company,"
                " first_source, first_seen_at, last_seen_at) VALUES (?,?,?,?,?,?,?,?,?)",
                (job_id, "local", f"https://jobs.example.org/{job_id}",
                 f"https://jobs.example.org/{job_id}", "Engineer", "Example", "alpha", NOW,
                 NOW))


def history(observed=(), backlog=()) -> decoder.DecodedHistory:
    return decoder.DecodedHistory(observed_job_ids=set(observed),
                                  backlog_planned_job_ids=set(backlog))


async def restore(db: Database, decoded: decoder.DecodedHistory) -> set[str]:
    async with db.transaction() as conn:
        return await history_repair.restore_members(conn, REF, decoded)


async def cohorts(db: Database) -> dict[str, str]:
    return {job: member.cohort for job, member in (await lineage.read_members(db, REF)).items()}


async def job_counts(db: Database) -> dict[str, int]:
    rows = await db.fetchall("SELECT cohort, n FROM execution_cohort_job_counts"
                             " WHERE discover_run_id = ? AND n <> 0", (REF.discover_run_id,))
    return {row[0]: row[1] for row in rows}


async def test_missing_members_are_linked_with_their_proven_cohort(db):
    await add_jobs(db, "job-a", "job-b", "job-c")
    decoded = history(observed={"job-a", "job-c"}, backlog={"job-b", "job-c"})
    assert await restore(db, decoded) == set()
    # An observation outranks a sweep plan of the same job.
    assert await cohorts(db) == {"job-a": "observed_this_run", "job-b": "existing_backlog",
                                 "job-c": "observed_this_run"}
    members = await lineage.read_members(db, REF)
    assert {m.plan_state for m in members.values()} == {"pending"}   # the plan is unknown
    assert await job_counts(db) == {"observed_this_run": 2, "existing_backlog": 1}


async def test_a_repeat_changes_nothing(db):
    await add_jobs(db, "job-a", "job-b")
    decoded = history(observed={"job-a"}, backlog={"job-b"})
    await restore(db, decoded)
    before = await db.fetchall("SELECT * FROM discovery_execution_jobs ORDER BY job_id")
    assert await restore(db, decoded) == set()
    assert await db.fetchall("SELECT * FROM discovery_execution_jobs ORDER BY job_id") == before
    assert await job_counts(db) == {"observed_this_run": 1, "existing_backlog": 1}


async def test_existing_rows_are_not_changed(db):
    await add_jobs(db, "job-a", "job-b")
    async with db.transaction() as conn:
        await lineage.link_job(conn, REF, "job-a", "existing_backlog")
        await lineage.record_plan(conn, REF, "job-a", "not_eligible", reason="user_skipped")
    before = await lineage.read_members(db, REF)
    assert await restore(db, history(observed={"job-a", "job-b"})) == set()
    after = await lineage.read_members(db, REF)
    assert after["job-a"] == before["job-a"]     # only missing rows are written
    assert after["job-b"].cohort == "observed_this_run"


async def test_a_member_without_its_job_row_is_not_invented(db):
    await add_jobs(db, "job-a")
    decoded = history(observed={"job-a", "job-gone"}, backlog={"job-lost"})
    assert await restore(db, decoded) == {"job-gone", "job-lost"}
    assert await cohorts(db) == {"job-a": "observed_this_run"}
    assert await restore(db, decoded) == {"job-gone", "job-lost"}   # refused every time
    assert await cohorts(db) == {"job-a": "observed_this_run"}


# --- work plans ----------------------------------------------------------------------------

STEPS = ("enrich", "score", "tailor", "cover", "pdf")
PLANNED_AT = "2020-01-01T00:00:05.000Z"   # when the fan-out completed, long before the repair


def planned(*job_ids: str, at: str = PLANNED_AT) -> dict[str, decoder.PlanEvidence]:
    return {job: decoder.PlanEvidence(STEPS, f"prep-{job}", at) for job in job_ids}


async def restore_plans(db: Database, decoded: decoder.DecodedHistory) -> str | None:
    async with db.transaction() as conn:
        return await history_repair.restore_plans(conn, REF, decoded)


async def settlement(db: Database) -> dict | None:
    async with db.transaction() as conn:
        return await passes.member_settlement(conn, REF, "enrich")


async def test_a_restored_member_gets_its_proven_plan_with_historys_time(db):
    await add_jobs(db, "job-a")
    decoded = history(observed={"job-a"})
    decoded.plans = planned("job-a")
    await restore(db, decoded)
    assert await restore_plans(db, decoded) is None
    member = (await lineage.read_members(db, REF))["job-a"]
    assert (member.plan_state, member.required_steps, member.preparation_workflow_id,
            member.planned_at) == ("planned", STEPS, "prep-job-a", PLANNED_AT)
    # Its child finished a second after the fan-out: with history's time it settled.
    await prep_finished(db, "job-a", "2020-01-01T00:00:06.000Z")
    assert await settlement(db) == {"target_count": 1, "not_reached_count": 1}
    before = await db.fetchall("SELECT * FROM discovery_execution_jobs")
    assert await restore_plans(db, decoded) is None          # a repeat changes nothing
    assert await db.fetchall("SELECT * FROM discovery_execution_jobs") == before


async def test_a_plan_stamped_at_repair_time_would_keep_the_pass_open(db):
    """Why the repair passes history's time: the same finished child, a now-stamped plan."""
    await add_jobs(db, "job-a")
    await restore(db, history(observed={"job-a"}))
    await prep_finished(db, "job-a", "2020-01-01T00:00:06.000Z")
    async with db.transaction() as conn:
        await lineage.record_plan(conn, REF, "job-a", "planned", STEPS, "prep-job-a")
    assert await settlement(db) is None


async def test_an_unproven_plan_stays_pending_and_is_refused_every_time(db):
    await add_jobs(db, "job-a", "job-b")
    decoded = history(observed={"job-a", "job-b"})
    decoded.plans = planned("job-b")
    decoded.unproven_plans = {"job-a": decoder.PLAN_UNPROVEN}
    await restore(db, decoded)
    for _ in range(2):
        assert await restore_plans(db, decoded) == "member_plan_unproven"
        members = await lineage.read_members(db, REF)
        assert (members["job-a"].plan_state, members["job-a"].planned_at) == ("pending", None)
        assert members["job-b"].plan_state == "planned"


async def test_a_recorded_plan_history_contradicts_is_a_conflict_left_unchanged(db):
    await add_jobs(db, "job-a", "job-b")
    async with db.transaction() as conn:
        await lineage.link_jobs(conn, REF, ["job-a", "job-b"], "observed_this_run")
        await lineage.record_plan(conn, REF, "job-a", "planned", ("pdf",), "prep-job-a")
        await lineage.record_plan(conn, REF, "job-b", "not_eligible", reason="user_skipped")
    before = await lineage.read_members(db, REF)
    for proven in ("job-a", "job-b"):
        decoded = history(observed={"job-a", "job-b"})
        decoded.plans = planned(proven)
        assert await restore_plans(db, decoded) == "member_plan_conflict"
        assert await lineage.read_members(db, REF) == before
    # The plan history proves is the one recorded: nothing to say.
    decoded = history(observed={"job-a"})
    decoded.plans = {"job-a": decoder.PlanEvidence(("pdf",), "prep-job-a", PLANNED_AT)}
    assert await restore_plans(db, decoded) is None


async def test_a_failed_execution_fails_its_pending_members_at_the_finalize_time(db):
    await add_jobs(db, "job-a", "job-b")
    decoded = history(observed={"job-a", "job-b"})
    decoded.plans = planned("job-b")
    decoded.planning_failed_at = "2020-01-01T00:00:09.000Z"
    await restore(db, decoded)
    assert await restore_plans(db, decoded) is None
    members = await lineage.read_members(db, REF)
    assert (members["job-a"].plan_state, members["job-a"].not_eligible_reason,
            members["job-a"].planned_at) == ("failed", "planning_failed",
                                              "2020-01-01T00:00:09.000Z")
    assert members["job-b"].plan_state == "planned"   # planned before the failure
