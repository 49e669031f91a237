"""The worker's history repair of Discover executions whose coverage is not proven.

Each pass first revalidates the newest ``ready`` checkpoints
(:func:`backend.projections.coverage.persist_stale_verdicts`): a read only *reports* a stale
proof (a GET never writes), so this pass refolds the step rows the projection lost and
persists the ``ready → recovering`` downgrade of a proof that still fails.

Selected: checkpoints in ``recovering`` / ``retrying`` (a native proof downgraded by that
revalidation, or an earlier repair that could not finish), and Discover runs older than the
reconciler's minimum age that have no checkpoint row at all. ``ready`` rows are not
repaired, nor ``incomplete`` ones (a terminal audit state).

For each execution :func:`repair_execution` reads the exact workflow/run history (outside
the write lock), decodes it (``backend/temporal/loops/history_decoder.py``) and, in one
transaction:

1. refolds the execution's projection rows from its events (rows lost while the log kept
   the events come back);
2. merges the decoded PipelineStep* events through ``append_step_event`` — the native
   dedupe keys make every repeat a no-op, so a process killed during repair resumes
   without duplicates (and the transaction is all-or-nothing anyway);
3. restores the membership rows history proves but the database lost (see Membership);
4. when Temporal proves the workflow closed, appends the missing terminal of every step
   row still queued / running (``workflow_closed``, not retryable) and settles the
   ``enrichment_pass`` / ``pdf_render`` boundaries from the database;
5. publishes the verdict with ``coverage.prove_checkpoint`` in mode ``reconstructed``:
   ``ready`` only when the expected key sets from history equal the persisted ones.

Verdicts: ``ready``; ``recovering`` while the workflow still runs and the sets differ
(history is behind the native writes); ``retrying`` (bounded code) for a closed run whose
sets differ, an ambiguous or conflicting input, or a history Temporal cannot serve now —
``reconciled_not_found`` is provisional, so not-found is retried, never final;
``incomplete`` when the closed run's immutable history holds a payload this decoder cannot
read, so the missing lineage is not invented and not retried.

Membership. History proves the observed cohort (each family's returned job ids) and the
swept jobs the sweep fan-out planned. A proven member whose ``discovery_execution_jobs``
row is missing (the process died between the job upsert and the link, or the row was lost)
is linked again through the native writer, ``lineage.link_jobs``, with its proven cohort,
so migration 0013's triggers count it in the execution's cohort totals. Only missing rows
are inserted; an existing row keeps its cohort, so a repeat is a no-op. A proven member
whose job row does not exist in ``jobs`` is not invented: it stays a mismatch and the
verdict is ``retrying`` with ``member_job_missing``. Swept jobs planned ``not_eligible``
are not in the history; those ``existing_backlog`` rows are accepted as recorded (a lost
one cannot be restored), but their count must equal the sweep step's own ``sweptCount``
when it recorded one.

Work plans (:func:`restore_plans`; the evidence rules are in the decoder's
``plan_evidence``). Only a member still ``pending`` gets a plan, through the native
``lineage.record_plan``: the native fan-out records its plans in the transaction that
completes its step, so a pending row history proves planned is a lost plan (a restored
row, or one restored by an earlier pass). It gets the exact required steps, the
``prep-{idempotencyKey}`` workflow id of the child the fan-out started, and
``planned_at`` = the completion time of the first fan-out that returned it — never the
repair time, which would hide the child's terminal events from
``passes.member_settlement`` (``created_at >= planned_at``) and keep a pass open. History
cannot carry a ``not_eligible`` reason, so a pending member a completed fan-out was asked
to plan but did not return, or whose fan-outs / child starts disagree, stays ``pending``
and the verdict is ``retrying`` with ``member_plan_unproven`` / ``member_plan_conflict``
on every pass (ambiguous provenance is refused, not guessed). A pending member of an
execution whose finalize failed gets ``failed`` / ``planning_failed`` at the finalize's
time, as the native finalize writes it. A member already planned that history proves with
a different plan, or that history proves planned while the row says otherwise, is a
``member_plan_conflict`` (the row is not changed: a planned plan is immutable).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import timedelta

from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from backend.domain import events as ev
from backend.domain.clock import utc_now
from backend.projections import pipeline_steps as steps
from backend.projections.coverage import persist_stale_verdicts
from backend.store import coverage, lineage, passes
from backend.store import discovery as runs
from backend.store.db import Database
from backend.store.jobs import existing_job_ids
from backend.temporal.contracts import DiscoveryExecutionRef
from backend.temporal.loops import history_decoder as decoder

log = logging.getLogger(__name__)

HISTORY_TIMEOUT_S = 8.0
MIN_AGE = timedelta(seconds=30)   # a younger run may not have written its first rows yet
PASS_LIMIT = 20                   # executions repaired per pass (oldest check first)

HISTORY_NOT_FOUND = "history_not_found"
HISTORY_UNAVAILABLE = "history_unavailable"
HISTORY_EMPTY = "history_empty"
HISTORY_IN_PROGRESS = "history_in_progress"
KEY_SET_MISMATCH = "key_set_mismatch"
BACKLOG_COUNT_MISMATCH = "backlog_count_mismatch"
MEMBER_JOB_MISSING = "member_job_missing"


class HistoryUnreadable(Exception):
    def __init__(self, code: str):
        super().__init__(code)
        self.code = code


@dataclass
class RepairReport:
    repaired: dict[str, str] = field(default_factory=dict)   # run id → resulting status
    revalidated: dict[str, str] = field(default_factory=dict)  # stale ready proofs judged


# --- selection ---------------------------------------------------------------------------


async def executions_needing_repair(db: Database, *, older_than: timedelta = MIN_AGE,
                                    limit: int = PASS_LIMIT) -> list[DiscoveryExecutionRef]:
    cutoff = (utc_now() - older_than).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    rows = await runs.executions_to_check(db, started_before=cutoff, limit=limit)
    return [DiscoveryExecutionRef(tenant_id=tenant_id, discover_workflow_id=workflow_id,
                                  discover_run_id=run_id)
            for tenant_id, workflow_id, run_id in rows]


# --- reading history ---------------------------------------------------------------------


async def fetch_history(client: Client, ref) -> list:
    """The exact run's history events; :class:`HistoryUnreadable` with a bounded code."""
    handle = client.get_workflow_handle(ref.discover_workflow_id, run_id=ref.discover_run_id)

    async def read() -> list:
        return [event async for event in
                handle.fetch_history_events(rpc_timeout=timedelta(seconds=5))]

    try:
        events = await asyncio.wait_for(read(), HISTORY_TIMEOUT_S)
    except RPCError as error:
        code = HISTORY_NOT_FOUND if error.status == RPCStatusCode.NOT_FOUND else HISTORY_UNAVAILABLE
        raise HistoryUnreadable(code) from None
    except Exception as error:  # noqa: BLE001 - timeouts, connection errors: retry later
        log.info("history of %s not readable (%s)", ref.discover_run_id, type(error).__name__)
        raise HistoryUnreadable(HISTORY_UNAVAILABLE) from None
    if not events:
        raise HistoryUnreadable(HISTORY_EMPTY)
    return events


# --- the repair --------------------------------------------------------------------------


async def repair_execution(db: Database, client: Client, ref) -> coverage.Coverage:
    """Repair one execution from its exact history and publish the verdict."""
    try:
        history = await fetch_history(client, ref)
    except HistoryUnreadable as error:
        async with db.transaction() as conn:
            return await _publish_unverified(conn, ref, "retrying", error.code)
    decoded = decoder.decode_history(ref, history, client.data_converter.payload_converter)
    async with db.transaction() as conn:
        return await _merge_and_prove(conn, ref, decoded)


async def _merge_and_prove(conn, ref, decoded: decoder.DecodedHistory) -> coverage.Coverage:
    await steps.refold_execution(conn, ref)
    for event in decoded.events:
        await steps.append_step_event(conn, event, tenant_id=ref.tenant_id)
    problems = list(decoded.problems)
    if decoded.unproven_terminals and await _terminals_persisted(conn, ref, decoded):
        problems.remove(decoder.AMBIGUOUS_SWEEP_FAILURE)
    if await restore_members(conn, ref, decoded):
        problems.append(MEMBER_JOB_MISSING)
    plan_problem = await restore_plans(conn, ref, decoded)
    if plan_problem:
        problems.append(plan_problem)
    if decoded.workflow_closed:
        ambiguous = {(kind, item) for kind, item, _ in decoded.unproven_terminals}
        await _close_open_steps(conn, ref, decoded.workflow_closed_at, skip=ambiguous)
        await passes.settle_passes(conn, ref)
    expected_members = await _expected_members(conn, ref, decoded)
    if expected_members is None:
        problems.append(BACKLOG_COUNT_MISMATCH)
        expected_members = await coverage.member_keys(conn, ref)
    if problems:
        status = ("incomplete" if decoded.workflow_closed
                  and decoder.UNDECODABLE_PAYLOAD in problems else "retrying")
        return await _publish_unverified(
            conn, ref, status, problems[0], watermark=decoded.watermark,
            expected_members=len(expected_members), expected_steps=len(decoded.step_keys))
    equal = (expected_members == await coverage.member_keys(conn, ref)
             and decoded.step_keys == await coverage.projected_step_keys(conn, ref))
    # A running workflow's history may lag the native writes: still recovering. A closed
    # one's immutable history disagreeing with the rows is a conflict: retried.
    mismatch = KEY_SET_MISMATCH if decoded.workflow_closed else HISTORY_IN_PROGRESS
    return await coverage.prove_checkpoint(
        conn, ref, mode="reconstructed", decoder_version=decoder.DECODER_VERSION,
        history_event_watermark=decoded.watermark, expected_member_keys=expected_members,
        expected_step_keys=decoded.step_keys,
        failure_status="retrying" if decoded.workflow_closed else "recovering",
        error_code=None if equal else mismatch)


async def _terminals_persisted(conn, ref, decoded: decoder.DecodedHistory) -> bool:
    """Whether native events already prove the terminal history could not attribute."""
    for kind, item, attempt in decoded.unproven_terminals:
        row = await steps.load_row(conn, ref.tenant_id, ref.discover_run_id, kind, item)
        if row is None or row.attempt < attempt or not row.terminal:
            return False
    return True


async def _close_open_steps(conn, ref, closed_at: str, *, skip: set) -> None:
    """The closed workflow's steps still queued / running get their missing terminal."""
    for row in await steps.list_steps(conn, ref):
        if (row.terminal or row.step_kind in decoder.PASS_KINDS
                or (row.step_kind, row.item_key) in skip):
            continue
        await steps.append_step_event(conn, ev.PipelineStepFailed(
            discover_workflow_id=ref.discover_workflow_id, discover_run_id=ref.discover_run_id,
            step_kind=row.step_kind, item_key=row.item_key, attempt=row.attempt,
            error_code=decoder.WORKFLOW_CLOSED_CODE, retryable=False, occurred_at=closed_at,
        ), tenant_id=ref.tenant_id)


async def restore_members(conn, ref, decoded: decoder.DecodedHistory) -> set[str]:
    """Link every member history proves whose membership row is missing and whose job row
    exists. Returns the proven JobIds left unlinked because their job row is gone."""
    # An observation outranks a sweep plan, as the native link promotes backlog rows.
    proven = dict.fromkeys(decoded.backlog_planned_job_ids, "existing_backlog")
    proven.update(dict.fromkeys(decoded.observed_job_ids, "observed_this_run"))
    present = await lineage.read_members(conn, ref, proven)
    missing = sorted(job for job in proven if job not in present)
    if not missing:
        return set()
    existing = await existing_job_ids(conn, ref.tenant_id, missing)
    for cohort in lineage.COHORTS:
        restore = [job for job in missing if job in existing and proven[job] == cohort]
        if restore:
            await lineage.link_jobs(conn, ref, restore, cohort)
            log.info("history repair of %s restored %d %s member(s)",
                     ref.discover_run_id, len(restore), cohort)
    return set(missing) - existing


async def restore_plans(conn, ref, decoded: decoder.DecodedHistory) -> str | None:
    """Give every ``pending`` member the plan history proves (see Work plans). Returns the
    bounded code of the first member whose plan history refuses to prove, else None."""
    problem = None
    restored = 0
    for job_id, member in sorted((await lineage.read_members(conn, ref)).items()):
        proven = decoded.plans.get(job_id)
        if member.plan_state != "pending":
            if proven is not None and (
                    member.plan_state != "planned"
                    or member.required_steps != proven.required_steps
                    or member.preparation_workflow_id != proven.prep_workflow_id):
                problem = problem or decoder.PLAN_CONFLICT
            continue
        if job_id in decoded.unproven_plans:
            problem = problem or decoded.unproven_plans[job_id]
        elif proven is not None:
            await lineage.record_plan(conn, ref, job_id, "planned", proven.required_steps,
                                      proven.prep_workflow_id, planned_at=proven.planned_at)
            restored += 1
        elif decoded.planning_failed_at is not None:
            await lineage.record_plan(conn, ref, job_id, "failed", reason="planning_failed",
                                      planned_at=decoded.planning_failed_at)
            restored += 1
    if restored:
        log.info("history repair of %s restored %d work plan(s)", ref.discover_run_id,
                 restored)
    return problem


async def _expected_members(conn, ref, decoded: decoder.DecodedHistory) -> set[str] | None:
    """History's observed cohort and planned swept jobs, plus the recorded swept rows history
    cannot name (planned not_eligible); None when those contradict the sweep's own count."""
    observed = decoded.observed_job_ids
    expected = {coverage.member_key(job, "observed_this_run") for job in observed}
    backlog = {job for job in decoded.backlog_planned_job_ids if job not in observed}
    recorded = await lineage.cohort_job_ids(conn, ref, "existing_backlog")
    backlog |= {job_id for job_id in recorded if job_id not in observed}
    sweep = await steps.load_row(conn, ref.tenant_id, ref.discover_run_id,
                                 "existing_backlog_sweep", decoder.SWEEP_KEY)
    swept = sweep.counts.get("sweptCount") if sweep and sweep.status == "succeeded" else None
    if swept is not None and swept != len(backlog):
        return None
    return expected | {coverage.member_key(job, "existing_backlog") for job in backlog}


async def _publish_unverified(conn, ref, status: str, code: str, *, watermark: int | None = None,
                              expected_members: int | None = None,
                              expected_steps: int | None = None) -> coverage.Coverage:
    """A verdict that proves nothing (``retrying`` / ``incomplete``): never ``ready``. An
    existing row keeps its mode, watermark and expected counts unless history gave new ones."""
    stored = await coverage.read_checkpoint(conn, ref)
    members = await coverage.member_keys(conn, ref)
    step_keys = await coverage.projected_step_keys(conn, ref)
    values = {
        "decoder_version": decoder.DECODER_VERSION if watermark is not None or stored is None
        else stored.decoder_version,
        "mode": "reconstructed" if watermark is not None or stored is None else stored.mode,
        "history_event_watermark": watermark if watermark is not None
        else (stored.history_event_watermark if stored else 0),
        "expected_members": expected_members if expected_members is not None
        else (stored.expected_members if stored else 0),
        "expected_steps": expected_steps if expected_steps is not None
        else (stored.expected_steps if stored else 0),
    }
    await coverage.write_verdict(conn, ref, status=status, members=members, steps=step_keys,
                                 error_code=code, **values)
    return await coverage.read_checkpoint(conn, ref)


# --- the pass ----------------------------------------------------------------------------


async def repair_histories(db: Database, client: Client, *, older_than: timedelta = MIN_AGE,
                           limit: int = PASS_LIMIT) -> RepairReport:
    """One repair pass (the worker runs it before accepting work and on every heartbeat)."""
    report = RepairReport()
    # A stale ready proof is persisted as recovering here, so it is selected just below.
    report.revalidated = await persist_stale_verdicts(db)
    for ref in await executions_needing_repair(db, older_than=older_than, limit=limit):
        result = await repair_execution(db, client, ref)
        report.repaired[ref.discover_run_id] = result.status
        if result.error_code == HISTORY_UNAVAILABLE:
            break  # Temporal is unreachable: the others would wait for the same timeout
    if report.repaired or report.revalidated:
        log.info("history repair: %s (stale ready proofs: %s)", report.repaired,
                 report.revalidated)
    return report
