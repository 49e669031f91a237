"""Runtime capacity telemetry: the activity interceptor (allowlist, safe references, local
hashes, no argument ever read), bounded oldest-first detail with an exact total, duration
summaries, task-queue observation states, the heartbeat loop's resilience, and the
capacity reader (identity filter, aggregation, freshness, null-not-zero)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from datetime import UTC, datetime, timedelta

import pytest
from google.protobuf.duration_pb2 import Duration
from pydantic import ValidationError
from temporalio.api.taskqueue.v1 import PollerInfo, TaskQueueStats
from temporalio.api.workflowservice.v1 import DescribeTaskQueueResponse
from temporalio.service import RPCError, RPCStatusCode
from temporalio.testing import ActivityEnvironment

from backend.config import PREP_TASK_QUEUE, TASK_QUEUE
from backend.domain.clock import to_iso, utc_now, utc_now_iso
from backend.operations.capacity import merge_duration_summaries, read_capacity
from backend.store.heartbeats import (
    ActiveItem,
    DurationSummary,
    HeartbeatTelemetry,
    TaskQueueObservation,
    TaskQueueTypeStats,
    WorkerIdentity,
    write_heartbeat,
)
from backend.temporal.interceptors import ActivitySlotTracker, opaque_ref, safe_workflow_ref
from backend.temporal.loops.heartbeat import heartbeat_loop
from backend.temporal.loops.task_queue import TaskQueueObserver

PREP_ID = "prep-job_0123456789abcdef01234567"
RUN_ID = "0195f3a2-7c1e-7b4d-9a55-3f1d2e4c5b6a"
OPAQUE = re.compile(r"^op_[0-9a-f]{16}$")


# --- interceptor ------------------------------------------------------------------------


class Untouchable:
    """An activity input whose every attribute access fails the test."""

    def __getattribute__(self, name):
        raise AssertionError(f"the interceptor read input.{name}")


class HeldActivity:
    """The next interceptor layer: records what it was given and waits to be released."""

    def __init__(self):
        self.release = asyncio.Event()
        self.received: list[object] = []
        self.fail = False

    async def execute_activity(self, input):
        self.received.append(input)
        await self.release.wait()
        if self.fail:
            raise RuntimeError("https://secret.example/posting?token=abc failed")
        return "done"


def info_for(activity_type: str, *, workflow_id: str = PREP_ID, run_id: str = RUN_ID,
             attempt: int = 1):
    return dataclasses.replace(ActivityEnvironment().info, activity_type=activity_type,
                               workflow_id=workflow_id, workflow_run_id=run_id, attempt=attempt)


async def run_in_activity_context(inbound, input, info):
    env = ActivityEnvironment()
    env.info = info

    async def body():
        return await inbound.execute_activity(input)

    return await env.run(body)


async def test_interceptor_never_reads_arguments_and_keeps_safe_references():
    tracker = ActivitySlotTracker()
    held = HeldActivity()
    inbound = tracker.intercept_activity(held)
    untouchable = Untouchable()
    task = asyncio.create_task(run_in_activity_context(
        inbound, untouchable, info_for("score_job", attempt=3)))
    await asyncio.sleep(0.01)
    assert held.received and held.received[0] is untouchable  # passed on as is
    assert tracker.active == 1
    snapshot = tracker.snapshot()
    assert snapshot.active_items_total == 1 and not snapshot.active_items_truncated
    item = snapshot.active_items[0]
    assert (item.activity_type, item.stage, item.workflow_ref, item.run_ref, item.attempt) == (
        "score_job", "score", PREP_ID, RUN_ID, 3)
    assert snapshot.stage_counts["score"] == 1 and sum(snapshot.stage_counts.values()) == 1
    held.release.set()
    assert await task == "done"
    assert tracker.active == 0 and tracker.snapshot().active_items == []
    assert tracker.snapshot().duration_summaries["score_job"].count == 1


async def test_unsafe_references_become_local_hashes_and_others_count_only_in_slots():
    tracker = ActivitySlotTracker()
    held = HeldActivity()
    inbound = tracker.intercept_activity(held)
    secret_id = "prep-https://jobs.example/acme?email=ada@example.org"
    tasks = [
        asyncio.create_task(run_in_activity_context(
            inbound, Untouchable(), info_for("enrich_job", workflow_id=secret_id,
                                             run_id="not-a-uuid"))),
        asyncio.create_task(run_in_activity_context(
            inbound, Untouchable(), info_for("reconcile_stage_failure"))),
        asyncio.create_task(run_in_activity_context(
            inbound, Untouchable(), info_for("discover_source_family",
                                             workflow_id="discover-local-2026-01-01T00:00:00Z"))),
    ]
    await asyncio.sleep(0.01)
    assert tracker.active == 3  # every activity occupies a slot
    snapshot = tracker.snapshot()
    assert snapshot.active_items_total == 2  # only allowlisted kinds are listed
    assert {item.activity_type for item in snapshot.active_items} == {
        "enrich_job", "discover_source_family"}
    enrich = next(i for i in snapshot.active_items if i.activity_type == "enrich_job")
    assert OPAQUE.match(enrich.workflow_ref) and OPAQUE.match(enrich.run_ref)
    assert enrich.workflow_ref == safe_workflow_ref(secret_id)  # stable within the process
    dumped = json.dumps([i.model_dump(by_alias=True) for i in snapshot.active_items])
    assert "example" not in dumped and "not-a-uuid" not in dumped
    scheduled = next(i for i in snapshot.active_items if i.activity_type == "discover_source_family")
    assert OPAQUE.match(scheduled.workflow_ref)  # a timestamped id is not on the safe list
    assert snapshot.stage_counts == {"discover": 1, "preflight": 0, "enrich": 1, "score": 0,
                                     "tailor": 0, "cover": 0, "pdf": 0}
    held.fail = True  # failures count in no duration summary, and no text is kept
    held.release.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert all(isinstance(result, RuntimeError) for result in results)
    assert tracker.active == 0 and tracker.snapshot().duration_summaries == {}


async def test_a_local_activity_holds_no_slot_and_is_not_listed():
    # A job's preflight runs as a local activity inside its workflow task, outside the
    # worker's max_concurrent_activities: the slot inventory never lists more than it holds.
    tracker = ActivitySlotTracker()
    held = HeldActivity()
    inbound = tracker.intercept_activity(held)
    local = dataclasses.replace(info_for("check_spend_budget"), is_local=True)
    tasks = [asyncio.create_task(run_in_activity_context(inbound, Untouchable(), local)),
             asyncio.create_task(run_in_activity_context(
                 inbound, Untouchable(), info_for("enrich_job")))]
    await asyncio.sleep(0.01)
    assert tracker.active == 1
    snapshot = tracker.snapshot()
    assert snapshot.active_items_total == 1 == len(snapshot.active_items)
    assert snapshot.stage_counts["preflight"] == 0 and snapshot.stage_counts["enrich"] == 1
    held.release.set()
    assert await asyncio.gather(*tasks) == ["done", "done"]
    snapshot = tracker.snapshot()
    assert tracker.active == 0 and snapshot.active_items_total == 0
    assert set(snapshot.duration_summaries) == {"enrich_job"}


def test_local_hashes_are_keyed_and_do_not_reveal_the_value():
    value = "https://jobs.example/acme"
    first = opaque_ref("workflow", value, key=b"k" * 32)
    assert OPAQUE.match(first) and first == opaque_ref("workflow", value, key=b"k" * 32)
    assert first != opaque_ref("workflow", value, key=b"j" * 32)  # a new process, a new key
    assert first != opaque_ref("run", value, key=b"k" * 32)
    for safe in ("discover-local", "apply-auto-local", PREP_ID):
        assert safe_workflow_ref(safe) == safe
    for unsafe in ("discover-local ", "prep-job_0123", f"{PREP_ID}x", "apply-auto-local\n"):
        assert OPAQUE.match(safe_workflow_ref(unsafe))


async def test_telemetry_failure_never_fails_the_activity():
    def broken_info():
        raise RuntimeError("no activity context")

    tracker = ActivitySlotTracker(info=broken_info)
    held = HeldActivity()
    held.release.set()
    assert await tracker.intercept_activity(held).execute_activity(Untouchable()) == "done"
    assert tracker.active == 0 and tracker.snapshot().active_items_total == 0


class FakeClock:
    def __init__(self):
        self.wall = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
        self.mono = 1000.0

    def now(self):
        return self.wall

    def monotonic(self):
        return self.mono

    def advance(self, seconds: float):
        self.wall += timedelta(seconds=seconds)
        self.mono += seconds


async def test_items_are_oldest_first_capped_at_20_with_an_exact_total():
    clock = FakeClock()
    infos: list = []
    tracker = ActivitySlotTracker(info=lambda: infos.pop(0), clock=clock.now,
                                  monotonic=clock.monotonic)
    held = HeldActivity()
    inbound = tracker.intercept_activity(held)
    kinds = ["enrich_job", "score_job", "tailor_resume", "write_cover_letter", "render_pdfs"]
    tasks = []
    for n in range(28):
        kind = "record_workflow_lifecycle" if n % 10 == 9 else kinds[n % 5]
        infos.append(info_for(kind, run_id=f"0195f3a2-7c1e-7b4d-9a55-{n:012d}"))
        tasks.append(asyncio.create_task(inbound.execute_activity(Untouchable())))
        await asyncio.sleep(0)
        clock.advance(1)
    await asyncio.sleep(0.01)
    snapshot = tracker.snapshot()
    assert tracker.active == 28
    assert snapshot.active_items_total == 26 and snapshot.active_items_truncated
    assert len(snapshot.active_items) == 20
    started = [item.started_at for item in snapshot.active_items]
    assert started == sorted(started) and started[0] == to_iso(datetime(2026, 3, 1, 12, 0, tzinfo=UTC))
    assert sum(snapshot.stage_counts.values()) == 26  # exact beyond the listed 20
    held.release.set()
    await asyncio.gather(*tasks)
    assert tracker.active == 0


async def test_duration_summaries_use_a_bounded_window_of_successes():
    clock = FakeClock()
    tracker = ActivitySlotTracker(info=lambda: info_for("score_job"), clock=clock.now,
                                  monotonic=clock.monotonic, duration_window=5)

    class Timed:
        def __init__(self, seconds, fail=False):
            self.seconds, self.fail = seconds, fail

        async def execute_activity(self, input):
            clock.advance(self.seconds)
            if self.fail:
                raise ValueError("boom")
            return None

    for seconds in range(1, 11):
        await tracker.intercept_activity(Timed(seconds)).execute_activity(Untouchable())
    with pytest.raises(ValueError):
        await tracker.intercept_activity(Timed(1000, fail=True)).execute_activity(Untouchable())
    summary = tracker.snapshot().duration_summaries["score_job"]
    # The window keeps the last five successes (6..10 s); nearest-rank percentiles.
    assert (summary.count, summary.p50_seconds, summary.p90_seconds, summary.max_seconds) == (
        5, 8.0, 10.0, 10.0)
    assert summary.exact

    wide = ActivitySlotTracker(info=lambda: info_for("render_pdfs"), clock=clock.now,
                               monotonic=clock.monotonic)
    for seconds in range(1, 11):
        await wide.intercept_activity(Timed(seconds)).execute_activity(Untouchable())
    summary = wide.snapshot().duration_summaries["render_pdfs"]
    assert (summary.count, summary.p50_seconds, summary.p90_seconds, summary.max_seconds) == (
        10, 5.0, 9.0, 10.0)


def test_merged_summaries_are_conservative_upper_bounds():
    a = DurationSummary(count=4, p50_seconds=2, p90_seconds=5, max_seconds=6)
    b = DurationSummary(count=6, p50_seconds=3, p90_seconds=4, max_seconds=9)
    merged = merge_duration_summaries([{"score_job": a, "enrich_job": a}, {"score_job": b}])
    assert merged["enrich_job"] == a
    score = merged["score_job"]
    assert (score.count, score.p50_seconds, score.p90_seconds, score.max_seconds, score.exact) == (
        10, 3, 5, 9, False)


# --- task-queue observations --------------------------------------------------------------


def described(*, backlog=3, age_s=4.5, add=1.5, dispatch=1.25, pollers=2, stats=True):
    response = DescribeTaskQueueResponse(
        pollers=[PollerInfo(identity=f"p{n}") for n in range(pollers)])
    if stats:
        response.stats.CopyFrom(TaskQueueStats(
            approximate_backlog_count=backlog, approximate_backlog_age=Duration(seconds=int(age_s),
                                                                                nanos=int(age_s % 1 * 1e9)),
            tasks_add_rate=add, tasks_dispatch_rate=dispatch))
    return response


class FakeService:
    def __init__(self, behave):
        self.behave = behave
        self.calls = 0

    async def describe_task_queue(self, request, timeout=None):
        self.calls += 1
        assert request.report_stats and timeout is not None
        return await self.behave(request)


def observer_for(service, clock=None, **kwargs):
    clock = clock or FakeClock()
    return TaskQueueObserver(service, namespace="default", task_queues=[TASK_QUEUE, PREP_TASK_QUEUE],
                             clock=clock.now, monotonic=clock.monotonic, **kwargs)


async def test_a_supported_observation_sums_both_queue_types():
    async def answer(request):
        if request.task_queue_type == 1:  # workflow tasks
            return described(backlog=1, age_s=2, add=0.5, dispatch=0.5, pollers=1)
        return described(backlog=7, age_s=9.5, add=3, dispatch=2, pollers=2)

    clock = FakeClock()
    observer = observer_for(FakeService(answer), clock)
    assert observer.snapshot()[TASK_QUEUE].state == "unavailable"  # before the first answer
    assert observer.snapshot()[TASK_QUEUE].reason == "not_observed_yet"
    observations = await observer.poll_once()
    prep = observations[PREP_TASK_QUEUE]
    assert prep.state == "supported" and prep.observed_at == to_iso(clock.wall)
    assert prep.pollers.workflow == 1 and prep.pollers.activity == 2
    assert prep.approximate_backlog_count == 8
    assert prep.approximate_backlog_age_seconds == 9.5
    assert (prep.tasks_add_rate, prep.tasks_dispatch_rate) == (3.5, 2.5)
    assert prep.by_type["activity"].approximate_backlog_count == 7
    wire = prep.model_dump(by_alias=True, mode="json")
    assert set(wire) >= {"state", "observedAt", "pollers", "approximateBacklogCount",
                         "approximateBacklogAgeSeconds", "tasksAddRate", "tasksDispatchRate"}
    clock.advance(21)  # four missed polls: the old numbers are not shown as current
    stale = observer.snapshot()[PREP_TASK_QUEUE]
    assert stale.state == "stale" and stale.observed_at == prep.observed_at
    assert stale.approximate_backlog_count is None and stale.pollers is None


@pytest.mark.parametrize(("behaviour", "state", "reason"), [
    ("unimplemented", "unsupported", "unimplemented"),
    ("no_stats", "unsupported", "no_stats"),
    ("unavailable", "unavailable", "unavailable"),
    ("permission", "unavailable", "permission_denied"),
    ("crash", "unavailable", "error"),
])
async def test_failures_are_typed_states_never_zeros(behaviour, state, reason):
    async def answer(request):
        if behaviour == "unimplemented":
            raise RPCError("nope", RPCStatusCode.UNIMPLEMENTED, b"")
        if behaviour == "unavailable":
            raise RPCError("down", RPCStatusCode.UNAVAILABLE, b"")
        if behaviour == "permission":
            raise RPCError("secret detail", RPCStatusCode.PERMISSION_DENIED, b"")
        if behaviour == "crash":
            raise KeyError("https://secret.example")
        return described(stats=False)

    observations = await observer_for(FakeService(answer)).poll_once()
    for observation in observations.values():
        assert (observation.state, observation.reason) == (state, reason)
        wire = observation.model_dump(by_alias=True)
        assert all(wire[key] is None for key in (
            "pollers", "approximateBacklogCount", "approximateBacklogAgeSeconds",
            "tasksAddRate", "tasksDispatchRate", "byType"))
        assert "secret" not in json.dumps(wire)


async def test_a_slow_server_times_out_in_the_background_and_polls_are_spaced():
    async def slow(request):
        await asyncio.sleep(30)

    clock = FakeClock()
    service = FakeService(slow)
    observer = observer_for(service, clock, rpc_timeout_s=0.05)
    observer.maybe_refresh()  # returns at once: the RPCs run in a background task
    observer.maybe_refresh()  # in flight: no second poll
    await asyncio.sleep(0.3)
    assert service.calls == 4  # two queues x two types, once
    assert {o.state for o in observer.snapshot().values()} == {"unavailable"}
    assert {o.reason for o in observer.snapshot().values()} == {"timeout"}
    observer.maybe_refresh()  # done, but not due for another 5 s
    await asyncio.sleep(0)
    assert service.calls == 4
    clock.advance(5)
    observer.maybe_refresh()
    await asyncio.sleep(0.01)
    assert service.calls == 8
    await observer.aclose()


def test_observation_numbers_exist_only_when_supported():
    with pytest.raises(ValidationError):
        TaskQueueObservation(state="unavailable", approximate_backlog_count=0)
    with pytest.raises(ValidationError):
        TaskQueueObservation(state="supported", observed_at=utc_now_iso())


# --- heartbeat loop -------------------------------------------------------------------------


def identity(app_dir, worker_id, *, queue=TASK_QUEUE, slots=12, database=None):
    return WorkerIdentity(
        worker_id=worker_id, pid=1, hostname="host", app_dir=str(app_dir),
        database_path=str(database or app_dir / "jobctrl.db"), task_queue=queue,
        namespace="default", configured_slots=slots, started_at=utc_now_iso())


async def test_the_heartbeat_loop_survives_telemetry_errors_and_slow_rpcs(db, tmp_path):
    class BrokenTracker(ActivitySlotTracker):
        def snapshot(self):
            raise RuntimeError("bug")

    async def slow(request):
        await asyncio.sleep(30)

    app_dir = tmp_path.resolve()
    observer = observer_for(FakeService(slow), rpc_timeout_s=10)
    beats = asyncio.create_task(heartbeat_loop(
        db, identity(app_dir, "w-broken"), BrokenTracker(), interval_s=0.05))
    good = asyncio.create_task(heartbeat_loop(
        db, identity(app_dir, "w-good"), ActivitySlotTracker(), task_queues=observer,
        interval_s=0.05))
    first = None
    for _ in range(40):
        await asyncio.sleep(0.05)
        rows = dict(await db.fetchall(
            "SELECT worker_id, heartbeat_at FROM worker_runtime_heartbeats"))
        first = first or rows.get("w-good")
        if first and rows.get("w-good", "") > first and "w-broken" in rows:
            break
    assert not beats.done() and not good.done()
    assert rows["w-good"] > first, "beats continued while the RPC hung"
    row = await db.fetchone(
        "SELECT telemetry_schema, task_queue_json FROM worker_runtime_heartbeats"
        " WHERE worker_id = 'w-good'")
    assert row[0] == 1
    queues = json.loads(row[1])
    assert queues[TASK_QUEUE] == {
        "state": "unavailable", "observedAt": None, "reason": "not_observed_yet", "pollers": None,
        "approximateBacklogCount": None, "approximateBacklogAgeSeconds": None,
        "tasksAddRate": None, "tasksDispatchRate": None, "byType": None}
    broken = await db.fetchone("SELECT telemetry_schema, active_slots FROM worker_runtime_heartbeats"
                               " WHERE worker_id = 'w-broken'")
    assert tuple(broken) == (None, 0)  # beat written, detail withheld
    for task in (beats, good):
        task.cancel()
    await asyncio.gather(beats, good, return_exceptions=True)


# --- the capacity reader --------------------------------------------------------------------


def item(activity_type, stage, started_at, *, workflow_ref=PREP_ID, run_ref=RUN_ID):
    return ActiveItem(activity_type=activity_type, stage=stage, workflow_ref=workflow_ref,
                      run_ref=run_ref, attempt=1, started_at=started_at)


def telemetry(items, *, extra: dict[str, int] | None = None, durations=None, queues=None):
    counts = {"discover": 0, "preflight": 0, "enrich": 0, "score": 0, "tailor": 0, "cover": 0,
              "pdf": 0}
    for listed in items:
        counts[listed.stage] += 1
    for stage, n in (extra or {}).items():
        counts[stage] += n
    total = sum(counts.values())
    return HeartbeatTelemetry(
        active_items=items, active_items_total=total, active_items_truncated=total > len(items),
        stage_counts=counts, duration_summaries=durations or {}, task_queues=queues)


def supported(observed_at, backlog=2):
    stats = TaskQueueTypeStats(pollers=1, approximate_backlog_count=backlog,
                               approximate_backlog_age_seconds=1.0, tasks_add_rate=0.5,
                               tasks_dispatch_rate=0.5)
    return TaskQueueObservation.from_types(observed_at=observed_at, workflow=stats, activity=stats)


def at(seconds_ago: float) -> str:
    return to_iso(utc_now() - timedelta(seconds=seconds_ago))


async def test_the_reader_aggregates_fresh_workers_of_this_identity_and_queue(db, tmp_path):
    app_dir = tmp_path.resolve()
    durations_a = {"score_job": DurationSummary(count=5, p50_seconds=1, p90_seconds=2, max_seconds=3)}
    durations_b = {"score_job": DurationSummary(count=5, p50_seconds=2, p90_seconds=3, max_seconds=4),
                   "enrich_job": DurationSummary(count=1, p50_seconds=1, p90_seconds=1, max_seconds=1)}
    a_items = [item("score_job", "score", at(30)), item("enrich_job", "enrich", at(10))]
    b_items = [item("plan_discovery", "discover", at(20), workflow_ref="discover-local")]
    await write_heartbeat(db, identity(app_dir, "w-a", slots=12), active_slots=3, telemetry=telemetry(
        a_items, extra={"pdf": 0}, durations=durations_a,
        queues={TASK_QUEUE: supported(at(2)), PREP_TASK_QUEUE: supported(at(2), backlog=40)}))
    await write_heartbeat(db, identity(app_dir, "w-b", slots=4), active_slots=2, telemetry=telemetry(
        b_items, durations=durations_b,
        queues={TASK_QUEUE: TaskQueueObservation.unknown("unsupported", reason="unimplemented",
                                                          observed_at=at(1))}))
    # Not ours: another app dir, another database, an older worker on another queue.
    other = tmp_path / "elsewhere"
    await write_heartbeat(db, identity(other, "w-foreign", database=app_dir / "jobctrl.db"),
                          active_slots=9, telemetry=telemetry([], extra={"score": 9}))
    await write_heartbeat(db, identity(app_dir, "w-otherdb", database=app_dir / "other.db"),
                          active_slots=9, telemetry=telemetry([], extra={"score": 9}))
    await write_heartbeat(db, identity(app_dir, "w-oldqueue", queue="old-queue"),
                          active_slots=9, telemetry=telemetry([], extra={"score": 9}))
    async with db.transaction() as conn:
        await conn.execute("UPDATE worker_runtime_heartbeats SET heartbeat_at = ?"
                           " WHERE worker_id = 'w-oldqueue'", (at(5),))
        await conn.execute("UPDATE worker_runtime_heartbeats SET heartbeat_at = ?"
                           " WHERE worker_id IN ('w-foreign', 'w-otherdb')", (at(-5),))

    snapshot = await read_capacity(db, database_path=app_dir / "jobctrl.db")
    assert snapshot.task_queue == TASK_QUEUE
    assert snapshot.freshness.state == "fresh" and snapshot.freshness.age_seconds < 5
    assert (snapshot.workers, snapshot.invalid_workers) == (2, 0)
    assert (snapshot.configured_slots, snapshot.active_slots, snapshot.available_slots) == (16, 5, 11)
    assert [i.activity_type for i in snapshot.active_items] == [
        "score_job", "plan_discovery", "enrich_job"]  # oldest first across workers
    assert snapshot.active_items_total == 3 and snapshot.active_items_truncated is False
    assert snapshot.active_stage_counts == {"discover": 1, "preflight": 0, "enrich": 1, "score": 1,
                                            "tailor": 0, "cover": 0, "pdf": 0}
    assert snapshot.duration_summaries["score_job"].exact is False
    assert snapshot.duration_summaries["score_job"].count == 10
    assert snapshot.duration_summaries["enrich_job"].exact is True
    # The newest supported observation wins over another worker's unsupported one.
    assert snapshot.task_queues[TASK_QUEUE].state == "supported"
    assert snapshot.task_queues[PREP_TASK_QUEUE].approximate_backlog_count == 80
    wire = snapshot.model_dump(by_alias=True, mode="json")
    assert {"configuredSlots", "activeSlots", "availableSlots", "activeStageCounts", "activeItems",
            "activeItemsTotal", "activeItemsTruncated", "durationSummaries", "taskQueues",
            "freshness"} <= set(wire)
    assert wire["activeItems"][0]["workflowRef"] == PREP_ID


async def test_items_are_truncated_at_20_across_workers_with_an_exact_total(db, tmp_path):
    app_dir = tmp_path.resolve()
    a = [item("render_pdfs", "pdf", at(100 - 2 * n)) for n in range(15)]   # even ages
    b = [item("tailor_resume", "tailor", at(99 - 2 * n)) for n in range(10)]  # odd ages
    await write_heartbeat(db, identity(app_dir, "w-a", slots=16), active_slots=15,
                          telemetry=telemetry(a))
    await write_heartbeat(db, identity(app_dir, "w-b"), active_slots=12,
                          telemetry=telemetry(b, extra={"score": 2}))
    snapshot = await read_capacity(db, database_path=app_dir / "jobctrl.db")
    assert len(snapshot.active_items) == 20
    assert snapshot.active_items_total == 27 and snapshot.active_items_truncated is True
    started = [i.started_at for i in snapshot.active_items]
    assert started == sorted(started)
    assert started[-1] == sorted([i.started_at for i in a + b])[19]
    assert snapshot.active_stage_counts["pdf"] == 15 and snapshot.active_stage_counts["score"] == 2


async def test_a_worker_is_stale_after_45_seconds_and_unknowns_are_null(db, tmp_path):
    app_dir = tmp_path.resolve()
    await write_heartbeat(db, identity(app_dir, "w-a"), active_slots=2, telemetry=telemetry(
        [item("score_job", "score", at(1))], queues={TASK_QUEUE: supported(at(0))}))
    written = await db.fetchone("SELECT heartbeat_at FROM worker_runtime_heartbeats")
    beat = datetime.fromisoformat(written[0].replace("Z", "+00:00"))
    path = app_dir / "jobctrl.db"

    fresh = await read_capacity(db, database_path=path, now=beat + timedelta(seconds=44))
    assert fresh.freshness.state == "fresh" and fresh.active_slots == 2
    # The worker's observation is 44 s old by now: shown as stale, not as current numbers.
    assert fresh.task_queues[TASK_QUEUE].state == "stale"
    assert fresh.task_queues[TASK_QUEUE].reason == "observation_expired"

    stale = await read_capacity(db, database_path=path, now=beat + timedelta(seconds=46))
    assert (stale.freshness.state, stale.freshness.reason) == ("stale", "heartbeat_expired")
    assert stale.freshness.age_seconds == pytest.approx(46, abs=0.01)
    for unknown in ("configured_slots", "active_slots", "available_slots", "active_stage_counts",
                    "active_items", "active_items_total", "active_items_truncated",
                    "duration_summaries"):
        assert getattr(stale, unknown) is None, unknown
    observation = stale.task_queues[TASK_QUEUE]
    assert (observation.state, observation.reason) == ("stale", "worker_not_fresh")
    assert observation.observed_at is not None and observation.approximate_backlog_count is None


async def test_no_heartbeat_stopped_and_invalid_rows_are_never_zeros(db, tmp_path):
    app_dir = tmp_path.resolve()
    path = app_dir / "jobctrl.db"
    nothing = await read_capacity(db, database_path=path)
    assert (nothing.freshness.state, nothing.freshness.reason) == ("unavailable", "no_heartbeat")
    assert nothing.configured_slots is None and nothing.active_items_total is None
    assert nothing.active_stage_counts is None and nothing.task_queues == {}
    assert nothing.task_queue is None

    # A fresh running row without valid telemetry: slots and work are unknown.
    await write_heartbeat(db, identity(app_dir, "w-invalid"), active_slots=1)
    invalid = await read_capacity(db, database_path=path)
    assert (invalid.freshness.state, invalid.freshness.reason) == ("unavailable", "telemetry_invalid")
    assert invalid.invalid_workers == 1 and invalid.active_slots is None

    # Next to a valid worker: fresh, but exact totals cannot be claimed.
    await write_heartbeat(db, identity(app_dir, "w-valid"), active_slots=1,
                          telemetry=telemetry([item("score_job", "score", at(1))]))
    mixed = await read_capacity(db, database_path=path)
    assert mixed.freshness.state == "fresh" and mixed.invalid_workers == 1
    assert mixed.active_items_total is None and mixed.active_stage_counts is None
    assert mixed.active_items_truncated is None and len(mixed.active_items) == 1

    # More listed work than occupied slots contradicts the schema: not trusted either.
    await write_heartbeat(db, identity(app_dir, "w-overfull", slots=2), active_slots=0,
                          telemetry=telemetry([item("score_job", "score", at(1))]))
    overfull = await read_capacity(db, database_path=path)
    assert overfull.invalid_workers == 2 and overfull.workers == 1
    async with db.transaction() as conn:
        await conn.execute("DELETE FROM worker_runtime_heartbeats WHERE worker_id = 'w-overfull'")

    # Corrupt JSON is not schema-valid either.
    async with db.transaction() as conn:
        await conn.execute("UPDATE worker_runtime_heartbeats SET stage_counts_json = '{\"x\": 1}'"
                           " WHERE worker_id = 'w-valid'")
    corrupt = await read_capacity(db, database_path=path)
    assert corrupt.freshness.reason == "telemetry_invalid" and corrupt.invalid_workers == 2

    # Both stopped: the newest heartbeat says so.
    for worker in ("w-invalid", "w-valid"):
        await write_heartbeat(db, identity(app_dir, worker), active_slots=0, state="stopped")
    stopped = await read_capacity(db, database_path=path)
    assert (stopped.freshness.state, stopped.freshness.reason) == ("unavailable", "worker_stopped")
    assert stopped.workers == 0 and stopped.active_slots is None
    assert stopped.active_stage_counts is None and stopped.active_items is None
