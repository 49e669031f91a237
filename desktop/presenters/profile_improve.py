""""Improve with AI" in a job seeker's words: what the button will do, and what the
improved draft left out. Qt-free.

The offer is ``GET /v1/profile/import/improve``'s answer (available, provider, model,
paid); the result is ``POST /v1/profile/import/improve``'s (profile, unplaced, source,
dropped, model).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from desktop.presenters.llm import model_name, provider_name

SHOWN_VALUES = 5
QUOTED_CHARS = 60


def offer_words(offer: Mapping[str, Any]) -> str:
    """The line beside the button: the model, whether it may cost money, and the promise."""
    model = model_name(offer.get("provider"), offer.get("model"))
    who = f"{model} ({provider_name(offer.get('provider'))})"
    cost = ("It may cost money: one or two calls, counted in today's AI budget."
            if offer.get("paid") else "This model costs nothing to use.")
    return (f"Have {who} read your résumé again. {cost} Only what is written in your file "
            "is kept; nothing is saved until you press Save profile.")


def busy_words(offer: Mapping[str, Any]) -> str:
    model = model_name(offer.get("provider"), offer.get("model"))
    return f"{model} is reading your résumé… this can take a minute."


def _quoted(value: str) -> str:
    text = " ".join(str(value).split())
    if len(text) > QUOTED_CHARS:
        text = text[:QUOTED_CHARS - 1].rstrip() + "…"
    return f"“{text}”"


def removed_values(answer: Mapping[str, Any]) -> list[str]:
    """The values the check removed as not found in the file, once each, in order. A date
    or code that was only dropped with its invented entry is not listed on its own."""
    seen: dict[str, None] = {}
    for item in answer.get("dropped") or []:
        if item.get("reason") != "entry_dropped" and str(item.get("value") or "").strip():
            seen.setdefault(" ".join(str(item["value"]).split()), None)
    return list(seen)


def result_note(answer: Mapping[str, Any]) -> str:
    """"Improved by gpt-4o — check each section, then Save. Removed as not found in your
    file (3): “Initech”, …" — plain text."""
    used = answer.get("model") or {}
    model = model_name(used.get("provider"), used.get("model"))
    head = f"Improved by {model} — check each section, then Save profile."
    removed = removed_values(answer)
    if not removed:
        return head + " Everything it read is in your file."
    shown = ", ".join(_quoted(value) for value in removed[:SHOWN_VALUES])
    more = len(removed) - SHOWN_VALUES
    tail = f" and {more} more" if more > 0 else ""
    return (f"{head} Removed as not found in your file ({len(removed)}): {shown}{tail}.")


def failure_words(message: str) -> str:
    return f"Improve with AI did not work: {message} Your draft is unchanged."
