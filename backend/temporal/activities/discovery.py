"""Discovery activities: thin I/O around the sources and the store.

Each write commits canonical rows and their events in one transaction, with dedupe keys
so a retried or resumed activity never duplicates a job or an event.

Execution lineage. Every job a family observes is linked to the exact Discover execution
(``discovery_execution_jobs``, cohort ``observed_this_run``) in the transaction that
records its observation; the backlog sweep links pre-existing eligible work as
``existing_backlog``; ``plan_preparation`` records each linked job's plan (``planned`` with
its immutable required stages and ``prep-{jobId}``, or ``not_eligible`` with a bounded
reason).

Pipeline steps. The activities emit the execution-scoped PipelineStep* events natively:
``plan_discovery`` queues ``source_planning`` (``planning``), one ``source_family`` per
family (``family:{id}``), ``existing_backlog_sweep`` (``sweep``) and the terminal
``preparation_fanout`` (``fanout:sweep``); a family that observed jobs queues its own
fan-out (``fanout:family:{id}``). Each step's activity records Started (with the Temporal
attempt) when it begins, Completed in the transaction of the step's canonical write, and
Failed (bounded code, whether Temporal will retry) when the attempt ends with an error.
``finalize_discovery`` fails steps that were queued but never started."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from temporalio import activity
from temporalio.exceptions import ApplicationError

from backend.config import AppPaths, load_settings
from backend.domain import events as ev
from backend.domain.clock import to_iso, utc_now_iso
from backend.domain.source_config import SourceConfig
from backend.domain.stages import (
    ACTIVE_STATUSES,
    BELOW_MIN_FIT_SCORE,
    ENRICH_LOW_CONFIDENCE,
    ENRICH_ROBOTS_DISALLOWED,
    PROFILE_MISSING,
    STAGES,
)
from backend.projections import pipeline_steps as steps
from backend.sources import caps
from backend.sources.errors import SourceError
from backend.sources.registry import fetch_source
from backend.store import coverage, lineage, passes, plan_inputs
from backend.store import discovery as runs
from backend.store import stages as stage_store
from backend.store.db import Database
from backend.store.jobs import observe_discovered_posting
from backend.store.lifecycle import record_workflow_terminal
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
    prep_workflow_id,
)

log = logging.getLogger(__name__)

WORKFLOW_TYPE = "DiscoverWorkflow"
PREP_WORKFLOW_TYPE = "JobPreparationWorkflow"
WRITE_BATCH = 25  # postings per transaction: small enough that jobs stream to the UI
SWEEP_LIMIT = 1000  # backlog jobs one execution sweeps; the rest stay global backlog

# Pipeline-step item keys (bounded identifiers; family ids match SOURCE_ID_PATTERN).
PLANNING_KEY = "planning"
SWEEP_KEY = "sweep"
FANOUT_SWEEP_KEY = "fanout:sweep"  # the terminal fan-out: it closes execution membership
_CODE = re.compile(ev.STEP_ERROR_CODE_PATTERN)


def family_item_key(family: str) -> str:
    return f"family:{family}"


def fanout_item_key(family: str) -> str:
    return f"fanout:family:{family}"



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


# --- pipeline steps ----------------------------------------------------------------------


@dataclass(frozen=True)
class StepClock:
    """One attempt of one execution-owned step, as the activity running it sees it."""

    ref: DiscoveryExecutionRef
    kind: str
    item_key: str
    attempt: int
    started_at: str
    scheduled_at: str
    started_monotonic: float
    retry_policy: object | None = None

    def _ids(self, attempt: int | None = None) -> dict:
        return {**_ids(self.ref), "step_kind": self.kind, "item_key": self.item_key,
                "attempt": attempt or self.attempt}

    def queued(self) -> ev.PipelineStepQueued:
        return ev.PipelineStepQueued(**self._ids(), queued_at=self.scheduled_at)

    def started(self) -> ev.PipelineStepStarted:
        return ev.PipelineStepStarted(**self._ids(), started_at=self.started_at)

    def completed(self, **counts: int) -> ev.PipelineStepCompleted:
        elapsed = max(0, round((time.monotonic() - self.started_monotonic) * 1000))
        return ev.PipelineStepCompleted(**self._ids(), counts=ev.PipelineStepCounts(**counts),
                                        duration_ms=elapsed)

    def failed(self, error_code: str, retryable: bool) -> ev.PipelineStepFailed:
        return ev.PipelineStepFailed(**self._ids(), error_code=bounded_code(error_code),
                                     retryable=retryable)

    def will_retry(self, code: str, non_retryable: bool) -> bool:
        """Whether Temporal schedules another attempt after this one fails with ``code``."""
        if non_retryable:
            return False
        policy = self.retry_policy
        if policy is None:
            return True
        if code in (getattr(policy, "non_retryable_error_types", None) or ()):
            return False
        maximum = getattr(policy, "maximum_attempts", 0) or 0
        return maximum == 0 or self.attempt < maximum


def queued_step(ref: DiscoveryExecutionRef, kind: str, item_key: str) -> ev.PipelineStepQueued:
    """A step this activity plans for later: its first attempt is queued now."""
    return ev.PipelineStepQueued(**_ids(ref), step_kind=kind, item_key=item_key, attempt=1,
                                 queued_at=utc_now_iso())


def bounded_code(code: str | None) -> str:
    return code if code and _CODE.match(code) else "step_failed"


def step_clock(ref: DiscoveryExecutionRef, kind: str, item_key: str) -> StepClock:
    """The current activity attempt's clock for one step (attempt from activity.info())."""
    info = activity.info()
    now = utc_now_iso()
    scheduled = info.current_attempt_scheduled_time
    scheduled_at = to_iso(scheduled) if scheduled and scheduled.timestamp() > 0 else now
    return StepClock(ref=ref, kind=kind, item_key=item_key, attempt=max(1, info.attempt),
                     started_at=now, scheduled_at=min(scheduled_at, now),
                     started_monotonic=time.monotonic(), retry_policy=info.retry_policy)


# --- preparation planning ----------------------------------------------------------------


@dataclass(frozen=True)
class PrepDecision:
    state: str                                  # planned | not_eligible
    required_steps: tuple[str, ...] = ()
    reason: str | None = None


_BLOCK_REASONS = {
    ENRICH_ROBOTS_DISALLOWED: "blocked_by_robots",
    ENRICH_LOW_CONFIDENCE: "blocked_low_confidence",
    PROFILE_MISSING: "profile_missing",
    BELOW_MIN_FIT_SCORE: "below_min_fit_score",
}


def decide_preparation(
    states: list[tuple[str, str, str | None]] | None,
    *,
    user_status: str | None,
    exists: bool = True,
    preparation_running: bool = False,
    lifting_blocks: Iterable[str] = RETRYABLE_BLOCKS,
) -> PrepDecision:
    """The work plan of one job from its canonical stage rows ``(stage, status, reason)``.

    A job is planned when some stage has work: pending / failed / exhausted / canceled,
    or blocked for a reason that lifts by itself. Its required steps are those stages plus
    every not-yet-succeeded stage downstream of the first one — exactly the stages the
    child preparation workflow is asked to run. Everything else is not eligible, with a
    bounded reason."""
    lifting = set(lifting_blocks)
    if not exists:
        return PrepDecision("not_eligible", reason="job_missing")
    if user_status == "skipped":
        return PrepDecision("not_eligible", reason="user_skipped")
    if user_status == "applied":
        return PrepDecision("not_eligible", reason="user_applied")
    states = states or [(stage, "pending", None) for stage in STAGES]
    if preparation_running or any(status in ACTIVE_STATUSES for _, status, _ in states):
        return PrepDecision("not_eligible", reason="preparation_active")
    by_stage = {stage: (status, reason) for stage, status, reason in states}
    needs = [stage in by_stage and (
        by_stage[stage][0] in REDO_STATUSES
        or (by_stage[stage][0] == "blocked" and by_stage[stage][1] in lifting))
        for stage in STAGES]
    if any(needs):
        # Downstream of the first stage with work, every stage that has not succeeded is
        # decided again after the redo (a skip or block may lift); succeeded ones stay.
        first = needs.index(True)
        required = tuple(
            stage for index, stage in enumerate(STAGES)
            if needs[index] or (index > first and by_stage.get(stage, ("pending",))[0]
                                != "succeeded"))
        return PrepDecision("planned", required_steps=required)
    for stage in STAGES:
        status, reason = by_stage.get(stage, ("succeeded", None))
        if status == "blocked" or (status == "skipped" and reason == BELOW_MIN_FIT_SCORE):
            return PrepDecision("not_eligible", reason=_BLOCK_REASONS.get(reason, "blocked"))
    return PrepDecision("not_eligible", reason="already_prepared")


# --- the activities ----------------------------------------------------------------------


class DiscoveryActivities:
    def __init__(self, db: Database, paths: AppPaths):
        self._db = db
        self._paths = paths

    # -- step lifecycle helpers ------------------------------------------------------------

    async def _begin(self, step: StepClock, conn=None) -> None:
        """Queued (a no-op when the planner already queued this attempt) and Started."""
        if conn is None:
            async with self._db.transaction() as own:
                await self._begin(step, own)
            return
        await steps.append_step_event(conn, step.queued(), tenant_id=step.ref.tenant_id)
        await steps.append_step_event(conn, step.started(), tenant_id=step.ref.tenant_id)

    async def _record_failure(self, step: StepClock, code: str, *, retryable: bool) -> None:
        try:
            async with self._db.transaction() as conn:
                if step.kind == "source_planning":
                    # Planning failed before its run was recorded: the execution still
                    # exists and its native step facts are proven from here on.
                    await coverage.open_native_checkpoint(conn, step.ref)
                await self._begin(step, conn)  # a failure before Started still has a start
                await steps.append_step_event(conn, step.failed(code, retryable),
                                              tenant_id=step.ref.tenant_id)
        except Exception:  # the original failure matters more; the reconciler backstops
            log.exception("could not record the failure of step %s %s", step.kind,
                          step.item_key)

    @asynccontextmanager
    async def _step_failures(self, step: StepClock) -> AsyncIterator[None]:
        """Record PipelineStepFailed (bounded code, will Temporal retry) for whatever ends
        this attempt with an exception, then let the exception propagate."""
        try:
            yield
        except asyncio.CancelledError:
            await self._record_failure(step, "canceled", retryable=False)
            raise
        except ApplicationError as error:
            code = bounded_code(error.type or "activity_failed")
            await self._record_failure(
                step, code, retryable=step.will_retry(code, bool(error.non_retryable)))
            raise
        except Exception:
            await self._record_failure(
                step, "activity_failed", retryable=step.will_retry("activity_failed", False))
            raise

    # -- planning --------------------------------------------------------------------------

    @activity.defn(name="plan_discovery")
    async def plan_discovery(self, input: PlanInput) -> DiscoveryPlan:
        """Record the run, open its native coverage checkpoint, and queue its steps: the
        source families, the backlog sweep and the terminal fan-out."""
        ref = input.ref
        step = step_clock(ref, "source_planning", PLANNING_KEY)
        async with self._step_failures(step):
            settings = load_settings(self._paths)
            sources = select_sources(settings.sources, input.source_ids)
            async with self._db.transaction() as conn:
                await runs.record_run_started(
                    conn, workflow_id=ref.discover_workflow_id, run_id=ref.discover_run_id,
                    workflow_type=WORKFLOW_TYPE, families=[source.id for source in sources])
                await coverage.open_native_checkpoint(conn, ref)
                await self._begin(step, conn)
                for source in sources:
                    await steps.append_step_event(
                        conn, queued_step(ref, "source_family", family_item_key(source.id)),
                        tenant_id=ref.tenant_id)
                await steps.append_step_event(
                    conn, queued_step(ref, "existing_backlog_sweep", SWEEP_KEY),
                    tenant_id=ref.tenant_id)
                await steps.append_step_event(
                    conn, queued_step(ref, "preparation_fanout", FANOUT_SWEEP_KEY),
                    tenant_id=ref.tenant_id)
                await steps.append_step_event(conn, step.completed(family_count=len(sources)),
                                              tenant_id=ref.tenant_id)
        return DiscoveryPlan(sources=sources,
                             heartbeat_timeout_s=settings.stage_heartbeat_timeout_s)

    # -- source families -------------------------------------------------------------------

    @activity.defn(name="discover_source_family")
    async def discover_source_family(self, input: FamilyInput) -> FamilyOutcome:
        ref, family = input.ref, input.source.id
        step = step_clock(ref, "source_family", family_item_key(family))
        await self._begin(step)
        async with self._step_failures(step):
            if input.source.kind == "jobspy":  # broad boards: checkpointed search units
                # Imported here, as the registry imports each fetcher: only a jobspy
                # source pays for the adapter and its HTML cleaner (not the worker's start).
                from backend.temporal.activities.jobspy_family import run_jobspy_family

                outcome = await run_jobspy_family(self._db, self._paths, input,
                                                  attempt=step.attempt)
                async with self._db.transaction() as conn:
                    # Units committed their observations; the lineage links them here.
                    await lineage.link_jobs(conn, ref, outcome.job_ids, "observed_this_run")
                    await self._family_done(conn, step, outcome)
                return outcome
            return await self._crawl(input, step)

    async def _crawl(self, input: FamilyInput, step: StepClock) -> FamilyOutcome:
        try:
            async with heartbeating():
                fetched = await fetch_source(input.source)  # at most the per-board cap
        except SourceError as error:
            raise ApplicationError(
                "source family failed", type=error.code, non_retryable=not error.retryable
            ) from None
        ref, family = input.ref, input.source.id
        postings, skipped = await self._within_run_cap(ref, family, fetched)
        job_ids: dict[str, None] = {}  # ordered set: the order postings were seen
        for start in range(0, len(postings), WRITE_BATCH):
            batch_ids = await self._store_batch(ref, family, postings[start : start + WRITE_BATCH])
            job_ids.update(dict.fromkeys(batch_ids))
            activity.heartbeat(start)
        new_jobs, observed = await runs.family_observation_counts(self._db, ref.discover_run_id,
                                                                  family)
        outcome = FamilyOutcome(
            family=family, status="succeeded", new_jobs=new_jobs,
            existing_jobs=observed - new_jobs, job_ids=list(job_ids), skipped_over_cap=skipped,
        )
        # The run's summary says what was left out (``skippedOverCap``), only when something was.
        hidden = {"family", "job_ids"} | (set() if skipped else {"skipped_over_cap"})
        async with self._db.transaction() as conn:
            await runs.advance_progress(
                conn, ref.discover_run_id, reached=input.index + 1, family=family,
                family_progress=outcome.model_dump(by_alias=True, exclude=hidden),
            )
            await self._family_done(conn, step, outcome)
        return outcome

    async def _within_run_cap(self, ref: DiscoveryExecutionRef, family: str,
                              fetched: list) -> tuple[list, int]:
        """The fetched postings that fit the run's cap (what the run's other families
        observed counts first; a retried attempt's own earlier writes do not), and how
        many this family left out: over the per-board cap in the fetch, then over the run's."""
        others = await runs.observed_by_other_families(self._db, ref.discover_run_id, family)
        room = max(caps.MAX_POSTINGS_PER_RUN - others, 0)
        kept = fetched[:room]
        skipped = caps.left_out_of(fetched) + len(fetched) - len(kept)
        if skipped:
            log.warning("source %s: %d postings left out over the caps (%d per board, %d per"
                        " run)", family, skipped, caps.MAX_POSTINGS_PER_FETCH,
                        caps.MAX_POSTINGS_PER_RUN)
        return kept, skipped

    async def _family_done(self, conn, step: StepClock, outcome: FamilyOutcome) -> None:
        """The family step's Completed, and the queued fan-out of what it observed (the
        workflow fans out exactly when the family returns job ids)."""
        ref = step.ref
        await steps.append_step_event(
            conn, step.completed(new_jobs=outcome.new_jobs, existing_jobs=outcome.existing_jobs,
                                 observed_jobs=len(outcome.job_ids)),
            tenant_id=ref.tenant_id)
        if outcome.job_ids:
            await steps.append_step_event(
                conn, queued_step(ref, "preparation_fanout", fanout_item_key(outcome.family)),
                tenant_id=ref.tenant_id)

    async def _store_batch(self, ref: DiscoveryExecutionRef, family: str, batch) -> list[str]:
        job_ids = []
        async with self._db.transaction() as conn:
            for posting in batch:
                observed = await observe_discovered_posting(
                    conn, posting, source_family=family,
                    discover_workflow_id=ref.discover_workflow_id,
                    discover_run_id=ref.discover_run_id)
                job_ids.append(observed.job_id)
            # Every observed job joins the execution with its observation.
            await lineage.link_jobs(conn, ref, job_ids, "observed_this_run")
        return job_ids

    @activity.defn(name="record_family_failure")
    async def record_family_failure(self, input: FamilyFailureInput) -> None:
        ref = input.ref
        async with self._db.transaction() as conn:
            await runs.advance_progress(
                conn, ref.discover_run_id, reached=input.index + 1, family=input.family,
                family_progress={"status": "failed", "errorCode": input.error_code},
            )
            # An attempt that died without recording its end (heartbeat timeout, killed
            # worker) is terminal now: Temporal gave up on the family.
            row = await steps.load_row(conn, ref.tenant_id, ref.discover_run_id,
                                       "source_family", family_item_key(input.family))
            if row is not None and not row.terminal:
                await steps.append_step_event(conn, ev.PipelineStepFailed(
                    **_ids(ref), step_kind="source_family",
                    item_key=family_item_key(input.family), attempt=row.attempt,
                    error_code=bounded_code(input.error_code), retryable=False,
                ), tenant_id=ref.tenant_id)

    # -- preparation fan-out and the backlog sweep -----------------------------------------

    @activity.defn(name="plan_preparation")
    async def plan_preparation(self, input: FanoutInput) -> FanoutPlan:
        """Plan the preparation of the given jobs (one ``preparation_fanout`` step) and
        record each plan in the execution lineage. With ``sweep``, first run the
        ``existing_backlog_sweep`` step and plan the whole swept cohort."""
        ref = input.ref
        heartbeat_timeout_s = load_settings(self._paths).stage_heartbeat_timeout_s
        job_ids = list(dict.fromkeys(input.job_ids))
        if input.sweep:
            sweep = step_clock(ref, "existing_backlog_sweep", SWEEP_KEY)
            await self._begin(sweep)
            async with self._step_failures(sweep):
                await self._sweep_backlog(ref, sweep)
            job_ids = await lineage.cohort_job_ids(self._db, ref, "existing_backlog")
        if input.item_key is None:  # an input from before execution lineage existed
            planned = await self._plan(ref, job_ids, step=None)
        else:
            step = step_clock(ref, "preparation_fanout", input.item_key)
            await self._begin(step)
            async with self._step_failures(step):
                planned = await self._plan(ref, job_ids, step=step)
        return FanoutPlan(job_ids=list(planned), heartbeat_timeout_s=heartbeat_timeout_s,
                          required_steps={job_id: list(s) for job_id, s in planned.items()})

    @staticmethod
    def _lifting_blocks(saved_profile) -> set[str]:
        # A job blocked only for want of a profile is worth retrying once one exists.
        return set(RETRYABLE_BLOCKS) - (set() if saved_profile else {PROFILE_MISSING})

    @staticmethod
    async def _likely_fit_first(conn, job_ids: list[str], saved_profile) -> list[str]:
        """The order children start in (their stages queue first come first served):
        the titles nearest the profile's targets first, so the first materials a job
        seeker can use, and the first Tailor/Cover/PDF durations the ETA needs, come
        from the first fitting jobs rather than after the whole board's Score."""
        from backend.pipeline.fit.titles import likely_fit_first  # the fit rules: not at start-up

        targets = saved_profile[1].target_titles if saved_profile else []
        titles = await plan_inputs.job_titles(conn, job_ids)
        return likely_fit_first({job_id: titles.get(job_id, "") for job_id in job_ids}, targets)

    async def _sweep_backlog(self, ref: DiscoveryExecutionRef, step: StepClock) -> None:
        """Link pre-existing eligible jobs — work left in a stage, none active, not
        user-set, not already in this execution — as ``existing_backlog``."""
        async with self._db.transaction() as conn:
            lifting = sorted(self._lifting_blocks(await read_profile(conn)))
            running = await plan_inputs.running_preparation_jobs(
                conn, PREP_WORKFLOW_TYPE, ref.tenant_id)
            candidates = await plan_inputs.backlog_candidates(
                conn, tenant_id=ref.tenant_id, discover_workflow_id=ref.discover_workflow_id,
                discover_run_id=ref.discover_run_id, redo_statuses=REDO_STATUSES,
                lifting_blocks=lifting, limit=SWEEP_LIMIT + 1 + len(running))
            # An open preparation run that has not claimed a stage yet is active too.
            eligible = [job_id for job_id in candidates if job_id not in running]
            swept = eligible[:SWEEP_LIMIT]
            await lineage.link_jobs(conn, ref, swept, "existing_backlog")
            cohort = await lineage.cohort_job_ids(conn, ref, "existing_backlog")
            await steps.append_step_event(
                conn, step.completed(eligible_count=len(eligible), swept_count=len(cohort),
                                     deferred_count=len(eligible) - len(swept)),
                tenant_id=ref.tenant_id)

    async def _plan(self, ref: DiscoveryExecutionRef, job_ids: list[str],
                    step: StepClock | None) -> dict[str, tuple[str, ...]]:
        """Decide and record every job's plan in one transaction (with the step's
        Completed). Returns the jobs to start now, with the stages each child runs."""
        to_start: dict[str, tuple[str, ...]] = {}
        planned = not_eligible = 0
        async with self._db.transaction() as conn:
            for job_id in job_ids:
                await stage_store.ensure_rows(conn, job_id)
            saved_profile = await read_profile(conn)
            lifting = self._lifting_blocks(saved_profile)
            by_job = await plan_inputs.stage_states(conn, job_ids, ref.tenant_id)
            users = await plan_inputs.user_statuses(conn, job_ids)
            running = await plan_inputs.running_preparation_jobs(
                conn, PREP_WORKFLOW_TYPE, ref.tenant_id)
            members = await lineage.read_members(conn, ref, job_ids) if step else {}
            for job_id in job_ids:
                decision = decide_preparation(
                    by_job.get(job_id), user_status=users.get(job_id),
                    exists=job_id in users, preparation_running=job_id in running,
                    lifting_blocks=lifting,
                )
                if step is None:
                    if decision.state == "planned":
                        to_start[job_id] = decision.required_steps
                    continue
                member = members.get(job_id)
                if member is None:
                    raise ApplicationError("job is not linked to this execution",
                                           type="lineage_missing", non_retryable=True)
                if member.plan_state == "planned":
                    # The plan is immutable; start its child again only while the work
                    # is still there and nobody is doing it (a retried fan-out).
                    planned += 1
                    if decision.state == "planned":
                        to_start[job_id] = member.required_steps or decision.required_steps
                    continue
                if decision.state == "planned":
                    await lineage.record_plan(conn, ref, job_id, "planned",
                                              decision.required_steps, prep_workflow_id(job_id))
                    to_start[job_id] = decision.required_steps
                    planned += 1
                else:
                    await lineage.record_plan(conn, ref, job_id, "not_eligible",
                                              reason=decision.reason)
                    not_eligible += 1
            if step is not None:
                await steps.append_step_event(
                    conn, step.completed(target_count=len(job_ids), planned_count=planned,
                                         not_eligible_count=not_eligible),
                    tenant_id=ref.tenant_id)
            order = await self._likely_fit_first(conn, list(to_start), saved_profile)
        return {job_id: to_start[job_id] for job_id in order}

    # -- finalize --------------------------------------------------------------------------

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
            await self._close_unstarted_steps(conn, ref, status)
            if status in ("completed", "completed_with_issues"):
                await passes.open_passes(conn, ref)  # membership is closed now
            if status == "failed":
                await lineage.fail_pending_plans(conn, ref, "planning_failed")
            observed, new = await runs.run_counts(conn, run_id)
            await self._append_terminal_events(conn, ref, status, failed, error_code,
                                               observed=observed, new=new, input=input)
        return DiscoverResult(
            status=status, jobs_observed=observed, jobs_new=new,
            families_failed=[f.family for f in failed],
            skipped_over_cap=sum(o.skipped_over_cap for o in input.outcomes),
        )

    async def _close_unstarted_steps(self, conn, ref: DiscoveryExecutionRef, status: str) -> None:
        """Steps the execution queued but never started will not run any more: record
        them failed (not retryable) so a terminal run leaves no step queued."""
        code = {"canceled": "workflow_canceled", "failed": "workflow_failed"}.get(
            status, "not_started")
        for row in await steps.list_steps(conn, ref):
            if row.status == "queued":
                await steps.append_step_event(conn, ev.PipelineStepFailed(
                    **_ids(ref), step_kind=row.step_kind, item_key=row.item_key,
                    attempt=row.attempt, error_code=code, retryable=False,
                ), tenant_id=ref.tenant_id)

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
        await runs.record_run_outcome(conn, run_event)
        await record_workflow_terminal(
            conn, workflow_id=workflow_id, run_id=run_id, workflow_type=WORKFLOW_TYPE,
            outcome="completed" if status.startswith("completed") else status,
            error_code=error_code or "source_failed",
        )


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
