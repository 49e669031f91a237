"""Secrets (provider API keys): OS keyring, or a 0600 file where no keyring exists."""

from backend.secrets.store import (
    BACKEND_ENV,
    InvalidSecretName,
    InvalidSecretValue,
    SecretStore,
    SecretStoreError,
    SecretStoreUnavailable,
    validate_name,
)

__all__ = [
    "BACKEND_ENV",
    "InvalidSecretName",
    "InvalidSecretValue",
    "SecretStore",
    "SecretStoreError",
    "SecretStoreUnavailable",
    "validate_name",
]
