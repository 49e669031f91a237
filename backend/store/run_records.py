"""The workflow runs as the API and the worker's loops read them, and the facts recorded
about a run from outside it (a cancellation request, the reconciler's verdict).

Reads return raw rows of ``workflow_run_projections`` (every column, by name): the
projection module (``backend/projections/workflow_runs.py``) turns them into its rows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import aiosqlite

from backend.config import TENANT_ID
from backend.domain import events as ev
from backend.store.db import Database
from backend.store.events import any_recorded, append_event

SORT_COLUMNS = frozenset({"started_at", "closed_at", "duration_ms", "workflow_type", "status"})


# --- reads -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunFilter:
    status: str | None = None
    workflow_type: str | None = None
    started_since: str | None = None  # inclusive, ISO
    started_before: str | None = None  # exclusive, ISO


def _where(filters: RunFilter) -> tuple[str, list]:
    clauses, params = ["p.tenant_id = ?"], [TENANT_ID]
    for clause, value in (("p.status = ?", filters.status),
                          ("p.workflow_type = ?", filters.workflow_type),
                          ("p.started_at >= ?", filters.started_since),
                          ("p.started_at < ?", filters.started_before)):
        if value is not None:
            clauses.append(clause)
            params.append(value)
    return " AND ".join(clauses), params


def _order_by(column: str, descending: bool) -> str:
    """Runs without the sort key last, ties broken by run id. Descending, SQLite already
    puts NULL last, so "key DESC, run_id DESC" is that order and an index ending in
    (key, run_id) serves it without sorting every run (migration 0013)."""
    if column not in SORT_COLUMNS:
        raise ValueError(f"not a sort column: {column}")
    if descending:
        return f"p.{column} DESC, p.run_id DESC"
    return f"p.{column} IS NULL, p.{column} ASC, p.run_id ASC"


async def run_page(db: Database, filters: RunFilter, *, sort_column: str, descending: bool,
                   limit: int, offset: int) -> tuple[int, list[aiosqlite.Row]]:
    """The filtered total and one page of runs, each with its job's ``job_title`` and
    ``job_company`` (null without a job)."""
    where, params = _where(filters)
    total = (await db.fetchone(f"SELECT COUNT(*) FROM workflow_run_projections p WHERE {where}",
                               params))[0]
    order_by = _order_by(sort_column, descending)
    # The page's rows are chosen first over the narrow sort keys only (served in order by
    # an index for a descending sort); the full rows and their jobs are read for that page
    # alone, then put back in the same order.
    records = await db.fetchall(
        f"SELECT p.*, j.title AS job_title, j.company AS job_company"
        f" FROM (SELECT p.rowid AS page_rowid FROM workflow_run_projections p WHERE {where}"
        f"       ORDER BY {order_by} LIMIT ? OFFSET ?) page"
        f" JOIN workflow_run_projections p ON p.rowid = page.page_rowid"
        f" LEFT JOIN jobs j ON j.tenant_id = p.tenant_id AND j.job_id = p.job_id"
        f" ORDER BY {order_by}",
        [*params, limit, offset],
    )
    return int(total), records


async def open_runs(db: Database, *, started_before: str, not_found_status: str
                    ) -> list[aiosqlite.Row]:
    """Runs the read model still shows running (or provisionally not found), started
    before ``started_before``, oldest first."""
    return await db.fetchall(
        "SELECT * FROM workflow_run_projections WHERE tenant_id = ?"
        " AND status IN ('running', ?) AND started_at <= ? ORDER BY started_at",
        (TENANT_ID, not_found_status, started_before),
    )


async def runs_without_fact(db: Database, *, status: str,
                            dedupe_keys: Callable[[str], tuple[str, ...]]
                            ) -> list[aiosqlite.Row]:
    """Runs in ``status`` with no event under any of ``dedupe_keys(run_id)`` in the log
    (a fact recorded about the run from outside it), newest first."""
    records = await db.fetchall(
        "SELECT * FROM workflow_run_projections WHERE tenant_id = ? AND status = ?"
        " ORDER BY started_at DESC", (TENANT_ID, status))
    missing = []
    for record in records:
        if not await any_recorded(db, *dedupe_keys(record["run_id"])):
            missing.append(record)
    return missing


async def has_running_run_of_type(db: Database, workflow_type: str) -> bool:
    """Whether a run of ``workflow_type`` is open (as the folded lifecycle says)."""
    row = await db.fetchone(
        "SELECT 1 FROM workflow_run_projections WHERE tenant_id = ? AND workflow_type = ?"
        " AND status = 'running' LIMIT 1", (TENANT_ID, workflow_type))
    return row is not None


async def run_events(db: Database, run_id: str) -> list[aiosqlite.Row]:
    """Every event recorded under this exact run, in order (its timeline)."""
    return await db.fetchall(
        "SELECT id, type, payload_json, created_at FROM job_events"
        " WHERE tenant_id = ? AND run_id = ? ORDER BY id",
        (TENANT_ID, run_id),
    )


async def job_heading(db: Database, job_id: str) -> aiosqlite.Row | None:
    """A run's job as the run list names it (job_id, title, company)."""
    return await db.fetchone(
        "SELECT job_id, title, company FROM jobs WHERE tenant_id = ? AND job_id = ?",
        (TENANT_ID, job_id))


async def job_has_stage_in(db: Database, job_id: str, statuses: tuple[str, ...]) -> bool:
    marks = ",".join("?" * len(statuses))
    found = await db.fetchone(
        f"SELECT 1 FROM job_stage_states WHERE tenant_id = ? AND job_id = ?"
        f" AND status IN ({marks}) LIMIT 1", (TENANT_ID, job_id, *statuses))
    return found is not None


# --- facts about a run, recorded from outside it -----------------------------------------


async def record_run_fact(
    db: Database, event: ev.WorkflowCancellationRequested | ev.WorkflowReconciled, *,
    job_id: str | None, dedupe_key: str | None = None, unless_recorded: tuple[str, ...] = (),
) -> bool:
    """One fact about the event's run in its own transaction; False when it was not
    written: its dedupe key was taken, or one of ``unless_recorded`` is in the log already
    (checked under the write lock)."""
    async with db.transaction() as conn:
        if unless_recorded and await any_recorded(conn, *unless_recorded):
            return False
        written = await append_event(conn, event, job_id=job_id, workflow_id=event.workflow_id,
                                     run_id=event.run_id, dedupe_key=dedupe_key)
    return written is not None


async def record_verdict(db: Database, event: ev.WorkflowReconciled, *, job_id: str | None,
                         while_status: str) -> bool:
    """A reconcile verdict, written only while the run's row still shows ``while_status``
    (checked under the write lock); False when another pass judged the run first. Two
    passes that overlap (the worker's and one run by hand or by a test) then record one
    verdict, not two."""
    async with db.transaction() as conn:
        async with conn.execute(
                "SELECT status FROM workflow_run_projections WHERE tenant_id = ? AND run_id = ?",
                (TENANT_ID, event.run_id)) as cursor:
            found = await cursor.fetchone()
        if found is None or found[0] != while_status:
            return False
        written = await append_event(conn, event, job_id=job_id, workflow_id=event.workflow_id,
                                     run_id=event.run_id)
    return written is not None


async def failed_run_error_code(db: Database, run_id: str) -> str | None:
    """The error code of the run's WorkflowFailed event (the newest), or None."""
    row = await db.fetchone(
        "SELECT json_extract(payload_json, '$.errorCode') FROM job_events WHERE tenant_id = ?"
        " AND run_id = ? AND type = 'WorkflowFailed' ORDER BY id DESC LIMIT 1",
        (TENANT_ID, run_id))
    return row[0] if row else None
