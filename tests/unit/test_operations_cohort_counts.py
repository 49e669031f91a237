"""The incremental per-execution cohort counts behind ``current_execution`` and
``execution_sweep`` (migration 0013): the trigger-maintained
``execution_cohort_stage_counts`` / ``execution_cohort_job_counts`` must equal a full
recount after any mix of stage inserts, status changes and deletes, membership links,
cohort promotions and deletes, and job inserts and deletes; and the blocks the snapshot
serves from them must equal the row-by-row ``stage_counts`` of each cohort scope. The
migration's backfill of an existing database must equal the same recount. Real migrated
SQLite files."""

from __future__ import annotations

import random
import sqlite3

from backend.operations.stage_counts import (
    COHORTS,
    ExecutionKey,
    Scope,
    cohort_scope,
    remaining,
    snapshot_stage_counts,
    stage_counts,
    unresolved_work,
)
from backend.store.db import Database, _migration_files, _split_statements
from backend.store.stage_count_rows import run_member_scope as _member_scope

STAGES = ("enrich", "score", "tailor", "cover", "pdf")
STATUSES = ("pending", "queued", "running", "succeeded", "skipped", "blocked", "failed",
            "exhausted", "canceled", "mystery")
EXECUTIONS = (ExecutionKey("discover-local", "disc-1"), ExecutionKey("discover-local", "disc-2"))
NOW = "2026-01-01T00:00:00.000Z"

RECOUNT_STAGES = (
    "SELECT m.tenant_id, m.discover_workflow_id, m.discover_run_id, m.cohort, s.stage,"
    " s.status, COUNT(*) FROM discovery_execution_jobs m JOIN job_stage_states s"
    " ON s.tenant_id = m.tenant_id AND s.job_id = m.job_id GROUP BY 1, 2, 3, 4, 5, 6")
RECOUNT_JOBS = (
    "SELECT m.tenant_id, m.discover_workflow_id, m.discover_run_id, m.cohort, COUNT(*)"
    " FROM discovery_execution_jobs m JOIN jobs j ON j.job_id = m.job_id"
    " AND j.tenant_id = m.tenant_id GROUP BY 1, 2, 3, 4")
MAINTAINED_STAGES = (
    "SELECT tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status, n"
    " FROM execution_cohort_stage_counts WHERE n != 0")
MAINTAINED_JOBS = (
    "SELECT tenant_id, discover_workflow_id, discover_run_id, cohort, n"
    " FROM execution_cohort_job_counts WHERE n != 0")


def _job(number: int) -> str:
    return f"job-{number:04d}"


def seed_statements(rng: random.Random, jobs: int = 120) -> list[tuple[str, tuple]]:
    """Jobs with stage rows, scores and lineage in one or both executions; some members
    are linked before their job row exists and a few never get one."""
    statements = [
        ("INSERT INTO candidate_profiles VALUES ('local', 3, '{}', ?)", (NOW,)),
        *[("INSERT INTO workflow_run_projections (tenant_id, run_id, workflow_id,"
           " workflow_type, status, last_event_id) VALUES ('local', ?, 'prep-x',"
           " 'JobPreparationWorkflow', ?, 1)", (run, status))
          for run, status in (("run-alive", "running"), ("run-dead", "failed"))],
    ]
    for number in range(jobs):
        job_id = _job(number)
        links = [("INSERT INTO discovery_execution_jobs (tenant_id, discover_workflow_id,"
                  " discover_run_id, job_id, cohort, linked_at) VALUES ('local', ?, ?, ?, ?, ?)",
                  (execution.workflow_id, execution.run_id, job_id, cohort, NOW))
                 for execution in EXECUTIONS
                 if (cohort := rng.choice((None, None, *COHORTS)))]
        early = rng.random() < 0.2
        if early:
            statements += links  # linked before the job row exists
        if number % 17 != 0:  # every 17th member never gets a job row
            statements.append((
                "INSERT INTO jobs (job_id, tenant_id, canonical_url, url, title, company,"
                " first_source, first_seen_at, last_seen_at) VALUES (?, 'local', ?, ?, 't',"
                " 'c', 'demo', ?, ?)", (job_id, f"u{number}", f"u{number}", NOW, NOW)))
            for stage in STAGES:
                if rng.random() < 0.1:
                    continue  # no row: unknown
                statements.append((
                    "INSERT INTO job_stage_states (tenant_id, job_id, stage, status,"
                    " owner_run_id, updated_at) VALUES ('local', ?, ?, ?, ?, ?)",
                    (job_id, stage, rng.choice(STATUSES),
                     rng.choice((None, "run-alive", "run-dead", "run-unknown")), NOW)))
            for version in range(rng.randint(0, 2)):
                statements.append((
                    "INSERT INTO job_scores (tenant_id, job_id, version, score, rationale,"
                    " provider, model, profile_revision, created_at) VALUES ('local', ?, ?,"
                    " 50, 'r', 'offline', 'offline', ?, ?)",
                    (job_id, version + 1, rng.randint(1, 3), NOW)))
        if not early:
            statements += links
    return statements


async def seed(db: Database, rng: random.Random) -> None:
    async with db.transaction() as conn:
        for sql, params in seed_statements(rng):
            await conn.execute(sql, params)


async def _rows(db: Database, sql: str, params: tuple = ()) -> list[tuple]:
    return [tuple(row) for row in await db.fetchall(sql, params)]


async def churn(db: Database, rng: random.Random) -> None:
    """Every write that moves a cohort count, as the pipeline, lineage and repairs make
    them (and some no tool makes, to prove the triggers anyway)."""
    async with db.transaction() as conn:
        stage_rows = list(await (await conn.execute(
            "SELECT job_id, stage FROM job_stage_states")).fetchall())
        for job_id, stage in rng.sample(stage_rows, len(stage_rows) // 2):
            await conn.execute(
                "UPDATE job_stage_states SET status = ?, owner_run_id = ?, attempt = attempt + 1"
                " WHERE job_id = ? AND stage = ?",
                (rng.choice(STATUSES), rng.choice((None, "run-alive", "run-dead")), job_id,
                 stage))
        for job_id, stage in rng.sample(stage_rows, 15):
            await conn.execute("DELETE FROM job_stage_states WHERE job_id = ? AND stage = ?",
                               (job_id, stage))
        # A stage moved to another name (no tool does it; the triggers still follow it).
        job_id, stage = stage_rows[0]
        await conn.execute("UPDATE job_stage_states SET stage = 'renamed' WHERE job_id = ?"
                           " AND stage = ?", (job_id, stage))
        await conn.execute(
            "INSERT INTO job_stage_states (tenant_id, job_id, stage, status, updated_at)"
            " SELECT tenant_id, job_id, stage, 'pending', updated_at FROM job_stage_states"
            " LIMIT 10 ON CONFLICT DO NOTHING")
        members = list(await (await conn.execute(
            "SELECT discover_run_id, job_id, cohort FROM discovery_execution_jobs")).fetchall())
        backlog = [row for row in members if row[2] == "existing_backlog"]
        for run_id, job_id, _cohort in rng.sample(backlog, len(backlog) // 2):
            await conn.execute(  # promotion, as lineage.link_members makes it
                "UPDATE discovery_execution_jobs SET cohort = 'observed_this_run'"
                " WHERE discover_run_id = ? AND job_id = ?", (run_id, job_id))
        for run_id, job_id, _cohort in rng.sample(members, 10):
            await conn.execute("DELETE FROM discovery_execution_jobs WHERE discover_run_id = ?"
                               " AND job_id = ?", (run_id, job_id))
        # A plan update changes no count (and does not fire the cohort triggers).
        await conn.execute("UPDATE discovery_execution_jobs SET plan_state = 'failed',"
                           " not_eligible_reason = 'x' WHERE plan_state = 'pending' AND"
                           " job_id IN (SELECT job_id FROM discovery_execution_jobs LIMIT 5)")
        for job_id in rng.sample([row[1] for row in members], 6):
            await conn.execute("DELETE FROM job_stage_states WHERE job_id = ?", (job_id,))
            await conn.execute("DELETE FROM job_scores WHERE job_id = ?", (job_id,))
            await conn.execute("DELETE FROM jobs WHERE job_id = ?", (job_id,))
        # New members of a new job, then the job and its stage rows after them.
        await conn.execute(
            "INSERT INTO discovery_execution_jobs (tenant_id, discover_workflow_id,"
            " discover_run_id, job_id, cohort, linked_at) VALUES ('local', 'discover-local',"
            " 'disc-1', 'job-late', 'existing_backlog', ?)", (NOW,))
        await conn.execute(
            "INSERT INTO jobs (job_id, tenant_id, canonical_url, url, title, company,"
            " first_source, first_seen_at, last_seen_at) VALUES ('job-late', 'local', 'ul',"
            " 'ul', 't', 'c', 'demo', ?, ?)", (NOW, NOW))
        await conn.execute(
            "INSERT INTO job_stage_states (tenant_id, job_id, stage, status, owner_run_id,"
            " updated_at) VALUES ('local', 'job-late', 'score', 'running', 'run-alive', ?)",
            (NOW,))
        await conn.execute("UPDATE workflow_run_projections SET status = 'completed'"
                           " WHERE run_id = 'run-alive'")


async def assert_maintained_equal_recount(db: Database) -> None:
    assert sorted(await _rows(db, MAINTAINED_STAGES)) == sorted(await _rows(db, RECOUNT_STAGES))
    assert sorted(await _rows(db, MAINTAINED_JOBS)) == sorted(await _rows(db, RECOUNT_JOBS))
    assert not await _rows(db, "SELECT * FROM execution_cohort_stage_counts WHERE n < 0")
    assert not await _rows(db, "SELECT * FROM execution_cohort_job_counts WHERE n < 0")


async def assert_blocks_equal_row_by_row(db: Database) -> None:
    for execution in EXECUTIONS:
        counts = await snapshot_stage_counts(db, execution)
        assert counts.everything == await stage_counts(db, Scope("1 = 1"))
        unresolved = 0
        for cohort in COHORTS:
            direct = await stage_counts(db, cohort_scope(execution, cohort))
            assert counts.cohorts[cohort] == direct, (execution, cohort)
            # The run-id-only scope the snapshot used before (run ids are unique).
            assert direct == await stage_counts(db, _member_scope(execution.run_id, cohort))
            unresolved += sum(remaining(block) for block in direct.values())
        assert await unresolved_work(db, execution) == unresolved


async def test_maintained_cohort_counts_equal_a_full_recount_through_churn(db):
    rng = random.Random(23)
    await seed(db, rng)
    await assert_maintained_equal_recount(db)
    await assert_blocks_equal_row_by_row(db)
    await churn(db, rng)
    await assert_maintained_equal_recount(db)
    await assert_blocks_equal_row_by_row(db)
    blocks = (await snapshot_stage_counts(db, EXECUTIONS[0])).cohorts
    # The churn left every kind of count in play (not a vacuous equality).
    assert any(block.needs_verification for block in blocks["observed_this_run"].values())
    assert any(block.unknown for block in blocks["existing_backlog"].values())
    assert blocks["observed_this_run"]["score"].stale > 0


async def test_stale_scores_per_cohort_on_every_path(db):
    """No stale score at all, fewer stale scores than cohort jobs (read from the stale
    side) and more (read cohort by cohort): each equals the row-by-row count."""
    rng = random.Random(3)
    await seed(db, rng)
    for revision in (1, 3, 4):  # scores carry revisions 1..3
        async with db.transaction() as conn:
            await conn.execute("UPDATE candidate_profiles SET revision = ?", (revision,))
        if revision == 1:
            assert (await snapshot_stage_counts(db, None)).everything["score"].stale == 0
        await assert_blocks_equal_row_by_row(db)
    async with db.transaction() as conn:  # many stale scores, one small cohort
        await conn.execute("DELETE FROM discovery_execution_jobs WHERE discover_run_id = 'disc-2'"
                           " AND job_id NOT IN (SELECT job_id FROM job_scores LIMIT 3)")
    await assert_maintained_equal_recount(db)
    await assert_blocks_equal_row_by_row(db)


async def test_an_execution_without_lineage_counts_zero(db):
    counts = await snapshot_stage_counts(db, ExecutionKey("discover-local", "nothing"))
    for cohort in COHORTS:
        assert all(block.eligible == 0 and block.unknown == 0
                   for block in counts.cohorts[cohort].values())
    assert await unresolved_work(db, ExecutionKey("discover-local", "nothing")) == 0


async def test_the_migration_backfills_an_existing_database(tmp_path):
    """A database that already holds jobs, stage rows and lineage when 0013 arrives."""
    path = tmp_path / "jobctrl.db"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY,"
                 " name TEXT NOT NULL, applied_at TEXT NOT NULL)")
    for version, name, script in _migration_files():
        if version < 13:
            for statement in _split_statements(script):
                conn.execute(statement)
            conn.execute("INSERT INTO schema_migrations VALUES (?, ?, ?)", (version, name, NOW))
    for sql, params in seed_statements(random.Random(8)):
        conn.execute(sql, params)
    conn.close()
    db = await Database.open(path)
    try:
        assert await _rows(db, "SELECT COUNT(*) FROM execution_cohort_stage_counts") != [(0,)]
        await assert_maintained_equal_recount(db)
        await assert_blocks_equal_row_by_row(db)
    finally:
        await db.close()
