"""Data steps that run with a numbered migration, inside its transaction.

SQL cannot read a résumé; these steps can. Each is keyed by the migration version it
belongs to and runs right after that version's SQL, so it happens exactly once.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable


def structure_legacy_profile(conn: sqlite3.Connection) -> None:
    """Profiles from before the résumé was structured: flat fields move into the JSON
    Resume document (the model's legacy reader), and a pasted résumé text with no
    document becomes work entries, education and skills, best effort. The revision is
    kept: the candidate said nothing new, so nothing is rescored."""
    from backend.domain.profile import CandidateProfile
    from backend.domain.resume_structure import structure_text

    for tenant_id, profile_json in conn.execute(
            "SELECT tenant_id, profile_json FROM candidate_profiles").fetchall():
        raw = json.loads(profile_json)
        had_document = bool(raw.get("jsonResume") or raw.get("json_resume") or raw.get("resume"))
        profile = CandidateProfile.model_validate(raw)
        if not had_document and profile.resume_text:
            parsed, _unplaced = structure_text(profile.resume_text)
            profile = profile.model_copy(update={"resume": _merge(parsed, profile)})
        conn.execute("UPDATE candidate_profiles SET profile_json = ? WHERE tenant_id = ?",
                     (profile.model_dump_json(by_alias=True), tenant_id))


def _merge(parsed, profile):
    """The parsed document, with what the user typed in the flat fields winning."""
    typed = profile.resume
    typed_fields = ("name", "label", "email", "phone", "url", "summary")
    basics = parsed.basics.model_copy(update={
        key: getattr(typed.basics, key) for key in typed_fields if getattr(typed.basics, key)})
    skills = typed.skills or parsed.skills
    if typed.skills and parsed.skills:
        known = {name.lower() for name in typed.skill_names()}
        extra = [g for g in parsed.skills if not {k.lower() for k in g.keywords} <= known]
        skills = [*typed.skills, *extra]
    return parsed.model_copy(update={"basics": basics, "skills": skills})


def board_for_applied_jobs(conn: sqlite3.Connection) -> None:
    """Jobs applied to before the application board existed appear on it, dated by the
    first event that says they were applied, with the usual follow-up."""
    from backend.domain.clock import local_zone
    from backend.store.application_rows import backfill_applied_jobs

    backfill_applied_jobs(conn, local_zone())


DATA_STEPS: dict[int, Callable[[sqlite3.Connection], None]] = {
    15: structure_legacy_profile,
    18: board_for_applied_jobs,
}
