"""Apply persistence: the lifecycle events (folded into ``apply_run_projections`` in the
same transaction by the projection builder), approvals, submit intents, and the
prepared-job queries the queue and the claim share."""

from __future__ import annotations

import json
from dataclasses import dataclass

import aiosqlite

from backend.config import TENANT_ID
from backend.domain import events as ev
from backend.domain.apply_targets import classify_target
from backend.domain.clock import parse_iso, utc_now_iso
from backend.store.events import append_event

# --- lifecycle ----------------------------------------------------------------------------


async def record_apply_event(conn: aiosqlite.Connection, event: ev.DomainEvent, *,
                             dedupe_key: str | None = None) -> int | None:
    """Append an Apply* event (the projection builder folds it into
    ``apply_run_projections`` in this transaction); returns the event id, or None when the
    dedupe key was already used."""
    return await append_event(conn, event, job_id=event.job_id,  # type: ignore[attr-defined]
                              workflow_id=getattr(event, "workflow_id", None),
                              run_id=getattr(event, "run_id", None), dedupe_key=dedupe_key)


# --- approvals ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Approval:
    job_id: str
    approved_at: str
    recipient: str | None
    attachments: list[str]


async def read_approval(conn: aiosqlite.Connection, job_id: str) -> Approval | None:
    cursor = await conn.execute(
        "SELECT job_id, approved_at, recipient, attachments_json FROM apply_approvals"
        " WHERE tenant_id = ? AND job_id = ?", (TENANT_ID, job_id))
    row = await cursor.fetchone()
    return Approval(row[0], row[1], row[2], json.loads(row[3])) if row else None


async def approve(conn: aiosqlite.Connection, job_id: str, *, recipient: str | None,
                  attachments: list[str]) -> None:
    event = ev.ApplyApproved(job_id=job_id, recipient=recipient, attachments=attachments)
    await conn.execute(
        "INSERT OR REPLACE INTO apply_approvals (tenant_id, job_id, approved_at, recipient,"
        " attachments_json) VALUES (?, ?, ?, ?, ?)",
        (TENANT_ID, job_id, event.occurred_at, recipient, json.dumps(attachments)))
    await record_apply_event(conn, event)


async def drop_approval(conn: aiosqlite.Connection, job_id: str) -> None:
    await conn.execute("DELETE FROM apply_approvals WHERE tenant_id = ? AND job_id = ?",
                       (TENANT_ID, job_id))


# --- submit intents -----------------------------------------------------------------------


@dataclass(frozen=True)
class SubmitIntent:
    job_id: str
    intent_key: str
    run_id: str
    recipient: str
    status: str  # sending | sent
    message_id: str | None


async def read_intent(conn: aiosqlite.Connection, job_id: str) -> SubmitIntent | None:
    cursor = await conn.execute(
        "SELECT job_id, intent_key, run_id, recipient, status, message_id"
        " FROM apply_submit_intents WHERE tenant_id = ? AND job_id = ?", (TENANT_ID, job_id))
    row = await cursor.fetchone()
    return SubmitIntent(*row) if row else None


async def create_intent(conn: aiosqlite.Connection, *, job_id: str, workflow_id: str,
                        run_id: str, recipient: str, attachments: list[str]) -> SubmitIntent:
    """Committed before the SMTP conversation begins; one per job, ever."""
    key = f"apply-{job_id}-{run_id}"
    await conn.execute(
        "INSERT INTO apply_submit_intents (tenant_id, job_id, intent_key, workflow_id, run_id,"
        " channel, recipient, attachments_json, status, created_at)"
        " VALUES (?, ?, ?, ?, ?, 'email', ?, ?, 'sending', ?)",
        (TENANT_ID, job_id, key, workflow_id, run_id, recipient, json.dumps(attachments),
         utc_now_iso()))
    return SubmitIntent(job_id, key, run_id, recipient, "sending", None)


async def mark_intent_sent(conn: aiosqlite.Connection, job_id: str, message_id: str) -> None:
    await conn.execute(
        "UPDATE apply_submit_intents SET status = 'sent', message_id = ?, sent_at = ?"
        " WHERE tenant_id = ? AND job_id = ?", (message_id, utc_now_iso(), TENANT_ID, job_id))


async def void_intent(conn: aiosqlite.Connection, job_id: str) -> None:
    """Nothing reached the mail server: the intent is void and a later attempt may send."""
    await conn.execute("DELETE FROM apply_submit_intents WHERE tenant_id = ? AND job_id = ?",
                       (TENANT_ID, job_id))


async def runs_holding_closed_claims(db) -> list[tuple[str, str]]:
    """(workflow id, run id) of ended runs that still hold in-progress apply claims."""
    rows = await db.fetchall(
        "SELECT DISTINCT p.workflow_id, p.run_id FROM apply_run_projections p"
        " JOIN workflow_run_projections w ON w.tenant_id = p.tenant_id AND w.run_id = p.run_id"
        " WHERE p.tenant_id = ? AND p.status = 'in_progress'"
        " AND w.status IN ('completed', 'failed', 'canceled')", (TENANT_ID,))
    return [(row[0], row[1]) for row in rows]


# --- prepared jobs ------------------------------------------------------------------------

_LATEST_SCORE = ("(SELECT s.score FROM job_scores s WHERE s.job_id = j.job_id"
                 " ORDER BY s.version DESC LIMIT 1)")


def _latest_artifact(kind: str) -> str:
    return (f"(SELECT a.path FROM job_artifacts a WHERE a.job_id = j.job_id AND a.kind = '{kind}'"
            " ORDER BY a.generation DESC LIMIT 1)")


PREPARED_SELECT = (
    "SELECT j.job_id, j.title, j.company, j.apply_url, j.description_html, j.user_status,"
    f" {_LATEST_SCORE} AS score, {_latest_artifact('resume_pdf')} AS resume_pdf,"
    f" {_latest_artifact('cover_letter_pdf')} AS cover_pdf, j.first_seen_at,"
    " p.status AS apply_status, p.park_reason, p.run_id AS owner_run_id,"
    " j.prepare_anyway_at IS NOT NULL AS prepare_anyway, p.updated_at AS apply_updated_at,"
    " (SELECT MAX(a.created_at) FROM job_artifacts a WHERE a.job_id = j.job_id"
    "  AND a.kind IN ('resume_pdf', 'cover_letter_pdf')) AS materials_at"
    " FROM jobs j LEFT JOIN apply_run_projections p"
    " ON p.tenant_id = j.tenant_id AND p.job_id = j.job_id"
)
# Prepared: fit score at or above the threshold (or the user said "prepare anyway") and
# both PDFs rendered. A job with any
# apply history stays visible even when it would no longer qualify.
PREPARED_WHERE = (
    " WHERE j.tenant_id = ? AND (p.job_id IS NOT NULL OR ("
    f"({_LATEST_SCORE} >= ? OR j.prepare_anyway_at IS NOT NULL)"
    f" AND {_latest_artifact('resume_pdf')} IS NOT NULL"
    f" AND {_latest_artifact('cover_letter_pdf')} IS NOT NULL))"
)


@dataclass(frozen=True)
class PreparedJob:
    job_id: str
    title: str
    company: str
    apply_url: str | None
    description_html: str | None
    user_status: str | None
    score: int | None
    resume_pdf: str | None
    cover_pdf: str | None
    first_seen_at: str
    apply_status: str | None
    park_reason: str | None
    owner_run_id: str | None
    prepare_anyway: bool = False
    apply_updated_at: str | None = None  # the last Apply* event's time
    materials_at: str | None = None      # when its newest résumé or letter PDF was made

    @property
    def status(self) -> str:
        return self.apply_status or "awaiting_approval"

    @property
    def updated_at(self) -> str:
        """When the queue item last changed: its last apply step or its newest PDF (a
        re-render, the user's edit), whichever is later; the discovery time before both."""
        times = [value for value in (self.apply_updated_at, self.materials_at) if value]
        return max(times, key=parse_iso) if times else self.first_seen_at


async def prepared_jobs(conn: aiosqlite.Connection, *, min_fit_score: int,
                        job_id: str | None = None) -> list[PreparedJob]:
    sql = PREPARED_SELECT + PREPARED_WHERE
    params: list = [TENANT_ID, min_fit_score]
    if job_id is not None:
        sql += " AND j.job_id = ?"
        params.append(job_id)
    sql += " ORDER BY score DESC, j.first_seen_at, j.job_id"
    cursor = await conn.execute(sql, params)
    return [PreparedJob(*row) for row in await cursor.fetchall()]


def claimable(job: PreparedJob, *, approval_required: bool, min_fit_score: int) -> bool:
    """The claim rule, re-evaluated at every claim with the settings of that moment."""
    if job.user_status is not None or job.resume_pdf is None or job.cover_pdf is None:
        return False
    if not job.prepare_anyway and (job.score is None or job.score < min_fit_score):
        return False
    if job.status == "approved":
        return True
    # Without the approval requirement, a prepared job may be claimed right away, unless a
    # claim already gave it back for (new) approval.
    return (not approval_required and job.status == "awaiting_approval"
            and job.park_reason is None)


async def claim_jobs(conn: aiosqlite.Connection, *, workflow_id: str, run_id: str,
                     poll: int, limit: int, approval_required: bool, min_fit_score: int,
                     job_id: str | None = None) -> list[str]:
    """Claim up to ``limit`` jobs for this run (one live attempt per job); a retried claim
    of the same run returns what it already holds."""
    jobs = await prepared_jobs(conn, min_fit_score=0, job_id=job_id)
    held = [j.job_id for j in jobs if j.status == "in_progress" and j.owner_run_id == run_id]
    claimed = list(held)
    for job in jobs:
        if len(claimed) >= limit:
            break
        if job.job_id in claimed or not claimable(
                job, approval_required=approval_required, min_fit_score=min_fit_score):
            continue
        target = classify_target(job.apply_url, job.description_html)
        await record_apply_event(
            conn, ev.ApplyStarted(job_id=job.job_id, workflow_id=workflow_id, run_id=run_id,
                                  target_kind=target.kind),
            dedupe_key=f"ApplyStarted:{run_id}:{poll}:{job.job_id}")
        claimed.append(job.job_id)
    return claimed


async def release_run_claims(conn: aiosqlite.Connection, *, workflow_id: str,
                             run_id: str) -> list[str]:
    """A canceled or failed run gives back every job it still holds."""
    cursor = await conn.execute(
        "SELECT job_id FROM apply_run_projections WHERE tenant_id = ? AND status = 'in_progress'"
        " AND run_id = ?", (TENANT_ID, run_id))
    released = [row[0] for row in await cursor.fetchall()]
    for job_id in released:
        await record_apply_event(conn, ev.ApplyCanceled(job_id=job_id, workflow_id=workflow_id,
                                                        run_id=run_id),
                                 dedupe_key=f"ApplyCanceled:{run_id}:{job_id}")
    return released
