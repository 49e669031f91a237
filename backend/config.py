"""Where JobCtrl keeps its data and how its processes find each other.

The app dir (platform data folder, or ``--app-dir`` / ``JOBCTRL_APP_DIR``) holds the
SQLite database, the embedded Temporal history, logs, ``settings.json`` and, while an
instance runs, ``runtime.json``.
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Literal

from pydantic import AfterValidator, ConfigDict, Field, StrictBool

from backend.domain.contact_policy import ContactSourceConfig
from backend.domain.ids import normalize_host
from backend.domain.model import CamelModel, Usd
from backend.domain.source_config import DEFAULT_SOURCES, SourceConfig
from backend.domain.transport import api_key_in_clear, smtp_password_in_clear
from backend.paths import (  # noqa: F401 - re-exported: the light half of this module
    APP_NAME,
    EXTERNAL_TEMPORAL_ENV,
    AppPaths,
    default_app_dir,
    new_api_token,
    resolve_app_dir,
    write_private_json,
)

TENANT_ID = "local"
TASK_QUEUE = "jobctrl-local"
# Preparation workflows and their activities have their own lane, so a backlog of
# hundreds of jobs never delays Discover's own steps (and the run it reports).
PREP_TASK_QUEUE = "jobctrl-local-prep"
ORCHESTRATION_ACTIVITY_SLOTS = 4
NAMESPACE = "default"


class TemporalSettings(CamelModel):
    """Empty address means: embed a dev server. Otherwise connect to that cluster."""

    model_config = ConfigDict(extra="forbid")

    address: str | None = None
    namespace: str = NAMESPACE
    tls: bool = False
    api_key_env: str | None = Field(
        default=None, description="Name of an environment variable holding the API key"
    )
    web_ui: bool = Field(
        default=False,
        description="Start the embedded server's Web UI (for developers; no login: anyone on "
                    "this computer who finds its port can read and change runs). Takes effect "
                    "at the next start.")

    @property
    def external(self) -> bool:
        return bool(self.address)


NetworkHost = Annotated[str, AfterValidator(normalize_host)]


def _unique_source_ids(sources: list[SourceConfig]) -> list[SourceConfig]:
    ids = [source.id for source in sources]
    duplicates = sorted({source_id for source_id in ids if ids.count(source_id) > 1})
    if duplicates:
        raise ValueError(f"source ids must be unique; repeated: {', '.join(duplicates)}")
    return sources


class LlmSettings(CamelModel):
    """Which model writes and scores. ``offline`` needs no key, no network and costs $0."""

    model_config = ConfigDict(extra="forbid")

    provider: Literal["offline", "openai_compat", "anthropic"] = "offline"
    base_url: str | None = Field(default=None, max_length=500,
                                 description="OpenAI-compatible or Anthropic endpoint")
    model: str | None = Field(default=None, max_length=200)
    api_key_secret: str | None = Field(
        default=None, pattern=r"^[a-z0-9_.-]{1,64}$",
        description="Name of the secret (keyring entry) holding the API key",
    )
    timeout_s: float = Field(default=60, gt=0, le=600)
    insecure_transport_confirmed: StrictBool = Field(
        default=False, description="The user agreed that the API key travels unencrypted "
        "(an http:// base URL on a host other than this computer)")

    @property
    def key_in_clear(self) -> bool:
        """The API key would travel unencrypted to another machine."""
        return self.provider != "offline" and api_key_in_clear(
            base_url=self.base_url, has_key=bool(self.api_key_secret))

    def transport(self) -> tuple:
        """What a confirmation of an unencrypted key is about."""
        return (self.provider, self.base_url, self.api_key_secret)


class SmtpSettings(CamelModel):
    """The user's own outgoing mail account; the password lives in the keyring."""

    model_config = ConfigDict(extra="forbid")

    host: str | None = Field(default=None, max_length=255)
    port: int = Field(default=587, ge=1, le=65535)
    security: Literal["starttls", "ssl", "none"] = "starttls"
    username: str | None = Field(default=None, max_length=320)
    password_secret: str | None = Field(default=None, pattern=r"^[a-z0-9_.-]{1,64}$")
    from_address: str | None = Field(default=None, max_length=320)
    insecure_transport_confirmed: StrictBool = Field(
        default=False, description="The user agreed that the password travels unencrypted "
        "(security 'none' to a host other than this computer)")

    @property
    def configured(self) -> bool:
        return bool(self.host and self.from_address)

    @property
    def password_in_clear(self) -> bool:
        """Logging in would send the password unencrypted to another machine."""
        return smtp_password_in_clear(host=self.host, security=self.security,
                                      username=self.username)

    def transport(self) -> tuple:
        """What a confirmation of an unencrypted password is about."""
        return (self.host, self.port, self.security, self.username)


# One cron field: numbers, three-letter month / weekday names and ``*``, combined with
# ``,`` ``-`` ``/``. Extensions some parsers know (``L``, ``W``, ``#``, ``?``, ``@daily``)
# are refused up front, because Temporal's Schedule parser must accept what we save.
_CRON_FIELD = re.compile(r"^(\*|[0-9]+|[A-Za-z]{3})([-/,](\*|[0-9]+|[A-Za-z]{3}))*$")
CRON_FIELDS = "minute hour day-of-month month day-of-week"


def validate_cron(expression: str) -> str:
    """A normalized five-field cron expression, or ValueError with a message a user can act
    on. ``cronsim`` checks ranges and that the expression can ever fire."""
    from cronsim import CronSim, CronSimError

    fields = expression.split()
    if len(fields) != 5:
        raise ValueError(f"cron must have five fields ({CRON_FIELDS}), got {len(fields)}:"
                         f" {expression!r}")
    bad = [field for field in fields if not _CRON_FIELD.match(field)]
    if bad:
        raise ValueError(f"cron field {bad[0]!r} is not supported; use numbers, names like"
                         " MON or JAN, '*', ',', '-' and '/'")
    normalized = " ".join(fields)
    try:
        CronSim(normalized, datetime(2000, 1, 1, tzinfo=UTC))
    except CronSimError as error:
        raise ValueError(f"invalid cron {normalized!r}: {error}") from None
    return normalized


class DiscoveryScheduleSettings(CamelModel):
    """Off by default; reconciled into the Temporal Schedule ``jobctrl-discovery-local``.
    The cron is evaluated in UTC (Temporal's default), like the spend day."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = False
    cron: Annotated[str, AfterValidator(validate_cron)] = Field(
        default="0 8 * * 1-5", max_length=120)


class MaterialsSettings(CamelModel):
    """How résumés and letters are typeset. ``auto`` paper: US Letter where the profile's
    country uses it, A4 elsewhere."""

    model_config = ConfigDict(extra="forbid")

    template: Literal["classic", "compact"] = "classic"
    paper: Literal["auto", "a4", "letter"] = "auto"
    letter_language: Literal["profile", "posting"] = Field(
        default="profile",
        description="The language a model writes the cover letter in: the résumé's or the posting's "
                    "(the offline letter is always in the résumé's language: it quotes the résumé)")


class AppSettings(CamelModel):
    model_config = ConfigDict(extra="forbid")

    temporal: TemporalSettings = TemporalSettings()
    worker_activity_slots: int = Field(default=8, ge=1, le=64)
    sources: Annotated[list[SourceConfig], AfterValidator(_unique_source_ids)] = Field(
        default_factory=lambda: list(DEFAULT_SOURCES))
    llm: LlmSettings = LlmSettings()
    min_fit_score: int = Field(
        default=50, ge=0, le=100,
        description="Jobs scored below this get no tailored materials (0: every job does)"
    )
    stage_heartbeat_timeout_s: int = Field(
        default=120, ge=5, le=600,
        description="How soon a stage on a dead worker is retried elsewhere")
    daily_budget_usd: Usd = Field(
        default=Decimal("25"), ge=0, le=100_000, description="0 means unlimited"
    )
    max_source_share_of_daily_budget: float = Field(
        default=0.5, gt=0, le=1, allow_inf_nan=False,
        description="No single source's jobs may spend more than this share of the daily "
                    "budget (0.5: half of it; 1: no limit per source)")
    auto_apply: bool = Field(default=False, description="Keep the standing apply loop running")
    apply_approval_required: bool = Field(
        default=True, description="Apply only jobs approved in Apply Review")
    apply_concurrency: int = Field(default=1, ge=1, le=8)
    apply_dry_run: bool = Field(default=False, description="Prepare packets, never send")
    smtp: SmtpSettings = SmtpSettings()
    follow_up_after_days: int = Field(
        default=7, ge=1, le=90,
        description="After applying, follow up this many days later if nothing was heard")
    ghost_after_days: int = Field(
        default=30, ge=7, le=365,
        description="An application with no reply this many days after applying counts "
                    "as ghosted")
    discovery_schedule: DiscoveryScheduleSettings = DiscoveryScheduleSettings()
    materials: MaterialsSettings = MaterialsSettings()
    contact_research_sources: list[ContactSourceConfig] = Field(
        default_factory=list,
        description="Public sources contact research may fetch (opt-in; none by default)")
    local_network_hosts: list[NetworkHost] = Field(
        default_factory=list, max_length=50,
        description="Hosts on this computer or the user's own network that links in postings "
                    "may open (e.g. an intranet job board); none by default")


def load_settings(paths: AppPaths) -> AppSettings:
    """Settings file, then ``JOBCTRL_EXTERNAL_TEMPORAL_ADDRESS`` (use an existing cluster
    without editing the file; handy for scripts and CI)."""
    data: dict = {}
    if paths.settings.exists():
        data = json.loads(paths.settings.read_text(encoding="utf-8"))
    settings = AppSettings.model_validate(data)
    address = os.environ.get(EXTERNAL_TEMPORAL_ENV)
    if address:
        temporal = settings.temporal.model_copy(update={"address": address})
        settings = settings.model_copy(update={"temporal": temporal})
    return settings


def save_settings(paths: AppPaths, settings: AppSettings) -> None:
    """Atomic write: a crash never leaves half a settings file."""
    tmp = paths.settings.with_suffix(".json.tmp")
    tmp.write_text(settings.model_dump_json(by_alias=True, indent=2), encoding="utf-8")
    os.replace(tmp, paths.settings)


class RuntimeInfo(CamelModel):
    """What ``runtime.json`` tells scripts and the shell about a running instance."""

    app_dir: str
    database: str
    api_base_url: str | None = None
    api_token: str
    temporal_address: str
    temporal_namespace: str = NAMESPACE
    temporal_ui_url: str | None = None
    task_queue: str = TASK_QUEUE
    pids: dict[str, int] = Field(default_factory=dict)


def write_runtime_info(paths: AppPaths, info: RuntimeInfo) -> None:
    write_private_json(paths.runtime_file, info.model_dump(by_alias=True))


def read_runtime_info(app_dir: Path) -> RuntimeInfo | None:
    path = AppPaths(app_dir).runtime_file
    if not path.exists():
        return None
    return RuntimeInfo.model_validate_json(path.read_text(encoding="utf-8"))
