"""The whole demo board through Enrich → Score → Tailor → Cover → PDF with the offline
provider, on its own app dir, plus the per-job actions."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import pytest_asyncio

from backend.supervision.supervisor import Supervisor
from desktop.client import ApiClient
from tests.api_http import api_http
from tests.app_db import connect_db
from tests.integration.conftest import write_settings

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

PROFILE = {
    "resume": {
        "basics": {"name": "Ada Example", "label": "Backend Engineer", "email": "ada@example.org",
                   "summary": "Backend engineer with eight years of Python.",
                   "location": {"city": "Berlin", "countryCode": "DE"}},
        "work": [
            {"name": "Northwind GmbH", "position": "Senior Backend Engineer", "location": "Berlin",
             "startDate": "2020-03",
             "highlights": ["Built a PostgreSQL-backed billing platform serving 2M customers",
                            "Moved 40 services to Kubernetes on AWS with Terraform",
                            "Mentored four engineers"]},
            {"name": "Contoso AG", "position": "Backend Engineer", "location": "Hamburg",
             "startDate": "2016-01", "endDate": "2020-02",
             "highlights": ["Wrote the Kafka event pipeline in Go and Python",
                            "Ran the SQL reporting warehouse"]},
        ],
        "education": [{"institution": "TU Berlin", "studyType": "BSc", "area": "Computer Science"}],
        "skills": [{"name": "Backend", "keywords": ["Python", "Go", "SQL", "PostgreSQL", "Kafka"]},
                   {"name": "Infrastructure", "keywords": ["Kubernetes", "AWS", "Terraform"]}],
        "languages": [{"language": "English", "fluency": "C2"},
                      {"language": "German", "fluency": "Native speaker"}],
    },
    "targetTitles": ["Backend Engineer", "Platform Engineer", "Data Engineer"],
    "locations": ["Berlin", "Remote"],
    "remotePreference": "remote_or_hybrid",
    "salaryFloor": 70000,
    "salaryCurrency": "EUR",
    "workAuthorization": ["EU"],
    "mustHaveKeywords": ["Python"],
    "dealBreakerKeywords": ["on-call 24/7"],
}
SKILLS = [skill for group in PROFILE["resume"]["skills"] for skill in group["keywords"]]
THRESHOLD = 50  # the default


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def prepared(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("prep-app")
    write_settings(app_dir, minFitScore=THRESHOLD)
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    api = ApiClient.from_runtime(supervisor.info)
    http = api_http(supervisor.info)
    assert (await http.put("/v1/profile", json=PROFILE)).status_code == 200
    accepted = await api.run_stage("discover")
    await wait_for(lambda: all_pdfs_done(http), timeout=600)
    yield {"app_dir": app_dir, "api": api, "http": http,
           "discover_run_id": accepted["firstExecutionRunId"]}
    await http.aclose()
    await api.close()
    await supervisor.stop()


async def all_pdfs_done(http) -> bool:
    """Every job's PDF stage is settled: rendered, or skipped below the threshold."""
    settled = 0
    for status in ("succeeded", "skipped"):
        page = (await http.get("/v1/jobs", params={"stage": "pdf", "stageStatus": status,
                                                   "limit": 1})).json()
        settled += page["total"]
    return settled == 234


async def wait_for(predicate, *, timeout: float) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        if await predicate():
            return
        await asyncio.sleep(0.5)
    raise AssertionError("condition not reached in time")


def event_counts(app_dir: Path) -> dict[str, int]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return dict(conn.execute("SELECT type, COUNT(*) FROM job_events GROUP BY type"))


def latest_scores(app_dir: Path) -> dict[str, int]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return dict(conn.execute(
            "SELECT job_id, score FROM job_scores s WHERE version ="
            " (SELECT MAX(version) FROM job_scores x WHERE x.job_id = s.job_id)"))


def jobs_with_materials(app_dir: Path) -> set[str]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return {row[0] for row in conn.execute(
            "SELECT job_id FROM job_materials UNION SELECT job_id FROM job_artifacts")}


async def test_the_first_fitting_jobs_are_prepared_ahead_of_the_rest_of_the_board(prepared):
    """Depth first (STAGE_PRIORITY, one write partition): the first résumé PDF was done
    while most of the board still waited for its Score, not after every job was scored."""
    with connect_db(prepared["app_dir"] / "jobctrl.db") as conn:
        (first_pdf,) = conn.execute(
            "SELECT min(finished_at) FROM job_stage_states"
            " WHERE stage = 'pdf' AND status = 'succeeded'").fetchone()
        (scored_before,) = conn.execute(
            "SELECT count(*) FROM job_stage_states WHERE stage = 'score' AND started_at < ?",
            (first_pdf,)).fetchone()
    assert scored_before < 234 / 2, (scored_before, first_pdf)


async def test_only_jobs_at_or_above_the_threshold_get_materials(prepared):
    """The whole demo board, offline, a backend-engineer profile, the default threshold:
    every job is scored; exactly the ones at or above it are prepared and wait in Apply
    Review; the rest are skipped with their score and the threshold, and cost nothing."""
    app_dir, http = prepared["app_dir"], prepared["http"]
    scores = latest_scores(app_dir)
    above = {job for job, score in scores.items() if score >= THRESHOLD}
    assert len(scores) == 234 and 0 < len(above) < 234
    assert jobs_with_materials(app_dir) == above
    async def all_closed() -> bool:  # the profile's continuation may close a moment later
        return event_counts(app_dir).get("WorkflowCompleted", 0) >= 234 + 1 + 1

    await wait_for(all_closed, timeout=60)
    counts = event_counts(app_dir)
    assert counts["JobEnriched"] == 234
    assert counts["JobScored"] == 234
    assert counts["ResumeApproved"] == len(above)
    assert counts["CoverLetterGenerated"] == len(above)
    assert counts["PdfRendered"] == 2 * len(above)
    queue = (await http.get("/v1/apply/queue", params={"limit": 500})).json()
    assert {item["jobKey"] for item in queue["items"]} == above
    below = sorted(set(scores) - above)
    detail = (await http.get(f"/v1/jobs/{below[0]}")).json()
    tailor = next(s for s in detail["stages"] if s["stage"] == "tailor")
    assert (tailor["status"], tailor["blockedReason"]) == ("skipped", "below_min_fit_score")
    assert detail["fitThreshold"] == {"minFitScore": THRESHOLD, "below": True,
                                      "prepareAnyway": False}
    assert detail["resume"] is None and detail["artifacts"] == []
    # every preparation, the Discover run, and the continuation the first profile save started
    assert counts["WorkflowCompleted"] == 234 + 1 + 1, counts
    assert "StageFailed" not in counts and "StageExhausted" not in counts


async def test_a_job_detail_has_its_fit_evidence_and_real_pdfs(prepared):
    http = prepared["http"]
    best = (await http.get("/v1/jobs", params={"limit": 1})).json()["items"][0]  # best fit first
    assert best["score"] >= 70
    assert set(best["stages"].values()) == {"succeeded"}
    assert best["fitReasons"] and all(line[0] in "✓✗?C" for line in best["fitReasons"])
    detail = (await http.get(f"/v1/jobs/{best['jobId']}")).json()
    ledger = detail["score"]["ledger"]
    python = next(r for r in ledger["requirements"] if r["label"] == "Python")
    assert python["status"] == "met" and python["evidence"]
    assert detail["fitThreshold"]["below"] is False
    assert detail["score"]["provider"] == "offline"
    resume = detail["resume"]["content"]
    assert resume["name"] == "Ada Example"
    assert [e["employer"] for e in resume["experience"]] == ["Northwind GmbH", "Contoso AG"]
    assert resume["skills"][0]["items"][0] in SKILLS
    assert resume["contact"]["locations"] == ["Berlin, Germany"]  # as written; "Remote" is no place
    assert detail["coverLetter"]["content"]["paragraphs"][0]["text"].startswith("I am applying for")
    kinds = {artifact["kind"]: artifact for artifact in detail["artifacts"]}
    assert set(kinds) == {"resume_pdf", "cover_letter_pdf", "resume_docx", "cover_letter_docx"}
    for kind, artifact in kinds.items():
        data = Path(artifact["path"]).read_bytes()
        if kind.endswith("_pdf"):
            assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")
        else:  # the Word file beside it, under the same name
            assert data.startswith(b"PK") and Path(artifact["path"]).suffix == ".docx"
            pdf = Path(kinds[kind.replace("_docx", "_pdf")]["path"])
            assert Path(artifact["path"]).with_suffix(".pdf") == pdf
        assert Path(artifact["path"]).is_relative_to(prepared["app_dir"] / "artifacts")
    # Both résumé files read back whole; the letters are not checked.
    assert detail["atsCheck"] == {"ok": True, "missing": []}
    assert kinds["resume_docx"]["atsCheck"] == {"ok": True, "missing": []}
    assert kinds["cover_letter_pdf"]["atsCheck"] is None
    stage_rows = {row["stage"]: row for row in detail["stages"]}
    assert stage_rows["score"]["ownerRunId"], "the owning run is recorded"


async def test_stage_events_carry_the_run_workflow_id(prepared):
    with connect_db(prepared["app_dir"] / "jobctrl.db") as conn:
        rows = conn.execute(
            "SELECT json_extract(payload_json, '$.workflowId'), workflow_id FROM job_events"
            " WHERE type IN ('StageStarted', 'JobScored', 'StageCompleted')").fetchall()
    assert rows and all(payload == column and payload.startswith("prep-job_")
                        for payload, column in rows)


async def test_a_second_discover_prepares_nothing_again(prepared):
    before = event_counts(prepared["app_dir"])
    accepted = await prepared["api"].run_stage("discover")
    run_id = accepted["firstExecutionRunId"]

    async def finished() -> bool:
        runs = await prepared["api"].discovery_runs()
        return any(r["discoverRunId"] == run_id and r["status"] != "running" for r in runs)

    await wait_for(finished, timeout=120)
    after = event_counts(prepared["app_dir"])
    for kind in ("JobScored", "ResumeApproved", "PdfRendered", "StageStarted"):
        assert after.get(kind) == before.get(kind), kind


async def queue_keys(http) -> set[str]:
    queue = (await http.get("/v1/apply/queue", params={"limit": 500})).json()
    return {item["jobKey"] for item in queue["items"]}


async def test_prepare_anyway_prepares_one_job_below_the_threshold(prepared):
    app_dir, http = prepared["app_dir"], prepared["http"]
    scores = latest_scores(app_dir)
    job_id = min(scores, key=scores.get)  # the worst fit
    assert job_id not in jobs_with_materials(app_dir)
    response = await http.post(f"/v1/jobs/{job_id}/actions/prepare-anyway")
    assert response.status_code == 202, response.text

    async def prepared_now() -> bool:
        return job_id in jobs_with_materials(app_dir) and job_id in await queue_keys(http)

    await wait_for(prepared_now, timeout=120)
    detail = (await http.get(f"/v1/jobs/{job_id}")).json()
    assert detail["fitThreshold"]["below"] is True and detail["fitThreshold"]["prepareAnyway"]
    assert {s["stage"]: s["status"] for s in detail["stages"]}["pdf"] == "succeeded"
    missing = await http.post("/v1/jobs/job_" + "0" * 24 + "/actions/prepare-anyway")
    assert missing.status_code == 404


async def test_lowering_the_threshold_prepares_exactly_the_jobs_it_clears(prepared):
    """Reversible: raising it back hides them from Apply Review again, materials kept."""
    app_dir, http = prepared["app_dir"], prepared["http"]
    scores = latest_scores(app_dir)
    lowered = THRESHOLD - 10
    had = jobs_with_materials(app_dir)
    cleared = {job for job, score in scores.items() if lowered <= score < THRESHOLD} - had
    assert cleared, "the demo board has jobs just under the threshold"
    assert (await http.patch("/v1/settings", json={"minFitScore": lowered})).status_code == 200

    async def all_cleared_prepared() -> bool:  # both PDFs rendered: in Apply Review
        return cleared <= await queue_keys(http)

    await wait_for(all_cleared_prepared, timeout=300)
    assert jobs_with_materials(app_dir) == had | cleared, "exactly the cleared jobs"
    assert (await http.patch("/v1/settings", json={"minFitScore": THRESHOLD})).status_code == 200
    back = await queue_keys(http)
    assert not cleared & back
    assert jobs_with_materials(app_dir) == had | cleared


async def test_rescore_runs_only_score_and_mark_skipped(prepared):
    http = prepared["http"]
    job = (await http.get("/v1/jobs", params={"limit": 1, "sort": "title"})).json()["items"][0]
    before = event_counts(prepared["app_dir"])
    response = await http.post(f"/v1/jobs/{job['jobId']}/actions/rescore")
    assert response.status_code == 202, response.text
    assert response.json()["workflowId"] == f"prep-{job['jobId']}"

    async def rescored() -> bool:
        return event_counts(prepared["app_dir"]).get("JobScored", 0) == before["JobScored"] + 1

    await wait_for(rescored, timeout=60)
    await asyncio.sleep(1)
    after = event_counts(prepared["app_dir"])
    # Tailor/Cover/PDF already succeeded and were not forced: no new materials.
    assert after["ResumeApproved"] == before["ResumeApproved"]
    detail = (await http.get(f"/v1/jobs/{job['jobId']}")).json()
    assert detail["score"]["version"] == 2

    noop = await http.post(f"/v1/jobs/{job['jobId']}/actions/run-stage", json={"stage": "score"})
    assert noop.status_code == 200 and noop.json()["noopReason"] == "already_succeeded"
    not_failed = await http.post(f"/v1/jobs/{job['jobId']}/actions/retry-stage",
                                 json={"stage": "score"})
    assert not_failed.status_code == 409
    assert not_failed.json()["error"]["code"] == "stage_not_retryable"

    marked = await http.post(f"/v1/jobs/{job['jobId']}/actions/mark", json={"userStatus": "skipped"})
    assert marked.status_code == 200
    skipped = (await http.get("/v1/jobs", params={"userStatus": "skipped"})).json()
    assert [item["jobId"] for item in skipped["items"]] == [job["jobId"]]


async def test_job_routes_reject_bad_keys_and_filters(prepared):
    http = prepared["http"]
    assert (await http.get("/v1/jobs/not-a-job")).status_code == 422
    missing = await http.get("/v1/jobs/job_" + "0" * 24)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "job_not_found"
    assert (await http.get("/v1/jobs", params={"sort": "nope"})).status_code == 422
    remote = (await http.get("/v1/jobs", params={"remote": "remote", "limit": 500})).json()
    assert remote["total"] > 0 and all(i["remote"] == "remote" for i in remote["items"])
    found = (await http.get("/v1/jobs", params={"q": "engineer"})).json()
    assert 0 < found["total"] < 234


async def test_settings_validate_every_field_and_save_nothing_when_invalid(prepared):
    http, settings_file = prepared["http"], prepared["app_dir"] / "settings.json"
    before = settings_file.read_bytes() if settings_file.exists() else None
    current = (await http.get("/v1/settings")).json()
    assert current["dailyBudgetUsd"] == 25 and current["llm"]["provider"] == "offline"
    for patch, field in (
        ({"dailyBudgetUsd": -1}, "dailyBudgetUsd"),
        ({"llm": {"provider": "psychic"}}, "llm.provider"),
        ({"minFitScore": 101}, "minFitScore"),
        ({"sources": [{"kind": "greenhouse", "id": "Bad Id!", "boardToken": "x"}]}, "sources"),
        ({"noSuchSetting": 1}, "noSuchSetting"),
    ):
        response = await http.patch("/v1/settings", json=patch)
        assert response.status_code == 422, patch
        error = response.json()["error"]
        assert error["code"] == "validation_error"
        assert any(f.startswith(field) for f in error["fields"]), (field, error)
    assert (settings_file.read_bytes() if settings_file.exists() else None) == before
    ok = await http.patch("/v1/settings", json={"minFitScore": 90, "llm": {"timeoutS": 30}})
    assert ok.status_code == 200
    assert ok.json()["minFitScore"] == 90 and ok.json()["llm"]["provider"] == "offline"
    assert json.loads(settings_file.read_text())["minFitScore"] == 90
    await http.patch("/v1/settings", json={"minFitScore": THRESHOLD})


async def test_profile_saves_are_revisioned_and_a_no_op_changes_nothing(prepared):
    http = prepared["http"]
    current = (await http.get("/v1/profile")).json()
    same = await http.put("/v1/profile", json=current["profile"])
    assert same.json()["changed"] is False and same.json()["revision"] == current["revision"]
    bad = await http.put("/v1/profile", json={**PROFILE, "salaryFloor": -5})
    assert bad.status_code == 422 and "salaryFloor" in bad.json()["error"]["fields"]
    unknown = await http.put("/v1/profile", json={**PROFILE, "favouriteColour": "teal"})
    assert unknown.status_code == 422
    assert (await http.get("/v1/profile")).json()["revision"] == current["revision"]
