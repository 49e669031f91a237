"""Application board persistence: the posting snapshot taken when a job is applied to, the
board's events (each folded into ``application_projections`` in the same transaction), the
follow-up email intents, and the reads of the board and of Insights.

Every way of applying ends in :func:`set_user_status` (an email sent, a packet marked
applied in Apply Review, "mark applied" on the job), so each applied job reaches the board
by the same path, once."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import date, tzinfo

import aiosqlite

from backend.config import TENANT_ID, AppSettings
from backend.domain import applications as domain
from backend.domain import events as ev
from backend.domain.application_state import (
    APPLICATION_EVENT_TYPES,
    ApplicationState,
    fold,
    state_from_json,
)
from backend.domain.clock import local_zone, utc_now_iso
from backend.store import materials
from backend.store.application_rows import (  # noqa: F401 - re-exported
    READ_STATE_SQL,
    SNAPSHOT_SQL,
    UPSERT_STATE_SQL,
    TrackingPolicy,
    backfill_applied_jobs,
    state_row,
    tracking_events,
)
from backend.store.db import Database
from backend.store.events import append_event


def policy_from_settings(settings: AppSettings, zone: tzinfo | None = None) -> TrackingPolicy:
    return TrackingPolicy(zone=zone or local_zone(),
                          follow_up_after_days=settings.follow_up_after_days,
                          resume_template=settings.materials.template)


class NotTracked(LookupError):
    """The job exists but was never applied to (or its mark was cleared)."""


# --- the projection row -------------------------------------------------------------------

async def read_state(conn: aiosqlite.Connection, job_id: str) -> ApplicationState | None:
    cursor = await conn.execute(READ_STATE_SQL, (TENANT_ID, job_id))
    row = await cursor.fetchone()
    return state_from_json(row[0]) if row else None


async def write_state(conn: aiosqlite.Connection, state: ApplicationState) -> None:
    await conn.execute(UPSERT_STATE_SQL, state_row(state))


async def record_application_event(conn: aiosqlite.Connection, event: ev.DomainEvent, *,
                                   dedupe_key: str | None = None) -> ApplicationState | None:
    """Append a board event (the projection builder folds it in this transaction) and
    return the card's state after it; None when the dedupe key was already used."""
    job_id = event.job_id  # type: ignore[attr-defined]
    workflow_id = getattr(event, "workflow_id", None)
    run_id = getattr(event, "run_id", None)
    event_id = await append_event(conn, event, job_id=job_id, workflow_id=workflow_id,
                                  run_id=run_id, dedupe_key=dedupe_key)
    if event_id is None:
        return None
    return await read_state(conn, job_id)


async def rebuild_applications(db: Database) -> int:
    """Fold every board event again from event 0; returns the number of applications."""
    marks = ", ".join("?" * len(APPLICATION_EVENT_TYPES))
    rows = await db.fetchall(
        f"SELECT id, type, job_id, payload_json FROM job_events WHERE tenant_id = ?"
        f" AND type IN ({marks}) AND job_id IS NOT NULL ORDER BY id",
        (TENANT_ID, *APPLICATION_EVENT_TYPES))
    states: dict[str, ApplicationState] = {}
    for event_id, event_type, job_id, payload_json in rows:
        states[job_id] = fold(states.get(job_id), job_id, event_type, json.loads(payload_json),
                              event_id=event_id)
    async with db.transaction() as conn:
        await conn.execute("DELETE FROM application_projections WHERE tenant_id = ?",
                           (TENANT_ID,))
        for state in states.values():
            await conn.execute(UPSERT_STATE_SQL, state_row(state))
    return len(states)


# --- applying: the snapshot and the card ----------------------------------------------------

JOB_NAME_SQL = "SELECT title, company FROM jobs WHERE job_id = ?"


async def track_application(conn: aiosqlite.Connection, job_id: str, *, via: str,
                            policy: TrackingPolicy, workflow_id: str | None = None,
                            run_id: str | None = None,
                            applied_at: str | None = None) -> ApplicationState | None:
    """Put the job on the board (a no-op when it is there already). The posting is kept as
    it is right now; a job applied to again keeps its first snapshot. ``applied_at``
    (default: now) lets an import or a test name the moment."""
    state = await read_state(conn, job_id)
    if state is not None and state.tracked:
        return state
    cursor = await conn.execute(JOB_NAME_SQL, (job_id,))
    job = await cursor.fetchone()
    if job is None:
        return None
    applied_at = applied_at or utc_now_iso()
    await conn.execute(SNAPSHOT_SQL, (applied_at, via, policy.resume_template, job_id))
    for event in tracking_events(job_id, title=job[0], company=job[1], via=via,
                                 applied_at=applied_at, policy=policy,
                                 schedule_follow_up=state is None or state.follow_up is None,
                                 workflow_id=workflow_id, run_id=run_id):
        state = await record_application_event(conn, event)
    return state


async def set_user_status(conn: aiosqlite.Connection, job_id: str, user_status: str | None, *,
                          via: str, policy: TrackingPolicy, workflow_id: str | None = None,
                          run_id: str | None = None) -> None:
    """The job's own mark (applied / skipped / none), and the board follows it."""
    await conn.execute("UPDATE jobs SET user_status = ? WHERE job_id = ?", (user_status, job_id))
    await append_event(conn, ev.JobUserStatusChanged(job_id=job_id, user_status=user_status,
                                                     workflow_id=workflow_id, run_id=run_id),
                       job_id=job_id, workflow_id=workflow_id, run_id=run_id)
    if user_status == "applied":
        await track_application(conn, job_id, via=via, policy=policy,
                                workflow_id=workflow_id, run_id=run_id)
        return
    state = await read_state(conn, job_id)
    if state is not None and state.tracked:
        await record_application_event(conn, ev.ApplicationUntracked(job_id=job_id))


# --- board commands -----------------------------------------------------------------------


async def tracked_state(conn: aiosqlite.Connection, job_id: str) -> ApplicationState:
    state = await read_state(conn, job_id)
    if state is None or not state.tracked:
        raise NotTracked(job_id)
    return state


async def record_move(conn: aiosqlite.Connection, job_id: str, stage: str, *, on: date,
                      note: str | None, today: date) -> ApplicationState:
    """Raises ``NotTracked`` or ``domain.MoveRefused`` (nothing written)."""
    state = await tracked_state(conn, job_id)
    domain.check_move(state.stage, stage, on=on,
                      applied_on=date.fromisoformat(state.applied_on), today=today)
    return await record_application_event(conn, ev.ApplicationOutcomeRecorded(
        job_id=job_id, stage=stage, date=on.isoformat(), note=note or None))


async def undo_last_move(conn: aiosqlite.Connection, job_id: str) -> ApplicationState:
    state = await tracked_state(conn, job_id)
    move = domain.last_undoable(state.moves)
    if move is None:
        raise domain.MoveRefused("nothing_to_undo", "There is no move to undo.")
    return await record_application_event(conn, ev.ApplicationOutcomeUndone(
        job_id=job_id, undone_event_id=move.event_id))


async def snooze_follow_up(conn: aiosqlite.Connection, job_id: str, *, due_on: date,
                           today: date) -> ApplicationState:
    state = await tracked_state(conn, job_id)
    domain.check_snooze(due_on, today)
    previous = state.follow_up.due_on if state.follow_up else None
    return await record_application_event(conn, ev.FollowUpSnoozed(
        job_id=job_id, due_on=due_on.isoformat(), previous_due_on=previous))


async def follow_up_done(conn: aiosqlite.Connection, job_id: str, *, via: str = "user",
                         workflow_id: str | None = None,
                         run_id: str | None = None) -> ApplicationState:
    await tracked_state(conn, job_id)
    return await record_application_event(conn, ev.FollowUpDone(
        job_id=job_id, via=via, workflow_id=workflow_id, run_id=run_id))


async def schedule_interview(conn: aiosqlite.Connection, job_id: str, *,
                             interview_id: str | None, round: int | None, starts_at: str,
                             duration_minutes: int, location: str | None, notes: str | None,
                             today: date) -> ApplicationState:
    """Add (or, with a known ``interview_id``, change) an interview. The first one also
    moves a card that has not reached Interviewing there, as its own undoable move."""
    state = await tracked_state(conn, job_id)
    existing = next((i for i in state.interviews if i.interview_id == interview_id), None)
    if interview_id is not None and existing is None:
        raise domain.MoveRefused("interview_not_found", f"No interview {interview_id}.")
    number = round or (existing.round if existing else
                       max((i.round for i in state.interviews), default=0) + 1)
    chosen_id = interview_id or f"round-{number}-{state.last_event_id + 1}"
    state = await record_application_event(conn, ev.InterviewScheduled(
        job_id=job_id, interview_id=chosen_id, round=number, starts_at=starts_at,
        duration_minutes=duration_minutes, location=location, notes=notes))
    if state.stage in ("applied", "heard_back", "ghosted"):
        state = await record_application_event(conn, ev.ApplicationOutcomeRecorded(
            job_id=job_id, stage="interviewing", date=today.isoformat(),
            note="An interview was scheduled."))
    return state


async def cancel_interview(conn: aiosqlite.Connection, job_id: str,
                           interview_id: str) -> ApplicationState:
    state = await tracked_state(conn, job_id)
    if not any(i.interview_id == interview_id for i in state.interviews):
        raise domain.MoveRefused("interview_not_found", f"No interview {interview_id}.")
    return await record_application_event(conn, ev.InterviewCanceled(
        job_id=job_id, interview_id=interview_id))


# --- reads --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    job_id: str
    applied_at: str
    via: str
    title: str
    company: str
    location: str | None
    url: str
    apply_url: str | None
    description_html: str | None
    description_text: str | None
    source: str
    fit_score: int | None
    resume_template: str | None


_SNAPSHOT_COLUMNS = ("job_id, applied_at, via, title, company, location, url, apply_url,"
                     " description_html, description_text, source, fit_score, resume_template")


async def read_snapshot(conn: aiosqlite.Connection, job_id: str) -> Snapshot | None:
    cursor = await conn.execute(
        f"SELECT {_SNAPSHOT_COLUMNS} FROM application_snapshots WHERE tenant_id = ?"
        " AND job_id = ?", (TENANT_ID, job_id))
    row = await cursor.fetchone()
    return Snapshot(*row) if row else None


async def board(conn: aiosqlite.Connection) -> list[tuple[ApplicationState, Snapshot | None]]:
    """Every tracked application with its snapshot, the most recently applied first."""
    cursor = await conn.execute(
        "SELECT p.state_json, s." + _SNAPSHOT_COLUMNS.replace(", ", ", s.") +
        " FROM application_projections p LEFT JOIN application_snapshots s"
        " ON s.tenant_id = p.tenant_id AND s.job_id = p.job_id"
        " WHERE p.tenant_id = ? AND p.tracked = 1", (TENANT_ID,))
    rows = await cursor.fetchall()
    found = [(state_from_json(row[0]), Snapshot(*row[1:]) if row[1] else None) for row in rows]
    return sorted(found, key=lambda pair: (pair[0].applied_at, pair[0].job_id), reverse=True)


async def job_exists(conn: aiosqlite.Connection, job_id: str) -> bool:
    cursor = await conn.execute("SELECT 1 FROM jobs WHERE job_id = ?", (job_id,))
    return await cursor.fetchone() is not None


def insight_facts(entries: list[tuple[ApplicationState, Snapshot | None]]
                  ) -> list[domain.ApplicationFacts]:
    return [domain.ApplicationFacts(
        applied_on=date.fromisoformat(state.applied_on), moves=state.moves,
        source=snapshot.source if snapshot else "unknown",
        fit_score=snapshot.fit_score if snapshot else None,
        resume_template=snapshot.resume_template if snapshot else None,
        title=state.title) for state, snapshot in entries]


@dataclass(frozen=True)
class FollowUpContext:
    """What a follow-up email is written from: the posting as applied, the latest letter
    and fit ledger, and who to write to (the address the application went to, else the
    most confident contact research found)."""

    snapshot: Snapshot | None
    letter: dict | None
    ledger: dict | None
    recipient: str | None


async def follow_up_context(conn: aiosqlite.Connection, job_id: str) -> FollowUpContext:
    letter = await materials.latest_material(conn, job_id, "cover_letter")
    score = await materials.latest_score(conn, job_id)
    cursor = await conn.execute(
        "SELECT recipient FROM apply_submit_intents WHERE tenant_id = ? AND job_id = ?"
        " UNION ALL SELECT email FROM (SELECT email FROM contact_projections WHERE tenant_id = ?"
        " AND job_id = ? AND email IS NOT NULL ORDER BY confidence DESC LIMIT 1)",
        (TENANT_ID, job_id, TENANT_ID, job_id))
    recipients = [row[0] for row in await cursor.fetchall() if row[0]]
    return FollowUpContext(snapshot=await read_snapshot(conn, job_id),
                           letter=letter[1] if letter else None,
                           ledger=score.ledger if score else None,
                           recipient=recipients[0] if recipients else None)


# --- follow-up emails: at most one send per job and round ----------------------------------


@dataclass(frozen=True)
class FollowUpEmail:
    job_id: str
    round: int
    intent_key: str
    workflow_id: str
    recipient: str
    subject: str
    body: str
    status: str  # requested | sending | sent | failed
    run_id: str | None
    message_id: str | None
    error_code: str | None


_EMAIL_COLUMNS = ("job_id, round, intent_key, workflow_id, recipient, subject, body, status,"
                  " run_id, message_id, error_code")
LIVE_EMAIL_STATUSES = ("requested", "sending")


def follow_up_workflow_id(job_id: str, round: int) -> str:
    return f"follow-up-email-{job_id}-{round}"


async def read_follow_up_email(conn: aiosqlite.Connection, job_id: str,
                               round: int) -> FollowUpEmail | None:
    cursor = await conn.execute(
        f"SELECT {_EMAIL_COLUMNS} FROM follow_up_emails WHERE tenant_id = ? AND job_id = ?"
        " AND round = ?", (TENANT_ID, job_id, round))
    row = await cursor.fetchone()
    return FollowUpEmail(*row) if row else None


async def latest_follow_up_email(conn: aiosqlite.Connection,
                                 job_id: str) -> FollowUpEmail | None:
    cursor = await conn.execute(
        f"SELECT {_EMAIL_COLUMNS} FROM follow_up_emails WHERE tenant_id = ? AND job_id = ?"
        " ORDER BY round DESC LIMIT 1", (TENANT_ID, job_id))
    row = await cursor.fetchone()
    return FollowUpEmail(*row) if row else None


class EmailInProgress(RuntimeError):
    def __init__(self, email: FollowUpEmail):
        super().__init__(f"follow-up email round {email.round} is {email.status}")
        self.email = email


async def request_follow_up_email(conn: aiosqlite.Connection, job_id: str, *, recipient: str,
                                  subject: str, body: str) -> FollowUpEmail:
    """The dispatch intent, committed before Temporal is asked: the next round, with its
    gated text. Refused while an earlier round has not settled."""
    await tracked_state(conn, job_id)
    latest = await latest_follow_up_email(conn, job_id)
    if latest is not None and latest.status in LIVE_EMAIL_STATUSES:
        raise EmailInProgress(latest)
    number = (latest.round if latest else 0) + 1
    workflow_id = follow_up_workflow_id(job_id, number)
    key = f"follow-up-{job_id}-{number}"
    await conn.execute(
        "INSERT INTO follow_up_emails (tenant_id, job_id, round, intent_key, workflow_id,"
        " recipient, subject, body, status, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?,"
        " 'requested', ?)",
        (TENANT_ID, job_id, number, key, workflow_id, recipient, subject, body, utc_now_iso()))
    await record_application_event(conn, ev.FollowUpEmailRequested(
        job_id=job_id, workflow_id=workflow_id, round=number, recipient=recipient))
    return FollowUpEmail(job_id, number, key, workflow_id, recipient, subject, body,
                         "requested", None, None, None)


async def begin_sending(conn: aiosqlite.Connection, email: FollowUpEmail, run_id: str) -> bool:
    """'requested' → 'sending', committed before the SMTP conversation starts; False when
    this round is past 'requested' (an earlier attempt began it: never send again)."""
    cursor = await conn.execute(
        "UPDATE follow_up_emails SET status = 'sending', run_id = ? WHERE tenant_id = ?"
        " AND job_id = ? AND round = ? AND status = 'requested'",
        (run_id, TENANT_ID, email.job_id, email.round))
    return cursor.rowcount == 1


async def void_sending(conn: aiosqlite.Connection, email: FollowUpEmail) -> None:
    """Nothing reached the server: the round may be sent by a later attempt."""
    await conn.execute(
        "UPDATE follow_up_emails SET status = 'requested' WHERE tenant_id = ? AND job_id = ?"
        " AND round = ? AND status = 'sending'", (TENANT_ID, email.job_id, email.round))


async def close_for_closed_run(conn: aiosqlite.Connection, *, workflow_id: str,
                               run_id: str, error_code: str | None) -> None:
    """The reconciler closed a follow-up email run that never recorded its end: a round
    it left 'requested' failed with the run's code; one left 'sending' may have gone out,
    so its outcome is unknown."""
    cursor = await conn.execute(
        f"SELECT {_EMAIL_COLUMNS} FROM follow_up_emails WHERE tenant_id = ? AND workflow_id = ?"
        " AND status IN ('requested', 'sending')", (TENANT_ID, workflow_id))
    for row in await cursor.fetchall():
        email = FollowUpEmail(*row)
        code = "submit_outcome_unknown" if email.status == "sending" \
            else (error_code or "workflow_ended")
        await mark_follow_up_failed(conn, email, error_code=code, run_id=run_id)


async def mark_follow_up_sent(conn: aiosqlite.Connection, email: FollowUpEmail, *,
                              message_id: str, run_id: str) -> None:
    cursor = await conn.execute(
        "UPDATE follow_up_emails SET status = 'sent', message_id = ?, sent_at = ?"
        " WHERE tenant_id = ? AND job_id = ? AND round = ? AND status != 'sent'",
        (message_id, utc_now_iso(), TENANT_ID, email.job_id, email.round))
    if cursor.rowcount != 1:
        return
    ids = {"job_id": email.job_id, "workflow_id": email.workflow_id, "run_id": run_id}
    await record_application_event(conn, ev.FollowUpEmailSent(
        **ids, round=email.round, recipient=email.recipient, message_id=message_id))
    await record_application_event(conn, ev.FollowUpDone(**ids, via="email_sent"))


async def mark_follow_up_failed(conn: aiosqlite.Connection, email: FollowUpEmail, *,
                                error_code: str, run_id: str | None) -> None:
    cursor = await conn.execute(
        "UPDATE follow_up_emails SET status = 'failed', error_code = ? WHERE tenant_id = ?"
        " AND job_id = ? AND round = ? AND status IN ('requested', 'sending')",
        (error_code, TENANT_ID, email.job_id, email.round))
    if cursor.rowcount == 1:
        await record_application_event(conn, ev.FollowUpEmailFailed(
            job_id=email.job_id, workflow_id=email.workflow_id, run_id=run_id,
            round=email.round, error_code=error_code))


