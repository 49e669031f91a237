"""When a Discover execution's job set is final, so the overall ETA may be shown.

The sweep's own activity runs late on a loaded machine (behind the preparation work), so
membership closes as soon as nothing can join any more: sources done and either the sweep
has linked its cohort or no job outside the execution could be swept in. While a source
may still observe jobs, or an outside job could still be swept in, it stays open and the
overall ETA is withheld with ``membership_open``.
"""

from __future__ import annotations

from backend.domain.postings import Posting
from backend.operations.eta import estimate_overall
from backend.operations.phase import MembershipFacts, membership_facts, membership_open
from backend.store import discovery as runs
from backend.store import stages
from backend.store.jobs import observe_posting
from backend.store.operations_reads import sweep_may_take_a_job
from backend.temporal.contracts import DiscoveryExecutionRef
from tests.unit.test_eta import assert_withheld, inputs
from tests.unit.test_phase_draining import step


def facts(**changes) -> MembershipFacts:
    """A running execution whose sources are done and whose sweep has not run yet."""
    base = {"workflow_running": True, "sources_done": True, "sweep_linked": False,
            "fanout_closed": False, "backlog_may_join": False}
    return MembershipFacts(**{**base, **changes})


def overall_eta(membership: MembershipFacts):
    return estimate_overall(inputs(membership_open=membership_open(membership)))


def test_sweep_still_to_run_with_nothing_to_add_shows_the_overall_eta():
    eta = overall_eta(facts())
    assert eta.state == "available" and eta.low_seconds <= eta.high_seconds


def test_sources_still_discovering_withhold_the_overall_eta_with_its_reason():
    for may_join in (False, True, None):
        assert_withheld(overall_eta(facts(sources_done=False, backlog_may_join=may_join)),
                        "calibrating", "membership_open")


def test_an_outside_job_the_sweep_could_take_keeps_membership_open():
    assert_withheld(overall_eta(facts(backlog_may_join=True)), "calibrating", "membership_open")
    # Not read is not "nothing": unknown stays open.
    assert_withheld(overall_eta(facts(backlog_may_join=None)), "calibrating", "membership_open")


def test_a_linked_sweep_or_a_terminal_fanout_or_a_closed_workflow_closes_membership():
    assert not membership_open(facts(sweep_linked=True, backlog_may_join=True))
    assert not membership_open(facts(fanout_closed=True, sources_done=False,
                                     backlog_may_join=None))
    assert not membership_open(facts(workflow_running=False, sources_done=False,
                                     backlog_may_join=None))


def test_the_facts_come_from_the_sweep_and_terminal_fanout_step_rows():
    rows = [step("source_family", "succeeded", "family:demo_board"),
            step("existing_backlog_sweep", "running", "sweep"),
            step("preparation_fanout", "queued", "fanout:sweep")]
    read = membership_facts(rows, workflow_running=True, sources_done=True,
                            backlog_may_join=True)
    assert not read.sweep_linked and not read.fanout_closed and membership_open(read)
    rows[1] = step("existing_backlog_sweep", "succeeded", "sweep")
    assert not membership_open(membership_facts(rows, workflow_running=True, sources_done=True,
                                                backlog_may_join=True))
    # A failed sweep attempt (retried by Temporal) has linked nothing.
    rows[1] = step("existing_backlog_sweep", "failed", "sweep")
    assert membership_open(membership_facts(rows, workflow_running=True, sources_done=True,
                                            backlog_may_join=True))
    rows[2] = step("preparation_fanout", "succeeded", "fanout:sweep")
    assert not membership_open(membership_facts(rows, workflow_running=True,
                                                sources_done=True, backlog_may_join=True))


# --- the store: would the sweep take an outside job? -------------------------------------


REF = DiscoveryExecutionRef(tenant_id="local", discover_workflow_id="discover-local",
                            discover_run_id="run-2")


async def observed_job(db, n: int, run_id: str) -> str:
    posting = Posting(source_key=f"k-{n}", url=f"https://x.example/jobs/{n}",
                      title="Backend Engineer", company="Acme", remote="remote")
    async with db.transaction() as conn:
        job_id = (await observe_posting(conn, posting, source_family="demo_board",
                                        discover_run_id=run_id)).job_id
        await stages.ensure_rows(conn, job_id)
    return job_id


async def settle(db, job_id: str, status: str) -> None:
    async with db.transaction() as conn:
        await conn.execute("UPDATE job_stage_states SET status = ? WHERE job_id = ?",
                           (status, job_id))


async def test_the_sweep_candidate_read_sees_outside_work_left_and_not_finished_work(db):
    async with db.transaction() as conn:
        await runs.insert_run(conn, workflow_id="discover-local", run_id="run-1",
                              families=["demo_board"])
    assert not await sweep_may_take_a_job(db, REF)  # no job at all
    job_id = await observed_job(db, 1, "run-1")
    assert await sweep_may_take_a_job(db, REF)      # pending rows: work left
    await settle(db, job_id, "succeeded")
    assert not await sweep_may_take_a_job(db, REF)  # all done: nothing to sweep
    await settle(db, job_id, "failed")
    assert await sweep_may_take_a_job(db, REF)      # a failed stage is redone by the sweep
    await settle(db, job_id, "running")
    assert await sweep_may_take_a_job(db, REF)      # active: it may fail before the sweep
