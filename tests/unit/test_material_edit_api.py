"""PUT /v1/jobs/{id}/materials/{kind} through the truthfulness gate, in process: an edit
with a claim the profile does not hold gets the typed ``unsupported_claims`` answer and
changes nothing; with ``keepUnsupported`` it is saved, the kept claims are recorded on the
generation, in its event and in the job detail, and a rewritten paragraph rests on what its
new words name. (Temporal is stood in for: the dispatch is the only part that needs it.)"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from backend.api.routers import jobs as jobs_router
from backend.config import AppPaths
from backend.store import materials
from backend.store.db import Database
from backend.store.profile import save_profile
from backend.temporal.dispatch import Started
from tests.api_http import in_process_api
from tests.app_db import connect_db
from tests.unit.test_material_edit_check import FIT, LETTER, RESUME, SPARK
from tests.unit.test_writing import PROFILE

JOB = "job_" + "d" * 24
ROUTE = f"/v1/jobs/{JOB}/materials/cover-letter"


async def _seed(app_dir: Path) -> None:
    db = await Database.open(AppPaths(app_dir).database)
    try:
        async with db.transaction() as conn:
            await conn.execute(
                "INSERT INTO jobs (job_id, tenant_id, canonical_url, url, title, company, location,"
                " remote, first_source, first_seen_at, last_seen_at) VALUES (?, 'local', ?, ?,"
                " 'Senior Backend Engineer', 'Globex Cloud', 'Remote (EU)', 'remote', 'demo',"
                " '2026-12-01T00:00:00Z', '2026-12-01T00:00:00Z')",
                (JOB, f"https://x/{JOB}", f"https://x/{JOB}"))
            for stage in ("enrich", "score", "tailor", "cover", "pdf"):
                await conn.execute(
                    "INSERT INTO job_stage_states (tenant_id, job_id, stage, status, result_version,"
                    " updated_at) VALUES ('local', ?, ?, 'succeeded', 1, '2026-12-01T00:00:00Z')",
                    (JOB, stage))
            revision, _changed = await save_profile(conn, PROFILE)
            await materials.insert_score(
                conn, JOB, version=1, score=FIT.score, rationale=FIT.rationale, matched=FIT.matched,
                missing=FIT.missing, provider="offline", model="rules", profile_revision=revision,
                workflow_id="w", run_id="r", ledger=FIT.ledger.model_dump(mode="json", by_alias=True))
            for kind, doc in (("resume", RESUME), ("cover_letter", LETTER)):
                await materials.insert_material(
                    conn, JOB, kind=kind, generation=1, content=doc.model_dump(mode="json", by_alias=True),
                    provider="offline", model="rules", profile_revision=revision, workflow_id="w",
                    run_id="r")
    finally:
        await db.close()


@pytest.fixture
def api(tmp_path, monkeypatch):
    asyncio.run(_seed(tmp_path))

    async def started(_client, job_id, **_kwargs):
        return Started(workflow_id=f"prep-{job_id}", first_execution_run_id="run-1",
                       already_running=False)

    monkeypatch.setattr(jobs_router, "start_preparation", started)
    with in_process_api(tmp_path) as client:
        async def ready():
            return object()

        client.app.state.context.require_runtime = ready
        yield client


def _edited(*texts: str) -> dict:
    letter = LETTER.model_dump(mode="json", by_alias=True)
    letter["paragraphs"] = [letter["paragraphs"][0],
                            *({"text": t, "evidence": ["Stale note"]} for t in texts),
                            *letter["paragraphs"][1:]]
    return letter


def _events(app_dir: Path) -> list[tuple[str, dict]]:
    with connect_db(AppPaths(app_dir).database) as conn:
        rows = conn.execute("SELECT type, payload_json FROM job_events WHERE job_id = ? ORDER BY id",
                            (JOB,)).fetchall()
    return [(kind, json.loads(payload)) for kind, payload in rows]


def test_an_unsupported_claim_is_answered_typed_and_nothing_is_saved(api, tmp_path):
    before = api.get(f"/v1/jobs/{JOB}").json()
    refused = api.put(ROUTE, json=_edited(SPARK))
    assert refused.status_code == 409, refused.text
    error = refused.json()["error"]
    assert error["code"] == "unsupported_claims"
    assert error["unsupportedClaims"] == [{"claim": "I have also used Spark for three years",
                                           "why": "Spark is not in your profile"}]
    assert "Spark is not in your profile" in error["message"]
    after = api.get(f"/v1/jobs/{JOB}").json()
    assert after["coverLetter"] == before["coverLetter"]
    assert after["coverLetter"]["keptClaims"] == []
    assert _events(tmp_path) == []


def test_kept_claims_are_saved_and_recorded_on_the_generation(api, tmp_path):
    saved = api.put(ROUTE, params={"keepUnsupported": "true"}, json=_edited(SPARK))
    assert saved.status_code == 202, saved.text
    answer = saved.json()
    kept = [{"claim": "I have also used Spark for three years", "why": "Spark is not in your profile"}]
    assert answer["generation"] == 2 and answer["keptClaims"] == kept
    assert answer["workflowId"] == f"prep-{JOB}"
    assert answer["content"]["paragraphs"][1] == {"text": SPARK, "evidence": []}  # the stale note is gone
    detail = api.get(f"/v1/jobs/{JOB}").json()
    assert detail["coverLetter"]["generation"] == 2
    assert detail["coverLetter"]["keptClaims"] == kept
    assert detail["coverLetter"]["content"]["paragraphs"][1]["text"] == SPARK
    (kind, payload), = _events(tmp_path)
    assert kind == "CoverLetterGenerated" and payload["keptClaims"] == [kept[0]["claim"]]
    assert payload["provider"] == "user" and payload["generation"] == 2


def test_an_edit_the_profile_holds_is_saved_and_rests_on_its_new_words(api, tmp_path):
    saved = api.put(ROUTE, json=_edited("At Acme I wrote Go services for payments."))
    assert saved.status_code == 202, saved.text
    paragraph = saved.json()["content"]["paragraphs"][1]
    assert paragraph["evidence"] == ["Backend Engineer, Acme (2017–2021)",
                                     "Wrote Go services for payments", "Go"]
    assert saved.json()["keptClaims"] == []
    (_kind, payload), = _events(tmp_path)
    assert payload["keptClaims"] == []
