"""The default provider: no key, no network, $0.

The pipeline never asks it for text: stage functions check ``provider.is_offline`` and use
their deterministic heuristics instead. Calling :meth:`complete` is therefore a bug or a
misconfiguration, reported as a non-retryable configuration error."""

from __future__ import annotations

from backend.llm.base import Completion, LlmConfigurationError


class OfflineProvider:
    name = "offline"
    model = "offline-heuristic"
    is_offline = True
    is_local = True

    async def complete(
        self, *, system: str, user: str, max_tokens: int = 1200, json_mode: bool = False
    ) -> Completion:
        raise LlmConfigurationError(
            "the offline provider generates no text; stages use their heuristics instead",
            setting="llm.provider",
        )

    def __repr__(self) -> str:
        return "OfflineProvider()"
