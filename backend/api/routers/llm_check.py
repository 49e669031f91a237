"""POST /v1/settings/llm/test: one tiny real call to the configured (or proposed) model.

The Settings view's "Test connection" button. The body may carry LLM settings that are not
saved yet (merged over the saved ones, like PATCH /v1/settings), so a user can try a model
before keeping it; nothing is saved here. The call goes through the same provider factory
and spend meter as the pipeline: a paid test call lands in the ``llm_spend`` ledger (the
ledger is the truth of what was spent) and is refused once today's ceiling is reached.
``offline`` makes no call and costs $0.

Failures are typed (bad key, unreachable, timeout, refused request, unreadable answer) and
carry the settings ``fields`` to look at. The key is never returned and never logged: only
the provider, the model and the error code are.
"""

from __future__ import annotations

import asyncio
import logging
import time
from decimal import Decimal

from fastapi import APIRouter, Body, Depends, Request
from pydantic import BaseModel, Field, ValidationError

from backend.api.errors import ApiError, error_responses
from backend.api.partial import REQUEST_CONFIG
from backend.api.routers.secrets import secret_store
from backend.api.routers.settings import LlmPatch
from backend.api.security import require_token
from backend.config import LlmSettings
from backend.domain.model import CamelModel, Usd
from backend.llm.base import (
    ChatProvider,
    InsecureTransportNotConfirmed,
    LlmAuthenticationError,
    LlmConfigurationError,
    LlmError,
    LlmResponseInvalidError,
    LlmUnavailableError,
)
from backend.llm.budget import BudgetExceededError, ensure_budget_available
from backend.llm.factory import provider_from_settings
from backend.llm.metered import MeteredProvider
from backend.llm.rates import load_rates
from backend.secrets.store import SecretStore

log = logging.getLogger(__name__)

router = APIRouter(tags=["settings"], dependencies=[Depends(require_token)])

DEFAULT_TIMEOUT_S = 10.0
# The provider's own HTTP timeout is longer than ours, so our deadline always wins and a
# slow model reads as "timeout", never as a vague "unreachable".
PROVIDER_TIMEOUT_MARGIN_S = 5.0
TEST_SYSTEM = "You are a connection test. Answer with the single word OK."
TEST_USER = "ping"
TEST_MAX_TOKENS = 5
ENDPOINT_FIELDS = ["llm.baseUrl", "llm.model"]


class LlmTestRequest(CamelModel):
    model_config = REQUEST_CONFIG

    llm: LlmPatch | None = Field(  # type: ignore[valid-type]
        default=None, description="LLM settings to try, merged over the saved ones; not saved")
    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0, le=60)


class LlmTestResult(CamelModel):
    ok: bool = True
    provider: str
    model: str
    offline: bool
    cost_usd: Usd  # estimated cost of the test call, recorded in the spend ledger
    input_tokens: int
    output_tokens: int
    usage_estimated: bool
    latency_ms: int | None  # None for offline: no call was made
    message: str


def _proposed_settings(saved: LlmSettings, override: BaseModel | None) -> LlmSettings:
    changes = override.model_dump(by_alias=True, exclude_unset=True) if override else {}
    merged = {**saved.model_dump(by_alias=True), **changes}
    try:
        proposed = LlmSettings.model_validate(merged)
    except ValidationError as error:
        fields = sorted({"llm." + ".".join(str(p) for p in e["loc"]) for e in error.errors()})
        raise ApiError(422, "validation_error", "Invalid LLM settings: " + "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors()[:5]),
            fields=fields) from None
    if "insecureTransportConfirmed" not in changes and proposed.transport() != saved.transport():
        # A confirmation is about the server it was given for, not another one tried here.
        proposed = proposed.model_copy(update={"insecure_transport_confirmed": False})
    return proposed


def _typed(error: LlmError, llm: LlmSettings) -> ApiError:
    """The API error a user can act on, built from the typed LLM error (never its body)."""
    if isinstance(error, LlmAuthenticationError):
        return ApiError(502, "llm_authentication_failed",
                        f"The {llm.provider} provider refused the API key "
                        f"(HTTP {error.status}). Check the key you stored.",
                        fields=["llm.apiKeySecret"])
    if isinstance(error, InsecureTransportNotConfirmed):
        return ApiError(422, error.code, "Your API key would travel unencrypted (an http://"
                        " address on another computer). Use https://, or confirm it in"
                        " Settings.", fields=["llm.baseUrl", "llm.insecureTransportConfirmed"])
    if isinstance(error, LlmConfigurationError):
        if error.status is None:  # our side: a missing or unreadable setting
            return ApiError(422, "llm_not_configured", error.message,
                            fields=[error.setting] if error.setting else ENDPOINT_FIELDS)
        return ApiError(502, "llm_request_rejected", error.message, fields=ENDPOINT_FIELDS)
    if isinstance(error, LlmUnavailableError):
        if error.status is None:
            return ApiError(502, "llm_unreachable",
                            f"Could not reach the {llm.provider} provider: {error.message}.",
                            fields=["llm.baseUrl"])
        return ApiError(502, "llm_provider_unavailable", error.message)
    if isinstance(error, LlmResponseInvalidError):
        return ApiError(502, "llm_response_invalid", error.message, fields=ENDPOINT_FIELDS)
    return ApiError(502, error.code, error.message)


def _build_provider(llm: LlmSettings, store: SecretStore) -> ChatProvider:
    return provider_from_settings(llm, store)


@router.post("/v1/settings/llm/test", response_model=LlmTestResult,
             responses=error_responses(401, 409, 422, 502, 504))
async def test_llm_connection(
    request: Request, body: LlmTestRequest | None = Body(default=None),
) -> LlmTestResult:
    context = request.app.state.context
    body = body or LlmTestRequest()
    llm = _proposed_settings(context.settings.llm, body.llm)
    llm = llm.model_copy(update={"timeout_s": body.timeout_s + PROVIDER_TIMEOUT_MARGIN_S})
    try:
        # Keyring backends block: build (and read the key) off the event loop.
        inner = await asyncio.to_thread(_build_provider, llm, secret_store(request))
    except LlmError as error:
        raise _typed(error, llm) from None
    if inner.is_offline:
        return LlmTestResult(provider=inner.name, model=inner.model, offline=True,
                             cost_usd=Decimal(0), input_tokens=0, output_tokens=0,
                             usage_estimated=False, latency_ms=None,
                             message="Offline scoring works: no network, no key, $0.")
    try:
        await ensure_budget_available(context.db, context.settings)
    except BudgetExceededError as error:
        raise ApiError(409, "budget_exceeded", error.message) from None
    try:
        provider = MeteredProvider(inner, context.db, load_rates(context.paths))
    except LlmConfigurationError as error:
        raise _typed(error, llm) from None
    started = time.monotonic()
    try:
        completion = await asyncio.wait_for(
            provider.complete(system=TEST_SYSTEM, user=TEST_USER, max_tokens=TEST_MAX_TOKENS),
            timeout=body.timeout_s)
    except TimeoutError:
        log.info("llm test: %s/%s timed out after %gs", llm.provider, llm.model, body.timeout_s)
        raise ApiError(504, "llm_timeout",
                       f"The {llm.provider} provider did not answer within "
                       f"{body.timeout_s:g} s.", fields=["llm.baseUrl"]) from None
    except LlmError as error:
        log.info("llm test: %s/%s failed: %s", llm.provider, llm.model, error.code)
        raise _typed(error, llm) from None
    latency_ms = round((time.monotonic() - started) * 1000)
    log.info("llm test: %s/%s answered", completion.provider, completion.model)
    return LlmTestResult(
        provider=completion.provider, model=completion.model, offline=False,
        cost_usd=completion.cost_usd or Decimal(0), input_tokens=completion.input_tokens,
        output_tokens=completion.output_tokens, usage_estimated=completion.usage_estimated,
        latency_ms=latency_ms,
        message=f"Connected to {completion.model} ({completion.provider}).",
    )
