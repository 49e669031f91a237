"""What the store knows of work still open: runs not closed, stages queued or running,
and the newest event (a change detector for "nothing has happened for a while")."""

from __future__ import annotations

from dataclasses import dataclass

from backend.config import TENANT_ID
from backend.domain.stages import ACTIVE_STATUSES
from backend.store.db import Database


@dataclass(frozen=True)
class OpenWork:
    open_runs: int        # workflow runs whose lifecycle has no terminal outcome yet
    active_stages: int    # stage rows queued or running
    last_event_id: int


async def read_open_work(db: Database) -> OpenWork:
    marks = ",".join("?" * len(ACTIVE_STATUSES))
    row = await db.fetchone(
        "SELECT (SELECT COUNT(*) FROM workflow_run_projections"
        "        WHERE tenant_id = ? AND status = 'running'),"
        f"      (SELECT COUNT(*) FROM job_stage_states WHERE tenant_id = ? AND status IN ({marks})),"
        "       (SELECT COALESCE(MAX(id), 0) FROM job_events WHERE tenant_id = ?)",
        (TENANT_ID, TENANT_ID, *sorted(ACTIVE_STATUSES), TENANT_ID))
    return OpenWork(open_runs=int(row[0]), active_stages=int(row[1]), last_event_id=int(row[2]))
