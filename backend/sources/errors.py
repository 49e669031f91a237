"""Typed source failures with bounded codes (never raw payloads or exception text)."""

from backend.domain.errors import TypedFailure


class SourceError(TypedFailure):
    code = "source_failed"
    retryable = True


class SourcePayloadInvalid(SourceError):
    """The source answered, but with something we cannot read: retrying will not help."""

    code = "source_payload_invalid"
    retryable = False


class SourceUnavailable(SourceError):
    code = "source_unavailable"
    retryable = True


class SourceMisconfigured(SourceError):
    code = "configuration"
    retryable = False


BOUNDED_SOURCE_CODES = frozenset(
    {cls.code for cls in (SourceError, SourcePayloadInvalid, SourceUnavailable, SourceMisconfigured)}
    | {"checkpoint_incompatible"}
)
