"""The Pipelines and Runs presenters: plain functions over API-shaped dicts."""

from __future__ import annotations

import copy
from datetime import date, timedelta, timezone

import pytest

from desktop.presenters import operations as ops
from desktop.presenters import runs

BLOCK = {"eligible": 234, "waiting": 146, "processing": 2, "succeeded": 0, "skipped": 0,
         "blocked": 88, "failed": 0, "exhausted": 0, "canceled": 0, "needsVerification": 1,
         "stale": 0, "unknown": 0}


def snapshot(**changes) -> dict:
    """A snapshot shaped like the real API's answer mid-run (a draining demo-board run)."""
    base = {
        "generatedAt": "2026-11-29T11:23:20.000Z",
        "etaEstimatorVersion": "pipeline-eta-v1",
        "execution": {"discoverWorkflowId": "discover-local", "discoverRunId": "run-1",
                      "workflowStatus": "in_progress", "phase": "draining",
                      "startedAt": "2026-11-29T11:23:14.346Z", "finishedAt": None,
                      "membershipOpen": True},
        "projectionCoverage": {"status": "ready", "mode": "native", "decoderVersion": 3,
                               "expectedMembers": 234, "persistedMembers": 234,
                               "errorCode": None},
        "scopes": {scope: {stage: dict(BLOCK) for stage in ops.STAGES} for scope in ops.SCOPES},
        "sourceFamilies": {"planned": 2, "succeeded": 1, "failed": 0, "remaining": 1,
                           "progressCurrent": 1, "progressTotal": 4,
                           "families": [{"family": "demo_board", "status": "succeeded",
                                         "newJobs": 234, "existingJobs": 0},
                                        {"family": "gh-acme", "status": "waiting"}],
                           "recoveredUnits": None, "providerProgress": None},
        "reconciliation": {
            "enrichment_pass": {"status": "waiting"},
            "preparation_fanout": [{"status": "queued"}, {"status": "succeeded"}],
            "existing_backlog_sweep": [{"status": "queued"}]},
        "capacity": {"freshness": {"state": "fresh", "reason": "fresh_heartbeat",
                                   "ageSeconds": 0.4},
                     "configuredSlots": 12, "activeSlots": 3, "availableSlots": 9,
                     "taskQueues": {
                         "jobctrl-local": {"state": "supported", "approximateBacklogCount": 124,
                                           "approximateBacklogAgeSeconds": 4.06,
                                           "pollers": {"workflow": 1, "activity": 1}},
                         "jobctrl-local-prep": {"state": "unavailable",
                                                "reason": "not_observed_yet"}}},
        "activeStageCounts": {"discover": 0, "enrich": 2, "score": 1},
        "activeItems": [],
        "activeItemsTotal": 3,
        "activeItemsTruncated": False,
        "overallEta": {"state": "calibrating", "reason": "membership_open"},
        "stageEtas": {"enrich": {"state": "available", "lowSeconds": 120, "highSeconds": 480,
                                 "confidence": "medium"}},
    }
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            base[key] = {**base[key], **value}
        else:
            base[key] = value
    return base


# --------------------------------------------------------------------------- phase, cancel


@pytest.mark.parametrize(("status", "phase", "allowed"), [
    ("in_progress", "discovering", True),
    ("in_progress", "draining", True),
    ("completed", "draining", False),     # closed but still draining: not cancelable
    ("in_progress", "completed", False),
    ("failed", "failed", False),
])
def test_cancel_only_while_in_progress_and_discovering_or_draining(status, phase, allowed):
    snap = snapshot(execution={"workflowStatus": status, "phase": phase})
    assert ops.can_cancel(snap) is allowed


def test_no_execution_means_no_cancel_and_idle_polling():
    snap = snapshot(execution=None, sourceFamilies=None, reconciliation=None)
    assert not ops.can_cancel(snap)
    assert ops.poll_interval_ms(snap) == 60_000
    assert ops.poll_interval_ms(snapshot()) == 15_000
    assert ops.poll_interval_ms(None) == 60_000


# --------------------------------------------------------------------------- recovery gate


@pytest.mark.parametrize(("active", "kind", "allowed"), [
    (0, "ready", True), (4, "remaining_work", False), (None, "inventory_unavailable", False),
])
def test_after_a_failure_a_new_run_needs_exactly_zero_active_items(active, kind, allowed):
    snap = snapshot(execution={"workflowStatus": "failed", "phase": "failed"},
                    activeItemsTotal=active)
    gate = ops.recovery_gate(snap)
    assert gate.kind == kind
    assert gate.allows_new_run is allowed
    assert (ops.discover_block_reason(snap) is None) is allowed
    if active == 4:
        assert "4 steps are still running" in gate.text


@pytest.mark.parametrize("execution", [
    {"workflowStatus": "completed", "phase": "completed_with_issues"},
    {"workflowStatus": "completed", "phase": "draining"},  # closed draining
])
def test_other_unsafe_endings_use_the_same_gate(execution):
    snap = snapshot(execution=execution, activeItemsTotal=None)
    assert ops.needs_recovery_gate(snap)
    assert ops.discover_block_reason(snap) is not None


def test_incomplete_history_uses_the_gate_and_a_clean_finish_does_not():
    incomplete = snapshot(execution={"workflowStatus": "completed", "phase": "completed"},
                          projectionCoverage={"status": "incomplete"}, activeItemsTotal=1)
    assert ops.recovery_gate(incomplete).kind == "remaining_work"
    done = snapshot(execution={"workflowStatus": "completed", "phase": "completed"},
                    activeItemsTotal=None)
    assert ops.recovery_gate(done).kind == "not_needed"
    assert ops.discover_block_reason(done) is None


def test_discover_is_blocked_while_a_run_is_in_progress():
    assert ops.discover_block_reason(snapshot()) == "A Discover run is already in progress"
    assert ops.discover_block_reason(None) is not None


# --------------------------------------------------------------------------- ETA


def test_eta_range_text_rounds_outward_and_names_the_confidence():
    assert ops.eta_text({"state": "available", "lowSeconds": 150, "highSeconds": 470,
                         "confidence": "high"}) == "2–8 min (high confidence)"
    assert ops.eta_text({"state": "available", "lowSeconds": 3000, "highSeconds": 7300,
                         "confidence": "low"}) == "0.5–2.5 h (low confidence)"
    assert ops.eta_text({"state": "available", "lowSeconds": 0, "highSeconds": 20,
                         "confidence": "medium"}) == "0–1 min (medium confidence)"


def test_withheld_eta_is_no_eta_plus_the_bounded_reason():
    assert ops.eta_text({"state": "paused", "reason": "budget_exceeded"}) == (
        "No ETA: today's budget is used up")
    # "paused" never reads as a workflow state, and no_dispatch is not a resumable command
    assert ops.eta_text({"state": "paused", "reason": "no_dispatch"}) == (
        "No ETA: nothing has started in the last few minutes")
    # membership_open in the phase's words
    open_ = {"state": "calibrating", "reason": "membership_open"}
    assert ops.eta_text(open_, "discovering") == "No ETA: jobs are still being found"
    assert ops.eta_text(open_, "draining") == "No ETA: the list of jobs is not final yet"
    assert ops.eta_text(None) == "No ETA: unknown"
    assert ops.eta_text({"state": "calibrating", "reason": "brand_new"}) == "No ETA: brand new"
    assert set(ops.ETA_REASONS) >= {"no_work", "worker_unavailable", "telemetry_stale",
                                    "coverage_not_ready", "budget_exceeded",
                                    "contention_unbounded", "no_dispatch", "membership_open",
                                    "insufficient_samples"}


# --------------------------------------------------------------------------- coverage rules


def test_restoring_history_hides_selected_run_numbers_but_keeps_runtime_facts():
    for status in ("recovering", "retrying"):
        snap = snapshot(projectionCoverage={"status": status})
        assert ops.history_restoring(snap)
        assert "being restored" in ops.coverage_text(snap)
        assert ops.scope_counts(snap, "current_execution") is None
        assert ops.scope_counts(snap, "execution_sweep") is None
        assert ops.scope_counts(snap, "global_outside_execution") is not None
        assert ops.summarize(snap).progress.fraction is None
        assert "%" not in ops.summarize(snap).progress.text
        assert ops.overall_eta_text(snap).startswith("No ETA")
        assert ops.stage_eta_rows(snap) == []
        assert all("new" not in line for line in ops.family_lines(snap))
        # worker, slot, queue and active-activity facts stay visible
        assert ops.slots_text(snap) == "Slots in use: 3 of 12"
        assert ops.active_items_text(snap) == "Active items: 3"
        assert ops.task_queue_lines(snap)


def test_ready_coverage_shows_counts_progress_and_stage_etas():
    snap = snapshot()
    assert ops.scope_counts(snap, "current_execution")["score"] == BLOCK
    assert ops.sources_text(snap) == "1 of 2 sources searched"
    assert ops.sources_text(snapshot(sourceFamilies={"failed": 1})) == \
        "2 of 2 sources searched (1 failed)"
    assert ops.stage_eta_rows(snap) == [("Enrich", "2–8 min (medium confidence)")]
    assert ops.scope_remaining(ops.scope_counts(snap, "current_execution")) == 5 * 149


def test_without_execution_coverage_never_claims_idle_or_ready():
    busy = snapshot(execution=None, projectionCoverage={"status": "recovering"})
    assert "Can't tell" in ops.coverage_text(busy)
    idle = snapshot(execution=None, projectionCoverage=None)
    assert ops.coverage_text(idle).startswith("No run selected")
    assert ops.scope_unavailable_text(idle, "current_execution") == "No Discover run yet."


def test_incomplete_coverage_shows_partial_evidence():
    snap = snapshot(projectionCoverage={"status": "incomplete", "persistedMembers": 7,
                                        "expectedMembers": None})
    assert "7 jobs recovered" in ops.coverage_text(snap)


# --------------------------------------------------------------------------- families


def test_resumed_units_and_provider_facts_keep_unknown_totals_unknown():
    snap = snapshot(sourceFamilies={"recoveredUnits": 3, "providerProgress": {
        "provider": "indeed", "phase": "searching", "unit": "page", "completedUnits": 4,
        "totalUnits": None, "rawItemsSeen": 80, "emittedJobs": 12, "continuation": "unknown"}})
    assert ops.resumed_text(snap) == "3 resumed"
    lines = ops.provider_lines(snap)
    assert lines[0] == "indeed: searching, 4 of unknown pages"
    assert "80 listings seen" in lines and "12 jobs passed on" in lines
    assert "Whether more results exist is unknown" in lines
    assert ops.resumed_text(snapshot()) is None
    assert ops.provider_lines(snapshot()) == []


def test_family_and_reconciliation_lines():
    snap = snapshot()
    assert ops.family_lines(snap) == ["demo_board: done — 234 new, 0 already known",
                                      "gh-acme: waiting"]
    assert ops.reconciliation_lines(snap) == [
        ("Final check of job details", "runs once every job is in"),
        ("Handing jobs to preparation", "1 queued, 1 done"),
        ("Picking up earlier jobs", "1 queued"),
    ]
    unknown = snapshot()
    unknown["reconciliation"] = {"enrichment_pass": {"status": "unknown"}}
    assert ops.reconciliation_lines(unknown)[0] == ("Final check of job details",
                                                    "unknown (no record)")
    assert ops.reconciliation_lines(unknown)[1] == ("Handing jobs to preparation", "unknown")
    with_pdf = snapshot(reconciliation={"pdf_render": [{"status": "running"}],
                                        "new_kind": {"status": "waiting"}})  # merged in
    assert ops.reconciliation_lines(with_pdf)[3:] == [("Final check of PDFs", "1 running"),
                                                      ("New kind", "waiting")]


# --------------------------------------------------------------------------- capacity


def test_unknown_capacity_is_unknown_with_its_reason_never_zero():
    snap = snapshot(capacity={"freshness": {"state": "unavailable", "reason": "no_heartbeat"},
                              "configuredSlots": None, "activeSlots": None, "taskQueues": {}},
                    activeItemsTotal=None, activeStageCounts=None)
    assert ops.slots_text(snap) == "Slots in use: unknown (no worker has reported yet)"
    assert ops.active_items_text(snap) == "Active items: unknown"
    assert ops.active_stage_text(snap) == "Working on now: unknown"
    assert "0" not in ops.slots_text(snap)


def test_task_queues_are_labeled_approximate():
    lines = ops.task_queue_lines(snapshot())
    assert lines[0] == ("jobctrl-local (approximate): backlog ~124, oldest ~4 s, "
                        "pollers 1 workflow / 1 activity")
    assert lines[1] == "jobctrl-local-prep (approximate): unavailable — not observed yet"
    assert ops.active_stage_text(snapshot()).endswith("last report): Enrich 2, Score 1")


def test_truncated_inventory_says_so():
    snap = snapshot(activeItemsTotal=31, activeItemsTruncated=True, activeItems=[{}] * 20)
    assert ops.active_items_text(snap) == "Active items: 31 (showing the oldest 20)"


def test_active_items_in_plain_words_with_the_rest_counted():
    items = [{"activityType": "score_job", "stage": "score", "attempt": 2,
              "startedAt": "2026-11-29T11:23:20.000Z"}] * 6
    lines = ops.active_item_lines(snapshot(activeItems=items, activeItemsTotal=31))
    assert len(lines) == 6
    assert lines[0].startswith("Scoring fit since ") and lines[0].endswith("(attempt 2)")
    assert lines[-1] == "…and 26 more"
    assert ops.active_item_lines(snapshot(activeItems=None, activeItemsTotal=None)) == []


def test_technical_rows_carry_ids_and_raw_codes():
    snap = snapshot(projectionCoverage={"status": "retrying", "errorCode": "history_timeout"})
    rows = dict(ops.technical_rows(snap))
    assert rows["Workflow id"] == "discover-local"
    assert rows["Run id"] == "run-1"
    assert rows["Coverage code"] == "history_timeout"
    assert rows["ETA reason code"] == "membership_open"


# --------------------------------------------------------------------------- runs


def test_runs_query_params_are_the_api_names_and_days_are_local_bounds():
    plus_two = timezone(timedelta(hours=2))
    query = runs.RunsQuery(status="failed", workflow_type="DiscoverWorkflow",
                           started_from=date(2026, 11, 1), started_to=date(2026, 11, 29))
    assert query.params(plus_two) == {
        "sort": "startedAt", "order": "desc", "limit": 50, "offset": 0, "status": "failed",
        "workflowType": "DiscoverWorkflow",
        "startedSince": "2026-10-31T22:00:00Z",   # local midnight, inclusive
        "startedBefore": "2026-11-29T22:00:00Z",  # the day after the last, exclusive
    }
    assert runs.RunsQuery().params() == {"sort": "startedAt", "order": "desc", "limit": 50,
                                         "offset": 0}


def test_paging_stays_in_range_and_a_filter_change_returns_to_page_one():
    query = runs.RunsQuery(limit=25)
    assert not query.has_previous() and query.has_next(60)
    third = query.next_page(60).next_page(60)
    assert third.offset == 50 and not third.has_next(60)
    assert third.next_page(60).offset == 50
    assert third.previous_page().offset == 25
    assert third.filtered(status="running").offset == 0
    assert runs.page_text(third, 60, 10) == "51–60 of 60"
    assert runs.page_text(query, 0, 0) == "No runs match"


def test_run_names_statuses_and_cancel_state():
    loop = {"workflowId": "apply-auto-local", "workflowType": "ApplyWorkflow",
            "displayName": "ApplyWorkflow", "status": "running", "cancelRequested": False}
    assert runs.run_name(loop) == "Standing apply loop"
    assert runs.cancel_state(loop) == "available"
    asked = {**loop, "cancelRequested": True}
    assert runs.status_text(asked) == "Cancellation requested"
    assert runs.cancel_state(asked) == "requested"
    done = {**asked, "status": "canceled"}
    assert runs.status_text(done) == "Canceled" and runs.cancel_state(done) == "terminal"


def test_durations_times_and_related_jobs():
    assert runs.duration_text(None) == "—"
    assert runs.duration_text(None, running=True) == "still running"
    assert runs.duration_text(2_345) == "2.3 s"
    assert runs.duration_text(125_000) == "2 min 05 s"
    assert runs.duration_text(3 * 3600_000 + 60_000) == "3 h 01 min"
    assert runs.local_time_text(None) == "—"
    assert runs.related_job_text({"relatedJob": None}) == "—"
    assert runs.related_job_text({"relatedJob": {"jobKey": "j", "title": "Designer",
                                                 "company": "Acme"}}) == "Designer · Acme"


def test_timeline_text_and_diagnostics():
    assert runs.timeline_text({"type": "StageBlocked", "stage": "score",
                               "reason": "profile_missing"}) == (
        "Score: blocked — no profile saved yet (Settings)")
    assert runs.timeline_text({"type": "StageSkipped", "stage": "tailor",
                               "reason": "below_min_fit_score"}) == (
        "Tailor: skipped — fit score below your minimum")
    assert runs.timeline_text({"type": "StageBlocked", "stage": "cover",
                               "reason": "something_new"}) == "Cover letter: blocked — something new"
    assert runs.timeline_text({"type": "WorkflowFailed", "errorCode": "budget_exceeded"}) == (
        "Run failed — today's budget is used up")
    assert runs.timeline_text({"type": "WorkflowCancellationRequested", "requester":
                               "local_operator", "sourceBoundary": "request_intent"}) == (
        "Cancellation requested by you")
    assert "the Temporal command line" in runs.timeline_text({
        "type": "WorkflowCancellationRequested", "requester": "temporal_cli",
        "sourceBoundary": "temporal_history"})
    failed = {"status": "failed", "failureDiagnostics": {
        "errorCode": "provider_unavailable", "automaticRetryable": False,
        "manualRecoveryAvailable": True}}
    assert runs.diagnostics_lines(failed) == [
        "Error: provider unavailable", "You can retry the failed stage from the job's page."]
    assert runs.diagnostics_lines({"status": "completed", "failureDiagnostics": {}}) == []


def test_run_technical_rows_hold_ids_and_raw_codes():
    run = {"workflowId": "prep-job_1", "runId": "r-1", "workflowType": "JobPreparationWorkflow",
           "technical": {"workflowId": "prep-job_1", "runId": "r-1",
                         "rawErrorCode": "budget_exceeded"},
           "timeline": [{"type": "StageBlocked", "reason": "profile_missing"}]}
    rows = dict(runs.technical_rows(copy.deepcopy(run)))
    assert rows["Raw error code"] == "budget_exceeded"
    assert rows["Timeline reason codes"] == "profile_missing"


def test_the_new_run_offer_never_claims_the_work_is_over():
    """Between two steps of a closed run's preparations nothing is in flight, yet the
    jobs are still being prepared; with the budget holding jobs a new run would not help:
    the gate opens, but says nothing. After a failure it offers the new run."""
    draining = snapshot(execution={"workflowStatus": "completed", "phase": "draining"},
                        activeItemsTotal=0)
    assert ops.recovery_gate(draining).allows_new_run
    assert ops.recovery_gate(draining).text == ""
    failed = snapshot(execution={"workflowStatus": "failed", "phase": "failed"},
                      activeItemsTotal=0)
    assert ops.recovery_gate(failed).text == (
        "Nothing is running now: you can start a new Discover run.")
