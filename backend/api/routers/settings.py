"""GET / PATCH /v1/settings: camelCase keys; an invalid value saves nothing."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, Discriminator, Field, Tag, ValidationError

from backend.api.errors import ApiError, error_responses
from backend.api.partial import REQUEST_CONFIG, partial_model
from backend.api.routers.apply import nudge_auto_apply
from backend.api.routers.schedule import reconcile_after_settings_save
from backend.api.security import require_token
from backend.config import (
    AppSettings,
    DiscoveryScheduleSettings,
    LlmSettings,
    MaterialsSettings,
    TemporalSettings,
    save_settings,
)
from backend.domain.source_config import SourceConfig
from backend.domain.transport import INSECURE_TRANSPORT_CODE
from backend.faults import fault_point
from backend.sources.link import MAX_LINK_LENGTH, SourceLinkError, resolve_source_link
from backend.store.staleness import threshold_cleared_jobs
from backend.temporal.dispatch import start_policy_rerun

router = APIRouter(tags=["settings"], dependencies=[Depends(require_token)])

# These are merged key by key (their body is a partial model too); the rest is replaced.
LlmPatch = partial_model(LlmSettings, name="LlmSettingsPatch", description=(
    "LLM settings keys to change; the keys left out keep their saved values"))
NESTED_PATCHES: dict[str, type[BaseModel]] = {
    "llm": LlmPatch,
    "temporal": partial_model(TemporalSettings, name="TemporalSettingsPatch",
                              description="Temporal settings keys to change"),
    "discovery_schedule": partial_model(DiscoveryScheduleSettings,
                                        name="DiscoveryScheduleSettingsPatch",
                                        description="Discovery schedule keys to change"),
    "materials": partial_model(MaterialsSettings, name="MaterialsSettingsPatch",
                               description="Materials keys to change"),
}


class SourceLinkEntry(BaseModel):
    """A source given by its careers-page or job-board link; saved as the entry it names."""

    model_config = REQUEST_CONFIG
    link: str = Field(min_length=1, max_length=MAX_LINK_LENGTH,
                      description="A company's careers-page or job-board link")
    enabled: bool = True



def _source_or_link(entry: Any) -> str:
    # a dict when validating the body, the model itself when dumping it
    linked = isinstance(entry, SourceLinkEntry) or (
        isinstance(entry, dict) and "link" in entry and "kind" not in entry)
    return "[link]" if linked else "[source]"


# A source entry, or a link naming one. The bracketed tags stay out of error locations.
SourceOrLink = Annotated[Annotated[SourceConfig, Tag("[source]")]
                         | Annotated[SourceLinkEntry, Tag("[link]")],
                         Discriminator(_source_or_link)]


SettingsPatch = partial_model(AppSettings, name="SettingsPatch",
                              nested={**NESTED_PATCHES, "sources": list[SourceOrLink]},
                              description="The settings keys to change (camelCase); every "
                              "key left out keeps its saved value")
NESTED = tuple(AppSettings.model_fields[name].alias for name in NESTED_PATCHES)


def merge_patch(current: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    merged = dict(current)
    for key, value in patch.items():
        if key in NESTED and isinstance(value, dict) and isinstance(current.get(key), dict):
            merged[key] = {**current[key], **value}
        else:
            merged[key] = value
    return merged


def expand_source_links(patch: dict[str, Any]) -> dict[str, Any]:
    """A source given as ``{"link": "https://jobs.lever.co/globex"}`` (optionally with
    ``enabled``) becomes the typed entry the link names, with a generated id; a link no
    family reads is a 422 with the link's own code, and nothing is saved."""
    sources = patch.get("sources")
    if not isinstance(sources, list):
        return patch
    taken = {str(entry["id"]) for entry in sources if isinstance(entry, dict) and entry.get("id")}
    expanded = []
    for index, entry in enumerate(sources):
        if isinstance(entry, dict) and "link" in entry and "kind" not in entry:
            entry = _source_from_link(entry, index, taken)
            taken.add(entry["id"])
        expanded.append(entry)
    return {**patch, "sources": expanded}


def _source_from_link(entry: dict[str, Any], index: int, taken: set[str]) -> dict[str, Any]:
    try:
        resolved = resolve_source_link(str(entry["link"]))
    except SourceLinkError as error:
        raise ApiError(422, error.code, error.message, fields=[f"sources.{index}.link"]) from None
    source = resolved.source(taken)
    if "enabled" in entry:
        source["enabled"] = entry["enabled"]
    return source


CONFIRMATION = "insecureTransportConfirmed"
INSECURE_WORDS = {
    "smtp": ("Your e-mail password would travel unencrypted to {where} (security: none). "
             "Choose STARTTLS or SSL, or send it anyway by setting "
             "smtp.insecureTransportConfirmed to true. Nothing was saved."),
    "llm": ("Your API key would travel unencrypted to {where} (an http:// address). Use "
            "https://, or send it anyway by setting llm.insecureTransportConfirmed to true. "
            "Nothing was saved."),
}


def confirm_insecure_transports(before: AppSettings, patch: dict[str, Any],
                                updated: AppSettings) -> AppSettings:
    """An SMTP password or a model API key that would travel unencrypted to another machine
    is saved only when this request says so in plain terms (``insecureTransportConfirmed:
    true`` in its ``smtp`` / ``llm`` object), or when it was confirmed before for exactly
    the same server. Otherwise a 422 ``insecure_transport_not_confirmed`` and nothing is
    saved. The stored flag is what the sender and the model client check at use time; it
    is cleared whenever the transport is safe, so a later unsafe one is asked about again."""
    changes: dict[str, Any] = {}
    for section, in_clear, where in (
            ("smtp", updated.smtp.password_in_clear, updated.smtp.host),
            ("llm", updated.llm.key_in_clear, updated.llm.base_url)):
        old, new = getattr(before, section), getattr(updated, section)
        if not in_clear:
            confirmed = False
        else:
            said = (patch.get(section) or {}).get(CONFIRMATION)
            asked = said is True
            kept = (said is not False and old.insecure_transport_confirmed
                    and old.transport() == new.transport())
            if not (asked or kept):
                field = "smtp.security" if section == "smtp" else "llm.baseUrl"
                raise ApiError(422, INSECURE_TRANSPORT_CODE,
                               INSECURE_WORDS[section].format(where=where),
                               fields=[field, f"{section}.{CONFIRMATION}"])
            confirmed = True
        if new.insecure_transport_confirmed != confirmed:
            changes[section] = new.model_copy(update={"insecure_transport_confirmed": confirmed})
    return updated.model_copy(update=changes) if changes else updated


@router.get("/v1/settings", response_model=AppSettings, responses=error_responses(401))
async def get_settings(request: Request) -> AppSettings:
    return request.app.state.context.settings


@router.patch("/v1/settings", response_model=AppSettings, responses=error_responses(401, 422))
async def patch_settings(request: Request, body: SettingsPatch) -> AppSettings:  # type: ignore[valid-type]
    """Every key is validated by the body's own type (422 ``validation_error`` naming the
    fields); the merged result is validated once more as a whole before it is saved."""
    context = request.app.state.context
    current = json.loads(context.settings.model_dump_json(by_alias=True))
    patch = body.model_dump(by_alias=True, exclude_unset=True)
    try:
        updated = AppSettings.model_validate(merge_patch(current, expand_source_links(patch)))
    except ValidationError as error:
        fields = sorted({".".join(str(p) for p in e["loc"]) for e in error.errors()})
        raise ApiError(422, "validation_error",
                       "Invalid settings: " + "; ".join(
                           f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                           for e in error.errors()[:5]),
                       fields=fields) from None
    updated = confirm_insecure_transports(context.settings, patch, updated)
    save_settings(context.paths, updated)
    # A death here (saved, nothing dispatched) is what the worker's passes recover.
    fault_point(context.paths, "settings-after-commit")
    before, context.settings = context.settings, updated
    await reconcile_after_settings_save(context, before, updated)  # no worker restart needed
    if (before.auto_apply, before.daily_budget_usd) != (updated.auto_apply,
                                                        updated.daily_budget_usd):
        await nudge_auto_apply(context)  # the standing apply loop follows at once
    if (before.daily_budget_usd, before.max_source_share_of_daily_budget) != (
            updated.daily_budget_usd, updated.max_source_share_of_daily_budget):
        # Imported here: it brings the discovery activities, which the API's start needs not.
        from backend.temporal.loops.budget_resume import nudge_budget_resume

        await nudge_budget_resume(context)  # budget-halted preparation, too
    if updated.min_fit_score < before.min_fit_score:
        await prepare_threshold_cleared(context)
    return updated


async def prepare_threshold_cleared(context) -> None:
    """A lowered threshold prepares exactly the jobs it now clears (a raised one needs no
    work: Apply Review and the Jobs view read the threshold of the moment, and the
    materials stay, so lowering it again is enough to undo it). One batch workflow starts
    their preparations, so the save answers at once whatever their number. Without a ready
    worker (or if this process dies first) the worker's next pass starts them instead
    (backend/temporal/loops/threshold_backstop.py); the save itself never fails for it."""
    job_ids = await threshold_cleared_jobs(context.db, min_fit_score=context.settings.min_fit_score)
    if not job_ids:
        return
    try:
        client = await context.require_runtime()
    except ApiError:
        return
    await start_policy_rerun(client, "threshold_cleared", job_ids,
                             heartbeat_timeout_s=context.settings.stage_heartbeat_timeout_s)
