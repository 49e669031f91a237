"""One board must not flood the pipeline: a board serving far more
postings than any real one is cut at the per-board cap without converting the rest, the
run keeps at most its own cap across sources, and the run's summary says how many were
left out; a 20 MB description is stored bounded, in the job and in its enrichment.

A real loopback board (tests/fakes/job_boards.py) and the real Discover activities over
a real SQLite file (ActivityEnvironment, no Temporal server)."""

from __future__ import annotations

import html
import json
import sqlite3

import pytest
from temporalio.testing import ActivityEnvironment

from backend.config import AppPaths
from backend.domain.source_config import GreenhouseSource
from backend.pipeline import enrich as enrich_logic
from backend.sources import caps, normalize
from backend.sources.greenhouse import fetch_greenhouse
from backend.temporal.activities.discovery import DiscoveryActivities
from backend.temporal.contracts import DiscoveryExecutionRef, FamilyInput, FinalizeInput, PlanInput
from tests.fakes.job_boards import JobBoards

pytestmark = pytest.mark.usefixtures("fast_retries")

REF = DiscoveryExecutionRef(tenant_id="local", discover_workflow_id="discover-local",
                            discover_run_id="run-flood")


def greenhouse_jobs(count: int, *, start: int = 0, content: str = "<p>Build things.</p>") -> dict:
    return {"jobs": [
        {"id": index, "title": f"Engineer {index}", "location": {"name": "Remote"},
         "absolute_url": f"https://boards.greenhouse.io/acme/jobs/{index}",
         "updated_at": "2026-10-01T12:00:00Z", "content": html.escape(content)}
        for index in range(start, start + count)]}


def settings_with(tmp_path, boards: JobBoards, *tokens: str) -> AppPaths:
    (tmp_path / "settings.json").write_text(json.dumps({"sources": [
        {"kind": "greenhouse", "id": f"gh-{token}", "boardToken": token,
         "baseUrl": boards.base_url} for token in tokens]}), encoding="utf-8")
    return AppPaths(tmp_path)


def stored(db, sql: str, *params):
    with sqlite3.connect(db.path) as conn:
        return conn.execute(sql, params).fetchall()


async def crawl(activities: DiscoveryActivities, env: ActivityEnvironment):
    plan = await env.run(activities.plan_discovery, PlanInput(ref=REF))
    outcomes = [await env.run(activities.discover_source_family,
                              FamilyInput(ref=REF, source=source, index=index))
                for index, source in enumerate(plan.sources)]
    result = await env.run(activities.finalize_discovery, FinalizeInput(ref=REF, outcomes=outcomes))
    return outcomes, result


# --------------------------------------------------------------------------- postings


async def test_a_board_far_over_the_cap_is_cut_without_converting_the_rest(
        job_boards: JobBoards, monkeypatch):
    served = caps.MAX_POSTINGS_PER_FETCH + 5_000
    job_boards.serve_json(JobBoards.GREENHOUSE_PATH, greenhouse_jobs(served))
    converted = []
    real = normalize.build_posting

    def counting(**fields):
        converted.append(fields["source_key"])
        return real(**fields)

    monkeypatch.setattr("backend.sources.greenhouse.build_posting", counting)
    postings = await fetch_greenhouse(GreenhouseSource(id="gh-acme", board_token="acme",
                                                       base_url=job_boards.base_url))
    assert len(postings) == caps.MAX_POSTINGS_PER_FETCH
    assert caps.left_out_of(postings) == served - caps.MAX_POSTINGS_PER_FETCH
    assert len(converted) == caps.MAX_POSTINGS_PER_FETCH, "the rest is counted, not parsed"


async def test_the_run_stores_the_board_cap_and_its_summary_says_what_was_left_out(
        db, tmp_path, job_boards: JobBoards, monkeypatch):
    monkeypatch.setattr(caps, "MAX_POSTINGS_PER_FETCH", 40)  # small, so the test is quick
    job_boards.serve_json(JobBoards.GREENHOUSE_PATH, greenhouse_jobs(1_000))
    activities = DiscoveryActivities(db, settings_with(tmp_path, job_boards, "acme"))
    outcomes, result = await crawl(activities, ActivityEnvironment())

    assert (outcomes[0].new_jobs, outcomes[0].skipped_over_cap) == (40, 960)
    assert stored(db, "SELECT COUNT(*) FROM jobs") == [(40,)]
    (progress,) = stored(db, "SELECT progress_json FROM discovery_runs WHERE discover_run_id = ?",
                         REF.discover_run_id)[0]
    assert json.loads(progress)["families"]["gh-acme"] == {
        "status": "succeeded", "newJobs": 40, "existingJobs": 0, "errorCode": None,
        "skippedOverCap": 960}
    assert (result.jobs_observed, result.skipped_over_cap) == (40, 960)


async def test_the_run_cap_holds_across_sources(db, tmp_path, job_boards: JobBoards,
                                                monkeypatch):
    monkeypatch.setattr(caps, "MAX_POSTINGS_PER_RUN", 50)
    job_boards.serve_json(JobBoards.GREENHOUSE_PATH, greenhouse_jobs(30))
    job_boards.serve_json("/v1/boards/initech/jobs", greenhouse_jobs(30, start=100))
    activities = DiscoveryActivities(db, settings_with(tmp_path, job_boards, "acme", "initech"))
    outcomes, result = await crawl(activities, ActivityEnvironment())

    assert [(o.family, o.new_jobs, o.skipped_over_cap) for o in outcomes] == [
        ("gh-acme", 30, 0), ("gh-initech", 20, 10)]
    assert stored(db, "SELECT COUNT(*) FROM jobs") == [(50,)]
    assert result.skipped_over_cap == 10
    (progress,) = stored(db, "SELECT progress_json FROM discovery_runs")[0]
    assert "skippedOverCap" not in json.loads(progress)["families"]["gh-acme"], (
        "nothing left out: the per-source result keeps its shape")


# --------------------------------------------------------------------------- descriptions


async def test_a_20_mb_description_is_stored_bounded(db, tmp_path, job_boards: JobBoards):
    paragraph = "<p>" + "We build warehouse robots that people like working next to. " * 20 + "</p>"
    huge = paragraph * (20 * 1024 * 1024 // len(paragraph))
    assert len(huge) >= 19 * 1024 * 1024
    job_boards.serve_json(JobBoards.GREENHOUSE_PATH, greenhouse_jobs(1, content=huge))
    activities = DiscoveryActivities(db, settings_with(tmp_path, job_boards, "acme"))
    await crawl(activities, ActivityEnvironment())

    ((description,),) = stored(db, "SELECT description_html FROM jobs")
    assert 100_000 < len(description) <= caps.MAX_DESCRIPTION_HTML
    assert description.startswith("<p>We build") and description.endswith("<p>\u2026</p>")
    assert normalize.sanitize_html(description) == description, "still well formed"

    # The enrichment's copies (what Enrich stores from the source, or from a page) are
    # bounded too: both columns.
    from_source = enrich_logic.description_from_source(description)
    assert len(from_source.html) <= caps.MAX_DESCRIPTION_HTML
    assert len(from_source.text) <= caps.MAX_DESCRIPTION_TEXT
    page = f"<html><body><main>{paragraph * 250}</main></body></html>"
    from_page = enrich_logic.extract_description(page)
    assert len(from_page.html) <= caps.MAX_DESCRIPTION_HTML
    assert len(from_page.text) <= caps.MAX_DESCRIPTION_TEXT
    assert from_page.confidence == "high"


def test_bounding_keeps_short_descriptions_as_they_are():
    short = "<p>Lead a team of <strong>12</strong>.</p>"
    assert normalize.bounded_html(short) == short
    assert normalize.bounded_text("twelve words") == "twelve words"
    nested = "<ul>" + "<li><strong>item</strong> text</li>" * 20_000 + "</ul>"
    cut = normalize.bounded_html(nested, limit=5_000)
    assert len(cut) <= 5_000 and normalize.sanitize_html(cut) == cut
