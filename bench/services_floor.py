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


def _watch_ready(process: subprocess.Popen, started: float, seen: dict) -> None:
    for line in process.stdout:
        if line.strip() == "ready":
            seen.setdefault("worker_ready", time.perf_counter() - started)


def floor_launch(folder: Path, *, merged: bool) -> dict:
    """The dev server and the library-only children, spawned together: launch → both ready."""
    port, api_port = free_port(), free_port()
    address = f"{LOOPBACK}:{port}"
    argv = dev_server_argv(temporal_binary(), history_file=folder / f"floor-{merged}.db",
                           port=port, ui_port=None)
    child = [sys.executable, str(CHILD)]
    kinds = [["both", address, str(api_port)]] if merged else [
        ["worker", address], ["api", address, str(api_port)]]
    seen: dict = {}
    processes: list[subprocess.Popen] = []
    with open(folder / "floor.log", "ab") as log:
        started = time.perf_counter()
        processes.append(subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                                          stderr=subprocess.STDOUT, **owned_popen_options()))
        for kind in kinds:
            process = subprocess.Popen(child + kind, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.PIPE, stderr=log, text=True,
                                       **owned_popen_options())
            processes.append(process)
            if kind[0] != "api":
                threading.Thread(target=_watch_ready, args=(process, started, seen),
                                 daemon=True).start()
    try:
        _wait_floor_ready(f"http://{LOOPBACK}:{api_port}/health", processes, started, seen)
        return {"ready_s": time.perf_counter() - started, "milestones": dict(seen)}
    finally:
        for process in reversed(processes):
            stop_process(process, sig="term", timeout=15)


def jobctrl_children_launch(folder: Path, *, forked: bool) -> dict:
    """The dev server and JobCtrl's own worker and API, spawned (or forked) together by the
    benchmark: launch → ``/v1/health`` ok."""
    import os
    import secrets

    app_dir = folder / f"app-{'forked' if forked else 'direct'}"
    (app_dir / "logs").mkdir(parents=True)
    (app_dir / "temporal").mkdir()
    port, api_port = free_port(), free_port()
    address = f"{LOOPBACK}:{port}"
    env = {**os.environ, "JOBCTRL_APP_DIR": str(app_dir), "JOBCTRL_TEMPORAL_ADDRESS": address,
           "JOBCTRL_PARENT_PID": str(os.getpid()), "JOBCTRL_API_TOKEN": secrets.token_hex(16)}
    cli = [sys.executable, "-m", "backend.cli", "--app-dir", str(app_dir)]
    children = ([[sys.executable, str(FORKED), str(app_dir), str(api_port)]] if forked else
                [cli + ["worker"], cli + ["api", "--port", str(api_port)]])
    processes: list[subprocess.Popen] = []
    with open(folder / "children.log", "ab") as log:
        started = time.perf_counter()
        processes.append(subprocess.Popen(
            dev_server_argv(temporal_binary(), history_file=app_dir / "temporal" / "h.db",
                            port=port, ui_port=None),
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            **owned_popen_options()))
        processes += [subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                       stderr=subprocess.STDOUT, **owned_popen_options())
                      for argv in children]
    try:
        url = f"http://{LOOPBACK}:{api_port}/v1/health"
        with httpx.Client(timeout=2) as http:
            while True:
                _check_running(processes, started)
                with contextlib.suppress(httpx.HTTPError, ValueError):
                    if http.get(url).json().get("status") == "ok":
                        return {"ready_s": time.perf_counter() - started}
                time.sleep(POLL_S)
    finally:
        for process in reversed(processes):
            stop_process(process, sig="term", timeout=15)
        if (folder / "children.log").exists() and "--keep-logs" in sys.argv:
            print((folder / "children.log").read_text()[-3000:])


def _check_running(processes: list, started: float) -> None:
    for process in processes:
        if process.poll() is not None:
            raise BenchError(f"{process.args[:4]} exited with {process.returncode}")
    if time.perf_counter() - started > START_TIMEOUT_S:
        raise BenchError(f"not ready after {START_TIMEOUT_S:.0f}s")


def _wait_floor_ready(url: str, processes: list, started: float, seen: dict) -> None:
    with httpx.Client(timeout=2) as http:
        while "api_ready" not in seen or "worker_ready" not in seen:
            _check_running(processes, started)
            if "api_ready" not in seen:
                try:
                    if http.get(url).status_code == 200:
                        seen["api_ready"] = time.perf_counter() - started
                except httpx.HTTPError:
                    pass
            time.sleep(POLL_S)


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
