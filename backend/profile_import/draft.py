"""From an imported résumé to a draft profile the user reviews before saving."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from backend.domain.clock import utc_now_iso
from backend.domain.profile import CandidateProfile, ImportOrigin
from backend.domain.resume import JsonResume
from backend.profile_import.preferences import PreferenceSuggestions, suggest_preferences

PREFERENCE_FIELDS = ("target_titles", "locations", "remote_preference", "salary_floor",
                     "salary_currency", "work_authorization", "must_have_keywords",
                     "deal_breaker_keywords")


def sample_resume_file() -> Path:
    return Path(str(resources.files("resources") / "sample" / "sample-resume.md"))


def _sample_preferences() -> dict:
    text = (resources.files("resources") / "sample" / "sample-preferences.json").read_text("utf-8")
    return {key: value for key, value in json.loads(text).items() if not key.startswith("_")}


def suggested_preferences(result) -> PreferenceSuggestions:
    """What the résumé itself says the person looks for: its "Objective / Looking for"
    part (titles, places, remote, salary); without titles or places there, the latest
    title and the city."""
    resume: JsonResume = result.resume
    location = resume.basics.location
    stated = suggest_preferences(result.text.splitlines(),
                                 country=location.country_code if location else None,
                                 skills=resume.skill_names())
    updates: dict = {}
    if not stated.target_titles:
        # Target titles are a comma-separated list on screen: "Ward Sister, Acute Medical
        # Unit" would be saved as two titles, so only the title before its comma is taken.
        updates["target_titles"] = list(dict.fromkeys(
            t.split(",")[0].strip() for t in (resume.work[0].position if resume.work else None,
                                             resume.basics.label) if t))
    if not stated.locations and location and location.city:
        updates["locations"] = [location.city]
    return stated.model_copy(update=updates)


def merge_preferences(saved: dict, suggested: PreferenceSuggestions) -> tuple[dict, PreferenceSuggestions]:
    """``saved`` (camelCase preference fields) with its empty ones filled from
    ``suggested``; and the suggestions it took (a field the user had set is not one).
    "Any" is the default remote preference, so it counts as empty. The salary floor and
    its currency go together: taken only where no floor is saved."""
    merged = dict(saved)
    taken: dict = {}
    if not saved.get("targetTitles") and suggested.target_titles:
        merged["targetTitles"] = taken["target_titles"] = suggested.target_titles
    if not saved.get("locations") and suggested.locations:
        merged["locations"] = taken["locations"] = suggested.locations
    if saved.get("remotePreference") in (None, "any") and suggested.remote_preference:
        merged["remotePreference"] = taken["remote_preference"] = suggested.remote_preference
    if saved.get("salaryFloor") is None and suggested.salary_floor is not None:
        merged["salaryFloor"] = taken["salary_floor"] = suggested.salary_floor
        if suggested.salary_currency:
            merged["salaryCurrency"] = taken["salary_currency"] = suggested.salary_currency
    return merged, PreferenceSuggestions(**taken)


def draft_profile(result, *, current: CandidateProfile | None, file_name: str | None,
                  sample: bool) -> CandidateProfile:
    return draft_with_suggestions(result, current=current, file_name=file_name,
                                  sample=sample)[0]


def draft_with_suggestions(result, *, current: CandidateProfile | None, file_name: str | None,
                           sample: bool) -> tuple[CandidateProfile, PreferenceSuggestions]:
    """The imported résumé with the user's own preferences kept (a sample's preferences
    are not the user's, so they are replaced), empty ones suggested from the résumé; and
    the preference values the draft took from the résumé."""
    if sample:
        preferences, taken = _sample_preferences(), PreferenceSuggestions()
    else:
        saved = (current.model_dump(by_alias=True, include=set(PREFERENCE_FIELDS))
                 if current is not None and not current.sample else {})
        preferences, taken = merge_preferences(saved, suggested_preferences(result))
    origin = ImportOrigin(file_name=file_name, format=result.format, imported_at=utc_now_iso())
    profile = CandidateProfile.model_validate({
        **preferences, "resume": result.resume.model_dump(by_alias=True, exclude_unset=True),
        "resumeText": result.text[:60_000] if result.format != "jsonresume" else None,
        "importedFrom": origin.model_dump(by_alias=True), "sample": sample,
    })
    return profile, taken
