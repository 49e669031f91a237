"""Migration 0015's data step: profiles saved before the résumé was structured become
the structured shape once, on a real migrated SQLite file, keeping the revision and the
original text; the flat shape still reads everywhere."""

from __future__ import annotations

import json
import sqlite3

from backend.config import TENANT_ID
from backend.domain.profile import CandidateProfile
from backend.store.db import _migration_files, migrate

PASTED = {
    "name": "Ada Example", "email": "ada@example.org", "headline": "Backend Engineer",
    "targetTitles": ["Backend Engineer"], "locations": ["Berlin"],
    "remotePreference": "remote_or_hybrid", "skills": ["Python", "Airflow", "Terraform"],
    "resumeText": (
        "Ada Example\nBackend Engineer\n\nEXPERIENCE\n"
        "Senior Backend Engineer, Northwind GmbH (2021 – present)\n"
        "- Built the billing platform on Python and PostgreSQL\n"
        "- Moved 40 services to Kubernetes\n"
        "Backend Engineer, Contoso AG (2017 – 2021)\n"
        "- Wrote the Kafka event pipeline\n\n"
        "EDUCATION\nBSc Computer Science, TU Berlin, 2016\n"),
}


def database_at_14_with(tmp_path, profile: dict):
    path = tmp_path / "jobctrl.db"
    migrate(path, migrations=[m for m in _migration_files() if m[0] <= 14])
    with sqlite3.connect(path) as conn:
        conn.execute("INSERT INTO candidate_profiles VALUES (?, 7, ?, '2026-01-01T00:00:00Z')",
                     (TENANT_ID, json.dumps(profile)))
    return path


def stored(path) -> tuple[int, dict]:
    with sqlite3.connect(path) as conn:
        revision, text = conn.execute("SELECT revision, profile_json FROM candidate_profiles").fetchone()
        events = conn.execute("SELECT COUNT(*) FROM job_events").fetchone()[0]
    assert events == 0, "a storage migration records no profile change"
    return revision, json.loads(text)


def test_a_pasted_resume_becomes_work_entries_once_and_keeps_its_text(tmp_path):
    path = database_at_14_with(tmp_path, PASTED)
    assert 15 in migrate(path)
    revision, profile = stored(path)
    assert revision == 7
    resume = profile["resume"]
    assert resume["basics"]["name"] == "Ada Example" and resume["basics"]["label"] == "Backend Engineer"
    assert [(w["position"], w["name"]) for w in resume["work"]] == [
        ("Senior Backend Engineer", "Northwind GmbH"), ("Backend Engineer", "Contoso AG")]
    assert resume["work"][0]["highlights"][1] == "Moved 40 services to Kubernetes"
    assert resume["work"][1]["highlights"] == ["Wrote the Kafka event pipeline"]
    assert resume["education"][0]["institution"]
    # The skills the user typed are all kept, and the original text stays as it was.
    skills = CandidateProfile.model_validate(profile).all_skills()
    assert {"Python", "Airflow", "Terraform"} <= set(skills)
    assert profile["resumeText"] == PASTED["resumeText"]
    assert profile["targetTitles"] == ["Backend Engineer"]
    assert migrate(path) == []  # once


def test_an_uploaded_json_resume_moves_under_resume_untouched(tmp_path):
    document = {"basics": {"name": "Grace", "label": "Staff Engineer"},
                "work": [{"name": "Initech", "position": "Staff Engineer", "startDate": "2019-02",
                          "highlights": ["Led the storage team"]}],
                "projects": [{"name": "Compiler"}], "meta": {"theme": "even"}}
    path = database_at_14_with(tmp_path, {"jsonResume": document, "resumeText": "ignored text"})
    migrate(path)
    _revision, profile = stored(path)
    assert CandidateProfile.model_validate(profile).resume.export() == document


def test_the_flat_shape_still_validates_into_the_structure():
    profile = CandidateProfile.model_validate(PASTED)
    assert profile.display_name() == "Ada Example" and profile.headline == "Backend Engineer"
    assert profile.all_skills() == ["Python", "Airflow", "Terraform"]
    again = CandidateProfile.model_validate_json(profile.model_dump_json(by_alias=True))
    assert again == profile
