"""How activities reach the configured model, and how domain errors become Temporal
errors with bounded codes (retryable or not)."""

from __future__ import annotations

from datetime import timedelta

from temporalio.exceptions import ApplicationError

from backend.config import AppPaths, AppSettings
from backend.domain.errors import TypedFailure
from backend.llm.base import ChatProvider, LlmError
from backend.llm.factory import provider_from_settings
from backend.llm.metered import MeteredProvider
from backend.llm.rates import load_rates
from backend.secrets.store import SecretStore
from backend.store.db import Database


def build_provider(paths: AppPaths, db: Database, settings: AppSettings) -> ChatProvider:
    """The configured provider; every paid call is metered into the llm_spend ledger."""
    provider = provider_from_settings(settings.llm, SecretStore(paths))
    if provider.is_offline:
        return provider
    return MeteredProvider(provider, db, load_rates(paths))


def llm_application_error(error: LlmError) -> ApplicationError:
    """The Temporal failure for an LLM error: type = code, retry per the error's class
    (here, not in ``backend/llm/``, so the providers and the budget never load temporalio)."""
    delay = timedelta(seconds=error.retry_after_s) if error.retry_after_s else None
    return ApplicationError(
        error.message, type=error.code, non_retryable=not error.retryable,
        next_retry_delay=delay,
    )


def typed_failure(error: BaseException) -> ApplicationError | None:
    """Bounded code + retryability; never the exception text (it may quote a payload).
    A provider's ``Retry-After`` (a 429 or 503) sets the delay of Temporal's next attempt,
    so a rate-limited call is not repeated sooner than the provider asked."""
    if not isinstance(error, TypedFailure):
        return None
    retry_after = getattr(error, "retry_after_s", None)
    return ApplicationError(
        error.code, type=error.code, non_retryable=not error.retryable,
        next_retry_delay=timedelta(seconds=retry_after) if retry_after and error.retryable
        else None)
