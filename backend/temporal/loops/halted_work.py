"""The work the daily ceiling halts, as the budget-resume pass sees it: one job's
preparation, a selected batch (or the items of one refused mid-run), one job's contact
research. Each kind says what it would cost to resume (in paid calls, the arithmetic of
its own spend preflight), the dedupe key of its once-per-episode dispatch intent, and
how it starts again. ``backend/temporal/loops/budget_resume.py`` decides *whether* it does.

Exactly once: the intent is committed before Temporal is asked, with a dedupe key of the
work and the budget episode. A resumed batch or contact research starts under an id that
only that intent uses, with ``REJECT_DUPLICATE``, so a second pass delivering the same
intent (a concurrent settings nudge, or the next pass after a worker killed between the
intent and the start) is refused by Temporal itself.

* Preparation: the job's newest ``JobPreparationWorkflow`` run failed ``budget_exceeded``
  and its stage rows still hold work; it restarts under ``prep-{jobId}``.
* Selected batch, refused at its preflight: the newest run of the batch's lineage (the
  user's ``batch-{stage}-{digest}`` and every ``…-resume-{episode}`` run of it) failed
  ``budget_exceeded``. It runs again for the selected jobs (less those whose first stage
  succeeded since) as ``{batch id}-resume-{episode tag}``.
* Selected batch, items refused mid-run (a stage about to call a model the run was not
  admitted under, with no room for it): a completed batch run left those stage rows
  failed ``budget_exceeded``. They run again from that stage, as a batch of their own
  (``batch-{stage}-{digest of the refused jobs}``, resumed the same way).
* Contact research: the job's newest task failed ``budget_exceeded``. A new task is
  requested with the intent, in one transaction, and started as its own
  ``contacts-{jobId}-{seq}``; a queued task such an intent created that no run took yet
  is started again (a lost start)."""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Literal

from temporalio.client import Client
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError
from temporalio.service import RPCError, RPCStatusCode

from backend.config import PREP_TASK_QUEUE, AppSettings
from backend.domain import events as ev
from backend.pipeline.batch import batch_stages, batch_workflow_id
from backend.store import budget_halts as reads
from backend.store import contacts as contact_store
from backend.store import plan_inputs
from backend.store.db import Database
from backend.store.preparation_halts import BUDGET_HALT_CODES, newest_failed_preparations
from backend.store.resume_intents import record_resume_intent, request_contact_research_resume
from backend.store.staleness import busy_jobs
from backend.temporal.activities.discovery import decide_preparation
from backend.temporal.batch_contracts import BatchInput
from backend.temporal.contracts import prep_workflow_id
from backend.temporal.dispatch import start_preparation
from backend.temporal.start_contracts import ContactResearchInput
from backend.temporal.workflows.batch import PAID_STAGES as BATCH_PAID_STAGES
from backend.temporal.workflows.batch import WORKFLOW_TYPE as BATCH_TYPE
from backend.temporal.workflows.contact_research import PAID_CALLS as CONTACT_PAID_CALLS
from backend.temporal.workflows.contact_research import WORKFLOW_TYPE as CONTACT_TYPE
from backend.temporal.workflows.preparation import PAID_STAGES

Kind = Literal["preparation", "batch", "contacts"]
RESUMED_EVENT = "PreparationBudgetResumed"
BATCH_RESUMED_EVENT = "BatchBudgetResumed"
CONTACT_RESUMED_EVENT = "ContactResearchBudgetResumed"
RESUME_MARK = "-resume-"


def paid_calls(stages: tuple[str, ...] | list[str]) -> int:
    """What the preparation preflight reserves for: one call per paid stage."""
    return sum(1 for stage in stages if stage in PAID_STAGES)


def intent_dedupe_key(job_id: str, episode: str) -> str:
    return f"{RESUMED_EVENT}:{job_id}:{episode}"


async def start_once(client: Client, workflow_type: str, input: Any, workflow_id: str) -> bool:
    """Start under an id used by one intent only: False when any run of it exists, open or
    closed (the intent was delivered before)."""
    try:
        await client.start_workflow(
            workflow_type, input, id=workflow_id, task_queue=PREP_TASK_QUEUE,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE)
    except WorkflowAlreadyStartedError:
        return False
    return True


# --- preparation -------------------------------------------------------------------------


@dataclass(frozen=True)
class Halt:
    """One halted job: its failed run and the stages it still needs."""

    job_id: str
    halted_run_id: str
    halted_started_event_id: int  # the halted run's WorkflowStarted
    stages: tuple[str, ...]
    error_code: str = "budget_exceeded"  # what ended the halted run
    closed_at: str = ""
    kind: Kind = "preparation"

    @property
    def subject(self) -> str:
        return self.job_id

    @property
    def paid_calls(self) -> int:
        return paid_calls(self.stages)

    def intent_key(self, episode: str) -> str:
        return intent_dedupe_key(self.job_id, episode)

    async def blocked(self, db: Database) -> str | None:
        return None  # prep-{jobId} runs once at a time: Temporal keeps two apart

    async def resume(self, db: Database, client: Client, settings: AppSettings,
                     episode: str) -> bool:
        """Commit the intent, then start; False when Temporal already runs a newer
        execution of this job (the intent was delivered by an earlier or concurrent
        pass)."""
        workflow_id = prep_workflow_id(self.job_id)
        recorded = await record_resume_intent(
            db, ev.PreparationBudgetResumed(job_id=self.job_id, workflow_id=workflow_id,
                                            halted_run_id=self.halted_run_id,
                                            budget_episode=episode, stages=list(self.stages)),
            job_id=self.job_id, dedupe_key=self.intent_key(episode))
        if not recorded and await newer_execution_exists(client, workflow_id,
                                                             self.halted_run_id):
            return False
        await start_preparation(client, self.job_id, stages=list(self.stages),
                                heartbeat_timeout_s=settings.stage_heartbeat_timeout_s)
        return True


async def halted_jobs(db: Database, *, error_codes: tuple[str, ...] = BUDGET_HALT_CODES,
                      limit: int = 1000) -> list[Halt]:
    """Jobs whose newest preparation run failed with one of ``error_codes`` (the budget
    halts by default: the ceiling, or the job's source's share of it), with no preparation
    run open and stage work left, oldest halt first."""
    halts = []
    for failed in await newest_failed_preparations(db, error_codes, limit=limit):
        stages = await _remaining_stages(db, failed.job_id)
        if stages:
            halts.append(Halt(failed.job_id, failed.run_id, failed.started_event_id, stages,
                              failed.error_code, failed.closed_at))
    return halts


async def _remaining_stages(db: Database, job_id: str) -> tuple[str, ...]:
    """The stages a new preparation of this job would run: the Discover planner's rule."""
    async with db.read_snapshot() as conn:
        states = await plan_inputs.stage_states(conn, [job_id])
        users = await plan_inputs.user_statuses(conn, [job_id])
    decision = decide_preparation(states.get(job_id), user_status=users.get(job_id),
                                  exists=job_id in users)
    return decision.required_steps if decision.state == "planned" else ()


async def newer_execution_exists(client: Client, workflow_id: str, halted_run_id: str) -> bool:
    try:
        described = await client.get_workflow_handle(workflow_id).describe()
    except RPCError as error:
        if error.status == RPCStatusCode.NOT_FOUND:
            return False  # the history is gone: nothing newer can be running
        raise
    return described.run_id != halted_run_id


# --- selected batches --------------------------------------------------------------------


def batch_lineage(workflow_id: str) -> str:
    """The user's batch id a run belongs to: its own, or the one it resumes."""
    return workflow_id.split(RESUME_MARK, 1)[0]


def resumed_batch_id(batch_id: str, episode: str) -> str:
    """The one workflow id of ``batch_id``'s resume in ``episode``."""
    return f"{batch_id}{RESUME_MARK}{hashlib.sha256(episode.encode()).hexdigest()[:10]}"


@dataclass(frozen=True)
class BatchHalt:
    """A selected batch (``batch_id``: its lineage) that runs again for ``job_ids``."""

    batch_id: str
    stages: tuple[str, ...]
    job_ids: tuple[str, ...]
    workers: int
    halted_run_id: str
    halted_started_event_id: int
    closed_at: str
    kind: Kind = "batch"

    @property
    def subject(self) -> str:
        return self.batch_id

    @property
    def paid_calls(self) -> int:
        """The batch preflight's own count: each paid stage of the chain, for every job."""
        return sum(1 for stage in self.stages if stage in BATCH_PAID_STAGES) * len(self.job_ids)

    def intent_key(self, episode: str) -> str:
        return f"{BATCH_RESUMED_EVENT}:{self.batch_id}:{episode}"

    async def blocked(self, db: Database) -> str | None:
        """A selected job being prepared right now would be deferred, not run: wait."""
        return "jobs_busy" if await busy_jobs(db, list(self.job_ids)) else None

    async def resume(self, db: Database, client: Client, settings: AppSettings,
                     episode: str) -> bool:
        workflow_id = resumed_batch_id(self.batch_id, episode)
        await record_resume_intent(
            db, ev.BatchBudgetResumed(
                batch_id=self.batch_id, workflow_id=workflow_id,
                halted_run_id=self.halted_run_id, budget_episode=episode,
                stages=list(self.stages), job_ids=list(self.job_ids), workers=self.workers),
            dedupe_key=self.intent_key(episode))
        batch = BatchInput(stages=list(self.stages), job_ids=list(self.job_ids),
                           workers=self.workers,
                           heartbeat_timeout_s=settings.stage_heartbeat_timeout_s)
        return await start_once(client, BATCH_TYPE, batch, workflow_id)


async def batch_halts(db: Database, limit: int = 1000) -> list[BatchHalt]:
    """Batches refused at their preflight, then the items refused mid-run, one halt per
    lineage (the newest halted run wins); none for a lineage with a run open."""
    runs = await reads.batch_runs(db, limit)
    newest: dict[str, reads.RunRow] = {}
    open_lineages: set[str] = set()
    for run in runs:  # newest first
        lineage = batch_lineage(run.workflow_id)
        newest.setdefault(lineage, run)
        if run.status not in reads.CLOSED:
            open_lineages.add(lineage)
    halts: dict[str, BatchHalt] = {}
    for lineage, run in newest.items():
        if run.status == "failed" and run.error_code == "budget_exceeded":
            halt = await _refused_at_preflight(db, lineage, run)
            if halt is not None:
                halts[lineage] = halt
    by_run = {run.run_id: run for run in runs}
    for halt in _refused_mid_run(await reads.refused_batch_items(db, limit), by_run):
        known = halts.get(halt.batch_id)
        if known is None or known.halted_started_event_id < halt.halted_started_event_id:
            halts[halt.batch_id] = halt
    return [halt for lineage, halt in halts.items() if lineage not in open_lineages]


def _summary(run: reads.RunRow) -> dict:
    try:
        summary = json.loads(run.input_summary_json or "{}")
    except ValueError:
        return {}
    return summary if isinstance(summary, dict) else {}


async def _refused_at_preflight(db: Database, lineage: str, run: reads.RunRow
                                ) -> BatchHalt | None:
    """The whole selection again, less the jobs whose first stage succeeded since the
    halt; None when nothing is left, or the run does not name its selection (a batch
    started before selections were recorded: unknown, so it is not guessed)."""
    summary = _summary(run)
    job_ids, stages = summary.get("jobIds"), summary.get("stages")
    if not job_ids or not stages:
        return None
    done = await reads.succeeded_since(db, stages[0], job_ids, run.closed_at) if (
        run.closed_at) else set()
    left = tuple(job for job in job_ids if job not in done)
    if not left:
        return None
    return BatchHalt(lineage, tuple(stages), left, int(summary.get("workers") or 1),
                     run.run_id, run.started_event_id, run.closed_at or "")


def _refused_mid_run(items: list[reads.RefusedItem], by_run: dict[str, reads.RunRow]
                     ) -> list[BatchHalt]:
    """One batch per (refusing run, stage): the refused jobs, from that stage on."""
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for item in items:
        groups[(item.run_id, item.stage)].append(item.job_id)
    halts = []
    for (run_id, stage), job_ids in groups.items():
        run = by_run.get(run_id)
        if run is None or run.status != "completed":
            continue  # older than the scan (next passes), or canceled by the user
        jobs = tuple(sorted(job_ids))
        halts.append(BatchHalt(
            batch_workflow_id(stage, list(jobs)), tuple(batch_stages(stage)), jobs,
            int(_summary(run).get("workers") or 1), run.run_id, run.started_event_id,
            run.closed_at or ""))
    return halts


# --- contact research --------------------------------------------------------------------


@dataclass(frozen=True)
class ContactHalt:
    """The job's newest research task: failed ``budget_exceeded`` (a new task resumes it),
    or ``queued`` by a resume intent whose start was lost (it is started again)."""

    task: reads.TaskRow
    kind: Kind = "contacts"

    @property
    def subject(self) -> str:
        return f"contacts-{self.task.job_id}"

    @property
    def halted_run_id(self) -> str:
        return self.task.run_id or ""

    @property
    def halted_started_event_id(self) -> int:
        return self.task.started_event_id  # 0 for a queued task: no run took it yet

    @property
    def closed_at(self) -> str:
        return self.task.finished_at or ""

    @property
    def paid_calls(self) -> int:
        return CONTACT_PAID_CALLS

    def intent_key(self, episode: str) -> str:
        return f"{CONTACT_RESUMED_EVENT}:{self.task.job_id}:{episode}"

    async def blocked(self, db: Database) -> str | None:
        return None

    async def resume(self, db: Database, client: Client, settings: AppSettings,
                     episode: str) -> bool:
        target = self.task
        if target.status != "queued":
            target = await self._request(db, episode)
        research = ContactResearchInput(job_id=target.job_id, task_id=target.task_id)
        return await start_once(client, CONTACT_TYPE, research, target.workflow_id)

    async def _request(self, db: Database, episode: str) -> contact_store.TaskRow:
        return await request_contact_research_resume(
            db, dedupe_key=self.intent_key(episode), job_id=self.task.job_id,
            halted_task_id=self.task.task_id, halted_run_id=self.halted_run_id,
            budget_episode=episode)


async def contact_halts(db: Database, limit: int = 1000) -> list[ContactHalt]:
    return [ContactHalt(task) for task in await reads.halted_contact_tasks(
        db, CONTACT_RESUMED_EVENT, limit)]
