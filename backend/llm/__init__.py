"""LLM providers behind one interface, their rates, the spend ledger wrapper and the
daily ceiling. Import submodules directly (``backend.llm.factory`` etc.)."""

from backend.llm.base import (
    ChatProvider,
    Completion,
    LlmAuthenticationError,
    LlmConfigurationError,
    LlmError,
    LlmResponseInvalidError,
    LlmUnavailableError,
)

__all__ = [
    "ChatProvider",
    "Completion",
    "LlmAuthenticationError",
    "LlmConfigurationError",
    "LlmError",
    "LlmResponseInvalidError",
    "LlmUnavailableError",
]
