"""``job_stage_states``: the source of truth for per-job stages, with run ownership.

A running Score/Tailor/Cover row records the exact Temporal run that owns the write and
the result version before it (the baseline). A retried activity of the same run that
finds a result committed after its baseline accepts it without calling the model again.
"""

from __future__ import annotations

from dataclasses import dataclass

import aiosqlite

from backend.config import TENANT_ID
from backend.domain import events as ev
from backend.domain.clock import parse_iso, utc_now_iso
from backend.domain.stages import (
    PROFILE_MISSING,
    STAGES,
    UPSTREAM_NOT_SUCCEEDED,
    Stage,
    downstream_of,
)
from backend.store.events import append_event


@dataclass(frozen=True)
class Owner:
    workflow_id: str
    run_id: str
    attempt: int


@dataclass(frozen=True)
class StageRow:
    job_id: str
    stage: str
    status: str
    attempt: int
    owner_workflow_id: str | None
    owner_run_id: str | None
    baseline_version: int | None
    result_version: int
    error_code: str | None
    retryable: bool | None
    blocked_reason: str | None
    started_at: str | None
    finished_at: str | None
    duration_ms: int | None
    updated_at: str


COLUMNS = (
    "job_id, stage, status, attempt, owner_workflow_id, owner_run_id, baseline_version,"
    " result_version, error_code, retryable, blocked_reason, started_at, finished_at,"
    " duration_ms, updated_at"
)


async def ensure_rows(conn: aiosqlite.Connection, job_id: str) -> None:
    now = utc_now_iso()
    await conn.executemany(
        "INSERT INTO job_stage_states (tenant_id, job_id, stage, status, updated_at)"
        " VALUES (?, ?, ?, 'pending', ?) ON CONFLICT DO NOTHING",
        [(TENANT_ID, job_id, stage, now) for stage in STAGES],
    )


async def read_rows(conn: aiosqlite.Connection, job_id: str) -> dict[str, StageRow]:
    cursor = await conn.execute(
        f"SELECT {COLUMNS} FROM job_stage_states WHERE tenant_id = ? AND job_id = ?",
        (TENANT_ID, job_id),
    )
    return {row[1]: StageRow(*row) for row in await cursor.fetchall()}


async def ensured_rows(conn: aiosqlite.Connection, job_id: str) -> dict[str, StageRow]:
    """Every stage row of the job, the missing ones inserted ``pending`` first. One read
    when they exist (after a job's first stage they always do): a stage activity's
    claim transaction reads them once and hands them on (``rows=`` below)."""
    rows = await read_rows(conn, job_id)
    if len(rows) < len(STAGES):
        await ensure_rows(conn, job_id)
        rows = await read_rows(conn, job_id)
    return rows


async def _rows_of(conn: aiosqlite.Connection, job_id: str,
                   rows: dict[str, StageRow] | None) -> dict[str, StageRow]:
    """The job's rows: ``rows`` when the caller read them in this transaction (and wrote
    none of them since), else read now."""
    return rows if rows is not None else await read_rows(conn, job_id)


def _run_ids(owner: Owner | None) -> dict[str, str | None]:
    return {"workflow_id": owner.workflow_id if owner else None,
            "run_id": owner.run_id if owner else None}


async def _append(conn, event: ev.DomainEvent, job_id: str, owner: Owner | None, key: str | None):
    await append_event(conn, event, job_id=job_id, dedupe_key=key, **_run_ids(owner))


async def claim(conn: aiosqlite.Connection, job_id: str, stage: Stage, owner: Owner, *,
                rows: dict[str, StageRow] | None = None) -> int:
    """Take ownership for this run; returns the baseline result version."""
    row = (await _rows_of(conn, job_id, rows))[stage]
    same_run = row.owner_run_id == owner.run_id and row.status == "running"
    baseline = row.baseline_version if same_run else row.result_version
    now = utc_now_iso()
    await conn.execute(
        "UPDATE job_stage_states SET status = 'running', attempt = ?, owner_workflow_id = ?,"
        " owner_run_id = ?, baseline_version = ?, error_code = NULL, retryable = NULL,"
        " blocked_reason = NULL, started_at = ?, finished_at = NULL, updated_at = ?"
        " WHERE tenant_id = ? AND job_id = ? AND stage = ?",
        (owner.attempt, owner.workflow_id, owner.run_id, baseline, now, now,
         TENANT_ID, job_id, stage),
    )
    await _append(conn, ev.StageStarted(job_id=job_id, stage=stage, attempt=owner.attempt,
                                        **_run_ids(owner)),
                  job_id, owner, f"StageStarted:{owner.run_id}:{job_id}:{stage}:{owner.attempt}")
    return baseline


async def still_owned(conn: aiosqlite.Connection, job_id: str, stage: Stage, owner: Owner, *,
                      rows: dict[str, StageRow] | None = None) -> bool:
    row = (await _rows_of(conn, job_id, rows))[stage]
    return row.status == "running" and row.owner_run_id == owner.run_id


async def complete(conn: aiosqlite.Connection, job_id: str, stage: Stage, owner: Owner, *,
                   rows: dict[str, StageRow] | None = None) -> int:
    """Mark succeeded and bump the result version; returns the new version."""
    rows = await _rows_of(conn, job_id, rows)
    row = rows[stage]
    version = row.result_version + 1
    now = utc_now_iso()
    duration = _duration_ms(row.started_at, now)
    await conn.execute(
        "UPDATE job_stage_states SET status = 'succeeded', result_version = ?, finished_at = ?,"
        " duration_ms = ?, updated_at = ? WHERE tenant_id = ? AND job_id = ? AND stage = ?",
        (version, now, duration, now, TENANT_ID, job_id, stage),
    )
    await _append(conn, ev.StageCompleted(job_id=job_id, stage=stage, duration_ms=duration,
                                          **_run_ids(owner)),
                  job_id, owner, f"StageCompleted:{owner.run_id}:{job_id}:{stage}")
    # What an earlier failure of this stage blocked may run again now. (The update above
    # wrote only this stage's row: the downstream rows read with ``rows`` still hold.)
    await reopen_downstream(conn, job_id, stage, source="upstream_succeeded", owner=owner,
                            rows=rows)
    return version


async def settle(
    conn: aiosqlite.Connection, job_id: str, stage: Stage, *, status: str, reason: str,
    owner: Owner | None,
) -> None:
    """Record a stage that will not run now: blocked or skipped, with a bounded reason."""
    now = utc_now_iso()
    await conn.execute(
        "UPDATE job_stage_states SET status = ?, blocked_reason = ?, owner_workflow_id = ?,"
        " owner_run_id = ?, finished_at = ?, updated_at = ?"
        " WHERE tenant_id = ? AND job_id = ? AND stage = ?",
        (status, reason, owner.workflow_id if owner else None, owner.run_id if owner else None,
         now, now, TENANT_ID, job_id, stage),
    )
    event_type = ev.StageBlocked if status == "blocked" else ev.StageSkipped
    run_key = owner.run_id if owner else now
    await _append(conn, event_type(job_id=job_id, stage=stage, reason=reason, **_run_ids(owner)),
                  job_id, owner, f"{event_type.__name__}:{run_key}:{job_id}:{stage}")


async def reconcile_failure(
    conn: aiosqlite.Connection, job_id: str, stage: Stage, owner: Owner, *,
    error_code: str, retryable: bool,
) -> str:
    """After the stage activity gave up: accept a result this run committed after its
    baseline, else terminalize as failed (non-retryable) or exhausted. Returns the status."""
    row = (await read_rows(conn, job_id))[stage]
    if row.owner_run_id != owner.run_id:
        return row.status  # someone else owns it now: not ours to settle
    if row.status == "succeeded":
        return "succeeded"
    status = "exhausted" if retryable else "failed"
    now = utc_now_iso()
    await conn.execute(
        "UPDATE job_stage_states SET status = ?, error_code = ?, retryable = ?, finished_at = ?,"
        " updated_at = ? WHERE tenant_id = ? AND job_id = ? AND stage = ?",
        (status, error_code, int(retryable), now, now, TENANT_ID, job_id, stage),
    )
    key = f"StageTerminal:{owner.run_id}:{job_id}:{stage}"
    if status == "exhausted":
        event = ev.StageExhausted(job_id=job_id, stage=stage, error_code=error_code,
                                  attempts=owner.attempt, **_run_ids(owner))
    else:
        event = ev.StageFailed(job_id=job_id, stage=stage, error_code=error_code,
                               retryable=False, **_run_ids(owner))
    await _append(conn, event, job_id, owner, key)
    await block_downstream(conn, job_id, stage, owner)
    return status


async def block_downstream(conn: aiosqlite.Connection, job_id: str, stage: Stage,
                           owner: Owner | None) -> list[str]:
    """After ``stage`` gave up, its pending downstream stages are explicitly blocked by it
    (``upstream_not_succeeded``, a ``StageBlocked`` each): nothing will move them until
    the upstream is retried, so they must not read as waiting work. A downstream row that
    already has a result, or its own block or failure, keeps it; a pending row behind a
    succeeded one is not blocked by this failure. Returns the stages blocked now."""
    rows = await read_rows(conn, job_id)
    blocked: list[str] = []
    upstream_succeeded = False  # ``stage`` itself just failed
    for later in downstream_of(stage):
        row = rows.get(later)
        if row is not None and row.status == "pending" and not upstream_succeeded:
            await settle(conn, job_id, later, status="blocked", reason=UPSTREAM_NOT_SUCCEEDED,
                         owner=owner)
            blocked.append(later)
            continue
        upstream_succeeded = row is not None and row.status == "succeeded"
    return blocked


async def reopen_downstream(conn: aiosqlite.Connection, job_id: str, stage: Stage, *,
                            source: str, owner: Owner | None = None,
                            rows: dict[str, StageRow] | None = None) -> list[str]:
    """``stage`` is back in play (reset for a retry, or it succeeded): the consecutive
    downstream rows it had blocked (``upstream_not_succeeded``) return to pending with a
    ``StageReset`` each. The walk stops at the first row that is not blocked that way, so
    another cause (low confidence, a missing profile, a user skip) is kept. Returns the
    stages reopened. ``rows``: the job's rows, when the caller read them in this
    transaction and has written no downstream row since."""
    rows = await _rows_of(conn, job_id, rows)
    reopened: list[str] = []
    for later in downstream_of(stage):
        row = rows.get(later)
        if row is None or row.status != "blocked" or row.blocked_reason != UPSTREAM_NOT_SUCCEEDED:
            break
        await _to_pending(conn, job_id, later)
        await _append(conn, ev.StageReset(job_id=job_id, stage=later, source=source,
                                          previous_status=row.status, **_run_ids(owner)),
                      job_id, owner, None)
        reopened.append(later)
    return reopened


async def cancel_owned(conn: aiosqlite.Connection, job_id: str, owner: Owner) -> list[str]:
    """An explicit cancellation terminalizes only the stages this exact run owns."""
    cursor = await conn.execute(
        "SELECT stage FROM job_stage_states WHERE tenant_id = ? AND job_id = ?"
        " AND owner_run_id = ? AND status IN ('queued', 'running')",
        (TENANT_ID, job_id, owner.run_id),
    )
    canceled = [row[0] for row in await cursor.fetchall()]
    now = utc_now_iso()
    for stage in canceled:
        await conn.execute(
            "UPDATE job_stage_states SET status = 'canceled', finished_at = ?, updated_at = ?"
            " WHERE tenant_id = ? AND job_id = ? AND stage = ?",
            (now, now, TENANT_ID, job_id, stage),
        )
        await _append(conn, ev.StageCanceled(job_id=job_id, stage=stage, **_run_ids(owner)),
                      job_id, owner, f"StageCanceled:{owner.run_id}:{job_id}:{stage}")
    return canceled


async def reset(
    conn: aiosqlite.Connection, job_id: str, stage: Stage, *, source: str
) -> str:
    """Back to pending, clearing the previous owner so a canceled predecessor cannot
    reclaim explicitly retried work. Returns the previous status."""
    row = (await read_rows(conn, job_id))[stage]
    await _to_pending(conn, job_id, stage)
    await _append(conn, ev.StageReset(job_id=job_id, stage=stage, source=source,
                                      previous_status=row.status), job_id, None, None)
    # The stages this one's failure blocked wait for it again, in the same command.
    await reopen_downstream(conn, job_id, stage, source=source)
    return row.status


async def _to_pending(conn: aiosqlite.Connection, job_id: str, stage: Stage) -> None:
    now = utc_now_iso()
    await conn.execute(
        "UPDATE job_stage_states SET status = 'pending', owner_workflow_id = NULL,"
        " owner_run_id = NULL, baseline_version = NULL, error_code = NULL, retryable = NULL,"
        " blocked_reason = NULL, started_at = NULL, finished_at = NULL, updated_at = ?"
        " WHERE tenant_id = ? AND job_id = ? AND stage = ?",
        (now, TENANT_ID, job_id, stage),
    )


def _duration_ms(started_at: str | None, finished_at: str) -> int | None:
    if not started_at:
        return None
    return int((parse_iso(finished_at) - parse_iso(started_at)).total_seconds() * 1000)


# Blocks that lift by themselves once their cause is fixed (a profile saved, upstream done).
RETRYABLE_BLOCKS = (PROFILE_MISSING, UPSTREAM_NOT_SUCCEEDED)
REDO_STATUSES = ("pending", "failed", "exhausted", "canceled")


async def runnable_jobs(db, stage: Stage) -> list[str]:
    """Jobs whose ``stage`` can run now: not done, not blocked for a lasting reason, not
    user-skipped, and with no stage of theirs queued or running."""
    rows = await db.fetchall(
        "SELECT s.job_id FROM job_stage_states s JOIN jobs j ON j.job_id = s.job_id"
        " WHERE s.tenant_id = ? AND s.stage = ? AND j.user_status IS NULL"
        " AND (s.status IN (?, ?, ?, ?) OR (s.status = 'blocked' AND s.blocked_reason IN (?, ?)))"
        " AND NOT EXISTS (SELECT 1 FROM job_stage_states a WHERE a.job_id = s.job_id"
        "   AND a.status IN ('queued', 'running')) ORDER BY s.job_id",
        (TENANT_ID, stage, *REDO_STATUSES, *RETRYABLE_BLOCKS),
    )
    return [row[0] for row in rows]


_NEXT_STAGE_SQL = "CASE u.stage " + " ".join(
    f"WHEN '{stage}' THEN '{downstream_of(stage)[0]}'" for stage in STAGES[:-1]) + " END"


async def block_stranded_downstream(conn: aiosqlite.Connection) -> int:
    """Rows that gave up before downstream blocking existed (or whose reconciliation was
    never delivered): an upstream failed / exhausted, the next stage still pending, no
    stage of the job queued or running, and no live run owning the failure. Blocks them
    as :func:`reconcile_failure` would have. Idempotent; returns how many were blocked."""
    cursor = await conn.execute(
        "SELECT u.job_id, u.stage, u.owner_workflow_id, u.owner_run_id, u.attempt"
        " FROM job_stage_states u"
        f" WHERE u.tenant_id = ? AND u.stage IN ({','.join('?' * (len(STAGES) - 1))})"
        " AND u.status IN ('failed', 'exhausted')"
        " AND EXISTS (SELECT 1 FROM job_stage_states d WHERE d.tenant_id = u.tenant_id"
        f"   AND d.job_id = u.job_id AND d.stage = {_NEXT_STAGE_SQL} AND d.status = 'pending')"
        " AND NOT EXISTS (SELECT 1 FROM job_stage_states a WHERE a.tenant_id = u.tenant_id"
        "   AND a.job_id = u.job_id AND a.status IN ('queued', 'running'))"
        " AND NOT EXISTS (SELECT 1 FROM workflow_run_projections w"
        "   WHERE w.tenant_id = u.tenant_id AND w.run_id = u.owner_run_id"
        "   AND w.status = 'running')",
        (TENANT_ID, *STAGES[:-1]),
    )
    blocked = 0
    for job_id, stage, workflow_id, run_id, attempt in await cursor.fetchall():
        owner = Owner(workflow_id, run_id, attempt) if run_id else None
        blocked += len(await block_downstream(conn, job_id, stage, owner))
    return blocked


async def jobs_owned_by_run(conn: aiosqlite.Connection, run_id: str) -> list[str]:
    """Jobs with a stage the run holds right now (queued or running under it)."""
    cursor = await conn.execute(
        "SELECT DISTINCT job_id FROM job_stage_states WHERE tenant_id = ? AND owner_run_id = ?"
        " AND status IN ('queued', 'running')", (TENANT_ID, run_id))
    return [row[0] for row in await cursor.fetchall()]
