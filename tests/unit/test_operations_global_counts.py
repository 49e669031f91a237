"""The incremental global stage counts behind ``global_outside_execution``: the
trigger-maintained totals must equal a full grouping of ``job_stage_states`` after any mix
of inserts, status changes and deletes, and global minus the selected execution's two
cohorts must equal the direct outside-scope count. Real migrated SQLite file."""

from __future__ import annotations

import random

from backend.operations.stage_counts import Scope, global_stage_counts, stage_counts, subtract
from backend.store.stage_count_rows import outside_run_scope as _outside_scope
from backend.store.stage_count_rows import run_member_scope as _member_scope

STAGES = ("enrich", "score", "tailor", "cover", "pdf")
STATUSES = ("pending", "queued", "running", "succeeded", "skipped", "blocked", "failed",
            "exhausted", "canceled", "mystery")
NOW = "2026-01-01T00:00:00.000Z"


async def seed(db, rng: random.Random, jobs: int = 120) -> None:
    async with db.transaction() as conn:
        await conn.execute("INSERT INTO candidate_profiles VALUES ('local', 3, '{}', ?)", (NOW,))
        for run, status in (("run-alive", "running"), ("run-dead", "failed")):
            await conn.execute(
                "INSERT INTO workflow_run_projections (tenant_id, run_id, workflow_id,"
                " workflow_type, status, last_event_id) VALUES ('local', ?, 'prep-x',"
                " 'JobPreparationWorkflow', ?, 1)", (run, status))
        for number in range(jobs):
            job_id = f"job-{number:04d}"
            await conn.execute(
                "INSERT INTO jobs (job_id, tenant_id, canonical_url, url, title, company,"
                " first_source, first_seen_at, last_seen_at) VALUES (?, 'local', ?, ?, 't',"
                " 'c', 'demo', ?, ?)", (job_id, f"u{number}", f"u{number}", NOW, NOW))
            for stage in STAGES:
                if rng.random() < 0.1:
                    continue  # no row: unknown
                await conn.execute(
                    "INSERT INTO job_stage_states (tenant_id, job_id, stage, status,"
                    " owner_run_id, updated_at) VALUES ('local', ?, ?, ?, ?, ?)",
                    (job_id, stage, rng.choice(STATUSES),
                     rng.choice((None, "run-alive", "run-dead", "run-unknown")), NOW))
            for version in range(rng.randint(0, 2)):
                await conn.execute(
                    "INSERT INTO job_scores (tenant_id, job_id, version, score, rationale,"
                    " provider, model, profile_revision, created_at) VALUES ('local', ?, ?, 50,"
                    " 'r', 'offline', 'offline', ?, ?)",
                    (job_id, version + 1, rng.randint(1, 3), NOW))
            cohort = rng.choice((None, None, "observed_this_run", "existing_backlog"))
            if cohort:
                await conn.execute(
                    "INSERT INTO discovery_execution_jobs (tenant_id, discover_workflow_id,"
                    " discover_run_id, job_id, cohort, linked_at) VALUES ('local',"
                    " 'discover-local', 'disc-1', ?, ?, ?)", (job_id, cohort, NOW))


async def churn(db, rng: random.Random) -> None:
    """Status changes, owner changes and deletes, as the pipeline and repairs make them."""
    async with db.transaction() as conn:
        cursor = await conn.execute("SELECT job_id, stage FROM job_stage_states")
        rows = await cursor.fetchall()
        for job_id, stage in rng.sample(rows, len(rows) // 2):
            await conn.execute(
                "UPDATE job_stage_states SET status = ?, owner_run_id = ?, attempt = attempt + 1"
                " WHERE job_id = ? AND stage = ?",
                (rng.choice(STATUSES), rng.choice((None, "run-alive", "run-dead")), job_id,
                 stage))
        for job_id, stage in rng.sample(rows, 15):
            await conn.execute("DELETE FROM job_stage_states WHERE job_id = ? AND stage = ?",
                               (job_id, stage))
        # A stage row that already exists is not inserted twice (ON CONFLICT DO NOTHING).
        await conn.execute(
            "INSERT INTO job_stage_states (tenant_id, job_id, stage, status, updated_at)"
            " SELECT tenant_id, job_id, stage, 'pending', updated_at FROM job_stage_states"
            " LIMIT 10 ON CONFLICT DO NOTHING")
        await conn.execute("UPDATE workflow_run_projections SET status = 'completed'"
                           " WHERE run_id = 'run-alive'")


async def test_incremental_totals_equal_a_full_grouping_through_churn(db):
    rng = random.Random(11)
    await seed(db, rng)
    assert await global_stage_counts(db) == await stage_counts(db, Scope("1 = 1"))
    await churn(db, rng)
    assert await global_stage_counts(db) == await stage_counts(db, Scope("1 = 1"))


async def test_outside_is_global_minus_both_cohorts(db):
    rng = random.Random(5)
    await seed(db, rng)
    await churn(db, rng)
    current = await stage_counts(db, _member_scope("disc-1", "observed_this_run"))
    sweep = await stage_counts(db, _member_scope("disc-1", "existing_backlog"))
    direct = await stage_counts(db, _outside_scope("disc-1"))
    assert subtract(await global_stage_counts(db), current, sweep) == direct
    assert any(block.unknown and block.needs_verification for block in direct.values())


async def test_an_empty_database_counts_zero(db):
    blocks = await global_stage_counts(db)
    assert set(blocks) == set(STAGES)
    assert all(block.eligible == 0 and block.unknown == 0 for block in blocks.values())
