""""Improve with AI" for an imported résumé draft (issue 29, item 6).

``GET /v1/profile/import/improve`` says whether the step is offered: a model is configured
(not ``offline``), which one, and whether it is paid. It reads the settings and the rate
table only (no key, no call, no write).

``POST /v1/profile/import/improve`` takes the draft's extracted text (``resumeText``) and
its JSON Resume, asks the configured model for the résumé as a JSON Resume (validated, one
repair call, then the typed ``provider_response_invalid``), and passes the answer through
the import truth gate (:mod:`backend.profile_import.grounding`): every string it keeps
occurs in the file's own text; what the gate removed comes back in ``dropped`` with the
reason. The answer has the import answer's shape (``profile``, ``unplaced``, ``source``);
like the import it saves nothing: the draft is saved only by ``PUT /v1/profile``.

**Why a direct call from the API, not a workflow.** docs/architecture.md routes *commands*
through workflows because they write canonical rows and domain events that must survive a
crash and be owned by a run. This step writes neither: its only durable effect is the
spend ledger, which :class:`~backend.llm.metered.MeteredProvider` commits after each call
exactly as for the pipeline, and its result is a draft the user is waiting for on screen,
held nowhere but in the answer. ``POST /v1/settings/llm/test`` is the precedent: one
metered call from the API process, no worker needed. So the import keeps working while
the worker is down, and a crash mid-call loses only a draft the user can ask for again
(a completed call is in the ledger; a call that never answered is not billed).

**Spend.** Before any call, the same rule as a spendful workflow's preflight
(:func:`backend.llm.admission.refusal`): today's ledger plus the open reservations plus
this step's estimate (two calls priced for the text's length at the model's rate) must
stay within the daily ceiling, else the typed ``budget_exceeded`` and nothing is called or
spent. Nothing is reserved: the calls are awaited here, and a reservation left open by a
crashed API would lower the ceiling for the rest of the day with no run to release it.
"""

from __future__ import annotations

import asyncio
import logging
from decimal import Decimal

from fastapi import APIRouter, Depends, Request
from pydantic import Field

from backend.api.errors import ApiError, error_responses
from backend.api.partial import REQUEST_CONFIG
from backend.api.routers.secrets import secret_store
from backend.api.security import require_token
from backend.config import LlmSettings
from backend.domain.model import CamelModel, Usd
from backend.domain.profile import CandidateProfile
from backend.domain.resume import Bullet, JsonResume
from backend.llm import admission
from backend.llm.base import (
    ChatProvider,
    LlmAuthenticationError,
    LlmConfigurationError,
    LlmError,
    LlmResponseInvalidError,
    LlmUnavailableError,
    estimate_tokens,
)
from backend.llm.factory import provider_from_settings
from backend.llm.metered import MeteredProvider
from backend.llm.openai_compat import is_local_endpoint
from backend.llm.rates import RateTable, estimate_llm_cost_usd, load_rates
from backend.profile_import import ImportResult
from backend.profile_import.confidence import DraftWarning, SectionConfidence, assess_import
from backend.profile_import.draft import draft_with_suggestions
from backend.profile_import.grounding import MAX_REPORTED_CHARS
from backend.profile_import.improve import (
    IMPROVE_SYSTEM,
    MAX_TEXT_CHARS,
    ImproveReplyInvalid,
    improve_prompt,
    improve_resume,
    output_tokens_for,
)
from backend.profile_import.preferences import PreferenceSuggestions
from backend.store.profile import read_profile

log = logging.getLogger(__name__)

router = APIRouter(tags=["profile"], dependencies=[Depends(require_token)])

MAX_CALLS = 2  # the answer and one repair
ENDPOINT_FIELDS = ["llm.baseUrl", "llm.model"]
IMPORT_FORMATS = ("pdf", "docx", "text", "markdown", "jsonresume")


class ImproveSource(CamelModel):
    model_config = REQUEST_CONFIG

    file_name: str | None = Field(default=None, max_length=255)
    format: str = Field(default="text", max_length=20)
    pages: int | None = Field(default=None, ge=0, le=10_000)
    characters: int = Field(default=0, ge=0, le=10_000_000)


class ImproveRequest(CamelModel):
    model_config = REQUEST_CONFIG

    text: str = Field(min_length=1, max_length=MAX_TEXT_CHARS,
                      description="The draft's resumeText: the text extracted from the file")
    draft: JsonResume = Field(description="The draft's résumé (JSON Resume) as the rules read it")
    unplaced: list[Bullet] = Field(default_factory=list, max_length=1_000,
                                   description="The import answer's unplaced lines")
    source: ImproveSource | None = Field(default=None,
                                         description="The import answer's source, echoed")


class DroppedItem(CamelModel):
    path: str = Field(description='Where the model put it, e.g. "work[2].highlights[0]"')
    value: str = Field(max_length=MAX_REPORTED_CHARS)
    reason: str = Field(description="not_in_file | date_not_in_file | contact_not_exact | "
                                    "country_not_in_file | entry_dropped")


class ImprovedSource(CamelModel):
    file_name: str | None
    format: str
    pages: int | None
    characters: int


class ImproveModel(CamelModel):
    provider: str
    model: str
    calls: int
    cost_usd: Usd


class ImprovedDraft(CamelModel):
    """The import answer's shape (``POST /v1/profile/import``) plus what the gate dropped
    and the model that read it."""

    profile: CandidateProfile
    unplaced: list[str]
    source: ImprovedSource
    sections: list[SectionConfidence] = Field(default_factory=list)
    warnings: list[DraftWarning] = Field(default_factory=list)
    suggested_preferences: PreferenceSuggestions = Field(default_factory=PreferenceSuggestions)
    dropped: list[DroppedItem] = Field(description="What the truth gate removed: not in the file")
    model: ImproveModel


class ImproveOffer(CamelModel):
    available: bool
    provider: str
    model: str | None
    paid: bool = Field(description="The model is priced above $0: the step may cost money")
    reason: str | None = Field(default=None, description="Why it is not available")


def _configured(llm: LlmSettings) -> str | None:
    """Why "Improve with AI" is not offered with these settings (None: it is)."""
    if llm.provider == "offline":
        return "No AI model is set up (Settings → AI model); the offline rules read the résumé."
    if not llm.model:
        return "The AI model has no model name (Settings → AI model)."
    if llm.provider == "openai_compat" and not llm.base_url:
        return "The AI model has no base URL (Settings → AI model)."
    return None


def _is_local(llm: LlmSettings) -> bool:
    return llm.provider == "openai_compat" and bool(llm.base_url) and is_local_endpoint(
        llm.base_url or "")


def _estimate(rates: RateTable, provider: str, model: str, *, local: bool, text: str,
              draft: JsonResume) -> Decimal:
    """Two calls (answer and repair), each priced at the prompt's length and the most
    the answer may take."""
    prompt_tokens = estimate_tokens(IMPROVE_SYSTEM, improve_prompt(text, draft))
    per_call = estimate_llm_cost_usd(rates, provider, model, prompt_tokens * 2,
                                     output_tokens_for(text), local=local)
    return per_call * MAX_CALLS


def _typed(error: LlmError, llm: LlmSettings) -> ApiError:
    """The API error a user can act on, from the typed LLM error (never a provider body)."""
    if isinstance(error, LlmAuthenticationError):
        return ApiError(502, "llm_authentication_failed",
                        f"The {llm.provider} provider refused the API key "
                        f"(HTTP {error.status}). Check the key you stored.",
                        fields=["llm.apiKeySecret"])
    if isinstance(error, LlmConfigurationError):
        if error.status is None:
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
        return ApiError(502, "provider_response_invalid", error.message, fields=ENDPOINT_FIELDS)
    return ApiError(502, error.code, error.message)


@router.get("/v1/profile/import/improve", response_model=ImproveOffer,
            responses=error_responses(401))
async def improve_offer(request: Request) -> ImproveOffer:
    """Whether "Improve with AI" is offered, with which model, and whether it is paid."""
    context = request.app.state.context
    llm = context.settings.llm
    reason = _configured(llm)
    if reason is not None:
        return ImproveOffer(available=False, provider=llm.provider, model=llm.model, paid=False,
                            reason=reason)
    rates = await asyncio.to_thread(load_rates, context.paths)
    typical = estimate_llm_cost_usd(rates, llm.provider, llm.model or "", 1_000_000, 1_000_000,
                                    local=_is_local(llm))
    return ImproveOffer(available=True, provider=llm.provider, model=llm.model, paid=typical > 0)


@router.post("/v1/profile/import/improve", response_model=ImprovedDraft,
             responses=error_responses(400, 401, 409, 422, 502))
async def improve_import(body: ImproveRequest, request: Request) -> ImprovedDraft:
    """The draft read again by the configured model, every string checked against the
    file's text; nothing is saved."""
    context = request.app.state.context
    llm = context.settings.llm
    reason = _configured(llm)
    if llm.provider == "offline":
        raise ApiError(409, "llm_not_configured",
                       "Improve with AI needs an AI model: choose one in Settings → AI model. "
                       "The offline rules already read your résumé.", fields=["llm.provider"])
    if reason is not None:
        raise ApiError(422, "llm_not_configured", reason, fields=ENDPOINT_FIELDS)
    try:
        # Keyring backends block: build (and read the key) off the event loop.
        inner: ChatProvider = await asyncio.to_thread(provider_from_settings, llm,
                                                      secret_store(request))
    except LlmError as error:
        raise _typed(error, llm) from None
    rates = await asyncio.to_thread(load_rates, context.paths)
    local = bool(getattr(inner, "is_local", False))
    estimate = _estimate(rates, inner.name, inner.model, local=local, text=body.text,
                         draft=body.draft)
    async with context.db.read_snapshot() as conn:
        status, refused = await admission.check(conn, context.settings, estimate)
    if refused is not None:
        log.info("profile improve: refused by the daily ceiling (%s)", refused)
        raise ApiError(409, "budget_exceeded",
                       f"Today's AI budget does not cover this (${status.spent_usd:.2f} of "
                       f"${status.ceiling_usd:.2f} spent, about ${estimate:.2f} needed); it "
                       f"resets at {status.resets_at}. Nothing was spent.")
    provider = MeteredProvider(inner, context.db, rates)
    spent = Decimal(0)
    max_tokens = output_tokens_for(body.text)

    async def complete(system: str, user: str) -> str:
        nonlocal spent
        completion = await provider.complete(system=system, user=user, max_tokens=max_tokens,
                                             json_mode=True)
        spent += completion.cost_usd or Decimal(0)
        return completion.text

    try:
        improved = await improve_resume(complete, body.text, body.draft,
                                        unplaced=list(body.unplaced))
    except ImproveReplyInvalid as error:
        log.info("profile improve: %s/%s answered no valid résumé after %d calls",
                 inner.name, inner.model, provider.calls)
        raise ApiError(502, error.code, error.message, fields=ENDPOINT_FIELDS) from None
    except LlmError as error:
        log.info("profile improve: %s/%s failed: %s", inner.name, inner.model, error.code)
        raise _typed(error, llm) from None
    log.info("profile improve: %s/%s answered in %d calls, %d values dropped", inner.name,
             inner.model, improved.calls, len(improved.dropped))
    source = body.source or ImproveSource(characters=len(body.text))
    async with context.db.read_snapshot() as conn:
        stored = await read_profile(conn)
    result = ImportResult(
        resume=improved.resume, unplaced=improved.unplaced,
        format=source.format if source.format in IMPORT_FORMATS else "text",  # type: ignore[arg-type]
        pages=source.pages, characters=source.characters or len(body.text), text=body.text)
    profile, suggested = draft_with_suggestions(result, current=stored[1] if stored else None,
                                                file_name=source.file_name, sample=False)
    assessment = assess_import(result)
    return ImprovedDraft(
        profile=profile, unplaced=improved.unplaced,
        source=ImprovedSource(file_name=source.file_name, format=result.format,
                              pages=source.pages, characters=result.characters),
        sections=assessment.sections, warnings=assessment.warnings,
        suggested_preferences=suggested,
        dropped=[DroppedItem(path=d.path, value=d.value, reason=d.reason)
                 for d in improved.dropped],
        model=ImproveModel(provider=inner.name, model=inner.model, calls=improved.calls,
                           cost_usd=spent),
    )
