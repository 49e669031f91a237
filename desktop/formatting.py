"""Readable text for API answers, errors and stage reasons. Qt-free, so tests read it
directly. Activity's sentences for events are in ``desktop/presenters/activity.py``.
"""

from __future__ import annotations

from typing import Any

import httpx

from desktop.client import ApiRequestError, ApiUnavailable

Payload = dict[str, Any]


# Why a stage did not run (backend/domain/stages.py's bounded reasons), in plain words.
STAGE_REASON_WORDS = {
    "blocked_by_enrich": "the job's details could not be read",
    "ENRICH_LOW_CONFIDENCE": "the posting's text is too thin to write from",
    "ENRICH_ROBOTS_DISALLOWED": "the site asks tools not to read it",
    "ENRICH_FAILED": "the posting could not be read",
    "ENRICH_FETCH_UNAVAILABLE": "the site did not answer",
    "ENRICH_FETCH_REJECTED": "the site refused the request",
    "ENRICH_PRIVATE_ADDRESS": "its link leads into your own network, which JobCtrl does not open",
    "ENRICH_POSTING_GONE": "the posting is no longer online",
    "ENRICH_NOT_HTML": "the posting is not a web page",
    "upstream_not_succeeded": "an earlier stage did not finish",
    "upstream_active": "an earlier stage is still running",
    "below_min_fit_score": "fit score below your minimum",
    "profile_missing": "no profile saved yet (Settings)",
    "user_skipped": "you skipped this job",
}


def stage_reason_words(reason: str | None) -> str:
    """A stage's skip or block reason for the user. An unknown code (from a newer backend)
    is shown as the words it is made of, never as a code."""
    if not reason:
        return "no reason given"
    return STAGE_REASON_WORDS.get(reason) or reason.replace("_", " ").lower()


# -- API answers ---------------------------------------------------------------------------

ERROR_TITLES = {
    "worker_runtime_unavailable": "Worker not running",
    "unauthorized": "Not authorized",
    "forbidden": "Not authorized",
    # The application board's refusals.
    "smtp_not_configured": "No email account set up",
    "follow_up_claim_unsupported": "Not sent",
    "follow_up_email_in_progress": "Still sending",
    "application_same_stage": "Already there",
    "outcome_in_future": "Date in the future",
    "outcome_before_applying": "Date before you applied",
}


def describe_api_error(error: BaseException) -> str:
    if isinstance(error, ApiRequestError):
        title = ERROR_TITLES.get(error.code) or error.code.replace("_", " ").capitalize()
        return f"{title}: {error.message}"
    if isinstance(error, ApiUnavailable):
        return str(error)
    if isinstance(error, httpx.TransportError):
        return f"API not reachable ({type(error).__name__}); is it running?"
    return f"Unexpected error: {error}"


def describe_accepted(accepted: Payload) -> str:
    """The answer to Discover in words; its run id belongs to Runs' Technical details."""
    if accepted.get("alreadyRunning"):
        return "Discover is already running: this click joined that run"
    return "Discover started"


# -- money of a posting --------------------------------------------------------------------

CURRENCY_SYMBOLS = {"EUR": "€", "USD": "$", "GBP": "£", "JPY": "¥", "INR": "₹"}


def _amount(value: int, compact: bool) -> str:
    if compact:
        thousands = value / 1000
        return f"{thousands:,.0f}k" if thousands == int(thousands) else f"{thousands:,.1f}k"
    return f"{value:,}"


def salary_range_text(low: int | None, high: int | None, currency: str | None) -> str:
    """"€70k–90k", "$120k–150k", "from £60k", "up to CHF 95k"; blank when unknown (a
    missing or zero bound is unknown, never "0")."""
    low, high = (low or None), (high or None)
    if low is None and high is None:
        return ""
    code = (currency or "").upper()
    symbol = CURRENCY_SYMBOLS.get(code, f"{code} " if code else "")
    compact = all(value % 100 == 0 for value in (low, high) if value is not None)
    if low is not None and high is not None and low != high:
        return f"{symbol}{_amount(low, compact)}–{_amount(high, compact)}"
    if low is not None and high is not None:
        return f"{symbol}{_amount(low, compact)}"
    if low is not None:
        return f"from {symbol}{_amount(low, compact)}"
    return f"up to {symbol}{_amount(high, compact)}"
