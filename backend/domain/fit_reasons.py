"""The fit checklist in words: one line per requirement, the telling ones first."""

from __future__ import annotations

from backend.domain.fit import FitLedger, Requirement

MARKS = {"met": "✓", "missing": "✗", "unknown": "?"}
# A seeker wants the reasons against first (deal-breakers, missing must-haves), then
# what proves the fit, then what nobody knows.
_ORDER = {("missing", "must"): 0, ("met", "must"): 1, ("missing", "nice"): 2,
          ("unknown", "must"): 3, ("met", "nice"): 4, ("unknown", "nice"): 5}


def checklist_line(requirement: Requirement) -> str:
    """'✓ Python — Senior Backend Engineer, Northwind (2021–)'."""
    note = requirement.evidence if requirement.status == "met" else requirement.detail
    text = f"{MARKS[requirement.status]} {requirement.label}"
    return f"{text} — {note}" if note else text


def top_reasons(ledger: FitLedger, limit: int = 3) -> list[str]:
    ranked = sorted(ledger.requirements, key=lambda r: (
        not r.deal_breaker or r.status != "missing", _ORDER[(r.status, r.importance)]))
    lines = [checklist_line(r) for r in ranked[:limit]]
    if ledger.cap is not None:
        lines.insert(0, f"Capped at {ledger.cap.score}: {ledger.cap.reason}")
    return lines[:limit]


def reasons_from_json(ledger_json: dict | None, limit: int = 3) -> list[str]:
    """Top reasons of a stored ledger; none for scores made before the ledger."""
    if not ledger_json:
        return []
    return top_reasons(FitLedger.model_validate(ledger_json), limit)
