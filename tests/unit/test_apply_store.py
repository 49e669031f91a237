"""apply_run_projections fold, the claim rules (settings re-read at every claim, one live
attempt), rebuilds from the event log, and the submit-intent row."""

from __future__ import annotations

import sqlite3

import pytest

from backend.domain import events as ev
from backend.projections.apply_runs import read_state, rebuild_apply_runs
from backend.store import apply as store
from backend.store import materials


async def add_prepared_job(db, tmp_path, n: int, *, score: int = 80, apply_url: str | None =
                           "https://acme.example/apply", html: str = "<p>Role</p>") -> str:
    job_id = f"job_{n:024x}"
    resume, cover = tmp_path / f"{n}-resume.pdf", tmp_path / f"{n}-cover.pdf"
    resume.write_bytes(b"%PDF-1.4 r")
    cover.write_bytes(b"%PDF-1.4 c")
    async with db.transaction() as conn:
        await conn.execute(
            "INSERT INTO jobs (job_id, tenant_id, canonical_url, url, apply_url, title, company,"
            " description_html, first_source, first_seen_at, last_seen_at) VALUES"
            " (?, 'local', ?, ?, ?, 'Engineer', 'Acme', ?, 'test', ?, ?)",
            (job_id, f"https://acme.example/{n}", f"https://acme.example/{n}", apply_url, html,
             f"2026-01-01T00:00:{n:02d}.000Z", "2026-01-01T00:00:00.000Z"))
        await materials.insert_score(conn, job_id, version=1, score=score, rationale="r",
                                     matched=[], missing=[], provider="offline", model="m",
                                     profile_revision=1, workflow_id="w", run_id="r")
        for kind, path in (("resume_pdf", resume), ("cover_letter_pdf", cover)):
            await materials.insert_artifact(conn, job_id, kind=kind, generation=1,
                                            path=str(path), size=10, pages=1, sha256="x")
    return job_id


async def claim(db, run: str, poll: int = 0, **settings) -> list[str]:
    options = {"limit": 5, "approval_required": True, "min_fit_score": 0, **settings}
    async with db.transaction() as conn:
        return await store.claim_jobs(conn, workflow_id="apply-auto-local", run_id=run,
                                      poll=poll, **options)


async def state(db, job_id):
    async with db.transaction() as conn:
        return await read_state(conn, job_id)


async def test_with_approval_required_only_approved_jobs_are_claimed(db, tmp_path):
    a = await add_prepared_job(db, tmp_path, 1)
    b = await add_prepared_job(db, tmp_path, 2)
    assert await claim(db, "run-1") == []
    async with db.transaction() as conn:
        await store.approve(conn, b, recipient=None, attachments=[])
    assert await claim(db, "run-1") == [b]
    current = await state(db, b)
    assert current.status == "in_progress" and current.run_id == "run-1"
    assert (await state(db, a)) is None  # untouched: still awaiting approval


async def test_the_approval_setting_is_read_at_each_claim(db, tmp_path):
    a = await add_prepared_job(db, tmp_path, 1)
    assert await claim(db, "run-1", approval_required=True) == []
    assert await claim(db, "run-1", poll=1, approval_required=False) == [a]


async def test_one_live_attempt_and_a_retried_claim_returns_what_it_holds(db, tmp_path):
    a = await add_prepared_job(db, tmp_path, 1)
    assert await claim(db, "run-1", approval_required=False) == [a]
    assert await claim(db, "run-2", approval_required=False) == []  # live in run-1
    assert await claim(db, "run-1", approval_required=False) == [a]  # retry of run-1
    async with db.transaction() as conn:
        assert await store.release_run_claims(conn, workflow_id="w", run_id="run-1") == [a]
    assert (await state(db, a)).status == "awaiting_approval"
    assert await claim(db, "run-2", approval_required=False) == [a]


async def test_threshold_concurrency_and_user_marks_are_respected(db, tmp_path):
    low = await add_prepared_job(db, tmp_path, 1, score=40)
    high = await add_prepared_job(db, tmp_path, 2, score=90)
    mid = await add_prepared_job(db, tmp_path, 3, score=70)
    async with db.transaction() as conn:
        await conn.execute("UPDATE jobs SET user_status = 'skipped' WHERE job_id = ?", (mid,))
    assert await claim(db, "r", approval_required=False, min_fit_score=50, limit=5) == [high]
    async with db.transaction() as conn:
        await store.release_run_claims(conn, workflow_id="w", run_id="r")
    assert await claim(db, "r2", approval_required=False, min_fit_score=0, limit=1) == [high]
    assert low not in await claim(db, "r2", approval_required=False, min_fit_score=0, limit=1)


async def test_a_job_parked_for_approval_is_not_reclaimed_until_approved(db, tmp_path):
    a = await add_prepared_job(db, tmp_path, 1)
    assert await claim(db, "r", approval_required=False) == [a]
    async with db.transaction() as conn:
        await store.record_apply_event(conn, ev.ApplyAwaitingApproval(
            job_id=a, workflow_id="w", run_id="r", reason="email_requires_approval"))
    assert await claim(db, "r", poll=1, approval_required=False) == []
    async with db.transaction() as conn:
        await store.approve(conn, a, recipient="hr@acme.example", attachments=["x"])
    assert await claim(db, "r", poll=2, approval_required=False) == [a]


async def test_the_fold_walks_the_lifecycle_and_rebuilds_identically(db, tmp_path):
    a = await add_prepared_job(db, tmp_path, 1)
    b = await add_prepared_job(db, tmp_path, 2)
    async with db.transaction() as conn:
        await store.approve(conn, a, recipient=None, attachments=[])
    await claim(db, "r")
    async with db.transaction() as conn:
        await store.record_apply_event(conn, ev.ApplyPacketReady(
            job_id=a, workflow_id="w", run_id="r", target_kind="browser_form",
            target_url="https://acme.example/apply", resume_pdf="/r.pdf",
            cover_letter_pdf="/c.pdf", answers={"fullName": "Ada"}))
        await store.record_apply_event(conn, ev.ApplyRejected(job_id=b, reason="not for me"))
    parked = await state(db, a)
    assert parked.status == "awaiting_manual_completion" and parked.run_id is None
    assert parked.packet["answers"] == {"fullName": "Ada"}
    async with db.transaction() as conn:
        await store.record_apply_event(conn, ev.ApplyMarkedApplied(job_id=a))
        # A late cancel never reopens a finished apply.
        await store.record_apply_event(conn, ev.ApplyCanceled(job_id=a))
    before = {j: await state(db, j) for j in (a, b)}
    assert before[a].status == "applied" and before[b].status == "rejected"
    assert await rebuild_apply_runs(db) == 2
    assert {j: await state(db, j) for j in (a, b)} == before


async def test_one_submit_intent_per_job_ever(db, tmp_path):
    a = await add_prepared_job(db, tmp_path, 1)
    async with db.transaction() as conn:
        await store.create_intent(conn, job_id=a, workflow_id="w", run_id="r1",
                                  recipient="hr@acme.example", attachments=["/r.pdf"])
    with pytest.raises(sqlite3.IntegrityError):
        async with db.transaction() as conn:
            await store.create_intent(conn, job_id=a, workflow_id="w", run_id="r2",
                                      recipient="hr@acme.example", attachments=["/r.pdf"])
    async with db.transaction() as conn:
        await store.mark_intent_sent(conn, a, "<m@id>")
        intent = await store.read_intent(conn, a)
    assert intent.status == "sent" and intent.message_id == "<m@id>" and intent.run_id == "r1"


async def queue_item(db, job_id) -> store.PreparedJob:
    async with db.transaction() as conn:
        [job] = await store.prepared_jobs(conn, min_fit_score=0, job_id=job_id)
    return job


async def set_artifact_time(db, job_id: str, generation: int, created_at: str) -> None:
    async with db.transaction() as conn:
        await conn.execute("UPDATE job_artifacts SET created_at = ? WHERE job_id = ?"
                           " AND generation = ?", (created_at, job_id, generation))


async def test_a_queue_item_is_updated_by_its_pdfs_and_by_each_apply_step(db, tmp_path):
    job_id = await add_prepared_job(db, tmp_path, 1)
    await set_artifact_time(db, job_id, 1, "2026-02-01T09:30:00.000Z")
    job = await queue_item(db, job_id)
    assert job.first_seen_at == "2026-01-01T00:00:01.000Z"
    assert job.updated_at == "2026-02-01T09:30:00.000Z"  # prepared a month after discovery

    async with db.transaction() as conn:
        await store.approve(conn, job_id, recipient=None, attachments=[])
    approved = (await state(db, job_id)).updated_at
    assert (await queue_item(db, job_id)).updated_at == approved  # the approval's time

    async with db.transaction() as conn:  # the user edits the letter: a new PDF, later
        await materials.insert_artifact(conn, job_id, kind="cover_letter_pdf", generation=2,
                                        path=str(tmp_path / "1-cover-2.pdf"), size=10, pages=1,
                                        sha256="y")
    await set_artifact_time(db, job_id, 2, "2999-01-01T00:00:00.000Z")
    assert (await queue_item(db, job_id)).updated_at == "2999-01-01T00:00:00.000Z"


def test_a_queue_item_without_pdfs_or_history_is_as_new_as_its_discovery():
    job = store.PreparedJob("job_1", "t", "c", None, None, None, 80, None, None,
                            "2026-01-01T00:00:00.000Z", None, None, None, apply_updated_at="")
    assert job.updated_at == "2026-01-01T00:00:00.000Z"
