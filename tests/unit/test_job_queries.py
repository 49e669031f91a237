"""The Jobs list's server-side search, filters and sort (store/job_queries) over a real db."""

from __future__ import annotations

from backend.store.job_queries import JobFilter, list_jobs

JOBS = [
    # job_id, title, company, location, user_status, first_seen_at
    ("job_" + "1" * 24, "Data Engineer", "Northwind", "Berlin", None, "2026-01-01T00:00:01Z"),
    ("job_" + "2" * 24, "Backend Developer", "Contoso", "amsterdam", "applied",
     "2026-01-01T00:00:02Z"),
    ("job_" + "3" * 24, "Platform Engineer", "Fabrikam", None, "skipped", "2026-01-01T00:00:03Z"),
]
STAGES = [
    ("job_" + "1" * 24, "enrich", "succeeded"),
    ("job_" + "1" * 24, "score", "failed"),
    ("job_" + "2" * 24, "enrich", "succeeded"),
    ("job_" + "2" * 24, "score", "running"),
    ("job_" + "3" * 24, "enrich", "failed"),
]


async def seed(db) -> None:
    async with db.transaction() as conn:
        for job_id, title, company, location, user_status, seen in JOBS:
            await conn.execute(
                "INSERT INTO jobs (job_id, tenant_id, canonical_url, url, title, company,"
                " location, first_source, first_seen_at, last_seen_at, user_status)"
                " VALUES (?, 'local', ?, ?, ?, ?, ?, 'demo_board', ?, ?, ?)",
                (job_id, f"https://x/{job_id}", f"https://x/{job_id}", title, company, location,
                 seen, seen, user_status))
        for job_id, stage, status in STAGES:
            await conn.execute(
                "INSERT INTO job_stage_states (tenant_id, job_id, stage, status, updated_at)"
                " VALUES ('local', ?, ?, ?, '2026-01-01T00:00:00Z')", (job_id, stage, status))


async def titles(db, filters=JobFilter(), sort="firstSeen", descending=False) -> list[str]:
    _total, rows = await list_jobs(db, filters, sort=sort, descending=descending,
                                   limit=50, offset=0)
    return [row["title"] for row in rows]


async def test_stage_status_without_a_stage_matches_any_stage(db):
    await seed(db)
    assert await titles(db, JobFilter(stage_status="failed")) == [
        "Data Engineer", "Platform Engineer"]
    assert await titles(db, JobFilter(stage="score", stage_status="failed")) == ["Data Engineer"]
    assert await titles(db, JobFilter(stage_status="running")) == ["Backend Developer"]


async def test_unmarked_jobs_are_neither_applied_nor_skipped(db):
    await seed(db)
    assert await titles(db, JobFilter(user_status="none")) == ["Data Engineer"]
    assert await titles(db, JobFilter(user_status="applied")) == ["Backend Developer"]


async def test_sort_by_location_ignores_case_and_puts_unknown_last(db):
    await seed(db)
    assert await titles(db, sort="location") == [
        "Backend Developer", "Data Engineer", "Platform Engineer"]
    assert await titles(db, sort="location", descending=True) == [
        "Data Engineer", "Backend Developer", "Platform Engineer"]


async def test_search_combines_with_filters(db):
    await seed(db)
    assert await titles(db, JobFilter(q="engineer", stage_status="failed")) == [
        "Data Engineer", "Platform Engineer"]
    assert await titles(db, JobFilter(q="engineer", user_status="none")) == ["Data Engineer"]
    assert await titles(db, JobFilter(q="100%_")) == []


def test_the_route_refuses_unknown_filter_values(tmp_path):
    from fastapi.testclient import TestClient

    from backend.api.app import create_app
    from backend.config import AppPaths

    app = create_app(AppPaths(tmp_path), api_token="t", temporal_address="127.0.0.1:1")
    with TestClient(app, base_url="http://127.0.0.1") as client:
        client.headers["Authorization"] = "Bearer t"
        bad = client.get("/v1/jobs", params={"stageStatus": "on_fire"})
        assert bad.status_code == 422 and bad.json()["error"]["code"] == "validation_error"
        bad_sort = client.get("/v1/jobs", params={"sort": "salary"})
        assert bad_sort.status_code == 422
        ok = client.get("/v1/jobs", params={"userStatus": "none", "sort": "location",
                                            "stageStatus": "failed"})
        assert ok.status_code == 200 and ok.json()["total"] == 0


async def test_a_job_detail_reads_while_another_process_holds_the_write_lock(db):
    import sqlite3

    from backend.store.job_queries import job_detail

    await seed(db)
    writer = sqlite3.connect(db.path, isolation_level=None, timeout=0)
    try:
        writer.execute("BEGIN IMMEDIATE")  # e.g. the worker, mid-transaction
        writer.execute("UPDATE jobs SET title = 'Renamed' WHERE job_id = ?", (JOBS[0][0],))
        detail = await job_detail(db, JOBS[0][0])
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert detail["title"] == "Data Engineer"  # the committed snapshot, not the pending write
    assert {row["stage"]: row["status"] for row in detail["stages"]} == {
        "enrich": "succeeded", "score": "failed"}
