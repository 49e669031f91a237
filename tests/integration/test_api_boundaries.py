"""Bad input, wrong credentials and a missing runtime: typed 4xx/503, nothing written."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess

import httpx
import pytest

from backend.supervision.ports import free_ports
from backend.supervision.supervisor import child_command
from tests.api_http import REQUEST_TIMEOUT
from tests.app_db import connect_db
from tests.integration.conftest import write_settings

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]


def durable_counts(app_dir) -> tuple[int, int]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        events = conn.execute("SELECT COUNT(*) FROM job_events").fetchone()[0]
        runs = conn.execute("SELECT COUNT(*) FROM discovery_runs").fetchone()[0]
    return events, runs


@pytest.fixture
def base_url(running) -> str:
    return running.info.api_base_url


@pytest.fixture
def auth(running) -> dict:
    return {"Authorization": f"Bearer {running.info.api_token}"}


async def test_health_needs_no_token_to_say_up_and_the_token_for_each_part(base_url, auth):
    async with httpx.AsyncClient(base_url=base_url, timeout=REQUEST_TIMEOUT) as http:
        anonymous = (await http.get("/v1/health")).json()
        body = (await http.get("/v1/health", headers=auth)).json()
    assert anonymous == {"status": "ok"}  # no pid, no Temporal address
    assert body["status"] == "ok"
    assert body["api"]["status"] == "ok"
    assert body["worker"]["ready"] is True
    assert body["worker"]["taskQueue"] == "jobctrl-local"
    assert body["worker"]["configuredSlots"] >= 1
    assert body["temporal"] == {
        "reachable": True, "address": body["temporal"]["address"], "namespace": "default",
        "embedded": True,
    }


@pytest.mark.parametrize("path", ["/v1/jobs", "/v1/events/stream", "/openapi.json"])
async def test_routes_refuse_a_missing_or_wrong_token(base_url, path):
    async with httpx.AsyncClient(base_url=base_url, timeout=REQUEST_TIMEOUT) as http:
        for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic x"}):
            response = await http.get(path, headers=headers)
            assert response.status_code == 401
            assert response.json()["error"]["code"] == "unauthorized"
            assert response.headers["www-authenticate"] == "Bearer"


async def test_a_foreign_host_header_is_refused_even_with_the_token(base_url, auth):
    async with httpx.AsyncClient(base_url=base_url, timeout=REQUEST_TIMEOUT) as http:
        for host in ("evil.example", "evil.example:80", "127.0.0.1.nip.io"):
            response = await http.get("/v1/health", headers={**auth, "Host": host})
            assert response.status_code == 403
            assert response.json()["error"]["code"] == "foreign_host"
        ok = await http.get("/v1/health", headers={"Host": "localhost"})
        assert ok.status_code == 200


async def test_bad_commands_get_typed_errors_and_write_nothing(base_url, auth, session_app_dir):
    before = durable_counts(session_app_dir)
    url = "/v1/pipeline/actions/run-stage"
    async with httpx.AsyncClient(base_url=base_url, headers=auth, timeout=REQUEST_TIMEOUT) as http:
        cases = [
            (await http.post(url, json={"stage": "teleport"}), 422, "validation_error"),
            (await http.post(url, json={}), 422, "validation_error"),
            (await http.post(url, json={"stage": "discover", "extra": 1}), 422, "validation_error"),
            (await http.post(url, json={"stage": "discover", "sourceIds": ["nope"]}), 422,
             "unknown_source"),
            (await http.post(url, content=b"{not json", headers={"Content-Type":
             "application/json"}), 400, "malformed_json"),
            (await http.get("/v1/jobs", params={"limit": 0}), 422, "validation_error"),
            (await http.get("/v1/jobs", params={"offset": -1}), 422, "validation_error"),
            (await http.get("/v1/events/stream", headers={"Last-Event-ID": "x"}), 400,
             "invalid_last_event_id"),
            (await http.get("/v1/events/stream", params={"lastEventId": "999999999"}), 400,
             "last_event_id_out_of_range"),
            (await http.get("/v1/nowhere"), 404, "not_found"),
        ]
    for response, status, code in cases:
        assert response.status_code == status, response.text
        assert response.json()["error"]["code"] == code
    invalid_stage = cases[0][0].json()["error"]
    assert "stage" in invalid_stage["fields"]
    assert durable_counts(session_app_dir) == before


async def test_openapi_documents_the_routes(base_url, auth):
    # The document is built on its first request (seconds on a loaded 2-core machine).
    async with httpx.AsyncClient(base_url=base_url, headers=auth, timeout=REQUEST_TIMEOUT) as http:
        document = (await http.get("/openapi.json")).json()
    paths = document["paths"]
    for path in ("/v1/health", "/v1/pipeline/actions/run-stage", "/v1/events/stream",
                 "/v1/jobs", "/v1/discovery-runs"):
        assert path in paths
    run_stage = paths["/v1/pipeline/actions/run-stage"]["post"]
    assert {"202", "401", "422", "503"} <= set(run_stage["responses"])
    assert "HTTPBearer" in document["components"]["securitySchemes"]
    accepted = document["components"]["schemas"]["RunStageAccepted"]["properties"]
    assert "firstExecutionRunId" in accepted


async def test_stream_sends_retry_hint_and_keepalives(base_url, auth, running):
    # The session API uses the default 15 s keepalive; this checks framing of the first bytes.
    async with (
        httpx.AsyncClient(base_url=base_url, headers=auth, timeout=REQUEST_TIMEOUT) as http,
        http.stream("GET", "/v1/events/stream") as response,
    ):
        assert response.headers["content-type"].startswith("text/event-stream")
        first = await anext(response.aiter_text())
    assert ": connected" in first and "retry: 2000" in first


async def test_commands_answer_503_while_the_worker_is_stopped(running, base_url, auth,
                                                               session_app_dir):
    worker = running.service("worker")
    await worker.stop()
    try:
        before = durable_counts(session_app_dir)
        async with httpx.AsyncClient(base_url=base_url, headers=auth, timeout=REQUEST_TIMEOUT) as http:
            health = (await http.get("/v1/health")).json()
            response = await http.post("/v1/pipeline/actions/run-stage",
                                       json={"stage": "discover"})
        assert health["status"] == "degraded"
        assert health["worker"] == {**health["worker"], "ready": False, "reason": "worker_stopped"}
        assert response.status_code == 503
        assert response.json()["error"]["code"] == "worker_runtime_unavailable"
        await asyncio.sleep(1)  # a started workflow would have written events by now
        assert durable_counts(session_app_dir) == before
    finally:
        await worker.start()


@contextlib.asynccontextmanager
async def standalone_api(app_dir, **env_extra):
    """The API process alone, pointed at a Temporal address where nothing listens."""
    write_settings(app_dir)
    port, dead_port = free_ports(2)  # one pick: the two never coincide
    dead_temporal = f"127.0.0.1:{dead_port}"
    env = {**os.environ, "JOBCTRL_API_TOKEN": "t0ken", "JOBCTRL_TEMPORAL_ADDRESS": dead_temporal,
           **env_extra}
    process = subprocess.Popen(
        child_command("api", "--app-dir", str(app_dir), "--port", str(port)), env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=REQUEST_TIMEOUT,
                                     headers={"Authorization": "Bearer t0ken"}) as http:
            for _ in range(300):
                with contextlib.suppress(httpx.TransportError):
                    if (await http.get("/v1/health")).status_code == 200:
                        break
                await asyncio.sleep(0.1)
            else:  # say so, rather than let the test fail on a refused connection
                raise AssertionError(f"the standalone API never answered (exit code {process.poll()})")
            yield http
    finally:
        process.terminate()
        process.wait(10)


async def test_unreachable_temporal_is_reported_and_blocks_commands(tmp_path):
    """With a worker heartbeat that looks fresh, health still says Temporal is
    unreachable and commands still answer 503."""
    async with standalone_api(tmp_path) as http:
        await fake_fresh_heartbeat(tmp_path)
        health = (await http.get("/v1/health")).json()
        response = await http.post("/v1/pipeline/actions/run-stage", json={"stage": "discover"})
    assert health["temporal"]["reachable"] is False
    assert health["worker"]["ready"] is True
    assert health["status"] == "degraded"
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "worker_runtime_unavailable"
    assert durable_counts(tmp_path) == (0, 0)


async def test_quiet_streams_get_keepalive_comments(tmp_path):
    async with (
        standalone_api(tmp_path, JOBCTRL_SSE_KEEPALIVE_S="0.5") as http,
        http.stream("GET", "/v1/events/stream", timeout=10) as response,
    ):
        received = ""
        async for chunk in response.aiter_text():
            received += chunk
            if received.count(": ping") >= 2:
                break
    assert received.startswith(": connected")


async def fake_fresh_heartbeat(app_dir) -> None:
    from backend.config import AppPaths
    from backend.store.db import Database
    from backend.store.heartbeats import write_heartbeat
    from backend.temporal.loops.heartbeat import worker_identity

    paths = AppPaths(app_dir)
    db = await Database.open(paths.database)
    try:
        identity = worker_identity(paths, task_queue="jobctrl-local", namespace="default", slots=1)
        await write_heartbeat(db, identity, active_slots=0)
    finally:
        await db.close()


async def test_the_client_survives_keepalives_between_events(tmp_path):
    """httpx-sse surfaces each keepalive comment as an empty unnamed event; the client must
    skip it and keep streaming (a regression once lost most of a run's events)."""
    from backend.config import AppPaths
    from backend.domain.events import WorkflowStarted
    from backend.store.db import Database
    from backend.store.events import append_event
    from desktop.client import ApiClient

    async def append(run: str) -> None:
        db = await Database.open(AppPaths(tmp_path).database)
        try:
            async with db.transaction() as conn:
                await append_event(conn, WorkflowStarted(workflow_id="w", run_id=run,
                                                         workflow_type="T"))
        finally:
            await db.close()

    async with standalone_api(tmp_path, JOBCTRL_SSE_KEEPALIVE_S="0.3") as http:
        await append("first")
        client = ApiClient(str(http.base_url), "t0ken")
        received = []
        stream = client.events(0)
        try:
            received.append(await asyncio.wait_for(anext(stream), 10))
            later = asyncio.create_task(asyncio.wait_for(anext(stream), 10))
            await asyncio.sleep(1.2)  # several keepalives pass
            await append("second")
            received.append(await later)
        finally:
            await stream.aclose()
            await client.close()
    assert [event.payload["runId"] for event in received] == ["first", "second"]
