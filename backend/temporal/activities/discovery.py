"""Discovery activities: thin I/O around the sources and the store.

Each write commits canonical rows and their events in one transaction, with dedupe keys
so a retried or resumed activity never duplicates a job or an event."""

from __future__ import annotations

from temporalio import activity
from temporalio.exceptions import ApplicationError

from backend.config import AppPaths, load_settings
from backend.domain import events as ev
from backend.domain.stages import ACTIVE_STATUSES, PROFILE_MISSING
from backend.sources.config import SourceConfig
from backend.sources.errors import SourceError
from backend.sources.jobspy_family import run_jobspy_family
from backend.sources.registry import fetch_source
from backend.store import discovery as runs
from backend.store import stages as stage_store
from backend.store.db import Database
from backend.store.events import append_event
from backend.store.jobs import observe_posting
from backend.store.lifecycle import record_workflow_started, record_workflow_terminal
from backend.store.profile import read_profile
from backend.store.stages import REDO_STATUSES, RETRYABLE_BLOCKS
from backend.temporal.activities.heartbeating import heartbeating
from backend.temporal.contracts import (
    DiscoverResult,
    DiscoveryExecutionRef,
    DiscoveryPlan,
    FamilyFailureInput,
    FamilyInput,
    FamilyOutcome,
    FanoutInput,
    FanoutPlan,
    FinalizeInput,
    PlanInput,
)

WORKFLOW_TYPE = "DiscoverWorkflow"
WRITE_BATCH = 25  # postings per transaction: small enough that jobs stream to the UI


def select_sources(configured: list[SourceConfig], wanted: list[str] | None) -> list[SourceConfig]:
    """Enabled sources, or exactly the requested ids (which must exist)."""
    if wanted is None:
        return [source for source in configured if source.enabled]
    wanted = list(dict.fromkeys(wanted))  # a repeated id is crawled once
    by_id = {source.id: source for source in configured}
    missing = [source_id for source_id in wanted if source_id not in by_id]
    if missing:
        raise ApplicationError("unknown source id", type="configuration", non_retryable=True)
    return [by_id[source_id] for source_id in wanted]


def _ids(ref: DiscoveryExecutionRef) -> dict[str, str]:
    return {"discover_workflow_id": ref.discover_workflow_id, "discover_run_id": ref.discover_run_id}


class DiscoveryActivities:
    def __init__(self, db: Database, paths: AppPaths):
        self._db = db
        self._paths = paths

    @activity.defn(name="plan_discovery")
    async def plan_discovery(self, input: PlanInput) -> DiscoveryPlan:
        settings = load_settings(self._paths)
        sources = select_sources(settings.sources, input.source_ids)
        await self._record_started(input.ref, [source.id for source in sources])
        return DiscoveryPlan(sources=sources,
                             heartbeat_timeout_s=settings.stage_heartbeat_timeout_s)

    async def _record_started(self, ref: DiscoveryExecutionRef, families: list[str]) -> None:
        run_id = ref.discover_run_id
        async with self._db.transaction() as conn:
            await runs.insert_run(
                conn, workflow_id=ref.discover_workflow_id, run_id=run_id, families=families
            )
            common = {"workflow_id": ref.discover_workflow_id, "run_id": run_id}
            await record_workflow_started(
                conn, workflow_id=ref.discover_workflow_id, run_id=run_id,
                workflow_type=WORKFLOW_TYPE, input_summary={"families": families},
            )
            await append_event(
                conn,
                ev.DiscoveryRunStarted(**_ids(ref), families=families,
                                       progress_total=len(families) + 2),
                dedupe_key=f"DiscoveryRunStarted:{run_id}", **common,
            )

    @activity.defn(name="discover_source_family")
    async def discover_source_family(self, input: FamilyInput) -> FamilyOutcome:
        if input.source.kind == "jobspy":  # broad boards: checkpointed search units
            return await run_jobspy_family(self._db, self._paths, input,
                                           attempt=activity.info().attempt)
        try:
            async with heartbeating():
                postings = await fetch_source(input.source)
        except SourceError as error:
            raise ApplicationError(
                "source family failed", type=error.code, non_retryable=not error.retryable
            ) from None
        ref, family = input.ref, input.source.id
        job_ids: dict[str, None] = {}  # ordered set: the order postings were seen
        for start in range(0, len(postings), WRITE_BATCH):
            batch_ids = await self._store_batch(ref, family, postings[start : start + WRITE_BATCH])
            job_ids.update(dict.fromkeys(batch_ids))
            activity.heartbeat(start)
        new_jobs, observed = await self._family_counts(ref.discover_run_id, family)
        outcome = FamilyOutcome(
            family=family, status="succeeded", new_jobs=new_jobs,
            existing_jobs=observed - new_jobs, job_ids=list(job_ids),
        )
        async with self._db.transaction() as conn:
            await runs.advance_progress(
                conn, ref.discover_run_id, reached=input.index + 1, family=family,
                family_progress=outcome.model_dump(by_alias=True, exclude={"family", "job_ids"}),
            )
        return outcome

    async def _store_batch(self, ref: DiscoveryExecutionRef, family: str, batch) -> list[str]:
        job_ids = []
        async with self._db.transaction() as conn:
            for posting in batch:
                observed = await observe_posting(
                    conn, posting, source_family=family, discover_run_id=ref.discover_run_id
                )
                job_ids.append(observed.job_id)
                if not observed.is_new:
                    continue
                await append_event(
                    conn,
                    ev.JobDiscovered(
                        **_ids(ref), job_id=observed.job_id, title=posting.title,
                        company=posting.company, location=posting.location,
                        remote=posting.remote, source_family=family,
                    ),
                    job_id=observed.job_id, workflow_id=ref.discover_workflow_id,
                    run_id=ref.discover_run_id, dedupe_key=f"JobDiscovered:{observed.job_id}",
                )
        return job_ids

    async def _family_counts(self, run_id: str, family: str) -> tuple[int, int]:
        row = await self._db.fetchone(
            "SELECT COALESCE(SUM(first_observation), 0), COUNT(DISTINCT job_id)"
            " FROM source_observations WHERE discover_run_id = ? AND source_family = ?",
            (run_id, family),
        )
        return int(row[0]), int(row[1])

    @activity.defn(name="plan_preparation")
    async def plan_preparation(self, input: FanoutInput) -> FanoutPlan:
        """The observed jobs that still need preparation (none active, not user-skipped)."""
        async with self._db.transaction() as conn:
            for job_id in input.job_ids:
                await stage_store.ensure_rows(conn, job_id)
            placeholders = ",".join("?" * len(input.job_ids))
            cursor = await conn.execute(
                "SELECT s.job_id, s.status, s.blocked_reason FROM job_stage_states s"
                " JOIN jobs j ON j.job_id = s.job_id"
                f" WHERE s.job_id IN ({placeholders}) AND j.user_status IS NULL",
                input.job_ids,
            )
            rows = await cursor.fetchall()
            profile = await read_profile(conn)
        # A job blocked only for want of a profile is worth retrying once one exists.
        lifting = set(RETRYABLE_BLOCKS) - (set() if profile else {PROFILE_MISSING})
        return FanoutPlan(
            job_ids=needing_preparation(input.job_ids, rows, lifting_blocks=lifting),
            heartbeat_timeout_s=load_settings(self._paths).stage_heartbeat_timeout_s,
        )

    @activity.defn(name="record_family_failure")
    async def record_family_failure(self, input: FamilyFailureInput) -> None:
        async with self._db.transaction() as conn:
            await runs.advance_progress(
                conn, input.ref.discover_run_id, reached=input.index + 1, family=input.family,
                family_progress={"status": "failed", "errorCode": input.error_code},
            )

    @activity.defn(name="finalize_discovery")
    async def finalize_discovery(self, input: FinalizeInput) -> DiscoverResult:
        ref = input.ref
        status = final_status(input)
        failed = [
            ev.FamilyFailure(family=o.family, error_code=o.error_code or "source_failed")
            for o in input.outcomes
            if o.status == "failed"
        ]
        error_code = input.error_code or (failed[0].error_code if failed else None)
        run_id = ref.discover_run_id
        async with self._db.transaction() as conn:
            # Planning may have failed before the run row existed; record it anyway.
            await runs.insert_run(conn, workflow_id=ref.discover_workflow_id, run_id=run_id,
                                  families=[o.family for o in input.outcomes])
            if status in ("completed", "completed_with_issues"):
                await runs.advance_progress(conn, run_id, reached=runs.PROGRESS_COMPLETE)
            await runs.finish_run(
                conn, run_id, status=status,
                error_code=None if status == "completed" else error_code,
            )
            observed, new = await runs.run_counts(conn, run_id)
            await self._append_terminal_events(conn, ref, status, failed, error_code,
                                               observed=observed, new=new, input=input)
        return DiscoverResult(
            status=status, jobs_observed=observed, jobs_new=new,
            families_failed=[f.family for f in failed],
        )

    async def _append_terminal_events(self, conn, ref, status, failed, error_code, *,
                                      observed, new, input) -> None:
        run_id, workflow_id = ref.discover_run_id, ref.discover_workflow_id
        if status in ("completed", "completed_with_issues"):
            run_event = ev.DiscoveryRunCompleted(
                **_ids(ref), status=status, jobs_observed=observed, jobs_new=new,
                families_succeeded=[o.family for o in input.outcomes if o.status == "succeeded"],
                families_failed=failed,
            )
        else:
            run_event = ev.DiscoveryRunFailed(
                **_ids(ref), status=status, error_code=error_code or "canceled",
                families_failed=failed,
            )
        await append_event(conn, run_event, workflow_id=workflow_id, run_id=run_id,
                           dedupe_key=f"DiscoveryRunTerminal:{run_id}")
        await record_workflow_terminal(
            conn, workflow_id=workflow_id, run_id=run_id, workflow_type=WORKFLOW_TYPE,
            outcome="completed" if status.startswith("completed") else status,
            error_code=error_code or "source_failed",
        )


def needing_preparation(job_ids: list[str], rows, *, lifting_blocks=RETRYABLE_BLOCKS) -> list[str]:
    """Jobs with work left that nobody is doing: keeps Discover from re-queuing finished,
    robots-blocked or already-running preparation."""
    by_job: dict[str, list[tuple[str, str | None]]] = {}
    for job_id, status, reason in rows:
        by_job.setdefault(job_id, []).append((status, reason))
    eligible = []
    for job_id in job_ids:
        states = by_job.get(job_id)
        if not states or any(status in ACTIVE_STATUSES for status, _ in states):
            continue
        if any(status in REDO_STATUSES or (status == "blocked" and reason in lifting_blocks)
               for status, reason in states):
            eligible.append(job_id)
    return eligible


def final_status(input: FinalizeInput) -> str:
    """completed / completed_with_issues (some families failed) / failed / canceled."""
    if input.canceled:
        return "canceled"
    if input.error_code:
        return "failed"
    failed = sum(1 for outcome in input.outcomes if outcome.status == "failed")
    if failed and failed == len(input.outcomes):
        return "failed"
    return "completed_with_issues" if failed else "completed"
