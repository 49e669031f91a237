"""Shared plumbing for the benchmarks: launching and stopping ``jobctrl serve``, child
processes that never outlive the benchmark, machine facts and summary statistics.

Benchmarks run as scripts (``.venv/bin/python bench/<name>.py``), so this module is
imported as ``_common`` from the ``bench`` folder; the project itself comes from the
editable install that ``scripts/test`` / ``scripts/bootstrap.sh`` put into ``.venv``.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import psutil

from backend.config import RuntimeInfo, read_runtime_info
from backend.supervision.children import linux_parent_death_hook

REPO = Path(__file__).resolve().parent.parent
IS_WINDOWS = sys.platform == "win32"

SERVE_START_TIMEOUT_S = 120.0
SERVE_STOP_TIMEOUT_S = 30.0
PID_GONE_TIMEOUT_S = 10.0
POLL_S = 0.01


class BenchError(RuntimeError):
    pass


# -- processes --------------------------------------------------------------------------


def owned_popen_options() -> dict:
    """A child in its own session (a terminal Ctrl-C reaches only the benchmark, which
    then stops its children in order) that dies with the benchmark on Linux."""
    if sys.platform.startswith("linux"):
        return {"start_new_session": True, "preexec_fn": linux_parent_death_hook(os.getpid())}
    if IS_WINDOWS:
        return {"creationflags": 0x00000200}  # CREATE_NEW_PROCESS_GROUP
    return {"start_new_session": True}


def interrupt(process: subprocess.Popen) -> None:
    """Ctrl-C equivalent for a child in its own session / process group."""
    with contextlib.suppress(ProcessLookupError, OSError):
        if IS_WINDOWS:
            process.send_signal(signal.CTRL_BREAK_EVENT)
        else:
            process.send_signal(signal.SIGINT)


def stop_process(process: subprocess.Popen, *, sig: str, timeout: float) -> float:
    """Signal, wait up to ``timeout``, then kill. Returns the seconds until it exited."""
    if process.poll() is not None:
        return 0.0
    started = time.perf_counter()
    if sig == "int":
        interrupt(process)
    else:
        with contextlib.suppress(ProcessLookupError, OSError):
            process.terminate()
    try:
        try:
            process.wait(timeout=timeout)
        except KeyboardInterrupt:
            # Ctrl-C while it shuts down: let it finish (a second Ctrl-C kills it), then
            # unwind, so nothing is left running behind the benchmark.
            try:
                process.wait(timeout=timeout)
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait()
            raise
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise BenchError(f"pid {process.pid} did not stop within {timeout:.0f}s; killed") from None
    return time.perf_counter() - started


def jobctrl_argv(app_dir: Path, *extra: str, command: str = "serve") -> list[str]:
    """The ``jobctrl`` console script of this environment (``python -m backend.cli`` if the
    script is missing)."""
    script = Path(sys.executable).parent / ("jobctrl.exe" if IS_WINDOWS else "jobctrl")
    base = [str(script)] if script.is_file() else [sys.executable, "-m", "backend.cli"]
    return [*base, "--app-dir", str(app_dir), command, "--no-temporal-ui", *extra]


def pid_alive(pid: int, created: float | None) -> bool:
    """True while ``pid`` is a live (non-zombie) process started at ``created``."""
    try:
        process = psutil.Process(pid)
        if created is not None and abs(process.create_time() - created) > 0.01:
            return False  # the pid was recycled
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


@dataclass
class ServeProcess:
    """One ``jobctrl serve`` run: launch, readiness milestones, SIGINT stop, pid check."""

    app_dir: Path
    env: dict[str, str] | None = None  # None: this process's environment
    process: subprocess.Popen | None = None
    launched_at: float = 0.0
    milestones: dict[str, float] = field(default_factory=dict)  # seconds after launch
    stderr_lines: list[str] = field(default_factory=list)
    info: RuntimeInfo | None = None
    pid_create_times: dict[str, float | None] = field(default_factory=dict)
    _reader: threading.Thread | None = None

    def launch(self) -> None:
        self.launched_at = time.perf_counter()
        self.process = subprocess.Popen(
            jobctrl_argv(self.app_dir),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            env=self.env,
            **owned_popen_options(),
        )
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()

    def _read_stderr(self) -> None:
        """serve prints ``  <service> <state>`` lines: timestamp the ``ready`` ones."""
        for line in self.process.stderr:
            now = time.perf_counter() - self.launched_at
            self.stderr_lines.append(line.rstrip())
            parts = line.split()
            if len(parts) >= 2 and parts[1] == "ready":
                self.milestones.setdefault(f"{parts[0]}_ready", now)

    def since_launch(self) -> float:
        return time.perf_counter() - self.launched_at

    def _check_alive(self) -> None:
        if self.process.poll() is not None:
            tail = "\n".join(self.stderr_lines[-15:])
            raise BenchError(f"jobctrl serve exited with {self.process.returncode}:\n{tail}"
                             + self.log_tails())

    def log_tails(self, lines: int = 8) -> str:
        """The end of every service log (the app dir is usually deleted afterwards)."""
        out = []
        for log in sorted((self.app_dir / "logs").glob("*.log")):
            with contextlib.suppress(OSError):
                text = log.read_text(encoding="utf-8", errors="replace").splitlines()
                if text:
                    out.append(f"--- {log.name}\n" + "\n".join(text[-lines:]))
        return ("\n" + "\n".join(out)) if out else ""

    def wait_runtime_info(self, timeout: float = SERVE_START_TIMEOUT_S) -> RuntimeInfo:
        deadline = time.perf_counter() + timeout
        while True:
            self._check_alive()
            with contextlib.suppress(ValueError, OSError):
                info = read_runtime_info(self.app_dir)
                if info is not None and info.api_base_url:
                    self.milestones["runtime_json"] = self.since_launch()
                    self._remember(info)
                    return info
            if time.perf_counter() > deadline:
                raise BenchError(f"no runtime.json in {self.app_dir} after {timeout:.0f}s")
            time.sleep(POLL_S)

    def _remember(self, info: RuntimeInfo) -> None:
        self.info = info
        for name, pid in info.pids.items():
            with contextlib.suppress(psutil.Error):
                self.pid_create_times[name] = psutil.Process(pid).create_time()

    def wait_healthy(self, timeout: float = SERVE_START_TIMEOUT_S) -> dict:
        """Polls ``GET /v1/health`` until ``status == "ok"``; returns the body."""
        assert self.info is not None
        deadline = time.perf_counter() + timeout
        with httpx.Client(base_url=self.info.api_base_url, timeout=2) as client:
            while True:
                self._check_alive()
                with contextlib.suppress(httpx.HTTPError, ValueError):
                    response = client.get("/v1/health")
                    body = response.json()
                    if response.status_code == 200 and body.get("status") == "ok":
                        self.milestones["health_ok"] = self.since_launch()
                        return body
                if time.perf_counter() > deadline:
                    raise BenchError(f"/v1/health not ok after {timeout:.0f}s")
                time.sleep(POLL_S)

    def start(self) -> float:
        """Launch and wait until healthy; returns seconds from launch to health ok."""
        self.launch()
        self.wait_runtime_info()
        self.wait_healthy()
        if self.info is not None:  # a child restarted while starting has a new pid
            with contextlib.suppress(ValueError, OSError):
                fresh = read_runtime_info(self.app_dir)
                if fresh is not None:
                    self._remember(fresh)
        return self.milestones["health_ok"]

    def stop(self) -> dict:
        """SIGINT (Ctrl-C), wait, then check that no pid from runtime.json survives."""
        if self.process is None:
            return {}
        result: dict = {"exit_code": None}
        try:
            result["stop_s"] = stop_process(self.process, sig="int", timeout=SERVE_STOP_TIMEOUT_S)
            result["exit_code"] = self.process.returncode
        finally:
            survivors = self._survivors()
            if survivors:
                self._kill(survivors)
        result["survivors"] = survivors
        result["runtime_json_removed"] = not (self.app_dir / "runtime.json").exists()
        if self._reader is not None:
            self._reader.join(timeout=2)
        return result

    def _survivors(self) -> dict[str, int]:
        """Pids recorded in runtime.json still alive once serve has exited (children get
        a short grace period: they are SIGTERMed and waited for by serve itself)."""
        if self.info is None:
            return {}
        deadline = time.perf_counter() + PID_GONE_TIMEOUT_S
        while True:
            alive = {name: pid for name, pid in self.info.pids.items()
                     if pid_alive(pid, self.pid_create_times.get(name))}
            if not alive or time.perf_counter() > deadline:
                return alive
            time.sleep(0.05)

    def _kill(self, survivors: dict[str, int]) -> None:
        for name, pid in survivors.items():
            with contextlib.suppress(psutil.Error):
                process = psutil.Process(pid)
                if pid_alive(pid, self.pid_create_times.get(name)):
                    process.kill()


# -- facts and numbers ------------------------------------------------------------------


def compile_bytecode() -> None:
    """The app's bytecode, as every install has it (pip compiles at install, the frozen
    bundle ships it, a source run writes it on its first import). Without this, under
    ``PYTHONDONTWRITEBYTECODE`` (set on this machine) every launch compiled ~3,300 lines of
    the shell's modules before its first paint (~40 ms CPU) and each Python child its
    own (~0.25 CPU-s for the worker and the API together); the baselines import only
    packages whose bytecode pip wrote."""
    import compileall
    import importlib.util

    for package in ("backend", "desktop"):
        for folder in importlib.util.find_spec(package).submodule_search_locations:
            compileall.compile_dir(folder, quiet=1)


def machine_info() -> dict:
    cpu = platform.processor() or platform.machine()
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    info = {
        "platform": platform.platform(),
        "cpu": cpu,
        "logical_cpus": os.cpu_count(),
        "memory_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "python": platform.python_version(),
    }
    with contextlib.suppress(OSError, AttributeError):
        info["load_average_at_start"] = [round(x, 2) for x in os.getloadavg()]
    with contextlib.suppress(Exception):
        from backend.supervision.embedded_temporal import temporal_binary

        out = subprocess.run([str(temporal_binary()), "--version"], capture_output=True,
                             text=True, timeout=10)
        info["temporal_cli"] = out.stdout.strip()
    with contextlib.suppress(Exception):
        import temporalio

        info["temporalio"] = temporalio.__version__
    return info


def percentile(values: list[float], pct: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * pct / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summary(values: list[float]) -> dict:
    return {
        "n": len(values),
        "median": percentile(values, 50),
        "min": min(values) if values else float("nan"),
        "max": max(values) if values else float("nan"),
    }


@contextlib.contextmanager
def commit_tree(commit: str):
    """``commit`` checked out (detached) into a temporary worktree of this repository,
    removed afterwards: a benchmark runs there and here to compare two commits."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        tree = Path(folder) / "baseline"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), commit],
                       cwd=REPO, check=True, capture_output=True)
        try:
            yield tree
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, check=False)


def run_in_tree(tree: Path, argv: list[str]) -> dict:
    """Runs ``argv`` (a benchmark script and its options; ``--json <file>`` is added) with
    ``tree`` as the working folder and first on the import path, and returns the JSON it
    wrote: the code measured is that tree's."""
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as handle:
        out = Path(handle.name)
    try:
        env = {**os.environ, "PYTHONPATH": str(tree)}
        subprocess.run([sys.executable, *argv, "--json", str(out)], cwd=tree, env=env, check=True,
                       capture_output=True)
        return json.loads(out.read_text(encoding="utf-8"))
    finally:
        out.unlink(missing_ok=True)


def interleaved(turn, old_tree: Path, new_tree: Path, turns: int) -> tuple[list[float], list[float]]:
    """``turn(tree) -> seconds`` in both trees in turns (old, new, old, new, …), so machine
    load drifts over both sides alike."""
    old, new = [], []
    for _ in range(turns):
        old.append(turn(old_tree))
        new.append(turn(new_tree))
    return old, new


def write_json(path: str | None, payload: dict) -> None:
    if path:
        Path(path).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {path}")


def sigterm_raises_interrupt() -> None:
    """SIGTERM (a CI timeout, ``kill``) unwinds like Ctrl-C, so every ``finally`` that
    stops a child still runs."""

    def handler(signum, frame):
        raise KeyboardInterrupt

    with contextlib.suppress(ValueError, OSError, AttributeError):
        signal.signal(signal.SIGTERM, handler)


def hard_exit(code: int) -> None:
    """Leave without interpreter finalization: a process that used the Temporal SDK can
    abort there (``PyGILState_Release``, sdk-python issue 300)."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


def run_then_exit(main) -> None:
    """Run a benchmark's ``main``, print what failed, and leave without the Temporal
    SDK's finalization (``hard_exit``)."""
    import traceback

    code = 0
    try:
        main()
    except SystemExit as exit_:  # --help, argparse's usage errors
        code = exit_.code if isinstance(exit_.code, int) else 1
    except BaseException:  # noqa: BLE001 - report, then leave without SDK finalization
        traceback.print_exc()
        code = 1
    hard_exit(code)
