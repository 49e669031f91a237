"""The ``discover_source_family`` activity body for ``jobspy`` sources: the pure source
(``backend/sources/jobspy_family.py``: units, scraping, screening) run as checkpointed
search units against the store.

The family activity plans the units once per Discover run (a retry sees the same plan; a
different plan fails with ``checkpoint_incompatible`` instead of starting over), then for
each unit not yet finished: claims it for its Temporal attempt, scrapes it in a thread,
and commits the accepted jobs, their ``JobDiscovered`` events, the unit's receipts and
``done`` in one transaction fenced on the owning attempt. So a worker killed mid-crawl
loses at most the unit it was scraping; the next attempt skips done units, takes over the
orphaned one (counted as ``recoveredUnits``) and goes on. Counts come from the durable
receipts."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from temporalio import activity
from temporalio.exceptions import ApplicationError

from backend.config import AppPaths
from backend.domain.clock import to_iso
from backend.domain.ids import job_id_for_url, receipt_hash
from backend.domain.provider_progress import ProviderProgress, StampedProviderProgress
from backend.domain.source_config import JobSpySource
from backend.sources.errors import (
    SourceError,
    SourceMisconfigured,
    SourcePayloadInvalid,
    SourceUnavailable,
)
from backend.sources.jobspy_family import (
    AttemptFenced,
    CheckpointIncompatible,
    Scraper,
    ScreenedUnit,
    SearchUnit,
    UnitTraversal,
    classify_failure,
    load_scraper,
    plan_units,
    reports_pages,
    scrape_rows,
    screen_rows,
)
from backend.store import discovery as runs
from backend.store import lineage
from backend.store import provider_progress as progress_store
from backend.store import search_units as units_store
from backend.store.db import Database
from backend.store.jobs import observe_discovered_posting
from backend.temporal.activities.heartbeating import heartbeating
from backend.temporal.contracts import FamilyInput, FamilyOutcome

log = logging.getLogger(__name__)

BEAT_EVERY_S = 2.0  # heartbeats while a unit scrapes (the timeout may be as short as 5 s)


class JobSpyFamilyRun:
    """One activity attempt over one jobspy family. Raises SourceError subclasses;
    :func:`run_jobspy_family` turns them into Temporal application errors."""

    def __init__(self, db: Database, input: FamilyInput, *, attempt: int,
                 heartbeat: Callable[..., None], scraper: Scraper | None = None,
                 clock: Callable[[], datetime] | None = None,
                 identity: tuple[str, str] | None = None):
        if not isinstance(input.source, JobSpySource):
            raise TypeError("not a jobspy source")
        self._db = db
        self._input = input
        self._source: JobSpySource = input.source
        self._attempt = attempt
        self._heartbeat = heartbeat
        self._scraper = scraper
        self._clock = clock or (lambda: datetime.now(UTC))
        self._run_id = input.ref.discover_run_id
        self._family = input.source.id
        self.recovered_this_attempt = 0
        # The exact (workflow id, run id) the worker executes under: stamped on every
        # provider progress observation (the reader accepts only the selected execution).
        self._identity = identity or (input.ref.discover_workflow_id, input.ref.discover_run_id)
        self._sequence = 0
        self._loop: asyncio.AbstractEventLoop | None = None

    def _where(self, unit: SearchUnit) -> dict[str, str]:
        return {"run_id": self._run_id, "family": self._family, "unit_key": unit.unit_key}

    async def run(self) -> FamilyOutcome:
        self._loop = asyncio.get_running_loop()
        units = plan_units(self._source)
        scraper = self._scraper or load_scraper(self._family)
        async with self._db.transaction() as conn:
            state = await units_store.ensure_plan(
                conn, run_id=self._run_id, family=self._family,
                units=[units_store.PlannedUnit(u.unit_key, u.label) for u in units],
                tenant_id=self._input.ref.tenant_id,
            )
        if state == "incompatible":
            log.error("%s: this run's search-unit checkpoint does not match the source's"
                      " units; failing instead of starting over", self._family)
            raise CheckpointIncompatible()
        self._heartbeat("planned")
        try:
            for unit in units:
                await self._crawl_unit(unit, scraper)
        except asyncio.CancelledError:
            await self._cancel()
            raise
        return await self._finish()

    async def _crawl_unit(self, unit: SearchUnit, scraper: Scraper) -> None:
        async with self._db.transaction() as conn:
            claim = await units_store.claim_unit(conn, **self._where(unit), attempt=self._attempt)
        if claim == "finished":
            return
        if claim == "fenced":
            log.warning("%s: attempt %d is stale (a newer attempt owns the units); stopping",
                        self._family, self._attempt)
            raise AttemptFenced()
        if claim == "recovered":
            self.recovered_this_attempt += 1
        traversal = UnitTraversal(unit, paged=reports_pages(scraper), now=self._clock)
        await self._observe(traversal.searching())
        try:
            async with heartbeating(BEAT_EVERY_S, unit.unit_key, heartbeat=self._heartbeat):
                screened = await asyncio.to_thread(self._scrape, scraper, unit, traversal)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the scraper is third-party code: classify everything
            await self._unit_failed(unit, error, traversal)
            return
        async with self._db.transaction() as conn:
            if not await units_store.owns_unit(conn, **self._where(unit), attempt=self._attempt):
                log.warning("%s: attempt %d lost unit %s to a newer attempt; its results are"
                            " discarded", self._family, self._attempt, unit.unit_key)
                raise AttemptFenced()
            await self._accept(conn, unit, screened)
            await units_store.finish_unit(conn, **self._where(unit), attempt=self._attempt)
            await self._progress(conn, status="running")
            await self._observe(traversal.completed(screened), conn)
        self._heartbeat(unit.unit_key)

    def _scrape(self, scraper: Scraper, unit: SearchUnit,
                traversal: UnitTraversal | None = None) -> ScreenedUnit:
        if traversal is None or not traversal.paged:
            rows = scrape_rows(scraper, unit)
            if traversal is not None:
                traversal.rows_seen = len(rows)
            return screen_rows(rows, unit, now=self._clock())

        def report_page(rows, *, has_more: bool | None, total_pages: int | None = None):
            # Called on the scraper's thread: record on the loop, in order, and wait.
            value = traversal.page(list(rows or []), has_more=has_more, total_pages=total_pages)
            asyncio.run_coroutine_threadsafe(self._observe(value), self._loop).result()

        rows = list(scraper(unit, report_page=report_page) or [])
        return screen_rows(rows, unit, now=self._clock())

    async def _observe(self, value: ProviderProgress | None, conn=None) -> None:
        """Record one traversal observation, stamped with the exact execution identity and
        ordered by (attempt, sequence). Progress is evidence only: a failure to record it
        is logged, never a reason to fail the crawl."""
        if value is None:
            return
        self._sequence += 1
        stamped = StampedProviderProgress(
            discover_workflow_id=self._identity[0], discover_run_id=self._identity[1],
            family=self._family, attempt=self._attempt, sequence=self._sequence,
            observed_at=to_iso(self._clock()),
            progress=value)
        if conn is not None:
            await progress_store.record_provider_progress(conn, self._input.ref.tenant_id,
                                                          stamped)
            return
        try:
            async with self._db.transaction() as own:
                await progress_store.record_provider_progress(own, self._input.ref.tenant_id,
                                                              stamped)
        except Exception:  # noqa: BLE001 - observational evidence only
            log.warning("%s: could not record provider progress", self._family, exc_info=True)

    async def _unit_failed(self, unit: SearchUnit, error: Exception,
                           traversal: UnitTraversal | None = None) -> None:
        kind, code = classify_failure(error)
        async with self._db.transaction() as conn:
            if traversal is not None:
                await self._observe(traversal.failed(), conn)
            if kind == "unit":
                log.warning("%s: search unit %s failed (%s)", self._family, unit.unit_key, code)
                await units_store.fail_unit(conn, **self._where(unit), attempt=self._attempt,
                                            error_code=code)
                await self._progress(conn, status="running")
            else:
                await units_store.release_unit(conn, **self._where(unit), attempt=self._attempt,
                                               error_code=code)
        self._heartbeat(unit.unit_key)
        if kind == "fatal":
            raise SourceMisconfigured() from None
        if kind == "retry":
            log.warning("%s: search unit %s hit a transient failure (%s); the activity will"
                        " retry unfinished units", self._family, unit.unit_key,
                        type(error).__name__)
            raise SourceUnavailable() from None

    async def _accept(self, conn, unit: SearchUnit, screened: ScreenedUnit) -> None:
        ref = self._input.ref
        for posting in screened.accepted:
            observed = await observe_discovered_posting(
                conn, posting, source_family=self._family,
                discover_workflow_id=ref.discover_workflow_id, discover_run_id=self._run_id)
            await units_store.add_receipt(
                conn, **self._where(unit),
                digest=receipt_hash("accepted", observed.job_id),
                kind="accepted", job_id=observed.job_id, is_new=observed.is_new,
            )
        # Linked in the same transaction as the observations (one membership per job).
        await lineage.link_jobs(conn, ref, [job_id_for_url(p.url) for p in screened.accepted],
                                "observed_this_run")
        for digest in screened.filtered:
            await units_store.add_receipt(conn, **self._where(unit), digest=digest,
                                          kind="filtered")

    async def _progress(self, conn, *, status: str, done: bool = False) -> units_store.FamilyCounts:
        counts = await units_store.family_counts(conn, run_id=self._run_id, family=self._family)
        await runs.advance_progress(
            conn, self._run_id, reached=self._input.index + (1 if done else 0),
            family=self._family, family_progress=family_progress(status, counts),
        )
        return counts

    async def _finish(self) -> FamilyOutcome:
        async with self._db.transaction() as conn:
            counts = await units_store.family_counts(conn, run_id=self._run_id,
                                                     family=self._family)
            if counts.total_units and counts.failed_units == counts.total_units:
                log.error("%s: every search unit failed", self._family)
                raise SourcePayloadInvalid()
            unfinished = counts.total_units - counts.completed_units - counts.failed_units
            if unfinished:  # a stale attempt's leftovers: the newest attempt finishes them
                raise AttemptFenced()
            await self._progress(conn, status="succeeded", done=True)
            job_ids = await units_store.accepted_job_ids(conn, run_id=self._run_id,
                                                         family=self._family)
        return FamilyOutcome(
            family=self._family, status="succeeded", new_jobs=counts.new_jobs,
            existing_jobs=counts.existing_jobs, job_ids=job_ids,
        )

    async def _cancel(self) -> None:
        """Cancellation terminalizes units; the cancellation itself still propagates."""
        try:
            async with self._db.transaction() as conn:
                await units_store.cancel_units(conn, run_id=self._run_id, family=self._family,
                                               attempt=self._attempt)
                await self._progress(conn, status="canceled")
        except Exception:
            log.exception("%s: could not mark canceled search units", self._family)


def family_progress(status: str, counts: units_store.FamilyCounts) -> dict[str, Any]:
    """The family's entry in the run progress payload: counts only, never raw provider
    output, unit keys, owners or error messages."""
    return {
        "status": status,
        "newJobs": counts.new_jobs,
        "existingJobs": counts.existing_jobs,
        "errorCode": None,
        "filteredJobs": counts.filtered_jobs,
        "recoveredUnits": counts.recovered_units,
        "completedUnits": counts.completed_units,
        "failedUnits": counts.failed_units,
        "totalUnits": counts.total_units,
    }


async def run_jobspy_family(
    db: Database,
    paths: AppPaths,
    input: FamilyInput,
    *,
    attempt: int,
    heartbeat: Callable[..., None] | None = None,
    scraper: Scraper | None = None,
) -> FamilyOutcome:
    """The ``discover_source_family`` activity body for ``jobspy`` sources. ``attempt`` is
    the Temporal activity attempt (the fencing token); ``heartbeat`` defaults to
    ``activity.heartbeat`` and is injectable for tests."""
    del paths  # parity with the other activity helpers; jobspy needs no app files
    identity = None
    if activity.in_activity():
        # The worker's own view of the execution it runs under, not the input's claim.
        info = activity.info()
        identity = (info.workflow_id, info.workflow_run_id)
    family_run = JobSpyFamilyRun(db, input, attempt=attempt,
                                 heartbeat=activity.heartbeat if heartbeat is None else heartbeat,
                                 scraper=scraper, identity=identity)
    try:
        return await family_run.run()
    except SourceError as error:
        raise ApplicationError(
            "source family failed", type=error.code, non_retryable=not error.retryable
        ) from None
