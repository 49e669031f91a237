"""The run summary (desktop/presenters/operations.py) on recorded operations snapshots.

The Pipelines headline, its bar, the ETA words, the tray tooltip and the notifications all
come from ``ops.summarize``; these tests pin what it says for every state a real run goes
through (tests/desktop/fixtures/operations/, recorded from real runs) and the
contradictions the first-time user found (issue 15): a bar standing still while jobs were
being prepared, "Sources are done" next to "jobs are still being found", a stage-table
"Running 0" next to a busy worker, "Enrichment pass: waiting" next to a climbing Enrich.
"""

from __future__ import annotations

import copy
import os
import time
from datetime import UTC, datetime, timedelta

import pytest

from desktop.presenters import operations as ops
from tests.desktop.recorded_operations import STATES, recorded, recorded_series

EXPECTED = {  # fixture -> (state, headline, bar kind)
    "idle": ("idle", "Ready to find jobs", "none"),
    "worker-stopped-no-run": ("checking", "Checking whether anything is still running…",
                              "busy"),
    "discovering": ("discovering", "Finding jobs on 1 source", "busy"),
    "draining-sources-done": ("preparing", "Preparing 0 of 234 new jobs", "busy"),
    "draining-midway": ("preparing", "Preparing 115 of 234 new jobs", "value"),
    "draining-eta": ("preparing", "Preparing 228 of 234 new jobs · under a minute left",
                     "value"),
    "recovering-history": ("recovering", "Restoring this run's history…", "busy"),
    "completed": ("finished", "Discover finished: 234 new jobs", "value"),
    "failed": ("failed", "Discover failed", "none"),
    "canceled": ("canceled", "Discover canceled", "none"),
}


@pytest.fixture
def berlin_time():
    """Local time is Europe/Berlin (UTC+1 in December): the UTC spend-day reset is 01:00."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "Europe/Berlin"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_recorded_state_has_its_headline_and_bar(name):
    state, headline, bar = EXPECTED[name]
    summary = ops.summarize(recorded(name))
    assert (summary.state, summary.headline, summary.progress.kind) == (state, headline, bar)
    # The tray says the headline, never words of its own.
    assert summary.tray_text.startswith(summary.headline)
    # A bar without a number always says why.
    if summary.progress.kind == "busy":
        assert summary.progress.text


def test_every_state_of_the_state_table_is_recorded():
    assert set(STATES.values()) <= set(EXPECTED) | {"paused-budget"}


def test_budget_pause_says_when_it_resumes_in_local_time(berlin_time):
    summary = ops.summarize(recorded("paused-budget"))
    assert summary.state == "paused_budget"
    assert summary.headline == "Paused: today's budget is used up — resumes at 01:00"
    assert summary.detail.startswith("11 jobs wait for scoring and writing.")
    # The bar stands still because nothing moves, and says so.
    assert summary.progress.kind == "value" and summary.progress.text.startswith("Paused at")
    # The tray adds nothing that could contradict it.
    assert summary.tray_text == summary.headline
    notice = ops.budget_notice(recorded("paused-budget"))
    assert notice.title == "Paused: today's budget is used up"
    assert "wait until 01:00" in notice.text and notice.key == "budget:2026-12-01"


def test_a_budget_too_low_for_the_next_job_pauses_the_run_too(berlin_time):
    """The ceiling refuses a job whose estimate the budget left cannot cover: today's spend
    is below the ceiling, but jobs wait for it all the same. That is a pause, said as it
    is, never "Preparing 2 of 8" with nothing moving."""
    recorded_pause = recorded("paused-budget")
    short = {**recorded_pause, "budgetHaltedPreparations": 6,
             "budget": {**recorded_pause["budget"], "exhausted": False}}
    summary = ops.summarize(short)
    assert summary.state == "paused_budget"
    assert summary.headline == "Paused: today's budget can't cover the next job — resumes at 01:00"
    assert summary.tray_text == summary.headline
    assert ops.budget_notice(short).title == "Paused: today's budget can't cover the next job"
    assert ops.no_eta_words(short) == (
        "No time estimate yet: today's budget can't cover the next job")
    # Nothing refused and nothing used up: no pause.
    running = {**short, "budgetHaltedPreparations": 0}
    assert ops.summarize(running).state != "paused_budget"
    assert ops.budget_notice(running) is None


def test_the_bar_never_stands_still_while_work_moves_and_never_goes_back():
    """Over a whole recorded demo-board run: once the bar shows a number it moves with
    every step a job finishes, and it ends full."""
    values, done_before = [], None
    for snapshot in recorded_series():
        summary = ops.summarize(snapshot)
        counts = ops.selected_stage_counts(snapshot)
        done = sum(c["eligible"] - c["waiting"] - c["needsVerification"] for c in
                   counts.values()) + sum(c["processing"] for c in counts.values())
        if summary.progress.kind == "value":
            if values and done != done_before:
                assert summary.progress.fraction > values[-1], snapshot["generatedAt"]
            if values:
                assert summary.progress.fraction >= values[-1], snapshot["generatedAt"]
            values.append(summary.progress.fraction)
        else:
            # Before the totals are known: busy, not an empty bar that looks stuck.
            assert summary.progress.kind == "busy" and not values
        done_before = done
    assert len(values) >= 30 and values[-1] == 1.0
    assert values[0] < 0.1  # it starts near the beginning, not at a step of a coarse spine


def test_prepared_counts_only_grow_and_the_headline_follows_them():
    prepared = [ops.jobs_prepared(s) for s in recorded_series()]
    assert prepared == sorted(prepared) and prepared[-1] == 234
    midway = ops.summarize(recorded("draining-midway"))
    assert f"Preparing {ops.jobs_prepared(recorded('draining-midway'))} of 234" in midway.headline


def test_sources_done_is_never_next_to_jobs_still_being_found():
    """membership_open while draining: the run may still add earlier jobs (its backlog
    sweep closes membership last), so no surface says "still being found"."""
    for snapshot in [recorded("draining-midway"), *recorded_series()]:
        if ops.phase(snapshot) != "draining":
            continue
        summary = ops.summarize(snapshot)
        said = [summary.headline, summary.detail, summary.tray_text, summary.no_eta or "",
                ops.overall_eta_text(snapshot), *ops.stage_eta_reasons(snapshot)]
        assert not any("being found" in text for text in said), said
    discovering = ops.summarize(recorded("discovering"))
    assert discovering.no_eta == "No time estimate yet: jobs are still being found"


def test_the_worker_running_now_and_the_marked_rows_are_named_apart():
    """The stage table's Running counts rows recorded running in one scope; the worker's
    own inventory counts what it executes, across scopes and as of its last report — said
    so, so "Running 0" next to a busy worker no longer reads as a contradiction."""
    snapshot = next(s for s in recorded_series()
                    if (s.get("activeStageCounts") or {}).get("cover")
                    and not ops.selected_stage_counts(s)["cover"]["processing"])
    assert ops.active_stage_text(snapshot) == \
        "Working on now (every scope, at the worker's last report): Cover letter 1"
    assert "Working on now" in ops.COUNT_HINTS["processing"]


def test_a_final_check_that_runs_last_is_not_just_waiting():
    rows = dict(ops.reconciliation_lines(recorded("draining-midway")))
    assert rows["Final check of job details"] == "runs once every job is in"
    assert rows["Final check of PDFs"] == "runs once every job is in"
    assert dict(ops.reconciliation_lines(recorded("completed")))[
        "Final check of job details"] == "1 done"


def test_no_number_while_history_is_restored_and_no_idle_claim_without_proof():
    restoring = ops.summarize(recorded("recovering-history"))
    assert restoring.progress.fraction is None and restoring.eta is None
    assert "Counts and time estimates come back" in restoring.detail
    checking = ops.summarize(recorded("worker-stopped-no-run"))
    assert checking.detail.startswith("The worker has stopped")


def test_a_worker_that_stops_reporting_mid_run_stops_the_bar_and_says_why():
    snapshot = recorded("draining-midway")
    snapshot["capacity"]["freshness"] = {"state": "stale", "reason": "heartbeat_expired",
                                         "newestHeartbeatAt": snapshot["generatedAt"],
                                         "ageSeconds": 80}
    summary = ops.summarize(snapshot)
    assert summary.state == "waiting_for_worker"
    assert summary.headline == "Preparing 115 of 234 new jobs — waiting for the worker"
    assert summary.progress.kind == "none" and summary.progress.text == "Waiting for the worker"


@pytest.mark.parametrize(("low", "high", "words"), [
    (0, 60, "under a minute left"),
    (0, 180, "up to 3 min left"),
    (120, 180, "about 2–3 min left"),
    (3600, 7200, "about 1–2 h left"),
])
def test_eta_words(low, high, words):
    assert ops.eta_words({"state": "available", "lowSeconds": low, "highSeconds": high,
                          "confidence": "high"}) == words
    assert ops.eta_words({"state": "calibrating", "reason": "insufficient_samples"}) is None


def test_an_available_eta_is_in_the_headline_bar_and_tray_alike():
    snapshot = recorded("draining-midway")
    snapshot["overallEta"] = {"state": "available", "lowSeconds": 120, "highSeconds": 180,
                              "confidence": "medium"}
    summary = ops.summarize(snapshot)
    assert summary.headline == "Preparing 115 of 234 new jobs · about 2–3 min left"
    assert summary.eta == "about 2–3 min left" and summary.no_eta is None
    assert summary.tray_text == summary.headline
    assert ops.overall_eta_text(snapshot) == "Whole run: about 2–3 min left"


def test_run_end_notices_use_the_window_words():
    finished = ops.run_end_notice(recorded("completed"))
    summary = ops.summarize(recorded("completed"))
    assert (finished.title, finished.level) == ("Discover finished", "info")
    assert finished.text.startswith("234 new jobs.") and summary.detail in finished.text
    assert "12 jobs have a résumé and letter ready to review; 222 are below your fit " \
        "threshold." in finished.text
    failed = ops.run_end_notice(recorded("failed"))
    assert (failed.title, failed.level) == ("Discover failed", "critical")
    assert "could not be searched (its answer could not be read)" in failed.text
    assert ops.run_end_notice(recorded("canceled")).title == "Discover canceled"
    for live in ("discovering", "draining-midway", "paused-budget", "recovering-history",
                 "idle"):
        assert ops.run_end_notice(recorded(live)) is None, live
    assert ops.budget_notice(recorded("completed")) is None


def test_relative_times_are_counted_to_now():
    snapshot = recorded("draining-midway")
    beat = ops.parse_time(snapshot["capacity"]["freshness"]["newestHeartbeatAt"])
    assert ops.freshness_text(snapshot, beat + timedelta(seconds=1)) == \
        "Worker reporting (last report 1 s ago)"
    assert ops.freshness_text(snapshot, beat + timedelta(seconds=45)) == \
        "Worker reporting (last report 45 s ago)"
    generated = ops.parse_time(snapshot["generatedAt"])
    assert ops.updated_text(snapshot, generated + timedelta(seconds=4)) == "Updated 4 s ago"
    assert ops.updated_text(snapshot, generated + timedelta(minutes=3)) == "Updated 3 min ago"
    assert ops.seconds_ago_text(None, datetime.now(UTC)) is None


def test_loading_before_any_snapshot():
    summary = ops.summarize(None)
    assert summary.state == "loading" and summary.progress.kind == "busy"


def test_no_dispatch_at_the_start_of_a_run_is_not_minutes_of_silence():
    """Seen under a real X server: a fresh app's first run read "nothing has started in
    the last few minutes" six seconds in (no stage row had started yet)."""
    snapshot = recorded("draining-sources-done")
    snapshot["overallEta"] = {"state": "paused", "reason": "no_dispatch"}
    started = ops.parse_time(snapshot["execution"]["startedAt"])
    snapshot["generatedAt"] = (started + timedelta(seconds=6)).isoformat()
    assert ops.summarize(snapshot).no_eta == \
        "No time estimate yet: waiting for the first steps to start"
    snapshot["generatedAt"] = (started + timedelta(minutes=9)).isoformat()
    assert ops.summarize(snapshot).no_eta == \
        "No time estimate yet: nothing has started in the last few minutes"


def test_passing_states_are_polled_like_a_live_run():
    """Restoring history or not yet proven idle passes with no event to say so."""
    assert ops.poll_interval_ms(recorded("worker-stopped-no-run")) == 15_000
    assert ops.poll_interval_ms(recorded("recovering-history")) == 15_000
    assert ops.poll_interval_ms(recorded("idle")) == 60_000
    assert ops.poll_interval_ms(recorded("completed")) == 60_000


def test_too_few_samples_names_the_steps_not_the_jobs():
    """Seen under a real X server: "not enough finished jobs to learn from yet" beside
    "Preparing 39 of 40": only the few good fits had letters and PDFs made."""
    snapshot = recorded("draining-midway")
    snapshot["overallEta"] = {"state": "calibrating", "reason": "insufficient_samples",
                              "stages": ["cover", "pdf"]}
    assert ops.summarize(snapshot).no_eta == \
        "No time estimate yet: still measuring how long writing letters and making PDFs take"
    snapshot["overallEta"]["stages"] = ["pdf"]
    assert ops.summarize(snapshot).no_eta.endswith("how long making PDFs takes")
    snapshot["overallEta"]["stages"] = None
    assert ops.summarize(snapshot).no_eta.endswith("not enough finished jobs to learn from yet")


def test_a_run_without_a_good_fit_says_so_plainly():
    """Seen under a real X server: "0 jobs with a résumé and letter ready to review"."""
    summary = ops.summarize(recorded("completed-no-good-fit"))
    assert summary.headline == "Discover finished: 24 new jobs"
    assert summary.detail == ("None was a good enough fit to write for: all 24 are below "
                              "your fit threshold.")


def test_interrupted_preparations_are_said_until_the_worker_starts_them_again():
    """Issue 20: jobs whose preparation an infrastructure fault ended are named, never
    folded into a run that reads as finishing normally."""
    snapshot = {**recorded("draining-midway"), "interruptedPreparations": 2}
    summary = ops.summarize(snapshot)
    assert summary.state == "preparing"
    assert summary.detail.startswith("2 jobs will be retried: their preparation was interrupted.")
    assert "retried" not in ops.summarize(recorded("draining-midway")).detail


def test_an_open_run_with_every_job_prepared_says_it_is_finishing_not_preparing():
    """Seen under a real X server: "Preparing 40 of 40 new jobs — No time estimate yet:
    nothing is left to do" while the run's last checks still ran. Every job prepared and
    the run still open reads as the last checks, and the ETA's no_work as no wait."""
    snapshot = copy.deepcopy(recorded("draining-eta"))
    done = recorded("completed")
    snapshot["scopes"] = copy.deepcopy(done["scopes"])
    snapshot["overallEta"] = copy.deepcopy(done["overallEta"])  # withheld: no_work
    assert ops.phase(snapshot) == "draining"
    summary = ops.summarize(snapshot)
    assert summary.state == "preparing"
    assert summary.headline == "Finishing up: all 234 new jobs are prepared"
    assert summary.detail == "Nothing is left to prepare; the run ends after its last checks."
    assert "No time estimate" not in summary.tray_text and summary.tray_text.startswith(summary.headline)
