"""Activities of ``BatchStageWorkflow`` beyond the shared stage activities."""

from __future__ import annotations

from temporalio import activity

from backend.store import stages
from backend.store.db import Database
from backend.temporal.batch_contracts import BatchCancelInput


class BatchActivities:
    def __init__(self, db: Database):
        self._db = db

    @activity.defn(name="cancel_batch_items")
    async def cancel_batch_items(self, input: BatchCancelInput) -> int:
        """An explicit cancellation terminalizes only the stage rows this exact batch run
        owns; rows another run owns, or that already settled, are left alone."""
        owner = stages.Owner(input.run.workflow_id, input.run.run_id, 0)
        canceled = 0
        async with self._db.transaction() as conn:
            for job_id in input.job_ids:
                canceled += len(await stages.cancel_owned(conn, job_id, owner))
        return canceled
