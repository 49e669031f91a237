"""The spend preflight: the first activity of every spendful workflow.

A depleted budget is a clean, fast, non-retryable ``budget_exceeded`` failure before any
paid work, never a retry storm; a lost attempt (its worker died) is retried, and admission
is idempotent per run so a retry never reserves twice."""

from __future__ import annotations

from temporalio import activity
from temporalio.exceptions import ApplicationError

from backend.config import AppPaths, load_settings
from backend.domain.model import CamelModel
from backend.faults import fault_point, stall_point
from backend.llm.admission import Basis, admit, per_call_estimate
from backend.llm.budget import BudgetStatus
from backend.llm.factory import provider_from_settings
from backend.llm.rates import load_rates
from backend.secrets.store import SecretStore
from backend.store.db import Database


class PreflightInput(CamelModel):
    workflow_id: str
    run_id: str
    paid_calls: int = 0  # model calls this run may make (0: nothing to reserve)


class SpendActivities:
    def __init__(self, db: Database, paths: AppPaths):
        self._db = db
        self._paths = paths

    @activity.defn(name="check_spend_budget")
    async def check_spend_budget(self, input: PreflightInput) -> BudgetStatus:
        fault_point(self._paths, "preflight-in-flight")  # the worker dies mid-check
        await stall_point(self._paths, "preflight-stall")  # the check hangs past its timeout
        settings = load_settings(self._paths)  # re-read: the ceiling may have just changed
        provider = provider_from_settings(settings.llm, SecretStore(self._paths))
        async with self._db.transaction() as conn:
            estimate = 0
            if not provider.is_offline and input.paid_calls:
                per_call = await per_call_estimate(
                    conn, settings, load_rates(self._paths), provider=provider.name,
                    model=provider.model, local=bool(getattr(provider, "is_local", False)))
                estimate = per_call * input.paid_calls
            # The provider and model are kept with the reservation: a stage that would call
            # another one later (the settings changed mid-run) is re-admitted first.
            admission = await admit(conn, settings, run_id=input.run_id,
                                    workflow_id=input.workflow_id, estimate=estimate,
                                    basis=Basis.of(provider))
        if not admission.admitted:
            raise ApplicationError(
                f"daily spend ceiling: {admission.reason}",
                admission.status.model_dump(mode="json", by_alias=True),
                type="budget_exceeded", non_retryable=True,
            )
        return admission.status
