"""Issue 18 item 2's bar against the floor the libraries set, in the same runs.

Four cold launches a round, each on a fresh history file, in an order that rotates:

- **bare**: ``temporal server start-dev`` alone until a client's health check passes
  (``cold_start.py``'s baseline, the denominator of item 2's ratio).
- **floor, split**: the same dev server, a library-only worker and a library-only API
  (``floor_children.py``: FastAPI + uvicorn + ``temporalio``, no project code) spawned at
  the same moment, until the worker says ``ready`` and the API's ``/health`` passes a
  Temporal RPC. No supervisor process: the benchmark spawns them itself.
- **floor, merged**: the same with the worker and the API in one process.
- **jobctrl, direct**: the dev server, ``jobctrl worker`` and ``jobctrl api`` spawned by the
  benchmark at the same moment with the environment the supervisor gives them (no
  supervisor process), until ``/v1/health`` says ok: what the supervisor itself adds.
- **jobctrl, forked** (POSIX): the dev server and one process that imports the worker's and
  the API's modules once and forks both (``forked_children.py``): what a fork server would
  give.
- **jobctrl**: ``jobctrl serve`` until ``/v1/health`` says ok (``cold_start.py``'s launch).

The floors say how far under the bar any design on these libraries could get on this
machine, so a shortfall can be read as "our code" or "the libraries and the cores".

    .venv/bin/python bench/services_floor.py [--rounds 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from _common import (
    IS_WINDOWS,
    POLL_S,
    BenchError,
    compile_bytecode,
    machine_info,
    owned_popen_options,
    run_then_exit,
    sigterm_raises_interrupt,
    stop_process,
    summary,
    write_json,
)
from cold_start import baseline_launch, jobctrl_launch

from backend.supervision.embedded_temporal import dev_server_argv, temporal_binary
from backend.supervision.ports import LOOPBACK, free_port

CHILD = Path(__file__).resolve().parent / "floor_children.py"
FORKED = Path(__file__).resolve().parent / "forked_children.py"
START_TIMEOUT_S = 60.0
VARIANTS = ("floor_split", "floor_merged", "jobctrl_direct", "jobctrl_forked", "jobctrl")


def _launch_together(dev_server: list[str], children: list[list[str]], log: Path,
                     is_ready, **child_options) -> float:
    """Spawn the dev server and ``children`` at one moment, ask ``is_ready(the children's
    processes, started)`` every POLL_S until it says yes, then stop them all. Returns the
    seconds from the spawn to ready."""
    processes: list[subprocess.Popen] = []
    with open(log, "ab") as out:
        options = {"stdin": subprocess.DEVNULL, "stdout": out, "stderr": subprocess.STDOUT,
                   **owned_popen_options()}
        started = time.perf_counter()
        processes.append(subprocess.Popen(dev_server, **options))
        processes += [subprocess.Popen(argv, **{**options, **child_options})
                      for argv in children]
    try:
        while True:
            for process in processes:
                if process.poll() is not None:
                    raise BenchError(f"{process.args[:4]} exited with {process.returncode}")
            if time.perf_counter() - started > START_TIMEOUT_S:
                raise BenchError(f"not ready after {START_TIMEOUT_S:.0f}s")
            if is_ready(processes[1:], started):
                return time.perf_counter() - started
            time.sleep(POLL_S)
    finally:
        for process in reversed(processes):
            stop_process(process, sig="term", timeout=15)


def _answers(http: httpx.Client, url: str, check) -> bool:
    with contextlib.suppress(httpx.HTTPError, ValueError):
        return check(http.get(url))
    return False


def floor_launch(folder: Path, *, merged: bool) -> dict:
    """The dev server and the library-only children: launch → the worker printed ``ready``
    and the API's ``/health`` passed."""
    port, api_port = free_port(), free_port()
    address = f"{LOOPBACK}:{port}"
    child = [sys.executable, str(CHILD)]
    children = [child + ["both", address, str(api_port)]] if merged else [
        child + ["worker", address], child + ["api", address, str(api_port)]]
    url = f"http://{LOOPBACK}:{api_port}/health"
    seen: dict = {}
    watching: list[threading.Thread] = []

    def is_ready(processes: list[subprocess.Popen], started: float) -> bool:
        if not watching:  # the worker (or the merged child) is the first child
            watching.append(_watch_stdout(processes[0], started, seen))
        if "api_ready" not in seen and _answers(http, url, lambda r: r.status_code == 200):
            seen["api_ready"] = time.perf_counter() - started
        return "api_ready" in seen and "worker_ready" in seen

    with httpx.Client(timeout=2) as http:
        ready = _launch_together(
            dev_server_argv(temporal_binary(), history_file=folder / f"floor-{merged}.db",
                            port=port, ui_port=None),
            children, folder / "floor.log", is_ready, stdout=subprocess.PIPE, text=True)
    return {"ready_s": ready, "milestones": seen}


def _watch_stdout(process: subprocess.Popen, started: float, seen: dict) -> threading.Thread:
    """Notes when ``process`` prints ``ready`` (the library-only worker's signal)."""
    def watch() -> None:
        for line in process.stdout:
            if line.strip() == "ready":
                seen.setdefault("worker_ready", time.perf_counter() - started)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def jobctrl_children_launch(folder: Path, *, forked: bool) -> dict:
    """The dev server and JobCtrl's own worker and API, spawned (or forked) together by the
    benchmark with the environment the supervisor gives them: launch → ``/v1/health`` ok."""
    app_dir = folder / f"app-{'forked' if forked else 'direct'}"
    (app_dir / "logs").mkdir(parents=True)
    (app_dir / "temporal").mkdir()
    port, api_port = free_port(), free_port()
    env = {**os.environ, "JOBCTRL_APP_DIR": str(app_dir),
           "JOBCTRL_TEMPORAL_ADDRESS": f"{LOOPBACK}:{port}",
           "JOBCTRL_PARENT_PID": str(os.getpid()), "JOBCTRL_API_TOKEN": secrets.token_hex(16)}
    cli = [sys.executable, "-m", "backend.cli", "--app-dir", str(app_dir)]
    children = ([[sys.executable, str(FORKED), str(app_dir), str(api_port)]] if forked else
                [cli + ["worker"], cli + ["api", "--port", str(api_port)]])
    url = f"http://{LOOPBACK}:{api_port}/v1/health"
    with httpx.Client(timeout=2) as http:
        ready = _launch_together(
            dev_server_argv(temporal_binary(), history_file=app_dir / "temporal" / "h.db",
                            port=port, ui_port=None),
            children, folder / "children.log",
            lambda _processes, _started: _answers(
                http, url, lambda r: r.json().get("status") == "ok"),
            env=env)
    return {"ready_s": ready}


def run_round(index: int) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"jobctrl-floor-{index}-") as tmp:
        folder = Path(tmp)
        steps = {
            "bare": lambda: baseline_launch(folder / "bare.db", folder / "bare.log"),
            "floor_split": lambda: floor_launch(folder, merged=False),
            "floor_merged": lambda: floor_launch(folder, merged=True),
            "jobctrl_direct": lambda: jobctrl_children_launch(folder, forked=False),
            **({} if IS_WINDOWS else {
                "jobctrl_forked": lambda: jobctrl_children_launch(folder, forked=True)}),
            "jobctrl": lambda: jobctrl_launch(folder / "app"),
        }
        names = list(steps)
        order = names[index % len(names):] + names[:index % len(names)]
        return {"round": index + 1, "order": order, **{name: steps[name]() for name in order}}


def report(rounds: list[dict]) -> dict:
    bare = summary([r["bare"]["ready_s"] for r in rounds])
    out = {"bare_s": bare}
    for name in VARIANTS:
        if name not in rounds[0]:
            continue
        ready = summary([r[name]["ready_s"] for r in rounds])
        out[name] = {"ready_s": ready, "ratio_median": ready["median"] / bare["median"]}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    compile_bytecode()
    sigterm_raises_interrupt()
    results: dict = {"benchmark": "services_floor", "rounds": args.rounds,
                     "machine": machine_info(), "per_round": []}
    try:
        for index in range(args.rounds):
            result = run_round(index)
            results["per_round"].append(result)
            print(f"round {index + 1}/{args.rounds}: " + ", ".join(
                f"{name} {result[name]['ready_s']:.3f} s" for name in result["order"]),
                flush=True)
    except KeyboardInterrupt:
        return 130
    except BenchError as error:
        print(f"benchmark failed: {error}", file=sys.stderr)
        return 1
    results["summary"] = summary_table = report(results["per_round"])
    bare = summary_table["bare_s"]["median"]
    print(f"\nbare dev server   {bare:.3f} s (median); item 2's 6x bar: {6 * bare:.3f} s")
    for name in VARIANTS:
        if name not in summary_table:
            continue
        row = summary_table[name]
        print(f"{name:<16}  {row['ready_s']['median']:.3f} s median"
              f" ({row['ready_s']['min']:.3f}-{row['ready_s']['max']:.3f})"
              f"  = {row['ratio_median']:.2f}x bare")
    write_json(args.json, results)
    return 0


if __name__ == "__main__":
    run_then_exit(lambda: sys.exit(main()))
