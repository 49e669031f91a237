"""Where an application goes: a browser form, an email address, or unknown.

A job's ``apply_url`` (http/https) is a browser form. Without one, a ``mailto:`` link in
the posting's (sanitized) description is an email target. Nothing else is guessed: the
posting page itself is not an application form, so a job with neither is ``unknown``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote, urlsplit

TargetKind = Literal["browser_form", "email", "unknown"]

_MAILTO_HREF = re.compile(r"""href\s*=\s*["'](mailto:[^"']+)["']""", re.IGNORECASE)
_ADDRESS = re.compile(r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$")


@dataclass(frozen=True)
class ApplyTarget:
    kind: TargetKind
    url: str | None = None
    recipient: str | None = None

    def as_json(self) -> dict:
        return {"kind": self.kind, "url": self.url, "recipient": self.recipient}


def mailto_address(value: str | None) -> str | None:
    """The single address of a ``mailto:`` URL, lower-cased domain; None if not one."""
    if not value or not value.lower().startswith("mailto:"):
        return None
    address = unquote(value[len("mailto:"):].split("?", 1)[0]).strip()
    if "," in address or not _ADDRESS.match(address):
        return None
    local, domain = address.rsplit("@", 1)
    return f"{local}@{domain.lower()}"


def _http_url(value: str | None) -> str | None:
    if not value:
        return None
    parts = urlsplit(value.strip())
    if parts.scheme.lower() in ("http", "https") and parts.netloc:
        return value.strip()
    return None


def classify_target(apply_url: str | None, description_html: str | None) -> ApplyTarget:
    if url := _http_url(apply_url):
        return ApplyTarget("browser_form", url=url)
    if recipient := mailto_address(apply_url):
        return ApplyTarget("email", url=apply_url, recipient=recipient)
    for href in _MAILTO_HREF.findall(description_html or ""):
        if recipient := mailto_address(href):
            return ApplyTarget("email", url=f"mailto:{recipient}", recipient=recipient)
    return ApplyTarget("unknown")
