"""The Temporal Web UI is opt-in: it has no login and, on by default, let any
local user (or a DNS-rebinding page that found its port) read and change every run."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from backend.config import AppSettings
from backend.supervision.supervisor import Supervisor
from tests.integration.conftest import write_settings

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]
in_session_loop = pytest.mark.asyncio(loop_scope="session")


def command_line(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


def listening(host: str, port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(1)
        return probe.connect_ex((host, port)) == 0


def test_the_setting_is_off_by_default():
    assert AppSettings().temporal.web_ui is False
    assert AppSettings.model_validate({"temporal": {"webUi": True}}).temporal.web_ui is True


@in_session_loop
@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads /proc")
async def test_a_default_start_runs_the_dev_server_headless(tmp_path):
    write_settings(tmp_path)
    supervisor = Supervisor(tmp_path)  # what `jobctrl desktop` and `serve` do
    info = await supervisor.start()
    try:
        argv = command_line(info.pids["temporal"])
        assert "--headless" in argv and "--ui-port" not in argv
        assert info.temporal_ui_url is None
    finally:
        await supervisor.stop()


@in_session_loop
@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="reads /proc")
async def test_turned_on_in_settings_the_ui_listens_on_loopback_only(tmp_path):
    write_settings(tmp_path, temporal={"webUi": True})
    supervisor = Supervisor(tmp_path)
    info = await supervisor.start()
    try:
        argv = command_line(info.pids["temporal"])
        assert "--headless" not in argv
        assert argv[argv.index("--ui-ip") + 1] == "127.0.0.1"
        assert info.temporal_ui_url and info.temporal_ui_url.startswith("http://127.0.0.1:")
        port = int(info.temporal_ui_url.rsplit(":", 1)[1])
        assert listening("127.0.0.1", port)
    finally:
        await supervisor.stop()
