"""From an imported résumé to a draft profile the user reviews before saving."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from backend.domain.clock import utc_now_iso
from backend.domain.profile import CandidateProfile, ImportOrigin
from backend.domain.resume import JsonResume

PREFERENCE_FIELDS = ("target_titles", "locations", "remote_preference", "salary_floor",
                     "salary_currency", "work_authorization", "must_have_keywords",
                     "deal_breaker_keywords")


def sample_resume_file() -> Path:
    return Path(str(resources.files("resources") / "sample" / "sample-resume.md"))


def _sample_preferences() -> dict:
    text = (resources.files("resources") / "sample" / "sample-preferences.json").read_text("utf-8")
    return {key: value for key, value in json.loads(text).items() if not key.startswith("_")}


def suggested_preferences(resume: JsonResume) -> dict:
    """What the résumé itself says the person looks for: their latest title and city."""
    titles = [t for t in (resume.work[0].position if resume.work else None,
                          resume.basics.label) if t]
    city = resume.basics.location.city if resume.basics.location else None
    return {"targetTitles": titles, "locations": [city] if city else []}


def draft_profile(result, *, current: CandidateProfile | None, file_name: str | None,
                  sample: bool) -> CandidateProfile:
    """The imported résumé with the user's own preferences kept (a sample's preferences
    are not the user's, so they are replaced), empty ones suggested from the résumé."""
    if sample:
        preferences = _sample_preferences()
    elif current is not None and not current.sample:
        preferences = current.model_dump(by_alias=True, include=set(PREFERENCE_FIELDS))
        for key, value in suggested_preferences(result.resume).items():
            preferences[key] = preferences.get(key) or value
    else:
        preferences = suggested_preferences(result.resume)
    origin = ImportOrigin(file_name=file_name, format=result.format, imported_at=utc_now_iso())
    return CandidateProfile.model_validate({
        **preferences, "resume": result.resume.model_dump(by_alias=True, exclude_unset=True),
        "resumeText": result.text[:60_000] if result.format != "jsonresume" else None,
        "importedFrom": origin.model_dump(by_alias=True), "sample": sample,
    })
