"""The worker runs only what JobCtrl started: on a real Temporal dev server, a
worker with JobCtrl's start guard; a signed client (JobCtrl's own ``connect_temporal``)
and a foreign one (a plain ``Client.connect``, as another local user would)."""

from __future__ import annotations

import asyncio
import uuid

import pytest
import pytest_asyncio
from temporalio.api.enums.v1 import EventType
from temporalio.client import (
    Client,
    Interceptor,
    OutboundInterceptor,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleSpec,
    WorkflowFailureError,
    WorkflowUpdateFailedError,
)
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.exceptions import ApplicationError
from temporalio.worker import Worker

from backend.config import TemporalSettings
from backend.temporal.client import connect_with_retry
from backend.temporal.start_signing import (
    HEADER,
    REFUSED_CODE,
    StartGuardInterceptor,
    load_or_create_signing_key,
    signing_key_path,
)
from tests.integration.env_helpers import bare_dev_server
from tests.security import probe_workflows
from tests.security.probe_workflows import ParentProbeWorkflow, ProbeWorkflow, paid_call

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session"),
              pytest.mark.timeout(300)]

QUEUE = "jobctrl-security-probe"


class CopiedHeaders(Interceptor):
    """What an attacker can do: put any header on a start (here, one read from a history)."""

    def __init__(self) -> None:
        self.headers: dict = {}

    def intercept_client(self, next: OutboundInterceptor) -> OutboundInterceptor:
        root = self

        class Outbound(OutboundInterceptor):
            async def start_workflow(self, input):
                input.headers = {**input.headers, **root.headers}
                return await self.next.start_workflow(input)

        return Outbound(next)


@pytest_asyncio.fixture(loop_scope="session")
async def temporal(tmp_path):
    """(signed client, foreign client) over one dev server, and a guarded worker."""
    app_dir = tmp_path / "app"
    app_dir.mkdir()
    with bare_dev_server(tmp_path / "history.db") as address:
        signed = await connect_with_retry(TemporalSettings(), address, timeout=60, app_dir=app_dir)
        copied = CopiedHeaders()
        foreign = await Client.connect(address, data_converter=pydantic_data_converter,
                                       interceptors=[copied])
        guard = StartGuardInterceptor(load_or_create_signing_key(app_dir))
        probe_workflows.CALLS.clear()
        async with Worker(signed, task_queue=QUEUE, workflows=[ProbeWorkflow, ParentProbeWorkflow],
                          activities=[paid_call], interceptors=[guard]):
            yield {"signed": signed, "foreign": foreign, "app_dir": app_dir, "copied": copied}


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


async def event_types(handle) -> list[int]:
    return [event.event_type async for event in handle.fetch_history_events()]


async def assert_refused(handle) -> None:
    with pytest.raises(WorkflowFailureError) as failed:
        await handle.result()
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError) and cause.type == REFUSED_CODE
    assert cause.non_retryable
    assert EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED not in await event_types(handle)


async def test_the_key_is_private_to_the_user(temporal):
    path = signing_key_path(temporal["app_dir"])
    assert path.stat().st_mode & 0o777 == 0o600
    assert len(path.read_bytes()) == 32
    assert load_or_create_signing_key(temporal["app_dir"]) == path.read_bytes()


async def test_a_foreign_start_fails_at_once_and_runs_no_activity(temporal):
    handle = await temporal["foreign"].start_workflow(
        "ProbeWorkflow", "foreign", id=new_id("foreign"), task_queue=QUEUE)
    await assert_refused(handle)
    assert probe_workflows.CALLS == []


async def test_jobctrls_own_start_runs(temporal):
    handle = await temporal["signed"].start_workflow(
        ProbeWorkflow.run, "own", id=new_id("own"), task_queue=QUEUE)
    assert await handle.result() == "own"
    assert probe_workflows.CALLS == ["own"]


async def test_a_signature_copied_from_a_history_does_not_cover_other_input(temporal):
    """Anyone can read histories on an open server: the header of a real start, reused
    with another input (or another workflow id), is refused."""
    workflow_id = new_id("copied")
    own = await temporal["signed"].start_workflow(
        ProbeWorkflow.run, "own", id=workflow_id, task_queue=QUEUE)
    await own.result()
    started = [event async for event in own.fetch_history_events()][0]
    header = dict(started.workflow_execution_started_event_attributes.header.fields)
    assert HEADER in header
    probe_workflows.CALLS.clear()
    temporal["copied"].headers = header
    for what, target in (("other input", workflow_id), ("own", new_id("other-id"))):
        handle = await temporal["foreign"].start_workflow(
            "ProbeWorkflow", what, id=target, task_queue=QUEUE)
        await assert_refused(handle)
    assert probe_workflows.CALLS == []


async def test_a_foreign_signal_is_ignored_and_a_foreign_update_rejected(temporal):
    handle = await temporal["signed"].start_workflow(
        ProbeWorkflow.run, "wait", id=new_id("wait"), task_queue=QUEUE)
    foreign = temporal["foreign"].get_workflow_handle(handle.id)
    await foreign.signal("note", "done")  # would end the run if it were handled
    with pytest.raises(WorkflowUpdateFailedError):
        await foreign.execute_update("add", "done")
    await asyncio.sleep(1)
    assert await handle.query(ProbeWorkflow.notes) == []
    assert (await handle.describe()).status.name == "RUNNING"
    assert await handle.execute_update(ProbeWorkflow.add, "signed") == "signed"
    await handle.signal(ProbeWorkflow.note, "done")
    assert await handle.result() == "wait"
    assert await handle.query(ProbeWorkflow.notes) == ["signed", "done"]


async def test_children_and_continue_as_new_of_a_signed_run_are_signed(temporal):
    handle = await temporal["signed"].start_workflow(
        ParentProbeWorkflow.run, 1, id=new_id("parent"), task_queue=QUEUE)
    assert await handle.result() == "child"
    assert probe_workflows.CALLS == ["child"]


async def test_a_signed_schedule_starts_runs_the_worker_accepts(temporal):
    schedule_id = new_id("schedule")
    schedule = await temporal["signed"].create_schedule(schedule_id, Schedule(
        action=ScheduleActionStartWorkflow(ProbeWorkflow.run, "scheduled", id=new_id("scheduled"),
                                           task_queue=QUEUE),
        spec=ScheduleSpec(cron_expressions=["0 0 1 1 *"])))
    await schedule.trigger()
    for _ in range(100):
        if probe_workflows.CALLS:
            break
        await asyncio.sleep(0.2)
    assert probe_workflows.CALLS == ["scheduled"]
    await schedule.delete()
