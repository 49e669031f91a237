"""Whether a secret would travel unencrypted: an SMTP password over a connection with no
TLS, a model API key over ``http://``. Only a loopback host is exempt (a local model
server such as Ollama, a local mail relay): the secret never leaves the machine.

Plain functions over plain values, so the settings API (refuses to save without the
user's confirmation) and the sender and model client (refuse to use stored settings that
lack it) apply one rule."""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

INSECURE_TRANSPORT_CODE = "insecure_transport_not_confirmed"


def is_loopback_host(host: str | None) -> bool:
    """``localhost``, ``127.0.0.0/8`` and ``::1`` (with or without brackets)."""
    name = (host or "").strip().lower().rstrip(".").strip("[]")
    if not name:
        return False
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def smtp_password_in_clear(*, host: str | None, security: str, username: str | None) -> bool:
    """True when logging in would send the password without TLS to another machine (the
    sender logs in whenever a username is set)."""
    return security == "none" and bool(username) and bool(host) and not is_loopback_host(host)


def api_key_in_clear(*, base_url: str | None, has_key: bool) -> bool:
    """True when an API key would go over plain ``http://`` to a host that is not
    loopback."""
    if not has_key or not base_url:
        return False
    try:
        parts = urlsplit(base_url.strip())
        host = parts.hostname
    except ValueError:
        return False
    return parts.scheme.lower() == "http" and not is_loopback_host(host)
