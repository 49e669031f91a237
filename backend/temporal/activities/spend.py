"""The spend preflight: the first activity of every spendful workflow.

Run it with ``maximum_attempts=1``: a depleted budget is a clean, fast, non-retryable
``budget_exceeded`` failure before any paid work, never a retry storm."""

from __future__ import annotations

from temporalio import activity
from temporalio.exceptions import ApplicationError

from backend.config import AppPaths, load_settings
from backend.llm.budget import BudgetStatus, read_spend_budget_status
from backend.store.db import Database


class SpendActivities:
    def __init__(self, db: Database, paths: AppPaths):
        self._db = db
        self._paths = paths

    @activity.defn(name="check_spend_budget")
    async def check_spend_budget(self) -> BudgetStatus:
        settings = load_settings(self._paths)  # re-read: the ceiling may have just changed
        status = await read_spend_budget_status(self._db, settings)
        if status.exhausted:
            raise ApplicationError(
                "daily spend ceiling reached", status.model_dump(mode="json", by_alias=True),
                type="budget_exceeded", non_retryable=True,
            )
        return status
