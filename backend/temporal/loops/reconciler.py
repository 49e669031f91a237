"""The describe-based backstop: nothing stays "running" forever.

Normally every workflow records its own terminal event (finalize). When a worker was
killed, a run terminated from outside, or the dev server lost its history, the worker
compares each run the read model still shows as running with what Temporal reports for
that exact run and records the difference:

- closed in Temporal → the real terminal event (and the stages / discovery run that run
  still owned are released);
- not found → the provisional ``reconciled_not_found`` verdict; the run keeps being
  probed, and once Temporal has it again a ``recovered`` verdict puts it back to running
  or lets its real outcome follow. The provisional verdict stays in the timeline.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta

from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError, RPCStatusCode

from backend.domain import events as ev
from backend.domain.clock import to_iso, utc_now
from backend.llm.admission import release as release_reservation
from backend.projections.workflow_runs import (
    NOT_FOUND_STATUS,
    WorkflowRunRow,
    refresh_workflow_runs,
    row_from_record,
)
from backend.store import applications, passes, run_records, stages
from backend.store import contacts as contact_tasks
from backend.store import discovery as runs
from backend.store.db import Database
from backend.store.lifecycle import record_workflow_terminal
from backend.temporal.loops.recovered_history import (
    WORKER_CHECKS,
    HistoryChecks,
    backfill_cancel_requesters,
    backfill_requester,
    restore_cancel_requester,
)

log = logging.getLogger(__name__)

# A run younger than this may simply not have written its first events yet.
MIN_AGE = timedelta(seconds=30)

CLOSED_OUTCOME = {
    WorkflowExecutionStatus.COMPLETED: ("completed", None),
    WorkflowExecutionStatus.FAILED: ("failed", "workflow_failed"),
    WorkflowExecutionStatus.CANCELED: ("canceled", None),
    WorkflowExecutionStatus.TERMINATED: ("failed", "terminated"),
    WorkflowExecutionStatus.TIMED_OUT: ("failed", "timed_out"),
    WorkflowExecutionStatus.CONTINUED_AS_NEW: ("completed", None),
}


@dataclass
class ReconcileReport:
    probed: int = 0
    closed: list[str] = field(default_factory=list)
    not_found: list[str] = field(default_factory=list)
    recovered: list[str] = field(default_factory=list)
    restored_requesters: list[str] = field(default_factory=list)
    backfilled_requesters: list[str] = field(default_factory=list)  # temporal_history
    passes_completed: int = 0


async def open_runs(db: Database, *, older_than: timedelta = MIN_AGE) -> list[WorkflowRunRow]:
    # To the millisecond, as started_at is stored: a cutoff cut to the whole second left a
    # run started earlier in that same second out of a pass with ``older_than`` 0.
    cutoff = to_iso(utc_now() - older_than)
    records = await run_records.open_runs(db, started_before=cutoff,
                                          not_found_status=NOT_FOUND_STATUS)
    return [row_from_record(record) for record in records]


async def reconcile_runs(db: Database, client: Client, *, older_than: timedelta = MIN_AGE,
                         checks: HistoryChecks = WORKER_CHECKS) -> ReconcileReport:
    # The worker-side repair of the run list (rows lost behind the builder's back);
    # appends fold themselves, so this normally only reads.
    await refresh_workflow_runs(db)
    report = ReconcileReport()
    for row in await open_runs(db, older_than=older_than):
        report.probed += 1
        try:
            described = await client.get_workflow_handle(row.workflow_id,
                                                         run_id=row.run_id).describe()
        except RPCError as error:
            if (error.status == RPCStatusCode.NOT_FOUND and row.status == "running"
                    and await _verdict(db, row, "reconciled_not_found", None)):
                report.not_found.append(row.run_id)
            continue  # unreachable right now: probe again next time
        status = described.status
        if row.status == NOT_FOUND_STATUS:
            if await _verdict(db, row, "recovered", status.name.lower() if status else None):
                report.recovered.append(row.run_id)
                # Temporal facts of the lost window come back as recovered evidence.
                if await restore_cancel_requester(db, client, row):
                    report.restored_requesters.append(row.run_id)
        elif _cancel_requested(described) and await backfill_requester(db, client, row,
                                                                        checks):
            report.backfilled_requesters.append(row.run_id)  # asked outside JobCtrl
        if status in CLOSED_OUTCOME:
            await _record_closed(db, row, *CLOSED_OUTCOME[status])
            report.closed.append(row.run_id)
    # Who asked Temporal to cancel a run that ended canceled (the GET only reads it).
    report.backfilled_requesters += await backfill_cancel_requesters(db, client,
                                                                     checks=checks)
    async with db.transaction() as conn:
        # Downstream of an upstream that gave up is blocked, not waiting (rows stranded
        # before reconcile_failure did this, or by a run this pass just closed).
        await stages.block_stranded_downstream(conn)
        # Terminal reconciliation owns the enrichment_pass / pdf_render boundaries.
        report.passes_completed = await passes.settle_open_passes(conn)
    if report.closed or report.not_found or report.recovered:
        log.info("reconciled runs: %s closed, %s not found, %s recovered",
                 len(report.closed), len(report.not_found), len(report.recovered))
    return report


def _cancel_requested(described) -> bool:
    """Temporal's own flag: a cancel request reached this run (from any client)."""
    return bool(described.raw_description.workflow_extended_info.cancel_requested)


async def _verdict(db: Database, row: WorkflowRunRow, verdict: str,
                   observed: str | None) -> bool:
    """Recorded only while the run still shows the status this pass read (False: another
    pass got there first)."""
    return await run_records.record_verdict(
        db,
        ev.WorkflowReconciled(workflow_id=row.workflow_id, run_id=row.run_id,
                              workflow_type=row.workflow_type, verdict=verdict,
                              observed_status=observed),
        job_id=row.job_id, while_status=row.status)


async def _record_closed(db: Database, row: WorkflowRunRow, outcome: str,
                         error_code: str | None) -> None:
    """The terminal event the run never wrote, plus what it still owned."""
    async with db.transaction() as conn:
        await record_workflow_terminal(
            conn, workflow_id=row.workflow_id, run_id=row.run_id,
            workflow_type=row.workflow_type, outcome=outcome, error_code=error_code,
            job_id=row.job_id)
        # Stages the closed run still held are released (StageCanceled) for retry: its
        # own job's, or every selected job's for a batch run.
        # Its budget reservation too, or the ceiling would stay lowered for the day.
        await release_reservation(conn, row.run_id)
        owner = stages.Owner(row.workflow_id, row.run_id, 0)
        for job_id in [row.job_id] if row.job_id else await stages.jobs_owned_by_run(conn, row.run_id):
            await stages.cancel_owned(conn, job_id, owner)
        if row.workflow_type == "DiscoverWorkflow":
            await runs.close_run_after_workflow(
                conn, workflow_id=row.workflow_id, run_id=row.run_id, outcome=outcome,
                error_code=error_code)
        if row.workflow_type == "FollowUpEmailWorkflow":
            await applications.close_for_closed_run(
                conn, workflow_id=row.workflow_id, run_id=row.run_id, error_code=error_code)
        if row.workflow_type == "ContactResearchWorkflow":
            # The research task it still held is closed once, with a bounded code.
            await contact_tasks.close_for_closed_run(
                conn, workflow_id=row.workflow_id, run_id=row.run_id, outcome=outcome,
                error_code=error_code)

