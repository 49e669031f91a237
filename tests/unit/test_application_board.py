"""The application board on a real database: every way of applying puts the job on it with
a snapshot of the posting, moves and undo are events the projection folds, a rebuild from
event 0 gives the same board, and follow-ups are calendar days in the user's zone (kept
across a restart and across the UTC day boundary)."""

from __future__ import annotations

import sqlite3
from datetime import date
from zoneinfo import ZoneInfo

import pytest

from backend.config import AppSettings
from backend.domain import applications as domain
from backend.store import applications as store
from backend.store.db import Database, migrate
from tests.unit.application_helpers import LOS_ANGELES, add_job, apply_job, job_key

MARCH_9 = date(2026, 3, 9)


async def board_rows(db) -> list[tuple]:
    rows = await db.fetchall("SELECT job_id, tracked, stage, follow_up_due_on, state_json"
                             " FROM application_projections ORDER BY job_id")
    return [tuple(row) for row in rows]


async def move(db, key: str, stage: str, on: date, today: date = date(2026, 3, 20),
               note: str | None = None):
    async with db.transaction() as conn:
        return await store.record_move(conn, key, stage, on=on, note=note, today=today)


async def undo(db, key: str):
    async with db.transaction() as conn:
        return await store.undo_last_move(conn, key)


async def state_of(db, key: str):
    async with db.transaction() as conn:
        return await store.read_state(conn, key)


async def event_count(db) -> int:
    return (await db.fetchone("SELECT COUNT(*) FROM job_events"))[0]


async def test_marking_a_job_applied_puts_it_on_the_board_with_its_posting_as_it_was(db):
    key = await add_job(db, 1, score=82, description="<p>Original text</p>")
    policy = store.policy_from_settings(AppSettings(), zone=LOS_ANGELES)
    async with db.transaction() as conn:
        await store.set_user_status(conn, key, "applied", via="job_action", policy=policy)
        # The posting changes (or vanishes) later: the snapshot keeps the applied version.
        await conn.execute("UPDATE jobs SET description_html = '<p>Edited</p>' WHERE job_id = ?",
                           (key,))
    async with db.transaction() as conn:
        entries = await store.board(conn)
    assert len(entries) == 1
    state, snapshot = entries[0]
    assert (state.stage, state.via, state.title) == ("applied", "job_action", "Backend Engineer")
    assert snapshot.description_html == "<p>Original text</p>"
    assert (snapshot.fit_score, snapshot.source, snapshot.resume_template) == (
        82, "demo_board", "classic")
    assert state.follow_up.status == "scheduled" and state.follow_up.reason == "after_applying"
    types = [row[0] for row in await db.fetchall("SELECT type FROM job_events ORDER BY id")]
    assert types == ["JobUserStatusChanged", "ApplicationTracked", "FollowUpScheduled"]


async def test_applying_twice_keeps_one_card_and_clearing_the_mark_takes_it_off(db):
    key = await add_job(db, 1)
    policy = store.TrackingPolicy(zone=LOS_ANGELES)
    for status in ("applied", "applied"):
        async with db.transaction() as conn:
            await store.set_user_status(conn, key, status, via="apply_review", policy=policy)
    assert len([r for r in await board_rows(db) if r[1]]) == 1
    tracked = await db.fetchone("SELECT COUNT(*) FROM job_events WHERE type ="
                                " 'ApplicationTracked'")
    assert tracked[0] == 1
    async with db.transaction() as conn:
        await store.set_user_status(conn, key, None, via="job_action", policy=policy)
        assert await store.board(conn) == []
        await store.set_user_status(conn, key, "applied", via="job_action", policy=policy)
        (state, _), = await store.board(conn)
    assert state.via == "apply_review", "marked again, it keeps its first application"
    schedules = await db.fetchone("SELECT COUNT(*) FROM job_events WHERE type ="
                                  " 'FollowUpScheduled'")
    assert schedules[0] == 1, "one default follow-up, not one per mark"


async def test_moves_and_undo_fold_and_a_rebuild_from_event_zero_gives_the_same_board(db):
    a, b = await add_job(db, 1), await add_job(db, 2, title="Data Analyst")
    await apply_job(db, a)
    await apply_job(db, b)
    await move(db, a, "heard_back", date(2026, 3, 5), note="Recruiter called")
    await move(db, a, "interviewing", date(2026, 3, 9))
    await move(db, b, "rejected", date(2026, 3, 6))
    undone = await undo(db, a)
    assert undone.stage == "heard_back"
    assert [m.undone for m in undone.moves] == [False, True], "undo is a newer event"
    await move(db, a, "offer", date(2026, 3, 12))
    again = await undo(db, a)
    assert again.stage == "heard_back"
    assert domain.first_reply_on(again.moves) == date(2026, 3, 5)
    before = await board_rows(db)
    assert await store.rebuild_applications(db) == 2
    assert await board_rows(db) == before
    kinds = [row[0] for row in await db.fetchall("SELECT type FROM job_events WHERE type LIKE"
                                                 " 'ApplicationOutcome%' ORDER BY id")]
    assert kinds.count("ApplicationOutcomeUndone") == 2 and len(kinds) == 6


@pytest.mark.parametrize(("stage", "on", "code"), [
    ("applied", date(2026, 3, 5), "application_same_stage"),
    ("heard_back", date(2026, 3, 1), "outcome_before_applying"),
    ("heard_back", date(2026, 3, 30), "outcome_in_future"),
])
async def test_a_refused_move_writes_nothing(db, stage, on, code):
    key = await add_job(db, 1)
    await apply_job(db, key)
    before, rows = await event_count(db), await board_rows(db)
    with pytest.raises(domain.MoveRefused) as refused:
        await move(db, key, stage, on)
    assert refused.value.code == code
    assert await event_count(db) == before and await board_rows(db) == rows


async def test_moving_or_undoing_a_job_never_applied_to_is_refused(db):
    key = await add_job(db, 1)
    with pytest.raises(store.NotTracked):
        await move(db, key, "heard_back", date(2026, 3, 5))
    with pytest.raises(store.NotTracked):
        await undo(db, key)
    await apply_job(db, key)
    with pytest.raises(domain.MoveRefused, match="no move to undo"):
        await undo(db, key)


# -- follow-ups: local calendar days ---------------------------------------------------------


async def test_the_follow_up_is_due_by_the_local_day_across_the_utc_boundary(db):
    key = await add_job(db, 1)
    # 06:30 UTC on 10 March is still 23:30 on 9 March in Los Angeles (UTC-7): the user
    # applied on the 9th, so the follow-up is due on the 16th, not the 17th.
    state = await apply_job(db, key, applied_at="2026-03-10T06:30:00.000Z")
    assert state.applied_on == "2026-03-09"
    assert state.follow_up.due_on == "2026-03-16"
    from backend.domain.clock import local_today, parse_iso
    late_on_15th = local_today(LOS_ANGELES, parse_iso("2026-03-16T06:59:00Z"))
    first_minute_of_16th = local_today(LOS_ANGELES, parse_iso("2026-03-16T07:00:00Z"))
    assert late_on_15th == date(2026, 3, 15)
    assert not domain.follow_up_is_due(state.follow_up, state.moves, late_on_15th)
    assert domain.follow_up_is_due(state.follow_up, state.moves, first_minute_of_16th)
    # The same instant in Auckland (UTC+13) is already the 10th there.
    auckland = ZoneInfo("Pacific/Auckland")
    assert domain.follow_up_due_on("2026-03-10T06:30:00.000Z", auckland) == date(2026, 3, 17)


async def test_a_follow_up_survives_a_restart_and_is_not_scheduled_twice(tmp_path):
    path = tmp_path / "jobctrl.db"
    db = await Database.open(path)
    key = await add_job(db, 1)
    await apply_job(db, key, applied_at="2026-03-10T06:30:00.000Z")
    async with db.transaction() as conn:
        await store.snooze_follow_up(conn, key, due_on=date(2026, 3, 20),
                                     today=date(2026, 3, 10))
    await db.close()
    # A restart: migrations run again (a no-op), the projection is rebuilt from the log.
    db = await Database.open(path)
    try:
        await store.rebuild_applications(db)
        state = await state_of(db, key)
        assert (state.follow_up.due_on, state.follow_up.reason) == ("2026-03-20", "snoozed")
        await apply_job(db, key)  # the job applied to again after the restart
        assert (await state_of(db, key)).follow_up.due_on == "2026-03-20"
        async with db.transaction() as conn:
            done = await store.follow_up_done(conn, key)
        assert done.follow_up.status == "done"
        assert not domain.follow_up_is_due(done.follow_up, done.moves, date(2026, 4, 1))
    finally:
        await db.close()


async def test_the_default_follow_up_lapses_after_a_reply_but_a_chosen_one_holds(db):
    key = await add_job(db, 1)
    await apply_job(db, key)  # applied on 2 March (local), due on the 9th
    state = await move(db, key, "heard_back", date(2026, 3, 4))
    assert not domain.follow_up_is_due(state.follow_up, state.moves, MARCH_9)
    async with db.transaction() as conn:
        state = await store.snooze_follow_up(conn, key, due_on=MARCH_9, today=MARCH_9)
    assert domain.follow_up_is_due(state.follow_up, state.moves, MARCH_9)
    state = await move(db, key, "rejected", MARCH_9, today=MARCH_9)
    assert not domain.follow_up_is_due(state.follow_up, state.moves, MARCH_9)


async def test_an_interview_moves_the_card_to_interviewing_as_an_undoable_move(db):
    key = await add_job(db, 1)
    await apply_job(db, key)
    async with db.transaction() as conn:
        state = await store.schedule_interview(
            conn, key, interview_id=None, round=None, starts_at="2026-03-12T16:00:00.000Z",
            duration_minutes=45, location="Video call", notes="Bring portfolio", today=MARCH_9)
        assert state.stage == "interviewing"
        first = state.interviews[0]
        state = await store.schedule_interview(
            conn, key, interview_id=first.interview_id, round=None,
            starts_at="2026-03-13T16:00:00.000Z", duration_minutes=45, location=None,
            notes="Moved a day", today=MARCH_9)
    assert len(state.interviews) == 1 and state.interviews[0].notes == "Moved a day"
    assert state.interviews[0].round == 1, "a changed interview keeps its round"
    assert (await undo(db, key)).stage == "applied"


async def test_jobs_applied_before_the_board_existed_are_put_on_it_by_the_migration(tmp_path):
    """An older database (migrations up to 17) with an applied job upgrades to a board
    with that job, dated by its first "applied" event."""
    from backend.store.db import _migration_files

    path = tmp_path / "jobctrl.db"
    older = [m for m in _migration_files() if m[0] < 18]
    migrate(path, migrations=older, backups_dir=tmp_path / "backups")
    with sqlite3.connect(path) as conn:
        conn.execute(
            "INSERT INTO jobs (job_id, tenant_id, canonical_url, url, title, company,"
            " first_source, first_seen_at, last_seen_at, user_status) VALUES (?, 'local',"
            " 'https://a.example/1', 'https://a.example/1', 'Engineer', 'Acme', 'demo_board',"
            " '2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z', 'applied')",
            (job_key(1),))
        conn.execute(
            "INSERT INTO job_events (tenant_id, type, job_id, payload_json, created_at)"
            " VALUES ('local', 'ApplyMarkedApplied', ?, '{}', '2026-01-05T10:00:00.000Z')",
            (job_key(1),))
    migrate(path, backups_dir=tmp_path / "backups")
    db = await Database.open(path)
    try:
        async with db.transaction() as conn:
            (state, snapshot), = await store.board(conn)
        assert (state.via, state.applied_at) == ("apply_review", "2026-01-05T10:00:00.000Z")
        assert snapshot.title == "Engineer"
        rows = await board_rows(db)
        await store.rebuild_applications(db)
        assert await board_rows(db) == rows, "the data step folds like the live path"
    finally:
        await db.close()


async def test_the_default_follow_up_lapses_once_the_user_calls_it_ghosted(db):
    key = await add_job(db, 1)
    await apply_job(db, key)
    state = await move(db, key, "ghosted", MARCH_9, today=MARCH_9)
    assert not domain.follow_up_is_due(state.follow_up, state.moves, MARCH_9)
    assert domain.counts_as_ghosted(state.moves, date(2026, 3, 2), MARCH_9, 30)
