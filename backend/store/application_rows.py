"""The application board's rows as plain SQL and pure functions, with no connection
wrapper: the tracking policy, the card's projection row, the snapshot statement, the
events that put an applied job on the board, and the data step of migration 18 that runs
on the migration's plain sqlite3 connection (``store/data_migrations.py``) before any
:class:`~backend.store.db.Database` exists. :mod:`backend.store.applications` is the
repository built on them."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from datetime import tzinfo

from backend.config import TENANT_ID
from backend.domain import applications as domain
from backend.domain import events as ev
from backend.domain.application_state import ApplicationState, fold, state_to_json
from backend.store.event_rows import EVENT_INSERT_SQL, event_params


@dataclass(frozen=True)
class TrackingPolicy:
    """What applying needs from the settings and the machine: the default follow-up delay,
    the résumé template in use, and the user's local time zone."""

    zone: tzinfo
    follow_up_after_days: int = domain.DEFAULT_FOLLOW_UP_DAYS
    resume_template: str | None = None



# --- the projection row -------------------------------------------------------------------

_STATE_COLUMNS = "tracked, stage, follow_up_due_on, state_json, updated_at, last_event_id"
UPSERT_STATE_SQL = (
    f"INSERT OR REPLACE INTO application_projections (tenant_id, job_id, {_STATE_COLUMNS})"
    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
READ_STATE_SQL = ("SELECT state_json FROM application_projections WHERE tenant_id = ?"
                  " AND job_id = ?")


def state_row(state: ApplicationState) -> tuple:
    due = state.follow_up.due_on if state.follow_up else None
    return (TENANT_ID, state.job_id, int(state.tracked), state.stage, due, state_to_json(state),
            state.updated_at or "", state.last_event_id)


SNAPSHOT_SQL = (
    "INSERT OR IGNORE INTO application_snapshots (tenant_id, job_id, applied_at, via, title,"
    " company, location, url, apply_url, description_html, description_text, source,"
    " fit_score, resume_template)"
    " SELECT j.tenant_id, j.job_id, ?, ?, j.title, j.company, j.location, j.url, j.apply_url,"
    " COALESCE(e.description_html, j.description_html), e.description_text, j.first_source,"
    " (SELECT s.score FROM job_scores s WHERE s.job_id = j.job_id ORDER BY s.version DESC"
    "  LIMIT 1), ?"
    " FROM jobs j LEFT JOIN job_enrichments e ON e.job_id = j.job_id WHERE j.job_id = ?")


def tracking_events(job_id: str, *, title: str, company: str, via: str, applied_at: str,
                    policy: TrackingPolicy, schedule_follow_up: bool,
                    workflow_id: str | None = None,
                    run_id: str | None = None) -> list[ev.DomainEvent]:
    """The events that put an applied job on the board (and, the first time, its default
    follow-up)."""
    ids = {"job_id": job_id, "workflow_id": workflow_id, "run_id": run_id}
    events: list[ev.DomainEvent] = [ev.ApplicationTracked(
        **ids, via=via, applied_at=applied_at,
        applied_on=domain.local_day(applied_at, policy.zone).isoformat(),
        title=title[:300], company=company[:300])]
    if schedule_follow_up:
        due = domain.follow_up_due_on(applied_at, policy.zone, policy.follow_up_after_days)
        events.append(ev.FollowUpScheduled(**ids, due_on=due.isoformat(),
                                           days_after_applying=policy.follow_up_after_days))
    return events


# --- the data step of migration 18: jobs applied to before the board existed --------------

_APPLIED_EVIDENCE_SQL = (
    "SELECT type, MIN(created_at) FROM job_events WHERE job_id = ? AND (type IN"
    " ('ApplySubmitted', 'ApplyMarkedApplied') OR (type = 'JobUserStatusChanged'"
    " AND payload_json LIKE '%\"userStatus\":\"applied\"%')) GROUP BY type")
_VIA_BY_EVIDENCE = {"ApplySubmitted": "email", "ApplyMarkedApplied": "apply_review"}


def backfill_applied_jobs(conn: sqlite3.Connection, zone: tzinfo) -> int:
    """Every job marked applied gets its snapshot and card (dated by the first event that
    says it was applied), folded with the same rules; returns how many."""
    jobs = conn.execute("SELECT job_id, title, company, last_seen_at FROM jobs"
                        " WHERE user_status = 'applied'").fetchall()
    policy = TrackingPolicy(zone=zone)
    for job_id, title, company, last_seen_at in jobs:
        evidence = dict(conn.execute(_APPLIED_EVIDENCE_SQL, (job_id,)).fetchall())
        applied_at = min(evidence.values()) if evidence else last_seen_at
        via = next((_VIA_BY_EVIDENCE[kind] for kind in _VIA_BY_EVIDENCE if kind in evidence),
                   "job_action")
        conn.execute(SNAPSHOT_SQL, (applied_at, via, None, job_id))
        state = None
        for event in tracking_events(job_id, title=title, company=company, via=via,
                                     applied_at=applied_at, policy=policy,
                                     schedule_follow_up=True):
            cursor = conn.execute(EVENT_INSERT_SQL, event_params(event, job_id=job_id))
            state = fold(state, job_id, event.event_type, json.loads(event.payload_json()),
                         event_id=int(cursor.lastrowid))
        conn.execute(UPSERT_STATE_SQL, state_row(state))
    return len(jobs)

