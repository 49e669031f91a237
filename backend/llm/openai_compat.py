"""OpenAI-compatible chat completions over plain httpx: OpenAI, Ollama, LM Studio,
OpenRouter, vLLM... ``base_url`` is the API root, e.g. ``http://localhost:11434/v1`` or
``https://api.openai.com/v1``; local servers usually need no key."""

from __future__ import annotations

import ipaddress

import httpx

from backend.llm.base import (
    Completion,
    LlmResponseInvalidError,
    completion_with_usage,
    post_json,
)

PROVIDER = "openai_compat"


def is_local_endpoint(base_url: str) -> bool:
    """True for loopback, private-network, link-local, ``localhost``, ``*.local`` and
    single-label hosts: an open-weights model there runs on the user's own hardware."""
    try:
        host = httpx.URL(base_url).host.lower()
    except (httpx.InvalidURL, TypeError):
        return False
    if not host:
        return False
    if host == "localhost" or host.endswith((".localhost", ".local", ".lan", ".internal")):
        return True
    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return "." not in host  # e.g. "ollama" as a docker compose service name
    return address.is_loopback or address.is_private or address.is_link_local


class OpenAiCompatProvider:
    name = PROVIDER
    is_offline = False

    def __init__(self, *, base_url: str, model: str, api_key: str | None = None,
                 timeout_s: float = 60):
        self.base_url = base_url.rstrip("/")
        self.model = model
        self._api_key = api_key or None
        self.timeout_s = timeout_s
        self.is_local = is_local_endpoint(self.base_url)

    def __repr__(self) -> str:  # never the key
        return (f"OpenAiCompatProvider(base_url={self.base_url!r}, model={self.model!r}, "
                f"key={'set' if self._api_key else 'none'})")

    async def complete(
        self, *, system: str, user: str, max_tokens: int = 1200, json_mode: bool = False
    ) -> Completion:
        body: dict = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
            "max_tokens": max_tokens,
        }
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        headers = {"Accept": "application/json"}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        payload = await post_json(
            PROVIDER, f"{self.base_url}/chat/completions",
            headers=headers, body=body, timeout_s=self.timeout_s,
        )
        return completion_with_usage(
            payload, text=_message_text(payload), provider=PROVIDER, model=self.model,
            input_key="prompt_tokens", output_key="completion_tokens", prompt=(system, user))


def _message_text(payload: dict) -> str:
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise LlmResponseInvalidError(f"{PROVIDER} reply has no choices")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):  # content parts
        content = "".join(
            part.get("text", "") for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    if not isinstance(content, str):
        raise LlmResponseInvalidError(f"{PROVIDER} reply has no message content")
    return content
