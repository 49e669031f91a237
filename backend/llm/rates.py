"""Per-model-family LLM rates and the per-call cost estimate (Decimal, never floats).

The bundled ``resources/llm_rates.json`` holds coarse family buckets and a generic
fallback; ``<app dir>/llm_rates.json`` of the same shape overrides it (its families are
tried first, its fallback, if given, replaces the bundled one). The ledger built from these
rates is an estimate, not billing truth."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from importlib import resources
from pathlib import Path

from backend.config import AppPaths
from backend.llm.base import LlmConfigurationError

RATES_FILE = "llm_rates.json"
MILLION = Decimal(1_000_000)


@dataclass(frozen=True)
class Rate:
    input_per_million: Decimal
    output_per_million: Decimal


@dataclass(frozen=True)
class RateFamily:
    family: str
    match: tuple[str, ...]
    rate: Rate
    providers: tuple[str, ...] | None = None
    local_only: bool = False

    def matches(self, provider: str, model: str, *, local: bool) -> bool:
        if self.providers is not None and provider.lower() not in self.providers:
            return False
        if self.local_only and not local:
            return False
        if not self.match:
            return self.providers is not None  # a provider-only family matches any model
        name = model.lower()
        return any(_segment_match(pattern, name) for pattern in self.match)


@dataclass(frozen=True)
class RateTable:
    families: tuple[RateFamily, ...]
    fallback: Rate

    def lookup(self, provider: str, model: str, *, local: bool = False) -> tuple[str, Rate]:
        """(family name, rate): the first matching family, else ("fallback", fallback)."""
        for family in self.families:
            if family.matches(provider, model, local=local):
                return family.family, family.rate
        return "fallback", self.fallback


def _segment_match(pattern: str, name: str) -> bool:
    """``pattern`` occurs at the start of ``name`` or right after a non-alphanumeric
    character: 'phi' matches 'phi3' and 'microsoft/phi-4', not 'dolphin'."""
    return re.search(rf"(?:^|[^a-z0-9]){re.escape(pattern)}", name) is not None


def _money(value: object, where: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, str | int | Decimal):
        raise ValueError(f"{where} must be a number or a numeric string")
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        raise ValueError(f"{where} is not a number") from None
    if not amount.is_finite() or amount < 0:
        raise ValueError(f"{where} must be a non-negative number")
    return amount


def _rate(entry: object, where: str) -> Rate:
    if not isinstance(entry, dict):
        raise ValueError(f"{where} must be an object with input and output")
    return Rate(_money(entry.get("input"), f"{where}.input"),
                _money(entry.get("output"), f"{where}.output"))


def _strings(value: object, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{where} must be a list of non-empty strings")
    return tuple(v.lower() for v in value)


def parse_rates(data: object) -> tuple[list[RateFamily], Rate | None]:
    """Families and the optional fallback of one rates document; ValueError when invalid."""
    if not isinstance(data, dict):
        raise ValueError("the rates file must be a JSON object")
    families = []
    for index, entry in enumerate(data.get("families", [])):
        where = f"families[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("family"), str):
            raise ValueError(f"{where} needs a 'family' name")
        providers = entry.get("providers")
        family = RateFamily(
            family=entry["family"],
            match=_strings(entry.get("match", []), f"{where}.match"),
            rate=_rate(entry, where),
            providers=None if providers is None else _strings(providers, f"{where}.providers"),
            local_only=bool(entry.get("localOnly", False)),
        )
        if not family.match and family.providers is None:
            raise ValueError(f"{where} needs 'match' strings or 'providers'")
        families.append(family)
    fallback = data.get("fallback")
    return families, None if fallback is None else _rate(fallback, "fallback")


def _read(text: str) -> object:
    return json.loads(text, parse_float=Decimal)


def bundled_rates() -> RateTable:
    text = (resources.files("resources") / RATES_FILE).read_text(encoding="utf-8")
    families, fallback = parse_rates(_read(text))
    assert fallback is not None, "the bundled rates need a fallback"
    return RateTable(tuple(families), fallback)


def user_rates_path(paths: AppPaths) -> Path:
    return Path(paths.app_dir) / RATES_FILE


def load_rates(paths: AppPaths | None = None) -> RateTable:
    """The bundled table, overridden by ``<app dir>/llm_rates.json`` when present.

    An invalid override raises LlmConfigurationError (before any paid call) rather than
    being ignored silently."""
    table = bundled_rates()
    if paths is None:
        return table
    path = user_rates_path(paths)
    if not path.exists():
        return table
    try:
        families, fallback = parse_rates(_read(path.read_text(encoding="utf-8")))
    except (OSError, ValueError) as error:
        raise LlmConfigurationError(
            f"{path} is invalid: {error}", setting="llm_rates.json"
        ) from None
    return RateTable(tuple(families) + table.families, fallback or table.fallback)


def estimate_llm_cost_usd(
    rates: RateTable, provider: str, model: str, input_tokens: int, output_tokens: int,
    *, local: bool = False,
) -> Decimal:
    """Estimated USD for one call: tokens x family rate per million, in exact Decimal.

    ``local`` says the model is served on the user's own machine or network (the
    ``localOnly`` families, e.g. llama on Ollama, cost $0 there and the fallback elsewhere)."""
    _, rate = rates.lookup(provider, model, local=local)
    cost = (Decimal(max(input_tokens, 0)) * rate.input_per_million
            + Decimal(max(output_tokens, 0)) * rate.output_per_million) / MILLION
    return cost
