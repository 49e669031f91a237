"""``discovery_execution_jobs``: the immutable lineage of one exact Discover execution.

Every job an execution touches is one row keyed by the execution's
:class:`~backend.temporal.contracts.DiscoveryExecutionRef` (tenant, Discover workflow id,
Temporal run id) plus its stable JobId, in one of two cohorts:

* ``observed_this_run`` — a source of this execution observed the job;
* ``existing_backlog`` — the execution deliberately swept pre-existing eligible work.

Linking rules (:func:`link_job` / :func:`link_jobs`): the first link inserts the row
(plan state ``pending``); an observation promotes an ``existing_backlog`` row to
``observed_this_run`` in place — one membership, never a second one, never a demotion.

Planning rules (:func:`record_plan`): ``pending`` and ``failed`` do not mean "no work";
``planned`` records the immutable required-step list and the child preparation workflow
id; ``not_eligible`` records a bounded reason. Once planned, the plan never changes: the
same plan again is a no-op, a different one raises :class:`PlanConflict`. ``planned_at``
is when the plan was recorded; history repair may pass the time Temporal proves instead.

Every write that changes the membership key set advances the execution's native coverage
checkpoint in the same transaction (:func:`backend.store.coverage.update_native_checkpoint`).
All functions run inside the caller's write transaction.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import aiosqlite

from backend.domain.clock import parse_iso, to_iso, utc_now_iso
from backend.domain.stages import STAGES
from backend.store import coverage
from backend.store.db import fetch_rows

Cohort = Literal["observed_this_run", "existing_backlog"]
PlanState = Literal["pending", "failed", "planned", "not_eligible"]
COHORTS: tuple[Cohort, ...] = ("observed_this_run", "existing_backlog")
PLAN_STATES: tuple[PlanState, ...] = ("pending", "failed", "planned", "not_eligible")

# Bounded reasons a linked job is not planned (not_eligible) or its planning failed.
NOT_ELIGIBLE_REASONS = frozenset({
    "already_prepared",      # every stage is done (succeeded / skipped)
    "preparation_active",    # a stage is queued / running, or a preparation run is open
    "user_skipped",          # the user skipped the job
    "user_applied",          # the user already applied
    "blocked_by_robots",     # Enrich is blocked by robots.txt (ENRICH_ROBOTS_DISALLOWED)
    "blocked_low_confidence",  # Enrich produced a low-confidence posting
    "below_min_fit_score",   # scored below the configured minimum fit
    "profile_missing",       # Score/Tailor/Cover wait for a candidate profile
    "blocked",               # another lasting block
    "job_missing",           # the job row is gone
})
FAILED_REASONS = frozenset({"planning_failed", "fanout_failed"})

_COLUMNS = (
    "job_id", "cohort", "plan_state", "required_steps_json", "preparation_workflow_id",
    "not_eligible_reason", "linked_at", "planned_at",
)


class LineageError(Exception):
    """A lineage write the rules refuse. ``code`` is bounded."""

    code = "lineage_error"

    def __init__(self, detail: str = ""):
        super().__init__(detail or self.code)


class PlanConflict(LineageError):
    """A different plan for a job whose plan is already ``planned`` (immutable)."""

    code = "plan_conflict"


class UnknownMember(LineageError):
    """A plan for a job that is not linked to this execution."""

    code = "lineage_missing"


class InvalidLineage(LineageError):
    """An unknown cohort, plan state, stage or reason."""

    code = "lineage_invalid"


@dataclass(frozen=True)
class Member:
    job_id: str
    cohort: str
    plan_state: str
    required_steps: tuple[str, ...] | None
    preparation_workflow_id: str | None
    not_eligible_reason: str | None
    linked_at: str
    planned_at: str | None


@dataclass(frozen=True)
class LinkResult:
    inserted: tuple[str, ...] = ()   # JobIds linked for the first time
    promoted: tuple[str, ...] = ()   # JobIds promoted existing_backlog → observed_this_run

    @property
    def changed(self) -> bool:
        return bool(self.inserted or self.promoted)


def _member(record) -> Member:
    steps = json.loads(record[3]) if record[3] else None
    return Member(record[0], record[1], record[2], tuple(steps) if steps is not None else None,
                  record[4], record[5], record[6], record[7])


def _key(ref) -> tuple[str, str, str]:
    return (ref.tenant_id, ref.discover_workflow_id, ref.discover_run_id)


async def read_members(conn, ref, job_ids: Iterable[str] | None = None) -> dict[str, Member]:
    """The execution's rows (all, or the given JobIds), by JobId."""
    sql = (f"SELECT {', '.join(_COLUMNS)} FROM discovery_execution_jobs"
           " WHERE tenant_id = ? AND discover_workflow_id = ? AND discover_run_id = ?")
    if job_ids is None:
        return {row[0]: _member(row) for row in await fetch_rows(conn, sql, _key(ref))}
    wanted = list(dict.fromkeys(job_ids))
    found: dict[str, Member] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start : start + 500]
        rows = await fetch_rows(conn, sql + f" AND job_id IN ({','.join('?' * len(chunk))})",
                               (*_key(ref), *chunk))
        found.update((row[0], _member(row)) for row in rows)
    return found


async def link_jobs(
    conn: aiosqlite.Connection, ref, job_ids: Sequence[str], cohort: Cohort
) -> LinkResult:
    """Link many jobs to the execution in one go (one checkpoint update)."""
    if cohort not in COHORTS:
        raise InvalidLineage(f"unknown cohort {cohort!r}")
    wanted = list(dict.fromkeys(job_ids))
    if not wanted:
        return LinkResult()
    existing = await read_members(conn, ref, wanted)
    now = utc_now_iso()
    inserted = [job_id for job_id in wanted if job_id not in existing]
    promoted = [job_id for job_id in wanted if job_id in existing
                and cohort == "observed_this_run"
                and existing[job_id].cohort == "existing_backlog"]
    if inserted:
        await conn.executemany(
            "INSERT INTO discovery_execution_jobs (tenant_id, discover_workflow_id,"
            " discover_run_id, job_id, cohort, plan_state, linked_at)"
            " VALUES (?, ?, ?, ?, ?, 'pending', ?)",
            [(*_key(ref), job_id, cohort, now) for job_id in inserted],
        )
    if promoted:
        await conn.executemany(
            "UPDATE discovery_execution_jobs SET cohort = 'observed_this_run'"
            " WHERE tenant_id = ? AND discover_workflow_id = ? AND discover_run_id = ?"
            " AND job_id = ? AND cohort = 'existing_backlog'",
            [(*_key(ref), job_id) for job_id in promoted],
        )
    result = LinkResult(inserted=tuple(inserted), promoted=tuple(promoted))
    if result.changed:
        await coverage.update_native_checkpoint(
            conn, ref,
            added_members=[coverage.member_key(job_id, cohort) for job_id in inserted],
            promoted_jobs=promoted,
        )
    return result


async def link_job(conn: aiosqlite.Connection, ref, job_id: str, cohort: Cohort) -> str:
    """Link one job. Returns ``inserted``, ``promoted`` or ``unchanged`` (already a member:
    a backlog link never demotes an observed row, a repeat is a no-op)."""
    result = await link_jobs(conn, ref, [job_id], cohort)
    if result.inserted:
        return "inserted"
    return "promoted" if result.promoted else "unchanged"


def _validate_plan(state: str, required_steps: Sequence[str] | None,
                   prep_workflow_id: str | None, reason: str | None) -> None:
    if state not in PLAN_STATES:
        raise InvalidLineage(f"unknown plan state {state!r}")
    if state == "planned":
        if not required_steps or not prep_workflow_id:
            raise InvalidLineage("a planned job needs its required steps and workflow id")
        unknown = [step for step in required_steps if step not in STAGES]
        if unknown or len(set(required_steps)) != len(required_steps):
            raise InvalidLineage("required steps must be distinct known stages")
        if reason is not None:
            raise InvalidLineage("a planned job has no not-eligible reason")
    elif state == "not_eligible":
        if reason not in NOT_ELIGIBLE_REASONS:
            raise InvalidLineage(f"unbounded not-eligible reason {reason!r}")
    elif state == "failed":
        if reason not in FAILED_REASONS:
            raise InvalidLineage(f"unbounded planning failure reason {reason!r}")
    elif reason is not None:
        raise InvalidLineage("a pending job has no reason")


def _validate_time(moment: str) -> None:
    """A stored time must sort with ``utc_now_iso`` values (``…T…:…:….mmmZ``)."""
    try:
        valid = to_iso(parse_iso(moment)) == moment
    except ValueError:
        valid = False
    if not valid:
        raise InvalidLineage(f"planned_at {moment!r} is not a UTC millisecond timestamp")


async def record_plan(
    conn: aiosqlite.Connection,
    ref,
    job_id: str,
    state: PlanState,
    required_steps: Sequence[str] | None = None,
    prep_workflow_id: str | None = None,
    reason: str | None = None,
    planned_at: str | None = None,
) -> str:
    """Record the work plan of one linked job. Returns ``recorded`` or ``unchanged``.

    ``planned`` is immutable: repeating the same plan is a no-op, anything else raises
    :class:`PlanConflict`. Other states may be replaced (a not-eligible job may become
    planned in a later fan-out of the same execution).

    ``planned_at`` defaults to now (the native fan-out records its plan as it decides it);
    history repair passes the time Temporal proves the plan existed, because a later stamp
    would hide the preparation's terminal events from ``passes.member_settlement``."""
    _validate_plan(state, required_steps, prep_workflow_id, reason)
    if planned_at is not None:
        if state == "pending":
            raise InvalidLineage("a pending job has no plan time")
        _validate_time(planned_at)
    current = (await read_members(conn, ref, [job_id])).get(job_id)
    if current is None:
        raise UnknownMember(job_id)
    steps = tuple(required_steps) if state == "planned" else None
    workflow_id = prep_workflow_id if state == "planned" else None
    if current.plan_state == "planned":
        if (state == "planned" and current.required_steps == steps
                and current.preparation_workflow_id == workflow_id):
            return "unchanged"
        raise PlanConflict(job_id)
    if (current.plan_state == state and current.required_steps == steps
            and current.preparation_workflow_id == workflow_id
            and current.not_eligible_reason == reason):
        return "unchanged"
    await conn.execute(
        "UPDATE discovery_execution_jobs SET plan_state = ?, required_steps_json = ?,"
        " preparation_workflow_id = ?, not_eligible_reason = ?, planned_at = ?"
        " WHERE tenant_id = ? AND discover_workflow_id = ? AND discover_run_id = ?"
        " AND job_id = ?",
        (state, json.dumps(list(steps)) if steps is not None else None, workflow_id, reason,
         (planned_at or utc_now_iso()) if state != "pending" else None, *_key(ref), job_id),
    )
    return "recorded"


async def fail_pending_plans(conn: aiosqlite.Connection, ref, reason: str = "planning_failed"
                             ) -> int:
    """A failed execution: members still ``pending`` get plan state ``failed`` (they still
    need work; this execution will not plan them). Returns how many."""
    if reason not in FAILED_REASONS:
        raise InvalidLineage(f"unbounded planning failure reason {reason!r}")
    cursor = await conn.execute(
        "UPDATE discovery_execution_jobs SET plan_state = 'failed', not_eligible_reason = ?,"
        " planned_at = ? WHERE tenant_id = ? AND discover_workflow_id = ?"
        " AND discover_run_id = ? AND plan_state = 'pending'",
        (reason, utc_now_iso(), *_key(ref)),
    )
    return cursor.rowcount


async def cohort_job_ids(conn, ref, cohort: Cohort) -> list[str]:
    rows = await fetch_rows(
        conn,
        "SELECT job_id FROM discovery_execution_jobs WHERE tenant_id = ?"
        " AND discover_workflow_id = ? AND discover_run_id = ? AND cohort = ?"
        " ORDER BY linked_at, job_id",
        (*_key(ref), cohort),
    )
    return [row[0] for row in rows]


async def membership_counts(conn, ref) -> dict[tuple[str, str], int]:
    """``{(cohort, plan_state): count}`` for one execution (for the operations reader)."""
    rows = await fetch_rows(
        conn,
        "SELECT cohort, plan_state, COUNT(*) FROM discovery_execution_jobs"
        " WHERE tenant_id = ? AND discover_workflow_id = ? AND discover_run_id = ?"
        " GROUP BY cohort, plan_state",
        _key(ref),
    )
    return {(row[0], row[1]): int(row[2]) for row in rows}
