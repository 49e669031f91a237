"""Build the configured provider from settings and the secret store."""

from __future__ import annotations

from typing import Protocol

from backend.config import LlmSettings
from backend.llm.anthropic import AnthropicProvider
from backend.llm.base import ChatProvider, InsecureTransportNotConfirmed, LlmConfigurationError
from backend.llm.offline import OfflineProvider
from backend.llm.openai_compat import OpenAiCompatProvider


class SecretReader(Protocol):
    def get(self, name: str) -> str | None: ...


def _missing(setting: str, why: str) -> LlmConfigurationError:
    return LlmConfigurationError(f"{setting} is not set: {why}", setting=setting)


def _api_key(llm: LlmSettings, secrets: SecretReader, *, required: bool) -> str | None:
    if not llm.api_key_secret:
        if required:
            raise _missing("llm.apiKeySecret", f"the {llm.provider} provider needs an API key")
        return None
    try:
        key = secrets.get(llm.api_key_secret)
    except Exception as error:  # noqa: BLE001 - keyring failures: name the class only
        raise LlmConfigurationError(
            f"the secret {llm.api_key_secret!r} named by llm.apiKeySecret cannot be read "
            f"({type(error).__name__})", setting="llm.apiKeySecret",
        ) from None
    if not key:
        raise LlmConfigurationError(
            f"the secret {llm.api_key_secret!r} named by llm.apiKeySecret is not stored",
            setting="llm.apiKeySecret",
        )
    return key


def _sendable(llm: LlmSettings, key: str | None) -> str | None:
    """The key, unless it would travel unencrypted to another machine without the user's
    confirmation. Checked here, at use, too: a settings file edited by hand skips the
    settings API."""
    if key and llm.key_in_clear and not llm.insecure_transport_confirmed:
        raise InsecureTransportNotConfirmed(
            "the API key would travel unencrypted (an http:// llm.baseUrl on another "
            "machine); use https:// or confirm it in Settings", setting="llm.baseUrl")
    return key


def provider_from_settings(llm: LlmSettings, secrets: SecretReader) -> ChatProvider:
    """``offline`` (the default) needs nothing; ``openai_compat`` needs a base URL and a
    model (a key only if ``apiKeySecret`` names one); ``anthropic`` needs a model and a key.
    A missing part raises LlmConfigurationError naming the setting; a key that would go
    over http:// to another machine without the user's confirmation raises
    InsecureTransportNotConfirmed."""
    if llm.provider == "offline":
        return OfflineProvider()
    if llm.provider == "openai_compat":
        if not llm.base_url:
            raise _missing("llm.baseUrl", "e.g. http://localhost:11434/v1 or "
                                          "https://api.openai.com/v1")
        if not llm.model:
            raise _missing("llm.model", "name the model to call")
        return OpenAiCompatProvider(
            base_url=llm.base_url, model=llm.model,
            api_key=_sendable(llm, _api_key(llm, secrets, required=False)),
            timeout_s=llm.timeout_s,
        )
    if llm.provider == "anthropic":
        if not llm.model:
            raise _missing("llm.model", "name the model to call")
        return AnthropicProvider(
            model=llm.model, api_key=_sendable(llm, _api_key(llm, secrets, required=True)),
            base_url=llm.base_url, timeout_s=llm.timeout_s,
        )
    raise LlmConfigurationError(f"unknown llm.provider {llm.provider!r}", setting="llm.provider")
