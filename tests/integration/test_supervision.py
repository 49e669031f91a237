"""`jobctrl serve` end to end: clean stop, restart with everything kept, no orphans after
the parent is killed, one instance per app dir, a crashed worker restarted."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import time

import httpx
import pytest

from backend.config import TemporalSettings
from backend.temporal.client import connect_temporal
from desktop.client import ApiClient
from tests.api_http import REQUEST_TIMEOUT
from tests.integration.serve_process import ServeProcess, wait_gone

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]


async def discover_to_the_end(info) -> dict:
    api = ApiClient.from_runtime(info)
    try:
        accepted = await api.run_stage("discover")
        run_id = accepted["firstExecutionRunId"]
        for _ in range(1800):  # up to 3 minutes on a busy 2-core machine
            runs = await api.discovery_runs()
            run = next((r for r in runs if r["discoverRunId"] == run_id), None)
            if run and run["status"] != "running":
                return {**run, "jobsTotal": (await api.jobs())["total"]}
            await asyncio.sleep(0.1)
        raise AssertionError("discover did not finish")
    finally:
        await api.close()


def child_pids(info) -> list[int]:
    return [pid for name, pid in info.pids.items() if name != "supervisor"]


async def test_restart_finds_jobs_events_and_temporal_history(tmp_path):
    app_dir = tmp_path / "app"
    serve = ServeProcess(app_dir)
    info = serve.wait_healthy()
    first = await discover_to_the_end(info)
    assert first["status"] == "completed" and first["jobsNew"] == 234
    assert serve.interrupt() == 0
    assert not (app_dir / "runtime.json").exists()
    assert wait_gone(child_pids(info)) == []
    assert "Stopping JobCtrl" in serve.output

    again = ServeProcess(app_dir)
    info2 = again.wait_healthy()
    try:
        assert info2.api_token != info.api_token  # a fresh token per launch
        api = ApiClient.from_runtime(info2)
        assert (await api.jobs())["total"] == 234
        await api.close()
        client = await connect_temporal(TemporalSettings(), info2.temporal_address)
        handle = client.get_workflow_handle("discover-local", run_id=first["discoverRunId"])
        # The run recorded its outcome before the stop; if its last workflow task was still
        # pending, the restarted worker finishes it from the persisted history.
        for _ in range(300):
            if (await handle.describe()).status.name == "COMPLETED":
                break
            await asyncio.sleep(0.1)
        assert (await handle.describe()).status.name == "COMPLETED"
        second = await discover_to_the_end(info2)
        assert second["jobsNew"] == 0 and second["jobsObserved"] == 234
        assert second["jobsTotal"] == 234
    finally:
        assert again.interrupt() == 0
    assert wait_gone(child_pids(info2)) == []


async def test_killing_the_parent_leaves_no_orphans_and_the_next_start_works(tmp_path):
    app_dir = tmp_path / "app"
    serve = ServeProcess(app_dir)
    info = serve.wait_healthy()
    serve.kill()  # SIGKILL: no cleanup code of ours runs
    assert wait_gone(child_pids(info)) == [], "children outlived a killed parent"

    again = ServeProcess(app_dir)
    try:
        info2 = again.wait_healthy()
        assert info2.pids["supervisor"] == again.process.pid
    finally:
        assert again.interrupt() == 0


async def test_a_second_instance_on_the_same_app_dir_is_refused(tmp_path):
    app_dir = tmp_path / "app"
    serve = ServeProcess(app_dir)
    serve.wait_healthy()
    try:
        second = ServeProcess(app_dir)
        assert second.wait(60) == 1
        assert "already in use by another JobCtrl instance" in second.output
        assert (app_dir / "runtime.json").exists(), "the refused instance must not touch it"
    finally:
        assert serve.interrupt() == 0


async def test_a_taken_port_is_reported_clearly(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        serve = ServeProcess(tmp_path / "app", "--api-port", str(port))
        assert serve.wait(60) == 1
    assert f"Port {port} on 127.0.0.1 (JobCtrl API) is already in use" in serve.output
    assert not (tmp_path / "app" / "runtime.json").exists()


async def test_a_crashed_worker_is_restarted(tmp_path):
    app_dir = tmp_path / "app"
    serve = ServeProcess(app_dir)
    info = serve.wait_healthy()
    try:
        os.kill(info.pids["worker"], signal.SIGKILL)
        deadline = time.monotonic() + 60
        restarted = None
        while time.monotonic() < deadline:
            current = serve.wait_healthy(timeout=60)
            if current.pids["worker"] != info.pids["worker"]:
                restarted = current
                break
            time.sleep(0.2)
        assert restarted is not None, serve.output
        assert "worker    restarting" in serve.output
        health = httpx.get(f"{restarted.api_base_url}/v1/health", timeout=REQUEST_TIMEOUT,
                           headers={"Authorization": f"Bearer {restarted.api_token}"}).json()
        assert health["worker"]["ready"] is True
        result = await discover_to_the_end(restarted)
        assert result["status"] == "completed"
    finally:
        assert serve.interrupt() == 0


async def test_an_external_temporal_is_used_and_nothing_is_embedded(tmp_path):
    """With ``temporal.address`` set, serve starts only the worker and the API, runs work on
    that cluster, and leaves it running when it stops."""
    from backend.supervision.embedded_temporal import dev_server_argv, temporal_binary
    from backend.supervision.ports import free_port
    from tests.integration.conftest import write_settings

    port = free_port()
    external = subprocess.Popen(
        dev_server_argv(temporal_binary(), history_file=tmp_path / "cluster.db", port=port,
                        ui_port=None),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        app_dir = tmp_path / "app"
        write_settings(app_dir, temporal={"address": f"127.0.0.1:{port}"})
        serve = ServeProcess(app_dir)
        info = serve.wait_healthy()
        try:
            assert info.temporal_address == f"127.0.0.1:{port}"
            assert "temporal" not in info.pids and info.temporal_ui_url is None
            health = httpx.get(f"{info.api_base_url}/v1/health", timeout=REQUEST_TIMEOUT,
                               headers={"Authorization": f"Bearer {info.api_token}"}).json()
            assert health["temporal"]["embedded"] is False
            result = await discover_to_the_end(info)
            assert result["status"] == "completed"
            client = await connect_temporal(TemporalSettings(), f"127.0.0.1:{port}")
            handle = client.get_workflow_handle("discover-local", run_id=result["discoverRunId"])
            for _ in range(300):  # the run's last workflow task may still be in flight
                if (await handle.describe()).status.name == "COMPLETED":
                    break
                await asyncio.sleep(0.1)
            assert (await handle.describe()).status.name == "COMPLETED"
        finally:
            assert serve.interrupt() == 0
        assert external.poll() is None, "an external cluster is not ours to stop"
    finally:
        external.terminate()
        external.wait(15)
