"""Per-process CPU over the JobCtrl half of ``pipeline_throughput.py``: the load-insensitive
figure for the pipeline's overhead (bench/README.md, "Per-activity overhead").

The same run as the throughput benchmark's JobCtrl half (fresh app dir, ``minFitScore`` 0,
the demo board, offline provider, Discover until every PDF stage succeeded), with each
service's CPU seconds (user + system, psutil) read once the profile is saved and again
when the last PDF stage succeeded. On a CPU-bound 2-core machine every process's CPU is
throughput, and CPU seconds move far less with the machine's load than wall time does.
``--py-spy OUT`` also records the worker with py-spy (an SVG flame graph, or raw folded
stacks when OUT ends in ``.txt``); ``--rounds N`` repeats the run.

    .venv/bin/python bench/pipeline_cpu.py [--rounds 1] [--json out.json] [--py-spy w.svg]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    ServeProcess,
    machine_info,
    run_then_exit,
    sigterm_raises_interrupt,
    write_json,
)
from pipeline_throughput import PROFILE, prepared_jobs  # noqa: E402


def cpu_seconds(pids: dict[str, int]) -> dict[str, float]:
    """Each service's user + system CPU so far (its children included: none expected)."""
    found = {}
    for name, pid in pids.items():
        with contextlib.suppress(psutil.Error):
            times = psutil.Process(pid).cpu_times()
            found[name] = times.user + times.system + times.children_user + times.children_system
    return found


def thread_cpu(pid: int) -> dict[int, tuple[str, float]]:
    """(thread name, CPU seconds so far) of each thread of ``pid`` (Linux: /proc)."""
    found = {}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            stat = (task / "stat").read_text()
            name = stat[stat.index("(") + 1 : stat.rindex(")")]
            fields = stat[stat.rindex(")") + 2 :].split()
            found[int(task.name)] = (name, (int(fields[11]) + int(fields[12])) / tick)
    return found


def python_thread_names(pid: int) -> dict[int, str]:
    """Native thread id -> Python thread name (``py-spy dump``; Python 3.11 does not name
    its threads for the OS), with the pool suffixes dropped so a pool sums as one. Without
    py-spy (it is not a project dependency) the threads keep their OS names."""
    if not Path(py_spy_binary()).exists():
        return {}
    dump = subprocess.run([py_spy_binary(), "dump", "--pid", str(pid), "--nonblocking"],
                          capture_output=True, text=True, check=False).stdout
    names = {}
    for match in re.finditer(r'^Thread (\d+) \([a-z]+\): "([^"]*)"', dump, re.MULTILINE):
        names[int(match.group(1))] = re.sub(r"[_-]?\d+(?=\b|_)|\s*\(.*\)", "", match.group(2))
    return names


def by_thread_name(before: dict, after: dict, python_names: dict[int, str]) -> dict[str, float]:
    """The worker's CPU over the run per thread name (threads of one name summed; a thread
    py-spy does not list is a native one: its OS name)."""
    totals: dict[str, float] = {}
    for tid, (name, seconds) in after.items():
        label = python_names.get(tid, f"native:{name}")
        used = seconds - before.get(tid, (name, 0.0))[1]
        totals[label] = round(totals.get(label, 0.0) + used, 2)
    return dict(sorted(totals.items(), key=lambda item: -item[1]))


def py_spy_binary() -> str:
    return shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")


def py_spy(pid: int, out: str) -> subprocess.Popen:
    binary = py_spy_binary()
    folded = out.endswith(".txt")
    return subprocess.Popen(
        [binary, "record", "--pid", str(pid), "--rate", "100", "--threads", "--gil", "--nonblocking",
         "--format", "raw" if folded else "flamegraph", "--output", out],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def one_round(jobs: int, spy_out: str | None) -> dict:
    app_dir = Path(tempfile.mkdtemp(prefix="jobctrl-bench-cpu-"))
    (app_dir / "settings.json").write_text(json.dumps({"minFitScore": 0}), encoding="utf-8")
    serve = ServeProcess(app_dir)
    spy = None
    try:
        serve.start()
        info = serve.info
        pids = {**info.pids, "supervisor": serve.process.pid}
        headers = {"Authorization": f"Bearer {info.api_token}"}
        httpx.put(f"{info.api_base_url}/v1/profile", json=PROFILE, headers=headers).raise_for_status()
        if spy_out:
            spy = py_spy(pids["worker"], spy_out)
            time.sleep(1.0)  # py-spy attaches
        before = cpu_seconds(pids)
        threads_before = thread_cpu(pids["worker"])
        load_start = os.getloadavg()[0]
        started = time.perf_counter()
        httpx.post(f"{info.api_base_url}/v1/pipeline/actions/run-stage",
                   json={"stage": "discover"}, headers=headers).raise_for_status()
        while prepared_jobs(app_dir, jobs) < jobs:
            time.sleep(0.05)
        seconds = time.perf_counter() - started
        after = cpu_seconds(pids)
        threads = by_thread_name(threads_before, thread_cpu(pids["worker"]),
                                 python_thread_names(pids["worker"]))
        used = {name: round(after[name] - before.get(name, 0.0), 2) for name in after}
        return {"seconds": round(seconds, 2), "cpu": used, "cpuTotal": round(sum(used.values()), 2),
                "workerThreads": threads,
                "load": [round(load_start, 2), round(os.getloadavg()[0], 2)]}
    finally:
        if spy is not None:
            spy.send_signal(2)  # py-spy writes its output on SIGINT
            with contextlib.suppress(subprocess.TimeoutExpired):
                spy.wait(timeout=30)
        serve.stop()
        shutil.rmtree(app_dir, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=234)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--py-spy", dest="spy", help="record the worker (first round) here")
    parser.add_argument("--json")
    args = parser.parse_args()
    sigterm_raises_interrupt()
    rounds = []
    for index in range(args.rounds):
        result = one_round(args.jobs, args.spy if index == 0 else None)
        rounds.append(result)
        cpu = "  ".join(f"{name} {value:.1f}" for name, value in sorted(result["cpu"].items()))
        print(f"round {index + 1}: {result['seconds']:.1f} s wall, CPU s: {cpu}"
              f"  total {result['cpuTotal']:.1f}  (load {result['load'][0]} -> {result['load'][1]})",
              flush=True)
        print("  worker threads:", "  ".join(f"{name} {value:.1f}" for name, value
                                             in result["workerThreads"].items() if value >= 0.1))
    if len(rounds) > 1:
        worker = statistics.median(r["cpu"].get("worker", 0.0) for r in rounds)
        print(f"median worker CPU {worker:.1f} s")
    write_json(args.json, {"machine": machine_info(), "rounds": rounds})


if __name__ == "__main__":
    run_then_exit(main)
