"""Issue 31: another local user started a preparation on the user's worker, which made
three paid calls with the user's key. Now, on the real stack with a paid (counting)
provider, a foreign start fails at once with ``FOREIGN_START_REFUSED`` and no model call
is made; the same start made by JobCtrl runs and pays."""

from __future__ import annotations

import pytest
import pytest_asyncio
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowFailureError
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.exceptions import ApplicationError

from backend.config import PREP_TASK_QUEUE
from backend.temporal.client import connect_temporal
from backend.temporal.contracts import PrepInput
from backend.temporal.dispatch import start_preparation
from backend.temporal.start_signing import REFUSED_CODE
from tests.app_db import connect_db
from tests.integration.test_paid_pipeline import paid_app, wait_terminals

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session"),
              pytest.mark.timeout(600)]

RESTAGE = ["score", "tailor", "cover"]  # three paid calls, as in the report


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def prepared(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("foreign-app")
    async with paid_app(app_dir, 1, 5.0) as (supervisor, http, fake):
        accepted = await http.post("/v1/pipeline/actions/run-stage", json={"stage": "discover"})
        assert accepted.status_code == 202, accepted.text
        await wait_terminals(app_dir, 1)
        with connect_db(app_dir / "jobctrl.db") as conn:
            (job_id,) = conn.execute("SELECT job_id FROM jobs LIMIT 1").fetchone()
        yield {"supervisor": supervisor, "fake": fake, "job_id": job_id}


async def test_a_foreign_preparation_is_refused_before_any_paid_call(prepared):
    supervisor, fake = prepared["supervisor"], prepared["fake"]
    calls = fake.calls
    assert calls > 0  # the user's own preparation paid
    foreign = await Client.connect(supervisor.info.temporal_address,
                                   data_converter=pydantic_data_converter)
    job_id = prepared["job_id"]
    handle = await foreign.start_workflow(
        "JobPreparationWorkflow",
        PrepInput(job_id=job_id, idempotency_key=f"{job_id}-foreign", stages=RESTAGE,
                  force_stages=RESTAGE),
        id=f"prep-{job_id}-foreign", task_queue=PREP_TASK_QUEUE)
    with pytest.raises(WorkflowFailureError) as failed:
        await handle.result()
    assert isinstance(failed.value.cause, ApplicationError)
    assert failed.value.cause.type == REFUSED_CODE
    events = [event.event_type async for event in handle.fetch_history_events()]
    assert EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED not in events
    assert fake.calls == calls


async def test_the_same_preparation_started_by_jobctrl_runs(prepared):
    supervisor, fake = prepared["supervisor"], prepared["fake"]
    calls = fake.calls
    client = await connect_temporal(supervisor.settings.temporal, supervisor.info.temporal_address,
                                    app_dir=supervisor.paths.app_dir)
    started = await start_preparation(client, prepared["job_id"], stages=RESTAGE, force=RESTAGE)
    handle = client.get_workflow_handle(started.workflow_id, run_id=started.first_execution_run_id)
    await handle.result()
    assert fake.calls > calls
