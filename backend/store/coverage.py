"""The coverage checkpoint (``projectionCoverage``) of one exact Discover execution.

A row of ``discovery_execution_recoveries`` proves that the execution's two canonical key
sets are complete:

* membership keys ``{job_id}|{cohort}`` — the rows of ``discovery_execution_jobs``;
* step keys ``{step_kind}|{item_key}`` — the rows of ``pipeline_step_projections``.

Where the step keys come from (native mode). The PipelineStep* events are the canonical
step writes, and every native writer appends them through
:func:`backend.store.step_events.append_step_event`; the projection builder folds the event
into ``pipeline_step_projections`` in the same transaction. So the projection's key set and the
event log's key set are equal at every native commit; the digest is taken over the
projection rows (the durable rows a reader serves), and every read additionally checks
that they still cover the distinct (stepKind, itemKey) pairs of the execution's events.
A projection row lost behind the builder's back is refolded from the log for that
execution before the proof is judged.

Digest algorithm ``coverage-digest-v1`` (shared with any other projection owner)::

    text = "members:{M}\\n" + "".join(k + "\\n" for k in sorted(member_keys))
         + "steps:{S}\\n"   + "".join(k + "\\n" for k in sorted(step_keys))
    digest = sha256(text.encode("utf-8")).hexdigest()      # 64 lowercase hex chars

with ``M`` / ``S`` the set sizes and keys sorted by code point (all keys are ASCII).

Native mode. ``plan_discovery`` opens the checkpoint ``ready``. While it is ready, every
membership link and every new step key advances it in the same SQLite transaction as the
canonical write (:func:`update_native_checkpoint`): the previous key set is reconstructed
from the current rows minus this transaction's delta and must hash to the stored digest;
only then is the new digest written. A mismatch means rows changed behind the proof's
back, and the checkpoint is downgraded to ``recovering`` instead of absorbing the change.
A failure of the proof update raises, rolling back the canonical write with it.
``recovering`` / ``retrying`` / ``incomplete`` rows and reconstructed checkpoints are never
touched by native writes: their expected sets belong to history reconciliation, which
publishes a verdict with :func:`prove_checkpoint`.

Reads (:func:`backend.projections.coverage.read_coverage`) revalidate a ready row's counts
and digest against the current durable rows every time and *report* a stale one as
``recovering`` (bounded code ``proof_mismatch``) without writing; the worker's repair pass
(:func:`backend.projections.coverage.persist_stale_verdicts`) persists that downgrade, which
selects it for repair. Row counts alone, terminal workflow state and runtime telemetry
never promote anything to ready.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import aiosqlite

from backend.domain.clock import utc_now_iso
from backend.store.db import Database, fetch_rows
from backend.store.step_events import STEP_EVENT_TYPES

DIGEST_ALGORITHM = "coverage-digest-v1"
NATIVE_DECODER_VERSION = 3
MODES = ("native", "reconstructed")
STATUSES = ("ready", "recovering", "retrying", "incomplete")
PROOF_MISMATCH = "proof_mismatch"
CHECKPOINT_MISSING = "checkpoint_missing"

COLUMNS = (
    "tenant_id", "discover_workflow_id", "discover_run_id", "decoder_version", "mode", "status",
    "history_event_watermark", "expected_members", "persisted_members", "expected_steps",
    "persisted_steps", "digest", "error_code", "checked_at",
)


class CoverageError(Exception):
    """A checkpoint write that the rules refuse (typed; never silently ignored)."""

    def __init__(self, code: str):
        super().__init__(code)
        self.code = code


@dataclass(frozen=True)
class Coverage:
    """One execution's checkpoint as a reader may report it."""

    tenant_id: str
    discover_workflow_id: str
    discover_run_id: str
    status: str                       # ready | recovering | retrying | incomplete
    mode: str | None                  # native | reconstructed (None: no checkpoint row)
    decoder_version: int | None
    history_event_watermark: int
    expected_members: int
    persisted_members: int
    expected_steps: int
    persisted_steps: int
    digest: str | None
    error_code: str | None
    checked_at: str | None
    downgraded: bool = False          # this read found a stale ready row (not persisted)

    @property
    def ready(self) -> bool:
        return self.status == "ready"

    def to_payload(self) -> dict[str, Any]:
        """camelCase fields for ``projectionCoverage`` (the reader picks per status)."""
        return {
            "status": self.status,
            "mode": self.mode,
            "decoderVersion": self.decoder_version,
            "historyEventWatermark": self.history_event_watermark,
            "expectedMembers": self.expected_members,
            "persistedMembers": self.persisted_members,
            "expectedSteps": self.expected_steps,
            "persistedSteps": self.persisted_steps,
            "errorCode": self.error_code,
            "checkedAt": self.checked_at,
        }


# --- keys and the digest -----------------------------------------------------------------


def member_key(job_id: str, cohort: str) -> str:
    return f"{job_id}|{cohort}"


def step_key(step_kind: str, item_key: str) -> str:
    return f"{step_kind}|{item_key}"


def canonical_digest(member_keys: Iterable[str], step_keys: Iterable[str]) -> str:
    """``coverage-digest-v1`` over the two key sets (duplicates collapse: they are sets)."""
    members = sorted(set(member_keys))
    steps = sorted(set(step_keys))
    text = (f"members:{len(members)}\n" + "".join(f"{key}\n" for key in members)
            + f"steps:{len(steps)}\n" + "".join(f"{key}\n" for key in steps))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


async def member_keys(conn, ref) -> set[str]:
    """The execution's member keys, read as one concatenated value: a large execution's
    keys cost one row, not thousands of row objects, on every revalidating read. A key
    that itself holds the separator (never a real JobId) falls back to reading rows."""
    key = (ref.tenant_id, ref.discover_workflow_id, ref.discover_run_id)
    (count, text), = await fetch_rows(
        conn,
        "SELECT COUNT(*), group_concat(job_id || '|' || cohort, char(10))"
        " FROM discovery_execution_jobs WHERE tenant_id = ?"
        " AND discover_workflow_id = ? AND discover_run_id = ?", key)
    parts = text.split("\n") if text else []
    if len(parts) == count:
        return set(parts)
    rows = await fetch_rows(
        conn,
        "SELECT job_id, cohort FROM discovery_execution_jobs WHERE tenant_id = ?"
        " AND discover_workflow_id = ? AND discover_run_id = ?", key)
    return {member_key(row[0], row[1]) for row in rows}


async def projected_step_keys(conn, ref) -> set[str]:
    rows = await fetch_rows(
        conn,
        "SELECT step_kind, item_key FROM pipeline_step_projections WHERE tenant_id = ?"
        " AND discover_workflow_id = ? AND discover_run_id = ?",
        (ref.tenant_id, ref.discover_workflow_id, ref.discover_run_id),
    )
    return {step_key(row[0], row[1]) for row in rows}


async def member_count(db: Database, ref) -> int:
    """``len(member_keys(...))`` without reading the keys: one member row per JobId (the
    primary key), so the row count is the key-set size."""
    row = await db.fetchone(
        "SELECT COUNT(*) FROM discovery_execution_jobs WHERE tenant_id = ?"
        " AND discover_workflow_id = ? AND discover_run_id = ?",
        (ref.tenant_id, ref.discover_workflow_id, ref.discover_run_id))
    return int(row[0])


async def step_count(db: Database, ref) -> int:
    """``len(projected_step_keys(...))``: one projection row per (stepKind, itemKey) of a
    run (the primary key)."""
    row = await db.fetchone(
        "SELECT COUNT(*) FROM pipeline_step_projections WHERE tenant_id = ?"
        " AND discover_workflow_id = ? AND discover_run_id = ?",
        (ref.tenant_id, ref.discover_workflow_id, ref.discover_run_id))
    return int(row[0])


_STEP_TYPE_MARKS = ",".join("?" * len(STEP_EVENT_TYPES))


async def event_step_keys(conn, ref) -> set[str]:
    """Distinct (stepKind, itemKey) of the execution's PipelineStep* events (the log)."""
    # Through the type index from the run's first event on: only the step events logged
    # since the execution began are read, not every event of the run (a Discover run
    # also owns one JobDiscovered per job) nor every step event of the whole history.
    rows = await fetch_rows(
        conn,
        "SELECT DISTINCT json_extract(payload_json, '$.stepKind'),"
        " json_extract(payload_json, '$.itemKey') FROM job_events INDEXED BY job_events_type"
        f" WHERE tenant_id = ? AND type IN ({_STEP_TYPE_MARKS})"
        " AND id >= (SELECT COALESCE(MIN(id), 0) FROM job_events"
        "   WHERE tenant_id = ? AND run_id = ?)"
        " AND run_id = ? AND json_extract(payload_json, '$.discoverWorkflowId') = ?",
        (ref.tenant_id, *STEP_EVENT_TYPES, ref.tenant_id, ref.discover_run_id,
         ref.discover_run_id, ref.discover_workflow_id),
    )
    return {step_key(row[0], row[1]) for row in rows if row[0] and row[1]}


# --- checkpoint rows ---------------------------------------------------------------------


def coverage_from_record(record: Any, *, downgraded: bool = False) -> Coverage:
    values = {column: record[index] for index, column in enumerate(COLUMNS)}
    return Coverage(**values, downgraded=downgraded)


async def read_checkpoint(conn, ref) -> Coverage | None:
    """The stored row as it is (no revalidation)."""
    rows = await fetch_rows(
        conn,
        f"SELECT {', '.join(COLUMNS)} FROM discovery_execution_recoveries"
        " WHERE tenant_id = ? AND discover_workflow_id = ? AND discover_run_id = ?",
        (ref.tenant_id, ref.discover_workflow_id, ref.discover_run_id),
    )
    return coverage_from_record(rows[0]) if rows else None


async def open_native_checkpoint(conn: aiosqlite.Connection, ref) -> Coverage:
    """Create the execution's native checkpoint ``ready`` over the rows that exist now
    (the Discover execution is just starting, so nothing is unexplained yet). A repeat
    (a retried ``plan_discovery``) leaves an existing row alone."""
    members = await member_keys(conn, ref)
    steps = await projected_step_keys(conn, ref)
    await conn.execute(
        f"INSERT INTO discovery_execution_recoveries ({', '.join(COLUMNS)})"
        f" VALUES ({','.join('?' * len(COLUMNS))}) ON CONFLICT DO NOTHING",
        (ref.tenant_id, ref.discover_workflow_id, ref.discover_run_id, NATIVE_DECODER_VERSION,
         "native", "ready", 0, len(members), len(members), len(steps), len(steps),
         canonical_digest(members, steps), None, utc_now_iso()),
    )
    return await read_checkpoint(conn, ref)


async def downgrade(conn: aiosqlite.Connection, ref, stored: Coverage, *, members: int,
                     steps: int, code: str = PROOF_MISMATCH) -> bool:
    """ready → recovering, compare-and-set on the digest this caller judged."""
    cursor = await conn.execute(
        "UPDATE discovery_execution_recoveries SET status = 'recovering', error_code = ?,"
        " persisted_members = ?, persisted_steps = ?, checked_at = ?"
        " WHERE tenant_id = ? AND discover_workflow_id = ? AND discover_run_id = ?"
        " AND status = 'ready' AND digest = ?",
        (code, members, steps, utc_now_iso(), ref.tenant_id, ref.discover_workflow_id,
         ref.discover_run_id, stored.digest),
    )
    return cursor.rowcount == 1


def still_proven(stored: Coverage, members: set[str], steps: set[str],
                 logged_steps: set[str]) -> bool:
    """A ready proof still holds: the rows cover the logged step keys and hash to it."""
    return logged_steps <= steps and matches(stored, members, steps)


def matches(stored: Coverage, members: set[str], steps: set[str]) -> bool:
    return (len(members) == stored.expected_members == stored.persisted_members
            and len(steps) == stored.expected_steps == stored.persisted_steps
            and canonical_digest(members, steps) == stored.digest)


async def update_native_checkpoint(
    conn: aiosqlite.Connection,
    ref,
    *,
    added_members: Iterable[str] = (),
    promoted_jobs: Iterable[str] = (),
    added_steps: Iterable[str] = (),
) -> str | None:
    """Advance a ready native checkpoint over this transaction's canonical writes.

    ``added_members`` are the member keys this transaction inserted, ``promoted_jobs`` the
    JobIds it promoted from ``existing_backlog`` to ``observed_this_run``, ``added_steps``
    the step keys whose first projection row it created. Call it inside the same
    transaction, after the writes. When the rows minus that delta do not hash to the
    stored proof, but the current rows already do (a lost row refolded from the log, a
    repeated write), the proof stands unchanged; otherwise the checkpoint is downgraded.
    Returns the resulting status, or None when there is no native ready checkpoint to
    advance (no row yet, reconstructed, or under repair)."""
    stored = await read_checkpoint(conn, ref)
    if stored is None or stored.mode != "native" or stored.status != "ready":
        return None
    added_members, added_steps = set(added_members), set(added_steps)
    promoted = set(promoted_jobs)
    members = await member_keys(conn, ref)
    steps = await projected_step_keys(conn, ref)
    before_members = (members - added_members
                      - {member_key(job, "observed_this_run") for job in promoted}
                      ) | {member_key(job, "existing_backlog") for job in promoted}
    before_steps = steps - added_steps
    proven = (len(before_members) == stored.expected_members == stored.persisted_members
              and len(before_steps) == stored.expected_steps == stored.persisted_steps
              and canonical_digest(before_members, before_steps) == stored.digest)
    if not proven:
        if matches(stored, members, steps):
            # The rows already are the proven sets (a row restored from the log, or a
            # repeated write): the proof stands as it is.
            return "ready"
        await downgrade(conn, ref, stored, members=len(members), steps=len(steps))
        return "recovering"
    if not (added_members or added_steps or promoted):
        return "ready"
    await conn.execute(
        "UPDATE discovery_execution_recoveries SET expected_members = ?, persisted_members = ?,"
        " expected_steps = ?, persisted_steps = ?, digest = ?, checked_at = ?"
        " WHERE tenant_id = ? AND discover_workflow_id = ? AND discover_run_id = ?"
        " AND status = 'ready' AND digest = ?",
        (len(members), len(members), len(steps), len(steps), canonical_digest(members, steps),
         utc_now_iso(), ref.tenant_id, ref.discover_workflow_id, ref.discover_run_id,
         stored.digest),
    )
    return "ready"


async def prove_checkpoint(
    conn: aiosqlite.Connection,
    ref,
    *,
    mode: str,
    decoder_version: int,
    history_event_watermark: int,
    expected_member_keys: Iterable[str],
    expected_step_keys: Iterable[str],
    failure_status: str = "recovering",
    error_code: str | None = None,
) -> Coverage:
    """Publish a reconciliation verdict (for history reconciliation, any mode): ``ready``
    only when the persisted key sets equal the expected ones exactly; otherwise
    ``failure_status`` (``recovering`` / ``retrying`` / ``incomplete``) with the expected
    and persisted counts and a bounded ``error_code``."""
    if mode not in MODES:
        raise CoverageError("invalid_mode")
    if failure_status not in ("recovering", "retrying", "incomplete"):
        raise CoverageError("invalid_status")
    if error_code is not None and len(error_code) > 64:
        raise CoverageError("unbounded_error_code")
    expected_members, expected_steps = set(expected_member_keys), set(expected_step_keys)
    members = await member_keys(conn, ref)
    steps = await projected_step_keys(conn, ref)
    ready = members == expected_members and steps == expected_steps
    status = "ready" if ready else failure_status
    code = error_code if ready else (error_code or PROOF_MISMATCH)
    await write_verdict(conn, ref, decoder_version=decoder_version, mode=mode, status=status,
                        history_event_watermark=history_event_watermark,
                        expected_members=len(expected_members), members=members,
                        expected_steps=len(expected_steps), steps=steps, error_code=code)
    return await read_checkpoint(conn, ref)


async def write_verdict(conn: aiosqlite.Connection, ref, *, decoder_version: int, mode: str,
                        status: str, history_event_watermark: int, expected_members: int,
                        members: Iterable[str], expected_steps: int, steps: Iterable[str],
                        error_code: str | None) -> None:
    """Insert or overwrite the execution's checkpoint row with one verdict: the persisted
    counts and the digest come from ``members`` / ``steps``, ``checked_at`` is now. The
    caller judged ``status``; this only writes it."""
    members, steps = set(members), set(steps)
    await conn.execute(
        f"INSERT INTO discovery_execution_recoveries ({', '.join(COLUMNS)})"
        f" VALUES ({','.join('?' * len(COLUMNS))})"
        " ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id) DO UPDATE SET"
        " decoder_version = excluded.decoder_version, mode = excluded.mode,"
        " status = excluded.status, history_event_watermark = excluded.history_event_watermark,"
        " expected_members = excluded.expected_members,"
        " persisted_members = excluded.persisted_members,"
        " expected_steps = excluded.expected_steps, persisted_steps = excluded.persisted_steps,"
        " digest = excluded.digest, error_code = excluded.error_code,"
        " checked_at = excluded.checked_at",
        (ref.tenant_id, ref.discover_workflow_id, ref.discover_run_id, decoder_version, mode,
         status, history_event_watermark, expected_members, len(members), expected_steps,
         len(steps), canonical_digest(members, steps), error_code, utc_now_iso()),
    )
