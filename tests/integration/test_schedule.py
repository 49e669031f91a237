"""The discovery schedule on the real dev server: created at worker startup, updated and
deleted by a settings save without restarting the worker, never overlapping (SKIP), and
an invalid cron refused with nothing saved."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime

import httpx
import pytest
import pytest_asyncio
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from backend.supervision.supervisor import Supervisor
from backend.temporal.client import connect_temporal
from backend.temporal.schedule import SCHEDULE_ID, cron_of_note
from tests.api_http import api_http
from tests.fakes.job_boards import JobBoards
from tests.integration.conftest import write_settings

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def scheduled(tmp_path_factory):
    boards = JobBoards().start()
    # Discover stays running while this board answers slowly (and its retries wait).
    boards.slow(JobBoards.GREENHOUSE_PATH, 120)
    app_dir = tmp_path_factory.mktemp("schedule-app")
    write_settings(
        app_dir,
        sources=[{"kind": "greenhouse", "id": "acme", "boardToken": "acme",
                  "baseUrl": boards.base_url}],
        discoverySchedule={"enabled": True, "cron": "0 8 * * 1-5"},
    )
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    http = api_http(supervisor.info)
    client = await connect_temporal(supervisor.settings.temporal, supervisor.info.temporal_address,
                                    app_dir=supervisor.paths.app_dir)
    yield {"app_dir": app_dir, "http": http, "client": client, "supervisor": supervisor}
    await http.aclose()
    await supervisor.stop()
    boards.stop()


async def describe(client: Client):
    return await client.get_schedule_handle(SCHEDULE_ID).describe()


async def wait_until(check, timeout: float = 60):
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        value = await check()
        if value:
            return value
        assert asyncio.get_running_loop().time() < deadline, "condition not reached in time"
        await asyncio.sleep(0.2)


async def patch_schedule(http, **schedule) -> httpx.Response:
    return await http.patch("/v1/settings", json={"discoverySchedule": schedule})


async def test_the_worker_creates_the_schedule_at_startup(scheduled):
    description = await describe(scheduled["client"])
    assert cron_of_note(description.schedule.state.note) == "0 8 * * 1-5"
    view = (await scheduled["http"].get("/v1/discovery-schedule")).json()
    assert view["state"] == "active" and view["reason"] is None
    assert view["scheduleId"] == SCHEDULE_ID and view["enabled"] is True
    assert view["nextRunTimes"], "the next run time is shown"
    for when in view["nextRunTimes"]:
        parsed = datetime.fromisoformat(when)
        assert (parsed.hour, parsed.minute, parsed.second) == (8, 0, 0)
        assert parsed.weekday() < 5


async def test_a_settings_save_updates_the_schedule_without_a_worker_restart(scheduled):
    http, client = scheduled["http"], scheduled["client"]
    worker_pid = scheduled["supervisor"].service("worker").pid
    response = await patch_schedule(http, cron="*/5 * * * *")
    assert response.status_code == 200
    assert response.json()["discoverySchedule"] == {"enabled": True, "cron": "*/5 * * * *"}
    description = await describe(client)
    assert cron_of_note(description.schedule.state.note) == "*/5 * * * *"
    view = (await http.get("/v1/discovery-schedule")).json()
    assert view["state"] == "active" and view["cron"] == "*/5 * * * *"
    minutes = {datetime.fromisoformat(t).minute for t in view["nextRunTimes"]}
    assert minutes and all(minute % 5 == 0 for minute in minutes)
    assert scheduled["supervisor"].service("worker").pid == worker_pid

    # The same save again changes nothing in Temporal (idempotent).
    updated_at = description.info.last_updated_at
    assert (await patch_schedule(http, cron="*/5 * * * *")).status_code == 200
    assert (await describe(client)).info.last_updated_at == updated_at


async def test_an_invalid_cron_is_refused_and_nothing_is_saved(scheduled):
    http, client, app_dir = scheduled["http"], scheduled["client"], scheduled["app_dir"]
    before_file = (app_dir / "settings.json").read_text(encoding="utf-8")
    before = (await http.get("/v1/settings")).json()
    note_before = (await describe(client)).schedule.state.note
    for cron in ("61 * * * *", "0 8 * *", "0 8 L * *"):
        response = await patch_schedule(http, enabled=True, cron=cron)
        assert response.status_code == 422, cron
        error = response.json()["error"]
        assert error["code"] == "validation_error"
        assert "discoverySchedule.cron" in error["fields"]
        assert "cron" in error["message"]
    assert (await http.get("/v1/settings")).json() == before
    assert (app_dir / "settings.json").read_text(encoding="utf-8") == before_file
    assert (await describe(client)).schedule.state.note == note_before


async def test_a_fast_schedule_never_overlaps(scheduled):
    http, client = scheduled["http"], scheduled["client"]
    assert (await patch_schedule(http, cron="* * * * *")).status_code == 200
    handle = client.get_schedule_handle(SCHEDULE_ID)
    await handle.trigger()

    async def one_running():
        info = (await describe(client)).info
        return info if info.running_actions else None

    first = await wait_until(one_running)
    running_id = first.running_actions[0].workflow_id
    assert running_id.startswith("discover-local-")
    # While that run is busy, more starts (a trigger and any minute tick) are skipped.
    await handle.trigger()

    async def skipped():
        info = (await describe(client)).info
        return info if info.num_actions_skipped_overlap >= 1 else None

    info = await wait_until(skipped)
    assert [a.workflow_id for a in info.running_actions] == [running_id]
    assert info.num_actions == 1
    await client.get_workflow_handle(running_id).terminate("test done")


async def test_disabling_deletes_the_schedule_idempotently(scheduled):
    http, client, app_dir = scheduled["http"], scheduled["client"], scheduled["app_dir"]
    for _ in range(2):
        response = await patch_schedule(http, enabled=False)
        assert response.status_code == 200
        with pytest.raises(RPCError) as missing:
            await describe(client)
        assert missing.value.status == RPCStatusCode.NOT_FOUND
        view = (await http.get("/v1/discovery-schedule")).json()
        assert view["state"] == "absent" and view["reason"] is None
        assert view["nextRunTimes"] == [] and view["enabled"] is False
    saved = json.loads((app_dir / "settings.json").read_text(encoding="utf-8"))
    assert saved["discoverySchedule"]["enabled"] is False
    # And on again: created anew, with the cron kept from before.
    assert (await patch_schedule(http, enabled=True)).status_code == 200
    assert cron_of_note((await describe(client)).schedule.state.note) == "* * * * *"
    assert (await patch_schedule(http, enabled=False)).status_code == 200
