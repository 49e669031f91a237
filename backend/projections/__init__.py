"""Read-model projections folded from the append-only ``job_events`` log.

Each projection keeps a watermark in ``projection_watermarks``, folds events idempotently
in bounded pages, and can be rebuilt from event 0 at any time. Importing this package
registers every projection's fold with the projection builder
(:mod:`backend.store.projection_builder`), which runs it inside the transaction of each
append (fold-at-write); :func:`catch_up` is the start-up pass of the API and the worker.
"""

from backend.config import TENANT_ID
from backend.projections import applications, apply_runs, contacts, pipeline_steps, workflow_runs
from backend.projections.workflow_runs import (
    WorkflowRunRow,
    fold_workflow_event,
    read_watermark,
    rebuild_workflow_runs,
    refresh_workflow_runs,
)
from backend.store import projection_builder
from backend.store.db import Database

__all__ = [
    "WorkflowRunRow",
    "apply_runs",
    "applications",
    "catch_up",
    "contacts",
    "fold_workflow_event",
    "pipeline_steps",
    "read_watermark",
    "rebuild_workflow_runs",
    "refresh_workflow_runs",
    "workflow_runs",
]


async def catch_up(db: Database, *, tenant_id: str = TENANT_ID) -> None:
    """Once at start-up: repair lost workflow-run rows, then fold whatever the log holds
    beyond each projection's watermark (events a migration's data step appended, or a
    process appended before its projections registered)."""
    await refresh_workflow_runs(db, tenant_id=tenant_id)
    await projection_builder.catch_up_all(db, tenant_id)
