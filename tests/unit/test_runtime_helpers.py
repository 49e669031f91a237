"""Runtime helpers: port checks, the child-process pid file, and settings files."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys

import psutil
import pytest
from pydantic import ValidationError

from backend.config import (
    AppPaths,
    AppSettings,
    RuntimeInfo,
    load_settings,
    read_runtime_info,
    write_private_json,
    write_runtime_info,
)
from backend.domain.source_config import DemoBoardSource, JsonFileSource
from backend.supervision.children import ChildRegistry
from backend.supervision.ports import (
    LOOPBACK,
    PortInUseError,
    ensure_port_free,
    ephemeral_range,
    free_ports,
    pick_range,
    settle_ports,
)

# --- ports ------------------------------------------------------------------------------


def test_ensure_port_free_raises_a_readable_error_when_bound():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind((LOOPBACK, 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(PortInUseError) as info:
            ensure_port_free(port, "API")
    message = str(info.value)
    assert str(port) in message
    assert "API" in message
    assert "already in use" in message
    assert info.value.port == port


def test_ensure_port_free_detects_a_bound_but_not_listening_socket():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind((LOOPBACK, 0))
        with pytest.raises(PortInUseError):
            ensure_port_free(holder.getsockname()[1], "Temporal")


def test_ensure_port_free_returns_a_free_port_and_leaves_it_free():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        port = probe.getsockname()[1]
    assert ensure_port_free(port, "API") == port
    # The check itself must not keep the port.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as again:
        again.bind((LOOPBACK, port))


def test_picks_are_distinct_and_below_the_ephemeral_range():
    # Outgoing connections and the kernel's own picks take ports from the ephemeral range:
    # a port picked there can be gone by the time the child binds it (a CI failure).
    low = ephemeral_range()[0]
    ports = free_ports(200)
    assert len(set(ports)) == 200
    if pick_range() is not None:
        assert all(20000 <= port < low for port in ports)
    for port in ports:  # each is free again once picked
        ensure_port_free(port, "API")


def test_the_pick_range_stays_below_what_the_kernel_hands_out(tmp_path):
    linux = tmp_path / "ip_local_port_range"
    linux.write_text("32768\t60999\n")
    assert ephemeral_range(linux) == (32768, 60999)
    assert pick_range(ephemeral_range(linux)) == range(20000, 32768)
    assert pick_range((49152, 65535)) == range(20000, 49152)  # macOS, Windows
    assert pick_range((1024, 65535)) is None  # nothing left below: the kernel chooses
    linux.write_text("garbage")
    assert ephemeral_range(linux) == (49152, 65535)
    assert ephemeral_range(tmp_path / "absent") == (49152, 65535)


def test_a_taken_candidate_falls_back_to_the_kernels_choice():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind((LOOPBACK, 0))
        port = holder.getsockname()[1]
        picked = free_ports(2, range(port, port + 1))
    assert port not in picked and len(set(picked)) == 2


def test_settle_ports_keeps_the_asked_ones_and_picks_the_others_apart():
    asked = free_ports(1)[0]
    ports = settle_ports({"JobCtrl API": asked, "Temporal dev server": None, "Web UI": None})
    assert ports["JobCtrl API"] == asked
    assert len(set(ports.values())) == 3
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as holder:
        holder.bind((LOOPBACK, asked))
        with pytest.raises(PortInUseError, match="JobCtrl API"):
            settle_ports({"JobCtrl API": asked, "Temporal dev server": None})


# --- ChildRegistry ----------------------------------------------------------------------


@pytest.fixture
def sleeper():
    proc = subprocess.Popen(["sleep", "60"])
    try:
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=5)


def _gone(proc: subprocess.Popen) -> bool:
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        return False
    return True


@pytest.mark.skipif(sys.platform == "win32", reason="uses `sleep`")
def test_reap_leftovers_terminates_a_recorded_live_child(tmp_path, sleeper):
    pid_file = tmp_path / "children.pids.json"
    ChildRegistry(pid_file).register("worker", sleeper.pid)
    recorded = json.loads(pid_file.read_text())
    assert recorded["worker"]["pid"] == sleeper.pid

    # A new parent after a crash: fresh registry, same pid file.
    reaped = ChildRegistry(pid_file).reap_leftovers(timeout=5)
    assert reaped == [sleeper.pid]
    assert _gone(sleeper)
    assert not pid_file.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="uses `sleep`")
def test_reap_leftovers_spares_a_recycled_pid(tmp_path, sleeper):
    pid_file = tmp_path / "children.pids.json"
    real_start = psutil.Process(sleeper.pid).create_time()
    pid_file.write_text(
        json.dumps({"worker": {"pid": sleeper.pid, "createTime": real_start - 3600}})
    )
    assert ChildRegistry(pid_file).reap_leftovers(timeout=1) == []
    assert sleeper.poll() is None  # still alive
    assert not pid_file.exists()


def test_reap_leftovers_tolerates_garbage(tmp_path):
    pid_file = tmp_path / "children.pids.json"
    assert ChildRegistry(pid_file).reap_leftovers() == []  # no file at all
    pid_file.write_text("{not json")
    assert ChildRegistry(pid_file).reap_leftovers() == []
    assert not pid_file.exists()
    pid_file.write_text(json.dumps({
        "non-numeric": {"pid": "x", "createTime": 1.0},
        "negative": {"pid": -1, "createTime": 1.0},
        "empty": {},
        "not-a-dict": "worker",
        "dead": {"pid": 2**22 + 7, "createTime": 1.0},
        "no-create-time": {"pid": os.getpid()},
        "bad-create-time": {"pid": os.getpid(), "createTime": "yesterday"},
    }))
    assert ChildRegistry(pid_file).reap_leftovers() == []
    assert not pid_file.exists()


def test_reap_leftovers_tolerates_a_non_object_pid_file(tmp_path):
    pid_file = tmp_path / "children.pids.json"
    pid_file.write_text("[1, 2]")
    assert ChildRegistry(pid_file).reap_leftovers() == []


def test_reap_leftovers_never_kills_its_own_process(tmp_path):
    pid_file = tmp_path / "children.pids.json"
    me = psutil.Process(os.getpid())
    pid_file.write_text(json.dumps({"me": {"pid": me.pid, "createTime": me.create_time() + 5}}))
    assert ChildRegistry(pid_file).reap_leftovers(timeout=0.1) == []


@pytest.mark.skipif(sys.platform == "win32", reason="uses `sleep`")
def test_unregistering_the_last_child_removes_the_pid_file(tmp_path, sleeper):
    pid_file = tmp_path / "children.pids.json"
    registry = ChildRegistry(pid_file)
    registry.register("worker", sleeper.pid)
    registry.register("api", os.getpid())
    registry.unregister("worker")
    assert set(json.loads(pid_file.read_text())) == {"api"}
    registry.unregister("api")
    assert not pid_file.exists()
    registry.unregister("never-registered")  # harmless


# --- config -----------------------------------------------------------------------------


def test_write_private_json_is_owner_only_and_atomic(tmp_path):
    path = tmp_path / "runtime.json"
    path.write_text("old")
    os.chmod(path, 0o644)
    write_private_json(path, {"apiToken": "secret"})
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text()) == {"apiToken": "secret"}
    assert [p.name for p in tmp_path.iterdir()] == ["runtime.json"]  # no temp file left


def test_runtime_info_round_trips_as_camel_case(tmp_path):
    paths = AppPaths(tmp_path)
    assert read_runtime_info(tmp_path) is None
    info = RuntimeInfo(app_dir=str(tmp_path), database=str(paths.database),
                       api_base_url="http://127.0.0.1:1", api_token="t",
                       temporal_address="127.0.0.1:7233", pids={"worker": 1})
    write_runtime_info(paths, info)
    raw = json.loads(paths.runtime_file.read_text())
    assert raw["apiToken"] == "t" and raw["temporalAddress"] == "127.0.0.1:7233"
    assert stat.S_IMODE(paths.runtime_file.stat().st_mode) == 0o600
    assert read_runtime_info(tmp_path) == info


@pytest.fixture
def clean_env(monkeypatch):
    monkeypatch.delenv("JOBCTRL_EXTERNAL_TEMPORAL_ADDRESS", raising=False)
    monkeypatch.delenv("JOBCTRL_TEMPORAL_ADDRESS", raising=False)
    return monkeypatch


def test_load_settings_defaults_without_a_file(tmp_path, clean_env):
    settings = load_settings(AppPaths(tmp_path))
    assert settings.temporal.external is False
    assert settings.temporal.address is None
    assert [s.id for s in settings.sources] == ["demo_board"]


def test_load_settings_reads_camel_case_file(tmp_path, clean_env):
    paths = AppPaths(tmp_path)
    paths.settings.write_text(json.dumps({
        "temporal": {"address": "temporal.internal:7233", "namespace": "jobs", "tls": True,
                     "apiKeyEnv": "TEMPORAL_API_KEY"},
        "workerActivitySlots": 4,
        "sources": [{"kind": "demo_board", "id": "demo_board", "enabled": False},
                    {"kind": "json_file", "id": "mine", "path": "/x/board.json"}],
    }))
    settings = load_settings(paths)
    assert settings.temporal.external is True
    assert settings.temporal.namespace == "jobs"
    assert settings.temporal.api_key_env == "TEMPORAL_API_KEY"
    assert settings.worker_activity_slots == 4
    assert isinstance(settings.sources[0], DemoBoardSource)
    assert settings.sources[0].enabled is False
    assert isinstance(settings.sources[1], JsonFileSource)


def test_external_temporal_address_env_overrides_the_file(tmp_path, clean_env):
    paths = AppPaths(tmp_path)
    paths.settings.write_text(json.dumps({"temporal": {"namespace": "jobs"}}))
    clean_env.setenv("JOBCTRL_EXTERNAL_TEMPORAL_ADDRESS", "ci-temporal:7233")
    settings = load_settings(paths)
    assert settings.temporal.address == "ci-temporal:7233"
    assert settings.temporal.external is True
    assert settings.temporal.namespace == "jobs"  # the rest of the file still applies


def test_child_process_temporal_address_does_not_mark_temporal_external(tmp_path, clean_env):
    """JOBCTRL_TEMPORAL_ADDRESS is how the supervisor hands the (possibly embedded) server's
    address to its children; it must not make their settings claim an external cluster
    (the health route reports ``embedded`` from settings)."""
    clean_env.setenv("JOBCTRL_TEMPORAL_ADDRESS", "127.0.0.1:7233")
    assert load_settings(AppPaths(tmp_path)).temporal.external is False


@pytest.mark.parametrize(
    "document",
    [
        {"workerActivitySlots": 0},
        {"workerActivitySlots": 65},
        {"sources": [{"kind": "carrier_pigeon", "id": "x"}]},
        {"sources": [{"kind": "json_file", "id": "mine"}]},  # no path
        {"sources": [{"kind": "json_file", "id": "Bad Id!", "path": "/x"}]},
        {"temporal": {"tls": "sometimes"}},
    ],
)
def test_invalid_settings_raise_a_validation_error(tmp_path, clean_env, document):
    paths = AppPaths(tmp_path)
    paths.settings.write_text(json.dumps(document))
    with pytest.raises(ValidationError):
        load_settings(paths)


def test_settings_are_frozen():
    with pytest.raises(ValidationError):
        AppSettings().worker_activity_slots = 2
