"""The reliability scenarios R01-R27 and the tests that prove them: the machine-readable
side of docs/reliability.md (tests/chaos/test_ledger.py keeps the two in step, and
scripts/chaos runs every file named here).

A scenario already proven by an integration test names that test instead of repeating
it; the new ones live in tests/chaos/."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Scenario:
    id: str
    title: str
    tests: tuple[str, ...]  # pytest node ids, relative to the repository root


CHAOS = "tests/chaos"
INTEGRATION = "tests/integration"

SCENARIOS = (
    Scenario("R01", "Worker killed in discovery", (
        f"{INTEGRATION}/test_jobspy_resume.py::test_a_killed_worker_resumes_only_unfinished_search_units",
    )),
    Scenario("R02", "Worker killed in enrich", (
        f"{CHAOS}/test_worker_kills.py::test_r02_worker_killed_after_committing_enrich_reuses_the_fetched_page",
    )),
    Scenario("R03", "Worker killed at the score commit", (
        f"{INTEGRATION}/test_paid_pipeline.py::test_a_worker_killed_after_committing_a_score_never_pays_twice",
    )),
    Scenario("R04", "Worker killed in tailor / cover", (
        f"{CHAOS}/test_paid_faults.py::test_r04_worker_killed_after_committing_materials_never_pays_twice",
    )),
    Scenario("R05", "Worker killed in PDF render", (
        f"{CHAOS}/test_worker_kills.py::test_r05_r19_worker_killed_at_the_pdf_commit_renders_each_generation_once[after-commit-pdf]",
    )),
    Scenario("R06", "Retries exhausted with no worker", (
        f"{CHAOS}/test_worker_kills.py::test_r06_a_worker_killed_at_every_attempt_ends_the_stage_exhausted",
    )),
    Scenario("R07", "API killed between a settings commit and its dispatch", (
        f"{CHAOS}/test_service_faults.py::test_r07_api_killed_between_a_settings_commit_and_its_dispatch",
        f"{INTEGRATION}/test_condition_preparation.py::test_a_crash_between_commit_and_start_is_recovered_at_startup",
    )),
    Scenario("R08", "Temporal stopped, restarted and its history lost", (
        f"{INTEGRATION}/test_supervision.py::test_restart_finds_jobs_events_and_temporal_history",
        f"{INTEGRATION}/test_reconciler.py::test_a_lost_history_is_provisional_and_recovers",
        f"{INTEGRATION}/test_recovered_history.py::test_a_recovered_run_restores_its_cli_requester_as_recovered_evidence",
    )),
    Scenario("R09", "Temporal unreachable before dispatch", (
        f"{CHAOS}/test_service_faults.py::test_r09_temporal_unreachable_refuses_dispatch_and_touches_nothing",
        f"{INTEGRATION}/test_history_repair.py::test_unreachable_history_is_retried_never_ready",
    )),
    Scenario("R10", "API restart with live SSE clients", (
        f"{CHAOS}/test_service_faults.py::test_r10_api_killed_with_live_sse_clients_who_miss_and_repeat_nothing",
    )),
    Scenario("R11", "Concurrent profile / settings edits", (
        f"{CHAOS}/test_policy_edits.py::test_r11_concurrent_profile_and_settings_edits_lose_nothing",
        f"{INTEGRATION}/test_condition_preparation.py::test_quick_changes_coalesce_only_revisions_that_never_started",
    )),
    Scenario("R12", "Provider timeout", (
        f"{CHAOS}/test_paid_faults.py::test_r12_a_provider_timeout_is_retried_and_the_lost_answer_is_not_billed",
    )),
    Scenario("R13", "Provider rate limit", (
        f"{CHAOS}/test_paid_faults.py::test_r13_a_rate_limit_waits_as_long_as_the_provider_asks",
        f"{INTEGRATION}/test_provider_failures.py::test_retried_500s_are_counted_for_the_exact_run",
    )),
    Scenario("R14", "Provider malformed output", (
        f"{INTEGRATION}/test_paid_pipeline.py::test_a_malformed_ledger_gets_one_repair_then_scores",
        f"{INTEGRATION}/test_paid_materials.py::test_a_letter_that_invents_is_rejected_then_repaired",
    )),
    Scenario("R15", "Exhausted budget", (
        f"{INTEGRATION}/test_paid_pipeline.py::test_the_ceiling_admits_only_runs_whose_cost_fits",
        f"{INTEGRATION}/test_budget_resume.py::test_raising_the_ceiling_resumes_them_and_each_paid_call_happens_once",
        f"{INTEGRATION}/test_model_switch_ceiling.py::test_switching_to_a_paid_model_mid_run_keeps_the_ceiling",
    )),
    Scenario("R16", "A capability failing then repaired", (
        f"{INTEGRATION}/test_exhausted_upstream.py::test_a_retry_of_enrich_resumes_the_blocked_job",
        f"{INTEGRATION}/test_paid_pipeline.py::test_a_provider_401_fails_fast_without_retries",
        f"{INTEGRATION}/test_condition_preparation.py::test_a_resolved_enrich_condition_resumes_exactly_its_jobs_once",
    )),
    Scenario("R17", "The renderer missing then restored", (
        f"{CHAOS}/test_worker_kills.py::test_r17_a_missing_renderer_fails_typed_then_a_retry_renders_once_restored",
    )),
    Scenario("R18", "SQLite locked", (
        f"{CHAOS}/test_paid_faults.py::test_r18_sqlite_locked_by_another_writer_while_a_paid_stage_commits",
    )),
    Scenario("R19", "A writer killed at commit points", (
        f"{CHAOS}/test_worker_kills.py::test_r05_r19_worker_killed_at_the_pdf_commit_renders_each_generation_once[in-commit-pdf]",
        f"{INTEGRATION}/test_apply.py::test_a_worker_killed_during_an_email_apply_never_sends_twice",
        f"{INTEGRATION}/test_budget_resume.py::test_an_intent_whose_start_was_lost_is_delivered_once_by_the_next_pass",
    )),
    Scenario("R20", "Supervisor restarted with stale listeners and orphan children", (
        f"{INTEGRATION}/test_supervision.py::test_killing_the_parent_leaves_no_orphans_and_the_next_start_works",
        f"{INTEGRATION}/test_supervision.py::test_a_taken_port_is_reported_clearly",
        f"{INTEGRATION}/test_supervision.py::test_a_second_instance_on_the_same_app_dir_is_refused",
        "tests/unit/test_runtime_helpers.py::test_reap_leftovers_terminates_a_recorded_live_child",
    )),
    Scenario("R21", "Restarts in varied orders", (
        f"{CHAOS}/test_restart_orders.py::test_r21_services_killed_in_turn_mid_run_lose_and_repeat_nothing",
    )),
    Scenario("R22", "A profile change over mixed scores", (
        f"{CHAOS}/test_policy_edits.py::test_r22_a_profile_change_over_mixed_scores_moves_exactly_the_crossing_jobs",
    )),
    Scenario("R23", "Cancel from the app and from the temporal CLI", (
        f"{INTEGRATION}/test_workflow_runs.py::test_cancel_from_the_api_is_idempotent_and_never_overwrites_the_result",
        f"{INTEGRATION}/test_workflow_runs.py::test_a_cancel_from_the_temporal_cli_is_backfilled_from_history",
        f"{INTEGRATION}/test_reconciler.py::test_a_run_terminated_outside_jobctrl_gets_its_real_outcome",
    )),
    Scenario("R24", "A provider that ignores cancel", (
        f"{CHAOS}/test_paid_faults.py::test_r24_a_provider_that_ignores_cancel_does_not_hold_the_run",
    )),
    Scenario("R25", "A stage failing past its repair budget", (
        f"{INTEGRATION}/test_paid_pipeline.py::test_a_ledger_malformed_after_its_repair_is_a_typed_failure_and_no_score",
        f"{INTEGRATION}/test_paid_materials.py::test_a_letter_still_inventing_after_its_repair_fails_typed_and_renders_nothing",
    )),
    Scenario("R26", "A score below the materials threshold", (
        f"{INTEGRATION}/test_preparation.py::test_only_jobs_at_or_above_the_threshold_get_materials",
        f"{INTEGRATION}/test_preparation.py::test_lowering_the_threshold_prepares_exactly_the_jobs_it_clears",
    )),
    Scenario("R27", "Every service killed during the demo board's fan-out, ten times", (
        f"{CHAOS}/test_demo_board_kills.py::test_r27_every_service_killed_during_the_demo_fan_out_loses_no_job",
    )),
)


def ledger_files() -> list[str]:
    """Every test file the ledger names, in ledger order (scripts/chaos runs whole files:
    an integration test may build on the tests before it in its module)."""
    files: list[str] = []
    for scenario in SCENARIOS:
        for node in scenario.tests:
            path = node.split("::", 1)[0]
            if path not in files:
                files.append(path)
    return files


if __name__ == "__main__":  # scripts/chaos: the files to run, one a line
    print("\n".join(ledger_files()))
