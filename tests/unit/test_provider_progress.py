"""Provider traversal progress (``sourceFamilies.providerProgress``): the immutable value,
its (attempt, sequence)-ordered store, the exact-execution binding of the reader, and what
the jobspy family records while it crawls, on a real SQLite file."""

from __future__ import annotations

import json
import sqlite3

import pytest
from pydantic import ValidationError

from backend.domain.provider_progress import (
    ProviderProgress,
    StampedProviderProgress,
    continuation_from,
)
from backend.domain.source_config import JobSpySource
from backend.sources.errors import SourcePayloadInvalid
from backend.store import discovery as runs
from backend.store.provider_progress import (
    read_provider_progress,
    record_provider_progress,
    select_provider_progress,
)
from backend.temporal.activities.jobspy_family import JobSpyFamilyRun
from backend.temporal.contracts import DiscoveryExecutionRef, FamilyInput
from tests.fakes import jobspy_scraper as fake

WORKFLOW_ID, RUN_ID = "discover-local", "run-provider-1"
REF = DiscoveryExecutionRef(tenant_id="local", discover_workflow_id=WORKFLOW_ID,
                            discover_run_id=RUN_ID)


def value(**overrides) -> ProviderProgress:
    fields = {"provider": "indeed", "phase": "paging", "unit": "page", "completed_units": 1,
              "total_units": None, "raw_items_seen": 2, "emitted_jobs": 2,
              "continuation": "more"}
    return ProviderProgress(**{**fields, **overrides})


def stamped(*, attempt=1, sequence=1, run_id=RUN_ID, workflow_id=WORKFLOW_ID, family="broad",
            at="2026-01-01T00:00:00.000Z", **overrides) -> StampedProviderProgress:
    return StampedProviderProgress(discover_workflow_id=workflow_id, discover_run_id=run_id,
                                   family=family, attempt=attempt, sequence=sequence,
                                   observed_at=at, progress=value(**overrides))


@pytest.fixture
async def run_db(db):
    async with db.transaction() as conn:
        await runs.insert_run(conn, workflow_id=WORKFLOW_ID, run_id=RUN_ID, families=["broad"])
    return db


# ----------------------------------------------------------------------------- the value


def test_the_value_is_immutable_and_keeps_an_unknown_total_null():
    progress = value()
    with pytest.raises(ValidationError):
        progress.completed_units = 5  # frozen
    wire = progress.model_dump(by_alias=True)
    assert wire == {"provider": "indeed", "phase": "paging", "unit": "page",
                    "completedUnits": 1, "totalUnits": None, "rawItemsSeen": 2,
                    "emittedJobs": 2, "continuation": "more"}
    assert not any("percent" in key.lower() or "eta" in key.lower() for key in wire)


@pytest.mark.parametrize("overrides", [
    {"provider": "Indeed Jobs"},           # not a bounded identifier
    {"provider": "https://x.example"},     # never a URL
    {"completed_units": 3, "total_units": 2},
    {"completed_units": -1},
    {"continuation": "maybe"},
    {"phase": "crawling"},
    {"unit": "cursor"},
])
def test_out_of_bounds_values_are_refused(overrides):
    with pytest.raises(ValidationError):
        value(**overrides)


def test_continuation_is_tri_state():
    assert [continuation_from(x) for x in (True, False, None)] == ["more", "exhausted",
                                                                   "unknown"]


# ----------------------------------------------------------------------------- the store


async def test_a_newer_observation_replaces_and_a_stale_one_changes_nothing(run_db):
    async def write(**kwargs) -> bool:
        async with run_db.transaction() as conn:
            return await record_provider_progress(conn, "local", stamped(**kwargs))

    assert await write(attempt=1, sequence=1, completed_units=1)
    assert await write(attempt=1, sequence=3, completed_units=3)
    assert not await write(attempt=1, sequence=2, completed_units=2)  # out of order
    assert await write(attempt=2, sequence=1, completed_units=1, phase="searching")
    assert not await write(attempt=1, sequence=9, completed_units=4)  # a stale attempt
    rows = await read_provider_progress(run_db, "local", WORKFLOW_ID, RUN_ID)
    assert len(rows) == 1
    assert (rows[0].attempt, rows[0].sequence, rows[0].progress.phase,
            rows[0].progress.completed_units) == (2, 1, "searching", 1)


def test_the_reader_accepts_only_the_exact_execution_and_a_running_family():
    mine = stamped(at="2026-01-01T00:00:01.000Z")
    same_workflow_other_run = stamped(run_id="run-older", at="2026-01-01T00:00:09.000Z")
    other_workflow = stamped(workflow_id="discover-other", at="2026-01-01T00:00:09.000Z")
    observations = [same_workflow_other_run, other_workflow, mine]
    chosen = select_provider_progress(observations, discover_workflow_id=WORKFLOW_ID,
                                      discover_run_id=RUN_ID, running_families={"broad"})
    assert chosen["discoverWorkflowId"] == WORKFLOW_ID and chosen["discoverRunId"] == RUN_ID
    assert chosen["observedAt"] == mine.observed_at
    assert chosen["totalUnits"] is None
    # The source step is terminal (not running): omitted.
    assert select_provider_progress(observations, discover_workflow_id=WORKFLOW_ID,
                                    discover_run_id=RUN_ID, running_families=set()) is None
    # Only foreign observations: nothing is borrowed from another run.
    assert select_provider_progress([same_workflow_other_run, other_workflow],
                                    discover_workflow_id=WORKFLOW_ID, discover_run_id=RUN_ID,
                                    running_families={"broad"}) is None


def test_the_newest_running_family_wins():
    first = stamped(family="broad", at="2026-01-01T00:00:01.000Z")
    second = stamped(family="wide", at="2026-01-01T00:00:02.000Z", provider="linkedin")
    chosen = select_provider_progress([first, second], discover_workflow_id=WORKFLOW_ID,
                                      discover_run_id=RUN_ID,
                                      running_families={"broad", "wide"})
    assert (chosen["family"], chosen["provider"]) == ("wide", "linkedin")


# ----------------------------------------------------------------------------- the crawl


def family_input() -> FamilyInput:
    return FamilyInput(ref=REF, index=0, source=JobSpySource(
        id="broad", queries=["python developer"], locations=["Berlin"], boards=["indeed"]))


def stored_row(db) -> dict | None:
    with sqlite3.connect(db.path) as conn:
        conn.row_factory = sqlite3.Row
        row = conn.execute("SELECT * FROM discovery_provider_progress").fetchone()
        return dict(row) if row else None


async def crawl(db, scraper, *, identity=None, attempt=1):
    family_run = JobSpyFamilyRun(db, family_input(), attempt=attempt,
                                 heartbeat=lambda *_: None, scraper=scraper, identity=identity)
    return await family_run.run()


async def test_a_paged_provider_reports_every_page_without_inventing_a_total(run_db):
    seen: list[dict] = []

    def scraper(unit, *, report_page):
        def spy(rows, **kwargs):
            report_page(rows, **kwargs)
            seen.append(stored_row(run_db))  # committed before the provider goes on

        return _paged(unit, spy)

    scraper.reports_pages = True
    await crawl(run_db, scraper)
    pages = [(r["phase"], r["completed_units"], r["total_units"], r["raw_items_seen"],
              r["emitted_jobs"], r["continuation"]) for r in seen]
    # Six rows in pages of two: the untitled and repeated rows are seen but not emitted.
    assert pages == [("paging", 1, None, 2, 2, "more"), ("paging", 2, None, 4, 4, "more"),
                     ("paging", 3, None, 6, 4, "exhausted")]
    final = stored_row(run_db)
    assert (final["phase"], final["unit"], final["completed_units"], final["total_units"],
            final["emitted_jobs"], final["continuation"]) == (
        "unit_completed", "page", 3, None, 4, "exhausted")
    assert (final["discover_workflow_id"], final["discover_run_id"]) == (WORKFLOW_ID, RUN_ID)
    assert final["provider"] == "indeed"
    dump = json.dumps(final)
    assert "example.com" not in dump and "python" not in dump  # no raw output or query


def _paged(unit, report_page):
    rows = fake.rows_for(unit.query, unit.location, unit.board)
    for start in range(0, len(rows), fake.PAGE_SIZE):
        report_page(rows[start:start + fake.PAGE_SIZE],
                    has_more=start + fake.PAGE_SIZE < len(rows))
    return rows


async def test_a_provider_without_page_reports_is_one_search_of_unknown_extent(run_db):
    await crawl(run_db, lambda unit: fake.rows_for(unit.query, unit.location, unit.board))
    final = stored_row(run_db)
    assert (final["unit"], final["phase"], final["completed_units"], final["total_units"],
            final["raw_items_seen"], final["emitted_jobs"], final["continuation"]) == (
        "search", "unit_completed", 1, None, 6, 4, "unknown")


async def test_the_worker_stamps_its_own_execution_identity(run_db):
    await crawl(run_db, lambda unit: fake.rows_for(unit.query, unit.location, unit.board),
                identity=(WORKFLOW_ID, "run-the-worker-runs"))
    assert await read_provider_progress(run_db, "local", WORKFLOW_ID, RUN_ID) == []
    stamped_rows = await read_provider_progress(run_db, "local", WORKFLOW_ID,
                                                "run-the-worker-runs")
    assert len(stamped_rows) == 1


async def test_a_failed_unit_records_a_failed_traversal(run_db):
    def broken(unit):
        raise ValueError("Invalid country string")  # the unit cannot work: it fails alone

    with pytest.raises(SourcePayloadInvalid):  # every unit failed: the family fails
        await crawl(run_db, broken)
    final = stored_row(run_db)
    assert (final["phase"], final["unit"], final["emitted_jobs"]) == ("unit_failed", "search", 0)
