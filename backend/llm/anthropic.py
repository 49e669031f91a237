"""Anthropic Messages API over plain httpx (no vendor SDK)."""

from __future__ import annotations

from backend.llm.base import (
    Completion,
    LlmResponseInvalidError,
    completion_with_usage,
    post_json,
)

PROVIDER = "anthropic"
DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
JSON_INSTRUCTION = "Respond with one JSON object only: no prose, no code fences."


def messages_url(base_url: str | None) -> str:
    root = (base_url or DEFAULT_BASE_URL).rstrip("/")
    if root.endswith("/v1"):  # tolerate a base URL given with the version path
        root = root[: -len("/v1")]
    return f"{root}/v1/messages"


class AnthropicProvider:
    name = PROVIDER
    is_offline = False
    is_local = False

    def __init__(self, *, model: str, api_key: str, base_url: str | None = None,
                 timeout_s: float = 60):
        self.model = model
        self._api_key = api_key
        self.url = messages_url(base_url)
        self.timeout_s = timeout_s

    def __repr__(self) -> str:  # never the key
        return f"AnthropicProvider(url={self.url!r}, model={self.model!r}, key=set)"

    async def complete(
        self, *, system: str, user: str, max_tokens: int = 1200, json_mode: bool = False
    ) -> Completion:
        # The Messages API has no JSON response format: ask for it in the system prompt.
        system_prompt = f"{system}\n\n{JSON_INSTRUCTION}" if json_mode else system
        body = {
            "model": self.model,
            "max_tokens": max_tokens,
            "system": system_prompt,
            "messages": [{"role": "user", "content": user}],
        }
        headers = {
            "x-api-key": self._api_key,
            "anthropic-version": API_VERSION,
            "Accept": "application/json",
        }
        payload = await post_json(
            PROVIDER, self.url, headers=headers, body=body, timeout_s=self.timeout_s
        )
        blocks = payload.get("content")
        if not isinstance(blocks, list):
            raise LlmResponseInvalidError(f"{PROVIDER} reply has no content blocks")
        text = "".join(
            block["text"] for block in blocks
            if isinstance(block, dict) and block.get("type", "text") == "text"
            and isinstance(block.get("text"), str)
        )
        return completion_with_usage(
            payload, text=text, provider=PROVIDER, model=self.model,
            input_key="input_tokens", output_key="output_tokens", prompt=(system_prompt, user))
