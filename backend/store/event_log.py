"""The raw event log as the debug Activity view reads it: newest first, filtered by type,
job and workflow, searchable, one page per keyset cursor.

Each row carries a nullable ``workflow_id`` derived from the canonical payload
(``workflowId``, else a discovery event's ``discoverWorkflowId``, else the row's column),
and likewise ``run_id`` and ``job_id``, so a run's "Review activity" finds exactly that
workflow's events."""

from __future__ import annotations

from dataclasses import dataclass

import aiosqlite

from backend.config import TENANT_ID
from backend.store.db import Database

WORKFLOW_ID_SQL = ("COALESCE(json_extract(e.payload_json, '$.workflowId'),"
                   " json_extract(e.payload_json, '$.discoverWorkflowId'), e.workflow_id)")
RUN_ID_SQL = ("COALESCE(e.run_id, json_extract(e.payload_json, '$.runId'),"
              " json_extract(e.payload_json, '$.discoverRunId'))")
JOB_ID_SQL = "COALESCE(e.job_id, json_extract(e.payload_json, '$.jobId'))"
OCCURRED_SQL = "COALESCE(json_extract(e.payload_json, '$.occurredAt'), e.created_at)"
SELECT_SQL = (f"SELECT e.id, e.type, {OCCURRED_SQL} AS occurred_at, e.created_at,"
              f" {JOB_ID_SQL} AS job_id, {WORKFLOW_ID_SQL} AS workflow_id,"
              f" {RUN_ID_SQL} AS run_id, e.payload_json FROM job_events e")


@dataclass(frozen=True)
class ActivityFilter:
    q: str | None = None  # free text over type, job id, workflow id and run id
    type: str | None = None
    job_id: str | None = None
    workflow_id: str | None = None
    before_id: int | None = None  # keyset cursor: events older than this id


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _where(filters: ActivityFilter) -> tuple[str, list]:
    clauses, params = ["e.tenant_id = ?"], [TENANT_ID]
    for clause, value in (("e.id < ?", filters.before_id), ("e.type = ?", filters.type),
                          (f"{JOB_ID_SQL} = ?", filters.job_id),
                          (f"{WORKFLOW_ID_SQL} = ?", filters.workflow_id)):
        if value is not None:
            clauses.append(clause)
            params.append(value)
    if filters.q is not None:
        like = _like(filters.q)
        clauses.append(f"(e.type LIKE ? ESCAPE '\\' OR {JOB_ID_SQL} LIKE ? ESCAPE '\\'"
                       f" OR {WORKFLOW_ID_SQL} LIKE ? ESCAPE '\\'"
                       f" OR {RUN_ID_SQL} LIKE ? ESCAPE '\\')")
        params += [like, like, like, like]
    return " AND ".join(clauses), params


async def activity_rows(db: Database, filters: ActivityFilter, limit: int
                        ) -> list[aiosqlite.Row]:
    """Up to ``limit`` matching events, newest first."""
    where, params = _where(filters)
    return await db.fetchall(f"{SELECT_SQL} WHERE {where} ORDER BY e.id DESC LIMIT ?",
                             [*params, limit])


async def activity_row(db: Database, event_id: int) -> aiosqlite.Row | None:
    return await db.fetchone(f"{SELECT_SQL} WHERE e.tenant_id = ? AND e.id = ?",
                             (TENANT_ID, event_id))
