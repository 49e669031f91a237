"""A provider wrapper that writes every call's estimated cost to the ``llm_spend`` ledger.

The spend is committed in its own transaction right after the call returns: the money is
spent even when the caller later fails or its own transaction rolls back. Failed calls
(typed LlmErrors) record nothing: providers do not bill requests they reject."""

from __future__ import annotations

import dataclasses
import logging

from temporalio import activity

from backend.config import TENANT_ID
from backend.domain.clock import utc_now
from backend.llm.base import ChatProvider, Completion, LlmError
from backend.llm.rates import RateTable, estimate_llm_cost_usd
from backend.store.db import Database
from backend.store.provider_failures import (
    OUTSIDE_ACTIVITY,
    ProviderFailure,
    record_provider_failure,
)
from backend.store.spend import record_source_spend, record_spend, utc_day

log = logging.getLogger(__name__)


class MeteredProvider:
    def __init__(self, inner: ChatProvider, db: Database, rates: RateTable):
        self.inner = inner
        self._db = db
        self._rates = rates
        self.calls = 0  # completed (and recorded) calls, for tests and diagnostics
        self.failures = 0
        # The source whose job these calls are for (jobs.first_source): its calls are
        # kept per source too, for the per-source share of the ceiling. None: no job's.
        self.source: str | None = None

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def is_offline(self) -> bool:
        return self.inner.is_offline

    @property
    def is_local(self) -> bool:
        return bool(getattr(self.inner, "is_local", False))

    def __repr__(self) -> str:
        return f"MeteredProvider({self.inner!r})"

    async def complete(
        self, *, system: str, user: str, max_tokens: int = 1200, json_mode: bool = False
    ) -> Completion:
        try:
            completion = await self.inner.complete(
                system=system, user=user, max_tokens=max_tokens, json_mode=json_mode
            )
        except LlmError as error:
            self.failures += 1
            await self._record_failure(error)
            raise
        except BaseException:
            self.failures += 1
            raise
        cost = estimate_llm_cost_usd(
            self._rates, completion.provider, completion.model,
            completion.input_tokens, completion.output_tokens, local=self.is_local,
        )
        day = utc_day(utc_now())
        async with self._db.transaction() as conn:
            await record_spend(
                conn, day=day, provider=completion.provider,
                model=completion.model, input_tokens=completion.input_tokens,
                output_tokens=completion.output_tokens, cost=cost,
            )
            if self.source is not None:
                await record_source_spend(conn, day=day, source=self.source, cost=cost)
        self.calls += 1
        log.debug("llm call %s/%s: %d in, %d out, ~$%s%s", completion.provider,
                  completion.model, completion.input_tokens, completion.output_tokens, cost,
                  " (usage estimated)" if completion.usage_estimated else "")
        return dataclasses.replace(completion, cost_usd=cost)

    async def _record_failure(self, error: LlmError) -> None:
        """Bounded diagnostics of a failed call, correlated with the exact activity that
        made it (``failureDiagnostics.providerFailures``). Never the message or the prompt.
        Recording is best effort: it must not mask the provider's typed error."""
        info = activity.info() if activity.in_activity() else None
        failure = ProviderFailure(
            provider=self.name, model=self.model,
            operation=info.activity_type if info else OUTSIDE_ACTIVITY,
            code=error.code, retryable=error.retryable,
            error_type=error.provider_error_type, http_status=error.status,
            workflow_id=info.workflow_id if info else None,
            run_id=info.workflow_run_id if info else None,
            activity_id=info.activity_id if info else None,
            attempt=info.attempt if info else None,
        )
        try:
            async with self._db.transaction() as conn:
                await record_provider_failure(conn, TENANT_ID, failure)
        except Exception:  # noqa: BLE001 - diagnostics only
            log.warning("could not record a provider failure diagnostic", exc_info=True)
