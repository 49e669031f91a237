"""The coverage checkpoint's cheap key reads (bench/operations_scale.py) return exactly
the key sets of a plain row-by-row read: member keys read as one concatenated value
(including the fallback for a key that holds the separator), and the logged step keys
read through the type index from the run's first event on, with other runs' step events
interleaved before and after. Real migrated SQLite file."""

from __future__ import annotations

import json

from backend.store import coverage
from backend.temporal.contracts import DiscoveryExecutionRef

REF = DiscoveryExecutionRef(tenant_id="local", discover_workflow_id="discover-local",
                            discover_run_id="disc-2")
NOW = "2026-01-01T00:00:00.000Z"


async def _event(conn, kind: str, run_id: str | None, payload: dict) -> None:
    await conn.execute(
        "INSERT INTO job_events (tenant_id, type, workflow_id, run_id, payload_json,"
        " created_at) VALUES ('local', ?, 'discover-local', ?, ?, ?)",
        (kind, run_id, json.dumps(payload), NOW))


def _step(run_id: str, kind: str, item: str, workflow_id: str = "discover-local") -> dict:
    return {"discoverWorkflowId": workflow_id, "discoverRunId": run_id, "stepKind": kind,
            "itemKey": item, "attempt": 1}


async def test_member_keys_equal_the_rows_with_and_without_the_fallback(db):
    async with db.transaction() as conn:
        for number, cohort in enumerate(["observed_this_run", "existing_backlog"] * 30):
            await conn.execute(
                "INSERT INTO discovery_execution_jobs (tenant_id, discover_workflow_id,"
                " discover_run_id, job_id, cohort, linked_at) VALUES ('local', ?, ?, ?, ?, ?)",
                (REF.discover_workflow_id, REF.discover_run_id, f"job-{number:03d}", cohort,
                 NOW))
        await conn.execute(  # another execution's member is not this one's key
            "INSERT INTO discovery_execution_jobs (tenant_id, discover_workflow_id,"
            " discover_run_id, job_id, cohort, linked_at) VALUES ('local', 'discover-local',"
            " 'disc-1', 'job-other', 'observed_this_run', ?)", (NOW,))
    expected = {f"job-{n:03d}|{c}"
                for n, c in enumerate(["observed_this_run", "existing_backlog"] * 30)}
    assert await coverage.member_keys(db, REF) == expected
    async with db.transaction() as conn:
        await conn.execute(
            "INSERT INTO discovery_execution_jobs (tenant_id, discover_workflow_id,"
            " discover_run_id, job_id, cohort, linked_at) VALUES ('local', ?, ?,"
            " 'odd\nid', 'existing_backlog', ?)", (REF.discover_workflow_id,
                                                    REF.discover_run_id, NOW))
    assert await coverage.member_keys(db, REF) == expected | {"odd\nid|existing_backlog"}
    async with db.transaction() as conn:
        await conn.execute("DELETE FROM discovery_execution_jobs")
    assert await coverage.member_keys(db, REF) == set()


async def test_logged_step_keys_equal_a_scan_of_every_event(db):
    async with db.transaction() as conn:
        await _event(conn, "PipelineStepQueued", "disc-1", _step("disc-1", "source_planning",
                                                                 "planning"))
        await _event(conn, "WorkflowStarted", "disc-2", {"runId": "disc-2"})
        await _event(conn, "PipelineStepQueued", "disc-2", _step("disc-2", "source_planning",
                                                                 "planning"))
        await _event(conn, "JobDiscovered", "disc-2", {"jobId": "job-1"})
        await _event(conn, "PipelineStepStarted", "disc-1", _step("disc-1", "source_family",
                                                                  "family:demo"))
        await _event(conn, "PipelineStepCompleted", "disc-2",
                     _step("disc-2", "source_family", "family:demo"))
        await _event(conn, "PipelineStepFailed", "disc-2",
                     _step("disc-2", "source_family", "family:broad"))
        # The same run id under another workflow id is not this execution's step.
        await _event(conn, "PipelineStepQueued", "disc-2",
                     _step("disc-2", "pdf_render", "pdf", workflow_id="other"))
        await _event(conn, "PipelineStepQueued", "disc-3", _step("disc-3", "sweep", "sweep"))
    assert await coverage.event_step_keys(db, REF) == {
        "source_planning|planning", "source_family|family:demo", "source_family|family:broad"}
    rows = await db.fetchall("SELECT type, run_id, payload_json FROM job_events")
    direct = {f"{p['stepKind']}|{p['itemKey']}" for kind, run_id, text in rows
              if kind in coverage.STEP_EVENT_TYPES and run_id == "disc-2"
              and (p := json.loads(text))["discoverWorkflowId"] == "discover-local"}
    assert await coverage.event_step_keys(db, REF) == direct
    empty = DiscoveryExecutionRef(tenant_id="local", discover_workflow_id="discover-local",
                                  discover_run_id="nothing")
    assert await coverage.event_step_keys(db, empty) == set()
