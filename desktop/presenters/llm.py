"""The AI model in a job seeker's words: providers by name, the built-in offline model as
what it is. Qt-free. The exact provider/model slugs stay in the API and the ledger."""

from __future__ import annotations

PROVIDER_NAMES = {"offline": "Built in", "openai_compat": "OpenAI-compatible",
                  "anthropic": "Anthropic"}
OFFLINE_MODEL_NAME = "Offline model (free, no network)"


def provider_name(provider: str | None) -> str:
    if not provider:
        return "—"
    return PROVIDER_NAMES.get(provider) or provider.replace("_", " ").capitalize()


def model_name(provider: str | None, model: str | None) -> str:
    """A model the user chose keeps its own name ("gpt-4o-mini"); the built-in one is
    described instead of named by its internal slug."""
    if provider == "offline":
        return OFFLINE_MODEL_NAME
    return model or "—"
