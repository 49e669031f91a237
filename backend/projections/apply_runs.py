"""``apply_run_projections``: one row per job's apply lifecycle, folded from Apply* events.

The fold is pure; the projection builder runs it in the same transaction as every Apply*
append (:func:`catch_up`, registered for those events: everything after the
``apply_runs`` watermark), so the claim rules can read it safely; it can also be rebuilt
from ``job_events`` at any time with :func:`rebuild_apply_runs`.

Fold rules:

* ``ApplyApproved`` stores the approval; a job not running or done becomes ``approved``.
* ``ApplyStarted`` makes the job ``in_progress`` and records the owning run.
* ``ApplyPacketReady`` parks it ``awaiting_manual_completion`` with the packet.
* ``ApplyAwaitingApproval`` gives the claim back and drops the (stale) approval.
* ``ApplySubmitted`` / ``ApplyMarkedApplied`` end at ``applied``; ``ApplyRejected`` at
  ``rejected``; ``ApplyFailed`` at ``failed`` with the code.
* ``ApplyCanceled`` only releases a live attempt (back to approved / awaiting approval);
  it never reopens a finished one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

import aiosqlite

from backend.config import TENANT_ID
from backend.projections import paging
from backend.store import projection_builder
from backend.store.db import Database
from backend.store.read_models import apply_runs as rows

APPLY_EVENT_TYPES = (
    "ApplyApproved", "ApplyRejected", "ApplyStarted", "ApplyAwaitingApproval",
    "ApplyPacketReady", "ApplySubmitted", "ApplyMarkedApplied", "ApplyFailed", "ApplyCanceled",
)
STATUSES = ("awaiting_approval", "approved", "in_progress", "awaiting_manual_completion",
            "applied", "rejected", "failed")
TERMINAL_STATUSES = frozenset({"applied", "rejected"})
NOT_STARTED = "awaiting_approval"  # a prepared job without any apply event


@dataclass(frozen=True)
class ApplyRunState:
    job_id: str
    status: str = NOT_STARTED
    target_kind: str | None = None
    packet: dict | None = None
    approval: dict | None = None
    failure_code: str | None = None
    park_reason: str | None = None
    dry_run: bool = False
    workflow_id: str | None = None
    run_id: str | None = None
    updated_at: str | None = None
    last_event_id: int = 0


def _released(state: ApplyRunState, **changes: Any) -> ApplyRunState:
    return replace(state, workflow_id=None, run_id=None, **changes)


def fold(state: ApplyRunState | None, job_id: str, event_type: str, payload: dict[str, Any],
         *, event_id: int, workflow_id: str | None = None,
         run_id: str | None = None) -> ApplyRunState:
    current = state or ApplyRunState(job_id=job_id)
    if event_id and event_id <= current.last_event_id:
        return current  # already folded
    stamped = replace(current, updated_at=payload.get("occurredAt") or current.updated_at,
                      last_event_id=max(event_id, current.last_event_id))
    return _apply(stamped, event_type, payload, workflow_id, run_id)


def _apply(state: ApplyRunState, event_type: str, p: dict[str, Any],
           workflow_id: str | None, run_id: str | None) -> ApplyRunState:
    if event_type == "ApplyApproved":
        approval = {"approvedAt": p.get("occurredAt"), "recipient": p.get("recipient"),
                    "attachments": list(p.get("attachments") or [])}
        if state.status in ("in_progress", *TERMINAL_STATUSES):
            return replace(state, approval=approval)
        return replace(state, status="approved", approval=approval, failure_code=None,
                       park_reason=None)
    if event_type == "ApplyRejected":
        return _released(state, status="rejected")
    if event_type == "ApplyStarted":
        return replace(state, status="in_progress", target_kind=p.get("targetKind"),
                       failure_code=None, park_reason=None, dry_run=False,
                       workflow_id=workflow_id, run_id=run_id)
    if event_type == "ApplyAwaitingApproval":
        return _released(state, status="awaiting_approval", approval=None,
                         park_reason=p.get("reason"))
    if event_type == "ApplyPacketReady":
        packet = {"targetUrl": p.get("targetUrl"), "resumePdf": p.get("resumePdf"),
                  "coverLetterPdf": p.get("coverLetterPdf"), "answers": p.get("answers") or {}}
        return _released(state, status="awaiting_manual_completion", packet=packet,
                         target_kind=p.get("targetKind"), dry_run=bool(p.get("dryRun")))
    if event_type in ("ApplySubmitted", "ApplyMarkedApplied"):
        return _released(state, status="applied", failure_code=None)
    if event_type == "ApplyFailed":
        return _released(state, status="failed", failure_code=p.get("errorCode"))
    if event_type == "ApplyCanceled":
        if state.status != "in_progress":
            return state
        return _released(state, status="approved" if state.approval else NOT_STARTED)
    return state


# --- rows ---------------------------------------------------------------------------------

COLUMNS = rows.COLUMNS  # the table's columns are the store's


def state_from_row(row) -> ApplyRunState:
    values = dict(zip(COLUMNS, row, strict=True))
    return ApplyRunState(
        job_id=values["job_id"], status=values["status"], target_kind=values["target_kind"],
        packet=json.loads(values["packet_json"]) if values["packet_json"] else None,
        approval=json.loads(values["approval_json"]) if values["approval_json"] else None,
        failure_code=values["failure_code"], park_reason=values["park_reason"],
        dry_run=bool(values["dry_run"]), workflow_id=values["workflow_id"],
        run_id=values["run_id"], updated_at=values["updated_at"],
        last_event_id=int(values["last_event_id"]))


def row_values(state: ApplyRunState) -> tuple:
    return (TENANT_ID, state.job_id, state.status, state.target_kind,
            json.dumps(state.packet) if state.packet is not None else None,
            json.dumps(state.approval) if state.approval is not None else None,
            state.failure_code, state.park_reason, int(state.dry_run), state.workflow_id,
            state.run_id, state.updated_at or "", state.last_event_id)


async def read_state(conn, job_id: str) -> ApplyRunState | None:
    row = await rows.read_row(conn, TENANT_ID, job_id)
    return state_from_row(row) if row else None


async def write_state(conn, state: ApplyRunState) -> None:
    await rows.write_row(conn, row_values(state))


WATERMARK_PREFIX = "apply_runs"
PAGE_SIZE = 500


async def _fold_one_page(conn: aiosqlite.Connection, tenant_id: str, page_size: int) -> bool:
    return await paging.fold_page_per_job(
        conn, tenant_id, watermark_name=f"{WATERMARK_PREFIX}:{tenant_id}",
        event_types=APPLY_EVENT_TYPES, page_size=page_size, read_state=read_state,
        fold_event=lambda state, event: fold(
            state, event.job_id, event.type, paging.payload_dict(event), event_id=event.id,
            workflow_id=event.workflow_id, run_id=event.run_id),
        write_state=write_state)


async def catch_up(conn: aiosqlite.Connection, tenant_id: str) -> None:
    """The registered fold: every Apply* event after the watermark, in ``conn``'s
    transaction (re-folding an already folded event changes nothing: ``last_event_id``)."""
    await paging.fold_to_end(conn, lambda c: _fold_one_page(c, tenant_id, PAGE_SIZE))


projection_builder.register(WATERMARK_PREFIX, APPLY_EVENT_TYPES, catch_up)


async def rebuild_apply_runs(db: Database) -> int:
    """Fold every Apply* event again from scratch; returns the number of jobs."""
    states: dict[str, ApplyRunState] = {}
    for event_id, event_type, job_id, workflow_id, run_id, payload_json in \
            await rows.job_events_of(db, TENANT_ID, APPLY_EVENT_TYPES):
        states[job_id] = fold(states.get(job_id), job_id, event_type, json.loads(payload_json),
                              event_id=event_id, workflow_id=workflow_id, run_id=run_id)
    await rows.replace_rows(db, TENANT_ID, [row_values(state) for state in states.values()])
    return len(states)
