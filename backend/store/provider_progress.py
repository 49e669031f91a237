"""The latest provider traversal observation per broad-board family and exact Discover
execution (table ``discovery_provider_progress``), and its operations read.

Writes are ordered by (activity attempt, sequence): a newer observation replaces the row,
a stale attempt's late write or an out-of-order repeat changes nothing. Reads accept a row
only for the exact (workflow id, run id) pair of the selected execution and only while
that family's ``source_family`` step is running: a terminal step omits it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from backend.domain.provider_progress import ProviderProgress, StampedProviderProgress

_COLUMNS = ("discover_workflow_id", "discover_run_id", "family", "attempt", "sequence",
            "provider", "phase", "unit", "completed_units", "total_units", "raw_items_seen",
            "emitted_jobs", "continuation", "observed_at")


async def record_provider_progress(conn, tenant_id: str,
                                   stamped: StampedProviderProgress) -> bool:
    """Insert or replace the family's latest observation; True when this one was kept."""
    value = stamped.progress
    cursor = await conn.execute(
        f"INSERT INTO discovery_provider_progress (tenant_id, {', '.join(_COLUMNS)})"
        f" VALUES ({', '.join('?' * (len(_COLUMNS) + 1))})"
        " ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, family) DO UPDATE SET"
        " attempt = excluded.attempt, sequence = excluded.sequence,"
        " provider = excluded.provider, phase = excluded.phase, unit = excluded.unit,"
        " completed_units = excluded.completed_units, total_units = excluded.total_units,"
        " raw_items_seen = excluded.raw_items_seen, emitted_jobs = excluded.emitted_jobs,"
        " continuation = excluded.continuation, observed_at = excluded.observed_at"
        # Only a strictly newer (attempt, sequence) replaces the stored observation.
        " WHERE (excluded.attempt, excluded.sequence)"
        "   > (discovery_provider_progress.attempt, discovery_provider_progress.sequence)",
        (tenant_id, stamped.discover_workflow_id, stamped.discover_run_id, stamped.family,
         stamped.attempt, stamped.sequence, value.provider, value.phase, value.unit,
         value.completed_units, value.total_units, value.raw_items_seen, value.emitted_jobs,
         value.continuation, stamped.observed_at),
    )
    return cursor.rowcount > 0


def _stamped(record) -> StampedProviderProgress:
    return StampedProviderProgress(
        discover_workflow_id=record["discover_workflow_id"],
        discover_run_id=record["discover_run_id"], family=record["family"],
        attempt=record["attempt"], sequence=record["sequence"],
        observed_at=record["observed_at"],
        progress=ProviderProgress(
            provider=record["provider"], phase=record["phase"], unit=record["unit"],
            completed_units=record["completed_units"], total_units=record["total_units"],
            raw_items_seen=record["raw_items_seen"], emitted_jobs=record["emitted_jobs"],
            continuation=record["continuation"]),
    )


async def read_provider_progress(db, tenant_id: str, discover_workflow_id: str,
                                 discover_run_id: str) -> list[StampedProviderProgress]:
    """Every family's latest observation for this exact execution, newest first."""
    records = await db.fetchall(
        f"SELECT {', '.join(_COLUMNS)} FROM discovery_provider_progress WHERE tenant_id = ?"
        " AND discover_workflow_id = ? AND discover_run_id = ?"
        " ORDER BY observed_at DESC, family",
        (tenant_id, discover_workflow_id, discover_run_id),
    )
    return [_stamped(record) for record in records]


def select_provider_progress(observations: Iterable[StampedProviderProgress], *,
                             discover_workflow_id: str, discover_run_id: str,
                             running_families: set[str]) -> dict[str, Any] | None:
    """``sourceFamilies.providerProgress``: the newest observation that belongs to the
    exact selected execution and to a family whose source step is still running."""
    accepted = [o for o in observations
                if o.matches(discover_workflow_id, discover_run_id)
                and o.family in running_families]
    if not accepted:
        return None
    latest = max(accepted, key=lambda o: (o.observed_at, o.attempt, o.sequence))
    return {
        "discoverWorkflowId": latest.discover_workflow_id,
        "discoverRunId": latest.discover_run_id,
        "family": latest.family,
        **latest.progress.model_dump(by_alias=True),
        "observedAt": latest.observed_at,
    }
