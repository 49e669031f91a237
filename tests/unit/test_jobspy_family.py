"""Broad-board (jobspy) discovery as checkpointed search units, on a real SQLite file:
unit planning, receipts-based counts, filtering, fencing of stale attempts, resuming only
unfinished units, cancellation and the typed failures. python-jobspy is not installed
here: every test injects a scraper (the activity reads ``JOBCTRL_JOBSPY_SCRAPER``)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import math
import sqlite3
import threading
from datetime import UTC, date, datetime, timedelta

import pytest
from pydantic import TypeAdapter, ValidationError
from temporalio.exceptions import ApplicationError
from temporalio.testing import ActivityEnvironment

from backend.config import AppPaths
from backend.domain.source_config import JobSpySource, SourceConfig
from backend.sources.jobspy_family import (
    INSTALL_HINT,
    SCRAPER_ENV,
    SiteReportedError,
    classify_failure,
    fetch_jobspy,
    jobspy_scraper,
    load_scraper,
    plan_units,
    row_to_posting,
    screen_rows,
    too_old,
    unit_key,
)
from backend.store import discovery as runs
from backend.store import search_units as store
from backend.store.db import Database
from backend.temporal.activities.discovery import DiscoveryActivities
from backend.temporal.activities.jobspy_family import JobSpyFamilyRun, run_jobspy_family
from backend.temporal.contracts import DiscoveryExecutionRef, FamilyInput
from tests.fakes import jobspy_scraper as fake

RUN_ID = "run-jobspy-1"
REF = DiscoveryExecutionRef(tenant_id="local", discover_workflow_id="discover-local",
                            discover_run_id=RUN_ID)
QUERIES = ["Python Developer", "Data Engineer"]
LOCATIONS = ["Berlin", "Remote"]
EXPECTED = fake.expected(QUERIES, LOCATIONS, ["indeed"])
PROGRESS_KEYS = {"status", "newJobs", "existingJobs", "errorCode", "filteredJobs",
                 "recoveredUnits", "completedUnits", "failedUnits", "totalUnits"}


def source(**overrides) -> JobSpySource:
    fields = {"id": "broad", "queries": QUERIES, "locations": LOCATIONS, "boards": ["indeed"]}
    return JobSpySource(**{**fields, **overrides})


def family_input(src: JobSpySource | None = None, index: int = 0) -> FamilyInput:
    return FamilyInput(ref=REF, source=src or source(), index=index)


@pytest.fixture
async def db(tmp_path):
    database = await Database.open(tmp_path / "db.sqlite")
    async with database.transaction() as conn:
        await runs.insert_run(conn, workflow_id=REF.discover_workflow_id, run_id=RUN_ID,
                              families=["broad"])
    try:
        yield database
    finally:
        await database.close()


class Recorder:
    """A scraper over the fake's rows that records which units it was asked for."""

    def __init__(self, fail=None):
        self.calls: list[str] = []
        self._fail = fail  # unit -> exception to raise, or None
        self._lock = threading.Lock()

    def __call__(self, unit):
        with self._lock:
            self.calls.append(unit.unit_key)
        if self._fail is not None:
            error = self._fail(unit)
            if error is not None:
                raise error
        return fake.rows_for(unit.query, unit.location, unit.board)


class Beats(list):
    def __call__(self, *details):
        self.append(details[0] if details else None)


async def run(db, *, attempt: int, scraper, src=None, beats=None, paths=None):
    return await run_jobspy_family(db, paths or AppPaths(db.path.parent), family_input(src),
                                   attempt=attempt, heartbeat=Beats() if beats is None else beats,
                                   scraper=scraper)


async def units(db, family="broad"):
    async with db.transaction() as conn:
        return await store.list_units(conn, run_id=RUN_ID, family=family)


async def progress(db, family="broad") -> dict:
    row = await db.fetchone("SELECT progress_json FROM discovery_runs WHERE discover_run_id = ?",
                            (RUN_ID,))
    return json.loads(row[0])["families"][family]


def count(db, sql, params=()) -> int:
    with sqlite3.connect(db.path) as conn:
        return conn.execute(sql, params).fetchone()[0]


def discovered_per_job(db) -> dict[str, int]:
    with sqlite3.connect(db.path) as conn:
        return dict(conn.execute("SELECT job_id, COUNT(*) FROM job_events"
                                 " WHERE type = 'JobDiscovered' GROUP BY job_id"))


async def wait_until(predicate, timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached"
        await asyncio.sleep(0.01)


# ----------------------------------------------------------------------------- config, units


def test_config_parses_from_settings_json_and_bounds_its_lists():
    parsed = TypeAdapter(SourceConfig).validate_python({
        "kind": "jobspy", "id": "broad", "queries": ["  python   developer "],
        "locations": ["", "Berlin"], "boards": ["indeed", "linkedin"],
        "resultsPerUnit": 50, "hoursOld": None, "countryIndeed": "Germany",
    })
    assert isinstance(parsed, JobSpySource)
    assert parsed.queries == ["python developer"] and parsed.locations == ["", "Berlin"]
    assert parsed.results_per_unit == 50 and parsed.hours_old is None and parsed.enabled
    defaults = source()
    assert (defaults.results_per_unit, defaults.hours_old, defaults.country_indeed) == (25, 72,
                                                                                       "USA")
    for bad in ({"queries": []}, {"queries": ["  "]}, {"queries": ["q"] * 21},
                {"locations": []}, {"boards": []}, {"boards": ["monster"]},
                {"boards": ["indeed"] * 6}, {"results_per_unit": 0},
                {"results_per_unit": 201}, {"id": "Bad Id"}):
        with pytest.raises(ValidationError):
            source(**bad)


def test_units_are_query_x_location_x_board_with_stable_keys():
    planned = plan_units(source(boards=["indeed", "linkedin"], locations=["Berlin", ""]))
    assert len(planned) == 2 * 2 * 2
    assert len({unit.unit_key for unit in planned}) == 8
    first = planned[0]
    assert (first.query, first.location, first.board) == ("Python Developer", "Berlin", "indeed")
    assert first.label == "Python Developer · Berlin · indeed"
    assert planned[2].label == "Python Developer · anywhere · indeed"
    assert (first.results_wanted, first.hours_old, first.country_indeed) == (25, 72, "USA")
    # Case and spacing do not change a unit; the board and the location do.
    assert unit_key("python  developer", " berlin", "indeed") == first.unit_key
    assert unit_key("Python Developer", "Berlin", "linkedin") != first.unit_key
    assert unit_key("Python Developer", "", "indeed") != first.unit_key
    assert len(first.unit_key) == 20 and int(first.unit_key, 16) >= 0
    # Repeats that normalize alike collapse into one unit.
    assert len(plan_units(source(queries=["Python", "python "], locations=["X"]))) == 1


# ----------------------------------------------------------------------------- rows


def test_rows_map_to_postings_without_nan_leaking():
    unit = plan_units(source())[0]
    posting = row_to_posting(fake.rows_for("Python Developer", "Berlin", "indeed")[0], unit)
    assert posting.url == "https://jobs.example.com/indeed/python-developer/berlin/0"
    assert posting.source_key == "indeed:in-python-developer-0"
    assert posting.title == "Python Developer I" and posting.company == "Acme Berlin"
    assert posting.location == "Berlin" and posting.remote == "onsite"
    assert posting.salary.model_dump() == {"min": 90000, "max": 120000, "currency": "USD",
                                           "period": "year"}
    assert posting.employment_type == "full_time"
    assert posting.posted_at == datetime.now(UTC).strftime("%Y-%m-%dT00:00:00Z")
    assert posting.apply_url is None and "nan" not in posting.model_dump_json().lower()
    # The fake, like jobspy's default, writes Markdown: it is rendered, never stored raw.
    assert posting.description_html == (
        "<p><strong>Python Developer I</strong> at Acme Berlin.</p>\n"
        "<p>Work on Python Developer I.</p>")
    nan = float("nan")
    bare = row_to_posting({"job_url": "https://x.example/j/1", "title": "Dev", "company": "X",
                           "is_remote": True, "min_amount": nan, "max_amount": nan,
                           "currency": nan, "date_posted": nan, "id": nan}, unit)
    assert bare.remote == "remote" and bare.salary is None and bare.posted_at is None
    assert bare.source_key == "https://x.example/j/1"


def test_too_old_counts_day_only_dates_from_the_end_of_the_day():
    now = datetime(2026, 3, 10, 12, 0, tzinfo=UTC)
    assert not too_old(date(2026, 3, 7), 72, now)  # ends 03-08 00:00, inside 72 h
    assert too_old(date(2026, 3, 6), 72, now)
    assert too_old(now - timedelta(hours=73, minutes=5), 72, now)
    assert not too_old((now - timedelta(hours=71)).isoformat(), 72, now)
    assert not too_old("2026-03-07", 72, now) and too_old("2026-03-01", 72, now)
    assert not too_old(None, 72, now) and not too_old(math.nan, 72, now)
    assert not too_old(date(2020, 1, 1), None, now)


def test_screening_filters_unusable_and_stale_rows_by_hash_only():
    unit = plan_units(source())[0]
    now = datetime.now(UTC)
    good = {"job_url": "https://jobs.example.com/a", "title": "A", "company": "Acme"}
    rows = [
        good,
        {**good, "job_url": "https://jobs.example.com/a?utm_source=x"},  # same posting
        {"job_url": None, "title": "No URL", "company": "Acme"},
        {"job_url": "https://jobs.example.com/b", "title": float("nan"), "company": "Acme"},
        {"job_url": "https://jobs.example.com/c", "title": "C", "company": None},
        {**good, "job_url": "https://jobs.example.com/old", "date_posted": date(2020, 1, 1)},
        "not a row",
    ]
    screened = screen_rows(rows, unit, now=now)
    assert [p.url for p in screened.accepted] == ["https://jobs.example.com/a"]
    assert len(screened.filtered) == 5
    assert all(len(h) == 32 and "example" not in h for h in screened.filtered)


def test_failures_are_classified_into_bounded_outcomes():
    from backend.sources.errors import SourceMisconfigured, SourcePayloadInvalid

    assert classify_failure(ConnectionError("reset")) == ("retry", "source_unavailable")
    assert classify_failure(TimeoutError()) == ("retry", "source_unavailable")
    assert classify_failure(RuntimeError("blocked")) == ("retry", "source_unavailable")
    assert classify_failure(ValueError("Invalid country string")) == ("unit", "unit_invalid")
    assert classify_failure(json.JSONDecodeError("x", "doc", 0)) == ("unit",
                                                                     "source_payload_invalid")
    assert classify_failure(SourcePayloadInvalid()) == ("unit", "source_payload_invalid")
    assert classify_failure(SourceMisconfigured()) == ("fatal", "configuration")


# ----------------------------------------------------------------------------- a full crawl


async def test_a_crawl_commits_every_unit_with_counts_from_receipts(db):
    scraper, beats = Recorder(), Beats()
    outcome = await run(db, attempt=1, scraper=scraper, beats=beats)
    planned = plan_units(source())
    assert scraper.calls == [unit.unit_key for unit in planned]
    assert outcome.status == "succeeded"
    assert outcome.new_jobs == EXPECTED["accepted"] and outcome.existing_jobs == 0
    assert len(outcome.job_ids) == len(set(outcome.job_ids)) == EXPECTED["accepted"]
    assert count(db, "SELECT COUNT(*) FROM jobs") == EXPECTED["accepted"]
    assert set(discovered_per_job(db).values()) == {1}
    assert len(discovered_per_job(db)) == EXPECTED["accepted"]
    rows = await units(db)
    assert [row.status for row in rows] == ["done"] * 4
    assert [row.label for row in rows] == [unit.label for unit in planned]
    # Own postings plus the query's shared one (new in the first unit of each query).
    assert [(r.accepted_new, r.accepted_existing, r.filtered) for r in rows] == [
        (4, 0, 1), (3, 1, 1), (4, 0, 1), (3, 1, 1)]
    assert all(row.owner_attempt == 1 and row.attempts == 1 for row in rows)
    family = await progress(db)
    assert set(family) == PROGRESS_KEYS
    assert family == {"status": "succeeded", "newJobs": EXPECTED["accepted"], "existingJobs": 0,
                      "errorCode": None, "filteredJobs": EXPECTED["filtered"],
                      "recoveredUnits": 0, "completedUnits": 4, "failedUnits": 0,
                      "totalUnits": 4}
    row = await db.fetchone("SELECT progress_current FROM discovery_runs")
    assert row[0] == 1
    assert {unit.unit_key for unit in planned} <= set(beats)
    # Receipts keep hashes and job ids only: no raw provider URL or title anywhere.
    with sqlite3.connect(db.path) as conn:
        dump = "\n".join(conn.iterdump())
    receipts = [line for line in dump.splitlines() if "search_unit_receipts" in line]
    assert receipts and not any("example.com" in line or "Nobody" in line for line in receipts)


async def test_a_second_run_of_the_same_jobs_counts_them_as_existing(db):
    await run(db, attempt=1, scraper=Recorder())
    async with db.transaction() as conn:
        await runs.insert_run(conn, workflow_id="discover-local", run_id="run-2",
                              families=["broad"])
    again = FamilyInput(ref=REF.model_copy(update={"discover_run_id": "run-2"}), source=source(),
                        index=0)
    outcome = await run_jobspy_family(db, AppPaths(db.path.parent), again, attempt=1,
                                      heartbeat=Beats(), scraper=Recorder())
    assert (outcome.new_jobs, outcome.existing_jobs) == (0, EXPECTED["accepted"])
    assert set(discovered_per_job(db).values()) == {1}


async def test_a_repeated_attempt_after_success_does_no_work(db):
    first = await run(db, attempt=1, scraper=Recorder())
    scraper = Recorder()
    second = await run(db, attempt=2, scraper=scraper)
    assert scraper.calls == []
    assert second == first


# ----------------------------------------------------------------------------- plan checks


async def test_an_incompatible_checkpoint_fails_instead_of_resetting(db):
    with pytest.raises(ApplicationError):
        await run(db, attempt=1, scraper=Recorder(fail=lambda unit: ConnectionError()))
    before = await units(db)
    assert len(before) == 4
    scraper = Recorder()
    with pytest.raises(ApplicationError) as caught:
        await run(db, attempt=2, scraper=scraper, src=source(queries=["Rust Developer"]))
    assert caught.value.type == "checkpoint_incompatible" and caught.value.non_retryable
    assert scraper.calls == []
    assert await units(db) == before


# ----------------------------------------------------------------------------- fencing


async def test_the_store_fences_an_older_attempts_late_writes(db):
    key = plan_units(source())[0].unit_key
    where = {"run_id": RUN_ID, "family": "broad", "unit_key": key}
    async with db.transaction() as conn:
        await store.ensure_plan(conn, run_id=RUN_ID, family="broad",
                                units=[store.PlannedUnit(u.unit_key, u.label)
                                       for u in plan_units(source())])
        assert await store.claim_unit(conn, **where, attempt=1) == "claimed"
        assert await store.claim_unit(conn, **where, attempt=2) == "recovered"
        assert not await store.owns_unit(conn, **where, attempt=1)
        assert not await store.finish_unit(conn, **where, attempt=1)
        assert not await store.fail_unit(conn, **where, attempt=1, error_code="unit_invalid")
        assert await store.claim_unit(conn, **where, attempt=1) == "fenced"
        assert await store.cancel_units(conn, run_id=RUN_ID, family="broad", attempt=1) == 0
        assert await store.owns_unit(conn, **where, attempt=2)
        assert await store.finish_unit(conn, **where, attempt=2)
        assert await store.claim_unit(conn, **where, attempt=3) == "finished"
    row = (await units(db))[0]
    assert (row.status, row.owner_attempt, row.attempts, row.recoveries) == ("done", 2, 2, 1)


async def test_a_stale_attempts_scrape_is_discarded_when_a_newer_attempt_took_over(db):
    entered, release = threading.Event(), threading.Event()

    def slow_first(unit):
        entered.set()
        release.wait(10)
        return fake.rows_for(unit.query, unit.location, unit.board)

    stale = asyncio.create_task(run(db, attempt=1, scraper=slow_first))
    try:
        await wait_until(entered.is_set)
        newer = Recorder()
        outcome = await run(db, attempt=2, scraper=newer)
        assert len(newer.calls) == 4  # including the unit attempt 1 was still scraping
    finally:
        release.set()
    with pytest.raises(ApplicationError) as caught:
        await stale
    assert caught.value.type == "source_unavailable"  # discarded by Temporal anyway
    assert outcome.new_jobs == EXPECTED["accepted"]
    assert count(db, "SELECT COUNT(*) FROM jobs") == EXPECTED["accepted"]
    assert set(discovered_per_job(db).values()) == {1}
    rows = await units(db)
    assert all(row.status == "done" and row.owner_attempt == 2 for row in rows)
    assert [row.recoveries for row in rows] == [1, 0, 0, 0]
    assert (await progress(db))["recoveredUnits"] == 1
    assert count(db, "SELECT COUNT(*) FROM search_unit_receipts WHERE kind = 'accepted'") == \
        sum(r.accepted_new + r.accepted_existing for r in rows)


# ----------------------------------------------------------------------------- resuming


class WorkerDied(BaseException):
    """Stands in for a killed worker: nothing after the scrape call runs."""


async def test_a_new_attempt_resumes_only_unfinished_units_and_counts_recovered(db):
    planned = plan_units(source())
    died = Recorder(fail=lambda unit: WorkerDied() if unit == planned[2] else None)
    with pytest.raises(WorkerDied):
        await run(db, attempt=1, scraper=died)
    assert [row.status for row in await units(db)] == ["done", "done", "running", "pending"]
    running = await progress(db)
    assert running["status"] == "running" and running["completedUnits"] == 2
    assert running["totalUnits"] == 4

    resumed = Recorder()
    outcome = await run(db, attempt=2, scraper=resumed)
    assert resumed.calls == [planned[2].unit_key, planned[3].unit_key]
    rows = await units(db)
    assert [row.status for row in rows] == ["done"] * 4
    assert [row.owner_attempt for row in rows] == [1, 1, 2, 2]
    assert [row.recoveries for row in rows] == [0, 0, 1, 0]
    family = await progress(db)
    assert family["recoveredUnits"] == 1 and family["completedUnits"] == 4
    assert family["newJobs"] == outcome.new_jobs == EXPECTED["accepted"]
    assert family["filteredJobs"] == EXPECTED["filtered"]
    assert len(outcome.job_ids) == len(set(outcome.job_ids)) == EXPECTED["accepted"]
    assert set(discovered_per_job(db).values()) == {1}


async def test_recovered_units_count_every_unit_an_older_attempt_left_running(db):
    planned = plan_units(source())
    died = Recorder(fail=lambda unit: WorkerDied() if unit == planned[1] else None)
    with pytest.raises(WorkerDied):
        await run(db, attempt=1, scraper=died)
    # A concurrent slot of the dead worker had started another unit too.
    async with db.transaction() as conn:
        await store.claim_unit(conn, run_id=RUN_ID, family="broad",
                               unit_key=planned[3].unit_key, attempt=1)
    await run(db, attempt=2, scraper=Recorder())
    family = await progress(db)
    assert family["recoveredUnits"] == 2 and family["completedUnits"] == 4


async def test_a_transient_failure_releases_the_unit_for_the_next_attempt(db):
    planned = plan_units(source())
    flaky = Recorder(fail=lambda unit: ConnectionError() if unit == planned[1] else None)
    with pytest.raises(ApplicationError) as caught:
        await run(db, attempt=1, scraper=flaky)
    assert caught.value.type == "source_unavailable" and not caught.value.non_retryable
    rows = await units(db)
    assert [(r.status, r.error_code) for r in rows] == [
        ("done", None), ("pending", "source_unavailable"), ("pending", None), ("pending", None)]
    retry = Recorder()
    await run(db, attempt=2, scraper=retry)
    assert retry.calls == [u.unit_key for u in planned[1:]]
    family = await progress(db)
    assert family["recoveredUnits"] == 0 and family["completedUnits"] == 4


async def test_a_unit_with_bad_parameters_fails_alone(db):
    src = source(boards=["indeed", "glassdoor"])
    picky = Recorder(fail=lambda u: ValueError("Invalid country") if u.board == "glassdoor"
                     else None)
    outcome = await run(db, attempt=1, scraper=picky, src=src)
    assert outcome.status == "succeeded" and outcome.new_jobs == EXPECTED["accepted"]
    rows = await units(db)
    assert sorted((r.status, r.error_code) for r in rows) == [("done", None)] * 4 + [
        ("failed", "unit_invalid")] * 4
    family = await progress(db)
    assert (family["completedUnits"], family["failedUnits"], family["totalUnits"]) == (4, 4, 8)
    # A failed unit is terminal: the next attempt does not try it again.
    again = Recorder()
    await run(db, attempt=2, scraper=again, src=src)
    assert again.calls == []


async def test_every_unit_failing_is_a_typed_non_retryable_failure(db):
    with pytest.raises(ApplicationError) as caught:
        await run(db, attempt=1, scraper=Recorder(fail=lambda unit: KeyError("site")))
    assert caught.value.type == "source_payload_invalid" and caught.value.non_retryable
    assert {row.status for row in await units(db)} == {"failed"}


# ----------------------------------------------------------------------------- cancellation


async def test_cancellation_terminalizes_units(db):
    entered, release = threading.Event(), threading.Event()
    planned = plan_units(source())

    def blocks_on_second(unit):
        if unit == planned[1]:
            entered.set()
            release.wait(10)
        return fake.rows_for(unit.query, unit.location, unit.board)

    task = asyncio.create_task(run(db, attempt=1, scraper=blocks_on_second))
    try:
        await wait_until(entered.is_set)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    finally:
        release.set()
    rows = await units(db)
    assert [(r.status, r.owner_attempt) for r in rows] == [
        ("done", 1), ("canceled", 1), ("canceled", None), ("canceled", None)]
    family = await progress(db)
    assert family["status"] == "canceled" and family["completedUnits"] == 1
    assert count(db, "SELECT COUNT(*) FROM jobs") == 4  # the done unit's jobs stay


# ----------------------------------------------------------------------------- scraper loading


async def test_without_jobspy_the_family_fails_as_configuration(db, monkeypatch, caplog):
    monkeypatch.delenv(SCRAPER_ENV, raising=False)
    caplog.set_level(logging.ERROR)
    with pytest.raises(ApplicationError) as caught:
        await run_jobspy_family(db, AppPaths(db.path.parent), family_input(), attempt=1,
                                heartbeat=Beats())
    assert caught.value.type == "configuration" and caught.value.non_retryable
    assert INSTALL_HINT in caplog.text and INSTALL_HINT == "pip install jobctrl[jobspy]"
    assert await units(db) == []  # failed before planning anything


def test_the_scraper_override_is_loaded_by_module_and_name(monkeypatch):
    from backend.sources.errors import SourceMisconfigured

    monkeypatch.setenv(SCRAPER_ENV, "tests.fakes.jobspy_scraper:scrape")
    assert load_scraper("broad") is fake.scrape
    for broken in ("tests.fakes.jobspy_scraper:nope", "no.such.module:scrape",
                   "tests.fakes.jobspy_scraper:OWN_PER_UNIT"):
        monkeypatch.setenv(SCRAPER_ENV, broken)
        with pytest.raises(SourceMisconfigured):
            load_scraper("broad")


async def test_the_activity_delegates_jobspy_sources_with_its_attempt(db, monkeypatch):
    monkeypatch.setenv(SCRAPER_ENV, "tests.fakes.jobspy_scraper:scrape")
    monkeypatch.delenv(fake.CONTROL_ENV, raising=False)
    activities = DiscoveryActivities(db, AppPaths(db.path.parent))
    env = ActivityEnvironment()
    beats = Beats()
    env.on_heartbeat = beats
    env.info = dataclasses.replace(env.info, attempt=3)
    outcome = await env.run(activities.discover_source_family, family_input())
    assert outcome.new_jobs == EXPECTED["accepted"]
    assert {row.owner_attempt for row in await units(db)} == {3}
    assert beats


async def test_fetch_jobspy_serves_the_generic_registry(monkeypatch):
    monkeypatch.setenv(SCRAPER_ENV, "tests.fakes.jobspy_scraper:scrape")
    monkeypatch.delenv(fake.CONTROL_ENV, raising=False)
    postings = await fetch_jobspy(source())
    assert len(postings) == EXPECTED["accepted"]


async def test_the_runner_rejects_other_source_kinds(db):
    from backend.domain.source_config import CsvFileSource

    bad = FamilyInput(ref=REF, source=CsvFileSource(id="csv", path="x.csv"), index=0)
    with pytest.raises(TypeError):
        JobSpyFamilyRun(db, bad, attempt=1, heartbeat=Beats())


# ----------------------------------------------------------------------------- jobspy 1.4 frames


def jobspy_like(errors=None, rows=None):
    """The real jobspy_scraper over a stand-in for jobspy 1.4's scrape_jobs."""
    scrape_jobs = fake.ScrapeJobs(errors=errors, rows=rows)

    def scraper(unit):
        return jobspy_scraper(unit, scrape_jobs=scrape_jobs)

    return scraper, scrape_jobs


async def test_a_site_error_in_the_frame_is_retried_like_a_raised_one(db):
    planned = plan_units(source())
    scraper, scrape_jobs = jobspy_like(errors={"indeed": "response status code 429 (blocked:"
                                                         " use a proxy)"})
    with pytest.raises(ApplicationError) as caught:
        await run(db, attempt=1, scraper=scraper)
    assert caught.value.type == "source_unavailable" and not caught.value.non_retryable
    rows = await units(db)
    assert [(r.status, r.error_code) for r in rows][0] == ("pending", "source_unavailable")
    assert scrape_jobs.calls[0]["description_format"] == "html"
    healthy, _ = jobspy_like()
    outcome = await run(db, attempt=2, scraper=healthy)
    assert outcome.status == "succeeded" and outcome.new_jobs == EXPECTED["accepted"]
    assert [r.status for r in await units(db)] == ["done"] * len(planned)


async def test_a_site_error_about_the_search_itself_fails_that_unit_alone(db):
    src = source(boards=["indeed", "glassdoor"])
    scraper, _ = jobspy_like(errors={"glassdoor": "location 'Remote' not found"})
    outcome = await run(db, attempt=1, scraper=scraper, src=src)
    assert outcome.status == "succeeded"
    rows = await units(db)
    assert sorted((r.status, r.error_code) for r in rows) == [("done", None)] * 4 + [
        ("failed", "unit_invalid")] * 4


def test_frames_yield_html_descriptions_types_by_priority_and_sane_amounts():
    unit = plan_units(source())[0]
    row = {**fake.rows_for("Python Developer", "Berlin", "indeed")[0],
           "job_type": "fulltime, contract", "min_amount": "1e999", "max_amount": 120000.0}
    scraper, scrape_jobs = jobspy_like(rows=[row])
    [posting] = screen_rows(scraper(unit), unit, now=datetime.now(UTC)).accepted
    assert posting.description_html == "<p><b>Python Developer I</b> at Acme Berlin.</p>"
    assert posting.employment_type == "full_time"  # not contract
    assert posting.salary.model_dump() == {"min": None, "max": 120000, "currency": "USD",
                                           "period": "year"}  # 1e999 is no amount
    assert scrape_jobs.calls[0]["site_name"] == ["indeed"]
    assert classify_failure(SiteReportedError("linkedin", "unexpected page with no jobs"
                                              " (blocked?)")) == ("retry", "source_unavailable")
    assert classify_failure(SiteReportedError("glassdoor", "country_indeed x isn't"
                                              " supported")) == ("unit", "unit_invalid")
