"""A research task whose run closed outside its own workflow code (terminated, timed out,
canceled before its close activity ran) is closed by the reconciler's backstop exactly
once, with a bounded code; a closed task never gains late candidates or attempts."""

from __future__ import annotations

import pytest

from backend.config import TENANT_ID
from backend.domain.contacts import SourceAttempt
from backend.projections.contacts import job_contacts, refresh_contacts
from backend.store import contacts as store
from tests.unit.test_contacts_store import ATTEMPTS, JOB, MARIA, add_job

WORKFLOW = f"contacts-{JOB}-1"


async def started_task(db, run_id: str = "run-1") -> store.TaskRow:
    await add_job(db)
    async with db.transaction() as conn:
        task, _ = await store.request_task(conn, JOB)
        await store.mark_started(conn, task, run_id=run_id)
        await store.save_source_attempts(conn, task.task_id, ATTEMPTS)
        await conn.execute(
            "INSERT INTO llm_spend_reservations (tenant_id, run_id, workflow_id, day,"
            " reserved_micro_usd, created_at) VALUES (?, ?, ?, '2026-01-01', 22000,"
            " '2026-01-01T00:00:00.000Z')", (TENANT_ID, run_id, WORKFLOW))
        return await store.read_task(conn, task.task_id)


async def close(db, *, run_id="run-1", outcome="failed", error_code="terminated"):
    async with db.transaction() as conn:
        return await store.close_for_closed_run(conn, workflow_id=WORKFLOW, run_id=run_id,
                                                outcome=outcome, error_code=error_code)


async def terminal_events(db) -> list[tuple]:
    rows = await db.fetchall(
        "SELECT type, json_extract(payload_json, '$.status'),"
        " json_extract(payload_json, '$.errorCode') FROM job_events"
        " WHERE type IN ('ContactResearchCompleted', 'ContactResearchFailed') ORDER BY id")
    return [tuple(row) for row in rows]


async def test_a_terminated_run_closes_its_task_once(db):
    task = await started_task(db)
    closed = await close(db)
    assert closed is not None and closed.task_id == task.task_id
    assert (closed.status, closed.failure_code) == ("failed", "terminated")
    assert closed.finished_at is not None
    assert await close(db) is None, "a second pass finds nothing open"
    assert await terminal_events(db) == [("ContactResearchFailed", "failed", "terminated")]
    released = await db.fetchone("SELECT released_at FROM llm_spend_reservations"
                                 " WHERE run_id = 'run-1'")
    assert released[0] is not None, "a closed run holds no spend reservation"
    await refresh_contacts(db)
    [projected] = (await job_contacts(db, JOB))["tasks"]
    assert projected["status"] == "failed" and projected["failure"] == {"code": "terminated"}
    assert projected["finishedAt"] and projected["sourceAttempts"][0]["sourceId"] == (
        "posting_text")


async def test_a_task_owned_by_another_run_or_already_closed_is_left_alone(db):
    await started_task(db, run_id="run-2")
    assert await close(db, run_id="run-1") is None
    task = (await db.fetchone("SELECT status FROM contact_research_tasks"))[0]
    assert task == "running"
    async with db.transaction() as conn:
        current = await store.read_task(conn, store.research_task_id(JOB, 1))
        await store.finish_task(conn, current, run_id="run-2", outcome="canceled")
    assert await close(db, run_id="run-2", outcome="failed") is None
    assert await terminal_events(db) == [("ContactResearchFailed", "canceled", "canceled")]


@pytest.mark.parametrize(("outcome", "code", "extracted", "expected"), [
    ("failed", "terminated", False, ("failed", "terminated")),
    ("failed", "timed_out", False, ("failed", "timed_out")),
    ("failed", "something the server made up", False, ("failed", "workflow_failed")),
    ("canceled", None, False, ("canceled", "canceled")),
    ("completed", None, True, ("completed", None)),
    ("completed", None, False, ("failed", "closed_without_result")),
])
def test_closed_run_outcomes_are_bounded(outcome, code, extracted, expected):
    assert store.closed_run_outcome(outcome, code, extracted=extracted) == expected
    assert expected[1] is None or expected[1] in store.CLOSED_RUN_CODES


async def test_a_closed_task_gains_no_late_candidates_or_attempts(db):
    task = await started_task(db)
    await close(db, outcome="canceled", error_code=None)
    late = [SourceAttempt(source_id="team", kind="web_page", url="https://t.example",
                          status="fetched", chars=10)]
    async with db.transaction() as conn:
        current = await store.read_task(conn, task.task_id)
        await store.save_source_attempts(conn, task.task_id, late)
        committed = await store.commit_candidates(
            conn, current, company="Harborlight", candidates=[MARIA], provider="offline",
            model="offline-heuristic", run_id="run-1")
    assert committed is False
    after = await db.fetchone("SELECT status, extracted_at, source_attempts_json FROM"
                              " contact_research_tasks")
    assert after[0] == "canceled" and after[1] is None and '"team"' not in after[2]
    for table in ("contact_candidates", "contacts", "contact_attributes"):
        assert (await db.fetchone(f"SELECT COUNT(*) FROM {table}"))[0] == 0
    assert (await db.fetchone("SELECT COUNT(*) FROM job_events"
                              " WHERE type = 'ContactCandidateFound'"))[0] == 0
