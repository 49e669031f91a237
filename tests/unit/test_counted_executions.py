"""Migration 0014: cohort counts are kept by trigger only for the executions in
``counted_executions`` (the newest three per tenant, and any whose Discover run the run
projection shows running), so a stage write touches O(bound) count rows however many
Discovers saw the job; every other execution's counts are derived from its members on
read. Both paths must equal the row-by-row ``stage_counts`` of each cohort scope. Real
migrated SQLite files."""

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
from backend.store.db import Database, _migration_files, migrate
from tests.unit.test_operations_cohort_counts import (
    MAINTAINED_JOBS,
    MAINTAINED_STAGES,
    RECOUNT_JOBS,
    RECOUNT_STAGES,
    STAGES,
    STATUSES,
    churn,
)

WORKFLOW = "discover-local"
RUNS = tuple(f"disc-{number}" for number in range(1, 7))   # linked in this order
NOW = "2026-01-01T00:00:00.000Z"
COUNTED_KEY = ("SELECT 1 FROM counted_executions c WHERE c.tenant_id = x.tenant_id"
               " AND c.discover_workflow_id = x.discover_workflow_id"
               " AND c.discover_run_id = x.discover_run_id")


def _in_counted(sql: str) -> str:
    """A recount / maintained query restricted to counted executions."""
    return f"SELECT * FROM ({sql}) x WHERE EXISTS ({COUNTED_KEY})"


def job_statements(rng: random.Random, jobs: int) -> list[tuple[str, tuple]]:
    statements = [
        ("INSERT INTO candidate_profiles VALUES ('local', 3, '{}', ?)", (NOW,)),
        ("INSERT INTO workflow_run_projections (tenant_id, run_id, workflow_id, workflow_type,"
         " status, last_event_id) VALUES ('local', 'run-alive', 'prep-x',"
         " 'JobPreparationWorkflow', 'running', 1)", ()),
    ]
    for number in range(jobs):
        job_id = f"job-{number:04d}"
        statements.append((
            "INSERT INTO jobs (job_id, tenant_id, canonical_url, url, title, company,"
            " first_source, first_seen_at, last_seen_at) VALUES (?, 'local', ?, ?, 't', 'c',"
            " 'demo', ?, ?)", (job_id, f"u{number}", f"u{number}", NOW, NOW)))
        for stage in STAGES:
            if rng.random() < 0.9:
                statements.append((
                    "INSERT INTO job_stage_states (tenant_id, job_id, stage, status,"
                    " owner_run_id, updated_at) VALUES ('local', ?, ?, ?, ?, ?)",
                    (job_id, stage, rng.choice(STATUSES), rng.choice((None, "run-alive")),
                     NOW)))
        if rng.random() < 0.5:
            statements.append((
                "INSERT INTO job_scores (tenant_id, job_id, version, score, rationale,"
                " provider, model, profile_revision, created_at) VALUES ('local', ?, 1, 50,"
                " 'r', 'offline', 'offline', ?, ?)", (job_id, rng.randint(1, 3), NOW)))
    return statements


def member_statements(rng: random.Random, run_id: str, order: int, jobs: int
                      ) -> list[tuple[str, tuple]]:
    """One Discover execution linking most jobs again (as re-discovering a board does)."""
    return [("INSERT INTO discovery_execution_jobs (tenant_id, discover_workflow_id,"
             " discover_run_id, job_id, cohort, linked_at) VALUES ('local', ?, ?, ?, ?, ?)",
             (WORKFLOW, run_id, f"job-{number:04d}", rng.choice(COHORTS),
              f"2026-01-{order:02d}T00:00:00.000Z"))
            for number in range(jobs) if rng.random() < 0.8]


def running_discover(run_id: str, status: str = "running") -> tuple[str, tuple]:
    return ("INSERT INTO workflow_run_projections (tenant_id, run_id, workflow_id,"
            " workflow_type, status, last_event_id) VALUES ('local', ?, ?, 'DiscoverWorkflow',"
            " ?, 1) ON CONFLICT (tenant_id, run_id) DO UPDATE SET status = excluded.status",
            (run_id, WORKFLOW, status))


async def run(db: Database, statements: list[tuple[str, tuple]]) -> None:
    async with db.transaction() as conn:
        for sql, params in statements:
            await conn.execute(sql, params)


async def _rows(db: Database, sql: str, params: tuple = ()) -> list[tuple]:
    return [tuple(row) for row in await db.fetchall(sql, params)]


async def counted(db: Database) -> set[str]:
    return {row[0] for row in await _rows(db, "SELECT discover_run_id FROM counted_executions")}


async def assert_counted_equal_recount(db: Database) -> None:
    """Counted executions' rows equal a recount; no other execution has count rows."""
    assert (sorted(await _rows(db, MAINTAINED_STAGES))
            == sorted(await _rows(db, _in_counted(RECOUNT_STAGES))))
    assert (sorted(await _rows(db, MAINTAINED_JOBS))
            == sorted(await _rows(db, _in_counted(RECOUNT_JOBS))))
    for table in ("execution_cohort_stage_counts", "execution_cohort_job_counts"):
        assert not await _rows(db, f"SELECT * FROM {table} x WHERE NOT EXISTS ({COUNTED_KEY})")
        assert not await _rows(db, f"SELECT * FROM {table} WHERE n < 0")


async def assert_every_execution_equals_row_by_row(db: Database, runs) -> None:
    for run_id in runs:
        execution = ExecutionKey(WORKFLOW, run_id)
        counts = await snapshot_stage_counts(db, execution)
        assert counts.everything == await stage_counts(db, Scope("1 = 1"))
        unresolved = 0
        for cohort in COHORTS:
            direct = await stage_counts(db, cohort_scope(execution, cohort))
            assert counts.cohorts[cohort] == direct, (run_id, cohort)
            unresolved += sum(remaining(block) for block in direct.values())
        assert await unresolved_work(db, execution) == unresolved, run_id


async def test_counted_and_retired_executions_equal_the_scoped_recount(db):
    rng = random.Random(41)
    await run(db, job_statements(rng, 80))
    await run(db, [running_discover("disc-2")])  # an old Discover still running
    for order, run_id in enumerate(RUNS, start=1):
        await run(db, member_statements(rng, run_id, order, 80))
    # The newest three by first link, plus the running one; disc-1 and disc-3 retired.
    assert await counted(db) == {"disc-2", "disc-4", "disc-5", "disc-6"}
    await assert_counted_equal_recount(db)
    await assert_every_execution_equals_row_by_row(db, RUNS)
    # Stage changes, deletes, promotions and a late member of retired disc-1.
    await churn(db, rng)
    await assert_counted_equal_recount(db)
    await assert_every_execution_equals_row_by_row(db, RUNS)
    retired = (await snapshot_stage_counts(db, ExecutionKey(WORKFLOW, "disc-1"))).cohorts
    assert retired["existing_backlog"]["score"].eligible > 0   # not a vacuous equality
    assert any(block.stale for block in retired["observed_this_run"].values())
    # Once disc-2 ends, the next admission retires it (and disc-4, now fourth newest).
    await run(db, [running_discover("disc-2", "completed"),
                   *member_statements(rng, "disc-7", 7, 80)])
    assert await counted(db) == {"disc-5", "disc-6", "disc-7"}
    await assert_counted_equal_recount(db)
    await assert_every_execution_equals_row_by_row(db, (*RUNS, "disc-7"))


def _flip_changes(conn: sqlite3.Connection, job_id: str) -> int:
    """Rows changed (triggers included) by one stage status change of one job."""
    before = conn.total_changes
    conn.execute("UPDATE job_stage_states SET status = CASE status WHEN 'queued' THEN"
                 " 'succeeded' ELSE 'queued' END WHERE job_id = ? AND stage = 'score'",
                 (job_id,))
    return conn.total_changes - before


def test_a_stage_write_touches_count_rows_of_at_most_three_executions(tmp_path):
    path = tmp_path / "jobctrl.db"
    migrate(path)
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        for sql, params in job_statements(random.Random(5), 1):
            conn.execute(sql, params)
        conn.execute("INSERT OR REPLACE INTO job_stage_states (tenant_id, job_id, stage,"
                     " status, updated_at) VALUES ('local', 'job-0000', 'score', 'queued', ?)",
                     (NOW,))
        changes = []
        for order in range(1, 41):
            conn.execute("INSERT INTO discovery_execution_jobs (tenant_id,"
                         " discover_workflow_id, discover_run_id, job_id, cohort, linked_at)"
                         " VALUES ('local', ?, ?, 'job-0000', 'observed_this_run', ?)",
                         (WORKFLOW, f"disc-{order}", NOW))
            changes.append(_flip_changes(conn, "job-0000"))
        # The stage row and 0012's global -1 / +1, plus a -1 and a +1 upsert per counted
        # execution: 3 + 2 * n up to three executions, then flat at 3 + 2 * 3 (0013 kept
        # growing: 3 + 2 * 40 at the last change).
        assert changes[:3] == [5, 7, 9]
        assert set(changes[3:]) == {9}
        assert conn.execute("SELECT COUNT(DISTINCT discover_run_id) FROM"
                            " execution_cohort_stage_counts").fetchone() == (3,)
    finally:
        conn.close()


async def test_the_migration_keeps_the_newest_three_and_drops_the_rest(tmp_path):
    """A database at 0013 with nine executions, all counted by 0013's triggers."""
    path = tmp_path / "jobctrl.db"
    migrate(path, migrations=[m for m in _migration_files() if m[0] <= 13])
    rng = random.Random(17)
    runs = tuple(f"disc-{number}" for number in range(1, 10))
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        for sql, params in job_statements(rng, 60):
            conn.execute(sql, params)
        conn.execute(*running_discover("disc-1"))  # the oldest is still running
        for order, run_id in enumerate(runs, start=1):
            for sql, params in member_statements(rng, run_id, order, 60):
                conn.execute(sql, params)
        assert conn.execute("SELECT COUNT(DISTINCT discover_run_id) FROM"
                            " execution_cohort_job_counts").fetchone() == (9,)
    finally:
        conn.close()
    assert migrate(path, migrations=[m for m in _migration_files() if m[0] <= 14]) == [14]
    db = await Database.open(path)
    try:
        assert await counted(db) == {"disc-1", "disc-7", "disc-8", "disc-9"}
        await assert_counted_equal_recount(db)
        await assert_every_execution_equals_row_by_row(db, runs)
        # The next Discover enters the set and retires the oldest finished one.
        await run(db, member_statements(rng, "disc-10", 10, 60))
        assert await counted(db) == {"disc-1", "disc-8", "disc-9", "disc-10"}
        await assert_counted_equal_recount(db)
        await assert_every_execution_equals_row_by_row(db, (*runs, "disc-10"))
    finally:
        await db.close()


def discovery_run(run_id: str, day: int, status: str) -> tuple[str, tuple]:
    return ("INSERT INTO discovery_runs (discover_run_id, tenant_id, discover_workflow_id,"
            " status, families_json, progress_total, started_at) VALUES (?, 'local', ?, ?,"
            " '[]', 1, ?) ON CONFLICT (discover_run_id) DO UPDATE SET status = excluded.status",
            (run_id, WORKFLOW, status, f"2026-02-{day:02d}T00:00:00.000Z"))


async def test_the_set_follows_discover_start_not_link_order(db):
    """The newest Discover links its first member before older ones link theirs (a swept
    backlog job, as bench/operations_scale.py seeds them): the set still keeps the newest
    three by discovery_runs.started_at, and keeps an old Discover that discovery_runs shows
    running until it ends."""
    rng = random.Random(9)
    await run(db, job_statements(rng, 40))
    runs = ("old-running", *(f"d{day}" for day in range(2, 8)))
    await run(db, [discovery_run("old-running", 1, "running"),
                   *[discovery_run(f"d{day}", day, "completed") for day in range(2, 8)]])
    for run_id in ("d7", *runs[:-1]):   # the newest first, then oldest to newer
        await run(db, member_statements(rng, run_id, 1, 40))
    assert await counted(db) == {"old-running", "d5", "d6", "d7"}
    await assert_counted_equal_recount(db)
    await assert_every_execution_equals_row_by_row(db, runs)
    await run(db, [discovery_run("old-running", 1, "completed"), discovery_run("d8", 8, "running"),
                   *member_statements(rng, "d8", 8, 40)])
    assert await counted(db) == {"d6", "d7", "d8"}
    await churn_stages(db, rng)
    await assert_counted_equal_recount(db)
    await assert_every_execution_equals_row_by_row(db, (*runs, "d8"))


async def churn_stages(db: Database, rng: random.Random) -> None:
    async with db.transaction() as conn:
        rows = list(await (await conn.execute(
            "SELECT job_id, stage FROM job_stage_states")).fetchall())
        for job_id, stage in rng.sample(rows, len(rows) // 2):
            await conn.execute("UPDATE job_stage_states SET status = ? WHERE job_id = ?"
                               " AND stage = ?", (rng.choice(STATUSES), job_id, stage))
