"""The worker's heartbeat loop: proof of life, slot usage and runtime telemetry.

A beat every 2 s writes exact slot totals plus the tracker's bounded active-work detail,
duration summaries and the latest task-queue observation. Telemetry can fail without
costing a beat: the beat is then written without detail (readers treat that row as not
schema-valid). Task-queue RPCs run in the observer's background task, never in the beat.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import socket
import uuid
from collections.abc import Callable

from backend.config import AppPaths
from backend.domain.clock import utc_now_iso
from backend.store.db import Database
from backend.store.heartbeats import HeartbeatTelemetry, WorkerIdentity, write_heartbeat
from backend.temporal.interceptors import ActivitySlotTracker
from backend.temporal.loops.task_queue import TaskQueueObserver

HEARTBEAT_INTERVAL_S = 2.0
log = logging.getLogger(__name__)


def worker_identity(paths: AppPaths, *, task_queue: str, namespace: str, slots: int) -> WorkerIdentity:
    return WorkerIdentity(
        worker_id=f"worker-{uuid.uuid4().hex[:12]}",
        pid=os.getpid(),
        hostname=socket.gethostname(),
        app_dir=str(paths.app_dir),
        database_path=str(paths.database),
        task_queue=task_queue,
        namespace=namespace,
        configured_slots=slots,
        started_at=utc_now_iso(),
    )


def collect_telemetry(
    tracker: ActivitySlotTracker, task_queues: TaskQueueObserver | None
) -> HeartbeatTelemetry | None:
    """This beat's detail, or None when it cannot be built (logged, never raised)."""
    try:
        telemetry = tracker.snapshot()
    except Exception:  # noqa: BLE001 - a telemetry bug must not stop the beats
        log.warning("activity telemetry failed; beating without detail", exc_info=True)
        return None
    if task_queues is None:
        return telemetry
    try:
        task_queues.maybe_refresh()
        observations = task_queues.snapshot()
    except Exception:  # noqa: BLE001
        log.warning("task-queue telemetry failed; keeping the last observation", exc_info=True)
        return telemetry
    return dataclasses.replace(telemetry, task_queues=observations)


async def heartbeat_loop(
    db: Database,
    identity: WorkerIdentity,
    tracker: ActivitySlotTracker,
    *,
    task_queues: TaskQueueObserver | None = None,
    interval_s: float = HEARTBEAT_INTERVAL_S,
    on_first_beat: Callable[[], object] | None = None,
) -> None:
    """Runs until cancelled; a failed write is logged and retried on the next beat.
    ``on_first_beat`` runs once, after the first beat was written (readiness)."""
    try:
        while True:
            try:
                telemetry = collect_telemetry(tracker, task_queues)
                await write_heartbeat(
                    db, identity, active_slots=tracker.active, telemetry=telemetry)
                if on_first_beat is not None:
                    on_first_beat()
                    on_first_beat = None
            except Exception:  # noqa: BLE001 - a missed beat must not kill the worker
                log.exception("heartbeat write failed")
            await asyncio.sleep(interval_s)
    finally:
        if task_queues is not None:
            await task_queues.aclose()
