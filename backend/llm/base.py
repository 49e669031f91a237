"""The one LLM interface: a chat completion, its typed errors and the provider protocol.

Every provider error is an :class:`LlmError` with a stable ``code`` and a ``retryable``
flag, so activities can turn it into a Temporal ``ApplicationError`` without guessing.
Messages are built only from bounded, known-safe parts (provider name, HTTP status, a
provider error *type* that matches a strict pattern, an exception class name): never the
API key, the prompt, or a raw provider body.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol, runtime_checkable

import httpx

from backend.domain.errors import TypedFailure


@dataclass(frozen=True)
class Completion:
    text: str
    provider: str
    model: str
    input_tokens: int
    output_tokens: int
    # True when the provider sent no usage and the token counts are an estimate.
    usage_estimated: bool = False
    # Estimated cost of this call; set by MeteredProvider, None when not metered.
    cost_usd: Decimal | None = None


class LlmError(TypedFailure):
    """Base of every provider failure. ``code`` is the ApplicationError type."""

    code: str = "llm_error"
    retryable: bool = False
    # The provider's own error type when it is a short safe identifier (diagnostics only).
    provider_error_type: str | None = None

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool | None = None,
        retry_after_s: float | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.status = status
        if retryable is not None:
            self.retryable = retryable
        self.retry_after_s = retry_after_s

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, status={self.status!r})"


class LlmAuthenticationError(LlmError):
    """401/403: the key is missing, wrong or not allowed. Retrying cannot help."""

    code = "authentication"
    retryable = False


class LlmConfigurationError(LlmError):
    """A missing base URL, model or key, or a 400/404/422 from the provider."""

    code = "configuration"
    retryable = False

    def __init__(self, message: str, *, setting: str | None = None, **kwargs):
        super().__init__(message, **kwargs)
        self.setting = setting


class InsecureTransportNotConfirmed(LlmConfigurationError):
    """The API key would go over plain http:// to another machine and the user has not
    agreed to that in Settings. Retrying cannot help."""

    code = "insecure_transport_not_confirmed"
    retryable = False


class LlmUnavailableError(LlmError):
    """5xx, 429, timeouts and connection errors: worth another attempt later."""

    code = "provider_unavailable"
    retryable = True


class LlmResponseInvalidError(LlmError):
    """The provider answered 2xx with a body we cannot read."""

    code = "provider_response_invalid"
    retryable = True


@runtime_checkable
class ChatProvider(Protocol):
    name: str
    model: str
    is_offline: bool

    async def complete(
        self, *, system: str, user: str, max_tokens: int = 1200, json_mode: bool = False
    ) -> Completion: ...


_SAFE_TYPE = re.compile(r"^[A-Za-z0-9_.-]{1,48}$")


def safe_error_type(value: object) -> str | None:
    """A provider's error ``type``/``code`` when it is a short identifier, else None.

    Free text (which could echo a prompt or a key) never passes."""
    return value if isinstance(value, str) and _SAFE_TYPE.fullmatch(value) else None


def estimate_tokens(*texts: str) -> int:
    """Rough token count, ceil(chars / 4): only for replies that carry no usage."""
    chars = sum(len(text) for text in texts)
    return -(-chars // 4)


# --- HTTP plumbing shared by the HTTP providers -------------------------------------------

RETRYABLE_STATUSES = frozenset({408, 409, 425, 429})
MAX_RETRY_AFTER_S = 600.0


def _retry_after(response: httpx.Response) -> float | None:
    try:
        value = float(response.headers.get("retry-after", ""))
    except ValueError:
        return None
    return min(max(value, 0.0), MAX_RETRY_AFTER_S) or None


def _provider_error_type(response: httpx.Response) -> str | None:
    try:
        body = response.json()
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return safe_error_type(error.get("type")) or safe_error_type(error.get("code"))
    return None


def error_for_status(provider: str, response: httpx.Response) -> LlmError:
    """The typed error for a non-2xx answer: status and error type only, never the body."""
    status = response.status_code
    kind = _provider_error_type(response)
    message = f"{provider} provider answered HTTP {status}" + (f" ({kind})" if kind else "")
    if status in (401, 403):
        error: LlmError = LlmAuthenticationError(message + ": check the API key", status=status)
    elif status in RETRYABLE_STATUSES or status >= 500:
        error = LlmUnavailableError(message, status=status, retry_after_s=_retry_after(response))
    else:
        # Other 4xx (400 bad request, 404 unknown model or path, 422...) and unexpected
        # redirects mean the settings point at the wrong thing; retrying cannot help.
        error = LlmConfigurationError(message + ": check the base URL and model", status=status)
    error.provider_error_type = kind
    return error


async def post_json(
    provider: str, url: str, *, headers: dict[str, str], body: dict, timeout_s: float
) -> dict:
    """POST a JSON body and return the decoded 2xx JSON object, or raise an LlmError."""
    timeout = httpx.Timeout(timeout_s, connect=min(10.0, timeout_s))
    try:
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False) as client:
            response = await client.post(url, headers=headers, json=body)
    except (httpx.InvalidURL, httpx.UnsupportedProtocol):
        raise LlmConfigurationError(
            f"{provider} base URL is not a valid http(s) URL", setting="llm.baseUrl"
        ) from None
    except httpx.TimeoutException as error:
        raise LlmUnavailableError(
            f"{provider} provider timed out ({type(error).__name__} after {timeout_s:g}s)"
        ) from None
    except httpx.HTTPError as error:
        raise LlmUnavailableError(
            f"{provider} provider unreachable ({type(error).__name__})"
        ) from None
    if not 200 <= response.status_code < 300:
        raise error_for_status(provider, response)
    try:
        payload = response.json()
    except ValueError:
        raise LlmResponseInvalidError(
            f"{provider} provider answered HTTP {response.status_code} with a non-JSON body",
            status=response.status_code,
        ) from None
    if not isinstance(payload, dict):
        raise LlmResponseInvalidError(
            f"{provider} provider answered with a JSON {type(payload).__name__}, not an object",
            status=response.status_code,
        )
    return payload


def token_count(value: object) -> int | None:
    """A usage number when it is a non-negative integer, else None (unknown)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def completion_with_usage(payload: dict, *, text: str, provider: str, model: str,
                          input_key: str, output_key: str, prompt: tuple[str, ...]
                          ) -> Completion:
    """The completion of a reply, with the token counts from its ``usage`` object.

    Some servers (older Ollama/LM Studio builds, some proxies) omit usage. The call still
    costs something, so missing usage counts as unknown and is *estimated* as
    ceil(chars / 4) from the prompt and the reply, never recorded as zero. The configured
    model names the ledger row (the reply may name a dated snapshot)."""
    usage = payload.get("usage") if isinstance(payload.get("usage"), dict) else {}
    input_tokens = token_count(usage.get(input_key))
    output_tokens = token_count(usage.get(output_key))
    estimated = input_tokens is None or output_tokens is None
    if input_tokens is None:
        input_tokens = estimate_tokens(*prompt)
    if output_tokens is None:
        output_tokens = estimate_tokens(text)
    return Completion(
        text=text, provider=provider, model=model,
        input_tokens=input_tokens, output_tokens=output_tokens, usage_estimated=estimated,
    )
