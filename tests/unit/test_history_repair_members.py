"""History repair's membership restore (``history_repair.restore_members``) on a real
SQLite store: members history proves whose row is missing are linked through the native
writer with their proven cohort, existing rows are never changed, a member whose job row
is gone is returned (never invented), and a repeat changes nothing."""

from __future__ import annotations

import pytest

from backend.runtime import history_decoder as decoder
from backend.runtime import history_repair
from backend.store import lineage
from backend.store.db import Database
from backend.temporal.contracts import DiscoveryExecutionRef

REF = DiscoveryExecutionRef(tenant_id="local", discover_workflow_id="discover-local",
                            discover_run_id="run-1")
NOW = "2026-01-01T00:00:00.000Z"


@pytest.fixture
async def db(tmp_path):
    database = await Database.open(tmp_path / "db.sqlite")
    try:
        yield database
    finally:
        await database.close()


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
