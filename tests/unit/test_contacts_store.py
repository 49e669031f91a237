"""Contact research's canonical rows and their projections, on a real migrated SQLite."""

from __future__ import annotations

import pytest

from backend.config import TENANT_ID
from backend.domain.contacts import Candidate, SourceAttempt
from backend.projections.contacts import job_contacts, rebuild_contacts, refresh_contacts
from backend.store import contacts as store

JOB = "job_" + "a" * 24


async def add_job(db, job_id: str = JOB) -> None:
    async with db.transaction() as conn:
        await conn.execute(
            "INSERT INTO jobs (job_id, tenant_id, canonical_url, url, title, company,"
            " first_source, first_seen_at, last_seen_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (job_id, TENANT_ID, f"https://j.example/{job_id}", f"https://j.example/{job_id}",
             "Backend Engineer", "Harborlight", "test", "2026-01-01T00:00:00.000Z",
             "2026-01-01T00:00:00.000Z"))


MARIA = Candidate(name="Maria Lopez", title="Recruiter", email="maria@h.example",
                  source_url="https://j.example", confidence=0.9, evidence="Contact Maria Lopez.")
INBOX = Candidate(email="jobs@h.example", confidence=0.4, evidence="Write to jobs@h.example.")
ATTEMPTS = [SourceAttempt(source_id="posting_text", kind="posting_text", url="https://j.example",
                          status="used", chars=120)]


async def run_task(db, *, outcome="completed", candidates=(MARIA, INBOX), run_id="run-1"):
    async with db.transaction() as conn:
        task, created = await store.request_task(conn, JOB)
        assert created
        await store.mark_started(conn, task, run_id=run_id)
        await store.save_source_attempts(conn, task.task_id, ATTEMPTS)
        task = await store.read_task(conn, task.task_id)
        if outcome == "completed":
            await store.commit_candidates(conn, task, company="Harborlight",
                                          candidates=list(candidates), provider="offline",
                                          model="offline-heuristic", run_id=run_id)
        task = await store.read_task(conn, task.task_id)
        await store.finish_task(conn, task, run_id=run_id, outcome=outcome,
                                error_code=None if outcome == "completed" else "budget_exceeded")
    return task


async def test_a_job_has_one_active_task_and_numbered_workflow_ids(db):
    await add_job(db)
    async with db.transaction() as conn:
        first, created = await store.request_task(conn, JOB)
        again, created_again = await store.request_task(conn, JOB)
    assert created and not created_again and again.task_id == first.task_id
    assert first.workflow_id == f"contacts-{JOB}-1" and first.status == "queued"
    async with db.transaction() as conn:
        await store.finish_task(conn, first, run_id="", outcome="failed",
                                error_code="workflow_start_failed")
        second, created = await store.request_task(conn, JOB)
    assert created and second.seq == 2 and second.workflow_id == f"contacts-{JOB}-2"


async def test_completed_task_is_projected_with_its_candidates(db):
    await add_job(db)
    task = await run_task(db)
    await refresh_contacts(db)
    view = await job_contacts(db, JOB)
    [projected] = view["tasks"]
    assert projected["taskId"] == task.task_id and projected["status"] == "completed"
    assert projected["runId"] == "run-1" and projected["candidateCount"] == 2
    assert projected["sourceAttempts"][0]["sourceId"] == "posting_text"
    assert projected["failure"] is None and projected["startedAt"] and projected["finishedAt"]
    names = [(c["name"], c["email"], c["confidence"]) for c in view["candidates"]]
    assert names == [("Maria Lopez", "maria@h.example", 0.9), (None, "jobs@h.example", 0.4)]
    rows = await db.fetchall("SELECT attribute, value FROM contact_attributes ORDER BY 1, 2")
    assert [tuple(r) for r in rows] == [("email", "jobs@h.example"), ("email", "maria@h.example"),
                                        ("source_url", "https://j.example"),
                                        ("title", "Recruiter")]


async def test_a_failed_task_keeps_its_code_and_attempts(db):
    await add_job(db)
    await run_task(db, outcome="failed")
    await refresh_contacts(db)
    view = await job_contacts(db, JOB)
    assert view["tasks"][0]["status"] == "failed"
    assert view["tasks"][0]["failure"] == {"code": "budget_exceeded"}
    assert view["tasks"][0]["sourceAttempts"][0]["status"] == "used"
    assert view["candidates"] == []


async def test_finishing_twice_records_one_terminal_event(db):
    await add_job(db)
    task = await run_task(db)
    async with db.transaction() as conn:
        await store.finish_task(conn, await store.read_task(conn, task.task_id), run_id="run-1",
                                outcome="failed", error_code="late")
    row = await db.fetchone("SELECT COUNT(*) FROM job_events WHERE type IN"
                            " ('ContactResearchCompleted', 'ContactResearchFailed')")
    assert row[0] == 1


async def test_a_second_task_updates_the_same_contact_row(db):
    await add_job(db)
    await run_task(db, candidates=(MARIA,))
    newer = MARIA.model_copy(update={"title": "Lead Recruiter", "confidence": 0.7})
    await run_task(db, candidates=(newer,), run_id="run-2")
    await refresh_contacts(db)
    view = await job_contacts(db, JOB)
    assert [t["status"] for t in view["tasks"]] == ["completed", "completed"]
    [maria] = view["candidates"]
    assert maria["title"] == "Lead Recruiter", "the newest facts win"
    assert (await db.fetchone("SELECT COUNT(*) FROM contacts"))[0] == 1


@pytest.mark.parametrize("page_size", [1, 500])
async def test_refresh_is_idempotent_and_a_rebuild_gives_the_same_rows(db, page_size):
    await add_job(db)
    await run_task(db)
    await run_task(db, outcome="failed", run_id="run-2")
    await refresh_contacts(db, page_size=page_size)
    first = await job_contacts(db, JOB)
    await refresh_contacts(db, page_size=page_size)
    assert await job_contacts(db, JOB) == first
    await rebuild_contacts(db, page_size=page_size)
    assert await job_contacts(db, JOB) == first
