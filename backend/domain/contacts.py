"""What contact research reads and what it finds (pure domain: the contact events carry
its source attempts)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from backend.domain.model import CamelModel

AttemptStatus = Literal["used", "fetched", "blocked", "failed"]
MAX_EVIDENCE_CHARS = 280


@dataclass(frozen=True)
class SourceDocument:
    """Plain text research may read, and where it came from."""

    source_id: str  # "posting_text" or a configured source id
    url: str | None
    text: str


class SourceAttempt(CamelModel):
    """One source research used or tried: no page text, no exception text."""

    source_id: str
    kind: Literal["posting_text", "posting_page", "web_page"]
    url: str | None = None
    status: AttemptStatus
    error_code: str | None = None
    chars: int | None = Field(default=None, ge=0)


class Candidate(CamelModel):
    """A person (or a named inbox) the research found, with the text that shows it.

    ``name`` / ``title`` / ``email`` stay None when the sources do not say."""

    name: str | None = None
    title: str | None = None
    email: str | None = None
    source_url: str | None = None
    confidence: float = Field(ge=0, le=1)
    evidence: str


def name_key(name: str) -> str:
    return " ".join(name.lower().split())


def contact_id(company: str, candidate: Candidate) -> str:
    """One stable id per person (or inbox) per company, across jobs and runs."""
    who = name_key(candidate.name) if candidate.name else (candidate.email or "").lower()
    digest = hashlib.sha256(f"{name_key(company)}|{who}".encode()).hexdigest()
    return f"contact_{digest[:24]}"


def candidate_id(task_id: str, ordinal: int) -> str:
    digest = hashlib.sha256(f"{task_id}|{ordinal}".encode()).hexdigest()
    return f"ccand_{digest[:24]}"
