"""Read-model projections folded from the append-only ``job_events`` log.

Each projection keeps a watermark in ``projection_watermarks``, folds new events
idempotently in bounded pages, and can be rebuilt from event 0 at any time. The worker
and the API share the same builder code.
"""

from backend.projections.workflow_runs import (
    WorkflowRunRow,
    fold_workflow_event,
    read_watermark,
    rebuild_workflow_runs,
    refresh_workflow_runs,
)

__all__ = [
    "WorkflowRunRow",
    "fold_workflow_event",
    "read_watermark",
    "rebuild_workflow_runs",
    "refresh_workflow_runs",
]
