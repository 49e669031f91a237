"""Where supervised children's logs go: each record once, crash output in the console log
the error names, every file bounded (a week of unattended running cannot fill the disk).

Real child processes started by the real ManagedService; ``log_probe.py`` logs the way
``jobctrl worker`` does."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from backend.supervision.children import ChildRegistry
from backend.supervision.process import (
    LOG_BACKUPS,
    LOG_MAX_BYTES_ENV,
    PARENT_PID_ENV,
    console_log_file,
    log_file,
)
from backend.supervision.services import ManagedService, ServiceFailed, ServiceSpec
from tests.integration.log_probe import chunk_text, done_marker, ready_marker, record_text
from tests.integration.serve_process import ServeProcess

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

PROBE = Path(__file__).with_name("log_probe.py")
NAME = "probe"
STARTUP_TIMEOUT_S = 60.0  # a hang guard, not an assertion


def probe_spec(log_dir: Path, mode: str, arg: str, *, env: dict[str, str] | None = None,
               console_max_bytes: int | None = None, **spec_fields) -> ServiceSpec:
    marker = ready_marker(log_dir, NAME)

    async def ready(_pid: int) -> bool:
        return marker.exists()

    def argv() -> list[str]:
        marker.unlink(missing_ok=True)  # every (re)start must mark itself ready again
        return [sys.executable, str(PROBE), str(log_dir), NAME, mode, arg]

    return ServiceSpec(
        name=NAME,
        argv=argv,
        env={**os.environ, PARENT_PID_ENV: str(os.getpid()), **(env or {})},
        ready=ready,
        ready_timeout=STARTUP_TIMEOUT_S,
        console_log=console_log_file(log_dir, NAME),
        log_file=log_file(log_dir, NAME),
        restart_on_crash=False,
        console_max_bytes=console_max_bytes,
        **spec_fields,
    )


async def run_once(tmp_path: Path, spec: ServiceSpec, *, until: Path | None = None) -> None:
    """Start the probe under the real ManagedService, wait for ``until`` to exist if
    given (the monitor runs meanwhile), then stop it."""
    service = ManagedService(spec, ChildRegistry(tmp_path / "children.json"), lambda s: None)
    try:
        await service.start()
        for _ in range(int(STARTUP_TIMEOUT_S * 20)):
            if until is None or until.exists():
                break
            await asyncio.sleep(0.1)
    finally:
        await service.stop()


def all_log_text(log_dir: Path) -> dict[str, str]:
    return {path.name: path.read_text(encoding="utf-8", errors="replace")
            for path in sorted(log_dir.iterdir()) if ".log" in path.name}


async def test_a_supervised_child_writes_each_record_exactly_once(tmp_path):
    log_dir = tmp_path / "logs"
    count = 300
    await run_once(tmp_path, probe_spec(log_dir, "log", str(count)))

    files = all_log_text(log_dir)
    assert set(files) == {"probe.log", "probe.console.log"}
    everything = "".join(files.values())
    for index in range(count):
        assert everything.count(record_text(index)) == 1, f"record {index}"
    assert record_text(0) not in files["probe.console.log"]


async def test_an_unsupervised_child_also_logs_to_its_terminal(tmp_path):
    """``jobctrl worker`` run by hand (no supervisor) still shows its log on stderr."""
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    env = {key: value for key, value in os.environ.items() if key != PARENT_PID_ENV}
    with open(tmp_path / "terminal.txt", "wb") as terminal:
        process = subprocess.Popen(
            [sys.executable, str(PROBE), str(log_dir), NAME, "log", "5"],
            env=env, stdin=subprocess.DEVNULL, stdout=terminal, stderr=subprocess.STDOUT)
        try:
            for _ in range(int(STARTUP_TIMEOUT_S * 10)):
                if ready_marker(log_dir, NAME).exists() or process.poll() is not None:
                    break
                await asyncio.sleep(0.1)
        finally:
            process.terminate()
            process.wait(30)
    shown = (tmp_path / "terminal.txt").read_text(encoding="utf-8")
    assert record_text(4) in shown
    assert record_text(4) in log_file(log_dir, NAME).read_text(encoding="utf-8")


async def test_a_crash_before_logging_is_in_the_console_log_the_error_names(tmp_path):
    log_dir = tmp_path / "logs"
    text = "probe: an import failed before logging was configured"
    with pytest.raises(ServiceFailed) as failure:
        await run_once(tmp_path, probe_spec(log_dir, "crash", text))

    message = str(failure.value)
    assert "exited with code 3 while starting" in message
    assert f"see {console_log_file(log_dir, NAME)}" in message
    assert text in console_log_file(log_dir, NAME).read_text(encoding="utf-8")

    # The restart after the crash rotates the (over-bound) console log and keeps the
    # crash output in the one previous copy, for the user to read.
    await run_once(tmp_path, probe_spec(log_dir, "raw", "10", console_max_bytes=1))
    previous = console_log_file(log_dir, NAME).with_name("probe.console.log.1")
    assert text in previous.read_text(encoding="utf-8")
    assert console_log_file(log_dir, NAME).read_text(encoding="utf-8") == "r" * 10


async def test_a_start_that_fails_says_the_childs_own_last_error(tmp_path):
    log_dir = tmp_path / "logs"
    log_dir.mkdir()
    # An earlier process's error in the same log is not this start's reason.
    log_file(log_dir, NAME).write_text(
        "2026-12-01 10:00:00,000 probe[1] ERROR probe: an old, unrelated failure\n")
    reason = "[Errno 98] error while attempting to bind on address: address already in use"
    with pytest.raises(ServiceFailed) as failure:
        await run_once(tmp_path, probe_spec(log_dir, "fail", reason))

    message = str(failure.value)
    assert f"exited with code 3 while starting ({reason}); see " in message
    assert "old, unrelated" not in message

    with pytest.raises(ServiceFailed) as silent:
        await run_once(tmp_path, probe_spec(log_dir, "crash", "no logging yet"))
    assert "while starting; see " in str(silent.value)  # nothing logged: no reason made up


async def test_a_child_writing_far_more_than_the_bound_keeps_its_log_bounded(tmp_path):
    log_dir = tmp_path / "logs"
    bound = 4_000
    count = 2_000  # ~200 KB of records: fifty times the bound
    await run_once(tmp_path, probe_spec(log_dir, "log", str(count),
                                        env={LOG_MAX_BYTES_ENV: str(bound)}))

    rotated = sorted(log_dir.glob("probe.log*"))
    assert [p.name for p in rotated] == ["probe.log", *[f"probe.log.{i}" for i in
                                                        range(1, LOG_BACKUPS + 1)]]
    assert all(path.stat().st_size <= bound for path in rotated)
    newest = log_file(log_dir, NAME).read_text(encoding="utf-8")
    assert record_text(count - 1) in newest  # the newest records are the ones kept


async def test_console_output_over_many_restarts_keeps_two_files(tmp_path):
    log_dir = tmp_path / "logs"
    per_run = 20_000
    for _ in range(5):
        await run_once(tmp_path, probe_spec(log_dir, "raw", str(per_run),
                                            console_max_bytes=4_000))
    console = sorted(p.name for p in log_dir.glob("probe.console.log*"))
    assert console == ["probe.console.log", "probe.console.log.1"]
    assert [(log_dir / n).stat().st_size for n in console] == [per_run, per_run]


async def test_a_long_running_child_console_log_is_trimmed_while_it_runs(tmp_path):
    """No restart for a week (the dev server): the monitor copies the console log to
    ``.1`` and truncates it in place, and the child's next output lands at the start."""
    log_dir = tmp_path / "logs"
    chunks = 5
    await run_once(tmp_path, probe_spec(log_dir, "stream", str(chunks), console_max_bytes=4_000,
                                        console_check_every_s=0.2),
                   until=done_marker(log_dir, NAME))

    console = sorted(p.name for p in log_dir.glob("probe.console.log*"))
    assert console == ["probe.console.log", "probe.console.log.1"]
    assert console_log_file(log_dir, NAME).stat().st_size == 0
    previous = log_dir / "probe.console.log.1"
    assert previous.read_text(encoding="utf-8") == chunk_text(chunks - 1)


async def test_the_real_services_keep_their_records_out_of_their_console_logs(running):
    """worker and api log through their rotating files only; their console logs (and the
    dev server's) hold raw output, never a second copy of a formatted record."""
    logs = running.paths.logs
    for name in ("worker", "api"):
        assert re.search(rf"^\S+ \S+ {name}\[\d+\] INFO ", log_file(logs, name).read_text(
            encoding="utf-8"), re.MULTILINE), f"{name}.log has no records"
        console = console_log_file(logs, name).read_text(encoding="utf-8", errors="replace")
        assert f" {name}[" not in console, f"{name}.console.log repeats records:\n{console}"
    assert console_log_file(logs, "temporal").exists()
    assert not (logs / "temporal.log").exists()


async def test_serve_in_a_terminal_prints_its_log_and_names_the_crash_files(tmp_path):
    """`jobctrl serve` logs to the terminal as well as serve.log; a crashed worker's
    restart warning names the console log that holds its raw output."""
    app_dir = tmp_path / "app"
    serve = ServeProcess(app_dir)
    info = serve.wait_healthy()
    try:
        os.kill(info.pids["worker"], signal.SIGKILL)
        deadline = time.monotonic() + STARTUP_TIMEOUT_S  # a hang guard
        while time.monotonic() < deadline:
            if serve.wait_healthy().pids["worker"] != info.pids["worker"]:
                break
            await asyncio.sleep(0.2)
    finally:
        assert serve.interrupt() == 0
    logs = app_dir / "logs"
    warning = (rf"serve\[{serve.process.pid}\] WARNING backend\.supervision\.services: worker exited"
               rf" with -9; restarting in \S+; see {re.escape(str(console_log_file(logs, 'worker')))}"
               rf" and {re.escape(str(log_file(logs, 'worker')))}")
    assert re.search(warning, serve.output), serve.output
    assert re.search(warning, log_file(logs, "serve").read_text(encoding="utf-8"))
