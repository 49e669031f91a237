"""Runtime capacity on the real stack: while a demo Discover prepares jobs, worker heartbeats
carry allowlisted active items with safe references and a supported task-queue observation
with pollers; once the worker stops, the reader reports capacity as not fresh, with nulls."""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3

import pytest

from backend.config import PREP_TASK_QUEUE, TASK_QUEUE
from backend.operations.capacity import read_capacity
from backend.store.db import Database
from backend.store.heartbeats import ACTIVITY_STAGE
from backend.supervision.supervisor import Supervisor
from desktop.client import ApiClient
from tests.api_http import api_http
from tests.app_db import connect_db
from tests.integration.conftest import write_settings

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

SAFE_WORKFLOW = re.compile(r"^(discover-local|prep-job_[0-9a-f]{24}|apply-auto-local|op_[0-9a-f]{16})$")
SAFE_RUN = re.compile(r"^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|op_[0-9a-f]{16})$")

PROFILE = {
    "name": "Ada Example",
    "email": "ada@example.org",
    "headline": "Backend engineer",
    "targetTitles": ["Backend Engineer", "Platform Engineer"],
    "locations": ["Berlin", "Remote"],
    "remotePreference": "remote_or_hybrid",
    "skills": ["Python", "PostgreSQL", "Kubernetes", "AWS"],
    "resumeText": "Ada Example\nBackend engineer with eight years of Python.\n\nEXPERIENCE\n"
                  "- Built a PostgreSQL-backed billing platform\n",
}


def raw_heartbeats(database) -> list[dict]:
    conn = connect_db(f"file:{database}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        return [dict(row) for row in conn.execute(
            "SELECT * FROM worker_runtime_heartbeats WHERE state = 'running'")]
    finally:
        conn.close()


async def test_heartbeats_report_active_work_and_task_queues_then_go_stale(tmp_path):
    app_dir = tmp_path / "app"
    write_settings(app_dir)
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    db = await Database.open(supervisor.paths.database, run_migrations=False)
    api = ApiClient.from_runtime(supervisor.info)
    http = api_http(supervisor.info)
    try:
        assert (await http.put("/v1/profile", json=PROFILE)).status_code == 200
        await api.run_stage("discover")

        seen_items = None
        seen_queue = None
        for _ in range(600):
            for row in raw_heartbeats(supervisor.paths.database):
                if row["telemetry_schema"] != 1:
                    continue
                items = json.loads(row["active_items_json"])
                # Nothing but kinds, stages, safe references, attempts and times.
                blob = row["active_items_json"] + (row["task_queue_json"] or "")
                assert "http" not in blob and str(app_dir) not in blob and "Ada" not in blob
                if items and seen_items is None:
                    seen_items = (items, row)
                queues = json.loads(row["task_queue_json"] or "{}")
                prep = queues.get(PREP_TASK_QUEUE, {})
                if prep.get("state") == "supported" and prep["pollers"]["activity"] >= 1:
                    seen_queue = queues
            if seen_items and seen_queue:
                break
            await asyncio.sleep(0.2)
        assert seen_items, "no heartbeat showed active work"
        assert seen_queue, "no supported task-queue observation with pollers"

        items, row = seen_items
        assert row["active_items_total"] >= len(items) and len(items) <= 20
        assert bool(row["active_items_truncated"]) == (row["active_items_total"] > len(items))
        assert row["active_slots"] >= row["active_items_total"]
        for entry in items:
            assert set(entry) == {"activityType", "stage", "workflowRef", "runRef", "attempt",
                                  "startedAt"}
            assert ACTIVITY_STAGE[entry["activityType"]] == entry["stage"]
            assert SAFE_WORKFLOW.match(entry["workflowRef"]), entry
            assert SAFE_RUN.match(entry["runRef"]), entry
        started = [entry["startedAt"] for entry in items]
        assert started == sorted(started)
        stage_counts = json.loads(row["stage_counts_json"])
        assert sum(stage_counts.values()) == row["active_items_total"]

        prep = seen_queue[PREP_TASK_QUEUE]
        assert prep["pollers"]["workflow"] >= 0  # approximate: recent pollers only
        for key in ("approximateBacklogCount", "approximateBacklogAgeSeconds", "tasksAddRate",
                    "tasksDispatchRate"):
            assert prep[key] is not None and prep[key] >= 0
        assert seen_queue[TASK_QUEUE]["state"] in ("supported", "stale", "unavailable")

        live = await read_capacity(db, database_path=supervisor.paths.database)
        assert live.freshness.state == "fresh" and live.task_queue == TASK_QUEUE
        assert live.workers == 1 and live.configured_slots == 12
        assert live.active_stage_counts is not None and live.active_items_total is not None
        assert live.task_queues[PREP_TASK_QUEUE].state in ("supported", "stale")

        await supervisor.service("worker").stop()
        stopped = await read_capacity(db, database_path=supervisor.paths.database)
        assert stopped.freshness.state != "fresh"
        assert stopped.freshness.reason == "worker_stopped"
        assert stopped.active_stage_counts is None and stopped.active_items_total is None
        assert stopped.configured_slots is None and stopped.active_slots is None
        assert {o.state for o in stopped.task_queues.values()} == {"stale"}
        assert all(o.approximate_backlog_count is None for o in stopped.task_queues.values())
    finally:
        await http.aclose()
        await api.close()
        await db.close()
        await supervisor.stop()
