"""What a job seeker must never read outside a "Technical details" disclosure: event type
names, workflow type names, snake_case / UPPER_SNAKE codes, uuid-like and hex ids,
workflow ids and provider/model slugs. Shared by the presenter unit tests and the
plain-language walk over every view (tests/desktop/test_plain_language.py)."""

from __future__ import annotations

import re

from backend.domain.events import EVENT_TYPES

EVENT_NAMES = sorted(cls.event_type for cls in EVENT_TYPES)
WORKFLOW_TYPES = ("DiscoverWorkflow", "JobPreparationWorkflow", "BatchStageWorkflow",
                  "ApplyWorkflow", "ContactResearchWorkflow", "PolicyRerunWorkflow",
                  "PreparationContinuationWorkflow")

CODE_NAMES = re.compile(r"\b(?:" + "|".join(EVENT_NAMES + list(WORKFLOW_TYPES)) + r")\b")
SNAKE_CASE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
UPPER_SNAKE = re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b")
UUID_LIKE = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                       r"[0-9a-fA-F]{12}\b")
# A run of 8+ hex digits with both letters and digits: a shortened run id, a digest.
HEX_ID = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{8,}\b")
WORKFLOW_ID = re.compile(
    r"\b(?:discover-local|apply-auto-local|jobctrl-discovery-local|jobctrl-local(?:-prep)?"
    r"|(?:prep|batch|contacts|policy-rerun|enrich-condition|profile-continuation)-[\w:.-]+"
    r"|apply-job_\w+)")
MODEL_SLUG = re.compile(r"\b(?:offline|openai_compat|anthropic)/[\w.-]+|\boffline-heuristic\b")

# In this order; each match is taken out before the next check, so a uuid is one finding
# (not also a hex id) and a workflow id with underscores is not also a snake_case code.
CHECKS = (("event or workflow type name", CODE_NAMES), ("uuid", UUID_LIKE),
          ("workflow id", WORKFLOW_ID), ("provider/model slug", MODEL_SLUG),
          ("snake_case code", SNAKE_CASE), ("UPPER_SNAKE code", UPPER_SNAKE), ("hex id", HEX_ID))

# Where the user's own words legitimately carry underscores: links, file paths, addresses.
_LOCATIONS = re.compile(r"\S*://\S*|(?<![\w.])(?:~|\.{0,2})?/[^\s<>\"']+|[\w.+-]+@[\w.-]+")
_TAGS = re.compile(r"<[^>]+>")


def readable(text: str) -> str:
    """The words a person reads: rich-text markup and link targets, paths and e-mail
    addresses taken out (they are the user's own data, not codes)."""
    return _LOCATIONS.sub(" ", _TAGS.sub(" ", text)).replace("&nbsp;", " ")


def findings(text: str) -> list[str]:
    """``["snake_case code 'enrichment_pass'", ...]`` for every code-like word in ``text``."""
    words = readable(text)
    found = []
    for what, pattern in CHECKS:
        found += [f"{what} {match.group(0)!r}" for match in pattern.finditer(words)]
        words = pattern.sub(" ", words)
    return found
