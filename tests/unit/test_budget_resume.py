"""The budget-resume decision (pure): episodes by spend day and ceiling, the exhausted
stop, the room check the preflight admits by, and at most one resume per episode."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from backend.llm.budget import budget_status
from backend.temporal.loops.budget_resume import budget_episode, paid_calls, resume_verdict

DAY_ONE = datetime(2026, 11, 29, 23, 59, 30, tzinfo=UTC)
DAY_TWO = DAY_ONE + timedelta(minutes=1)  # just past UTC midnight
CEILING = Decimal("0.15")
JOB_COST = Decimal("0.132")  # three paid calls at $0.044


def verdict(status, *, reserved="0", intent=None, halted_started=100):
    return resume_verdict(status, open_reserved=Decimal(reserved), estimate=JOB_COST,
                          intent_event_id=intent, halted_started_event_id=halted_started)


def test_the_day_rollover_gives_an_exhausted_budget_room_again():
    # Day one's ledger is at the ceiling: nothing resumes.
    exhausted = budget_status(Decimal("0.264"), CEILING, DAY_ONE)
    assert exhausted.exhausted and verdict(exhausted) == "budget_exhausted"
    # A minute later it is a new spend day with an empty ledger: a new episode, so the
    # intent recorded on day one does not count, and the job fits.
    fresh = budget_status(Decimal(0), CEILING, DAY_TWO)
    assert budget_episode(fresh) != budget_episode(exhausted)
    assert budget_episode(fresh) == "2026-11-30:150000"
    assert verdict(fresh) == "resume"


def test_raising_or_clearing_the_ceiling_is_a_new_episode():
    low = budget_status(Decimal("0.264"), CEILING, DAY_ONE)
    raised = budget_status(Decimal("0.264"), Decimal(2), DAY_ONE)
    cleared = budget_status(Decimal("0.264"), Decimal(0), DAY_ONE)
    assert len({budget_episode(low), budget_episode(raised), budget_episode(cleared)}) == 3
    assert budget_episode(cleared) == "2026-11-29:unlimited"
    assert verdict(raised) == "resume" and verdict(cleared) == "resume"
    # A float ceiling from settings.json names the same episode as its decimal twin.
    assert budget_episode(budget_status(Decimal(0), Decimal(0.15), DAY_ONE)) == \
        budget_episode(budget_status(Decimal(0), CEILING, DAY_ONE))


def test_a_job_that_does_not_fit_what_is_left_waits():
    # Not exhausted ($0.132 of $0.15), but the job's three calls would pass the ceiling:
    # the preflight would refuse it at once, so the pass does not start it.
    room_for_less = budget_status(Decimal("0.132"), CEILING, DAY_ONE)
    assert not room_for_less.exhausted
    assert verdict(room_for_less) == "no_room"
    # Open reservations (runs admitted but not done) count against the room too.
    empty = budget_status(Decimal(0), CEILING, DAY_ONE)
    assert verdict(empty) == "resume"
    assert verdict(empty, reserved="0.05") == "no_room"
    # Unlimited always fits.
    assert verdict(budget_status(Decimal(99), Decimal(0), DAY_ONE), reserved="50") == "resume"


def test_a_job_halted_again_in_the_same_episode_waits_for_the_next_one():
    status = budget_status(Decimal(0), CEILING, DAY_TWO)
    # The episode's intent (event 120) is older than the halted run (started at 130): that
    # run was the resume, and it was halted again. No storm: wait for the next episode.
    assert verdict(status, intent=120, halted_started=130) == "halted_again_this_episode"
    # The intent is newer than the halted run: its start may have been lost (a worker
    # killed between the intent and the start), so it is delivered.
    assert verdict(status, intent=140, halted_started=130) == "resume"


def test_paid_calls_match_the_preparation_preflight():
    assert paid_calls(("enrich", "score", "tailor", "cover", "pdf")) == 3
    assert paid_calls(("pdf",)) == 0


def test_a_resumed_batch_keeps_its_lineage_and_gets_one_id_per_episode():
    from backend.temporal.loops.halted_work import batch_lineage, resumed_batch_id

    first = resumed_batch_id("batch-tailor-0123456789abcdef", "2026-11-30:150000")
    assert first.startswith("batch-tailor-0123456789abcdef-resume-")
    assert first == resumed_batch_id("batch-tailor-0123456789abcdef", "2026-11-30:150000")
    assert first != resumed_batch_id("batch-tailor-0123456789abcdef", "2026-11-30:unlimited")
    assert batch_lineage(first) == batch_lineage("batch-tailor-0123456789abcdef") == (
        "batch-tailor-0123456789abcdef")


def test_items_refused_mid_run_resume_per_run_and_stage_from_that_stage():
    from backend.pipeline.batch import batch_workflow_id
    from backend.store.budget_halts import RefusedItem, RunRow
    from backend.temporal.loops.halted_work import _refused_mid_run

    def run(run_id: str, status: str) -> RunRow:
        return RunRow("batch-tailor-x", run_id, status, None, "t0", "t1",
                      '{"workers": 2}', 7)

    items = [RefusedItem("r1", "tailor", "job_b"), RefusedItem("r1", "tailor", "job_a"),
             RefusedItem("r1", "cover", "job_c"), RefusedItem("r2", "tailor", "job_d")]
    halts = _refused_mid_run(items, {"r1": run("r1", "completed"), "r2": run("r2", "canceled")})
    by_id = {halt.batch_id: halt for halt in halts}
    assert set(by_id) == {batch_workflow_id("tailor", ["job_a", "job_b"]),
                          batch_workflow_id("cover", ["job_c"])}, "a canceled batch stays so"
    tailor = by_id[batch_workflow_id("tailor", ["job_a", "job_b"])]
    assert tailor.stages == ("tailor", "cover", "pdf") and tailor.job_ids == ("job_a", "job_b")
    assert tailor.workers == 2 and tailor.paid_calls == 4  # Tailor and Cover, two jobs
    assert by_id[batch_workflow_id("cover", ["job_c"])].paid_calls == 1
