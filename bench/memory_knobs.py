"""Each memory knob's effect: idle RSS of ``jobctrl serve`` after a 1,000-job run.

For every variant (a set of environment variables and settings on top of the defaults)
this starts ``jobctrl serve`` on a fresh app dir whose only source is a generated board of
``--jobs`` postings (the same board as bench/desktop_latency.py), saves a profile so every
job goes through Enrich → Score → Tailor → Cover → PDF on the offline provider, runs
Discover and waits until nothing is queued or running and no count moved for 5 s. Then it
reads the RSS of serve, Temporal, the worker and the API after ``--idle`` seconds of
quiet (and after 5 s, to show what settles), and the wall time of the run. Variants run
``--parallel`` at a time (the machine's load changes their wall times, not what they hold
at rest); ``empty`` rows are the same variant without a run (the baseline).

    .venv/bin/python bench/memory_knobs.py [--jobs 1000] [--parallel 4] [--idle 30]
        [--variants default,trim,...] [--json out.json]

Variants and their reading: bench/README.md ("Memory after a long run").
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import BenchError, ServeProcess, hard_exit, machine_info, write_json  # noqa: E402
from desktop_latency import PROFILE, board_file, mib, run_jobs, tree_rss  # noqa: E402

TRIM_OFF = {"JOBCTRL_HEAP_TRIM": "0"}
# name -> (environment, settings): each Python-side knob alone on top of the defaults (with
# the heap trim off), then the code's defaults ("tuned"). The Temporal dev server's own
# knobs are measured apart, on a bare workload: bench/temporal_memory.py.
VARIANTS: dict[str, tuple[dict[str, str], dict]] = {
    "default": (TRIM_OFF, {}),
    "trim": ({"JOBCTRL_HEAP_TRIM": "1"}, {}),
    "worker-cache-50": ({**TRIM_OFF, "JOBCTRL_WORKER_CACHED_WORKFLOWS": "50"}, {}),
    "no-sticky": ({**TRIM_OFF, "JOBCTRL_WORKER_CACHED_WORKFLOWS": "0"}, {}),
    "slots-4": (TRIM_OFF, {"workerActivitySlots": 4}),
    "tuned": ({}, {}),
    # The idle recycle (backend/temporal/loops/recycle_rule.py) with a quiet period short
    # enough for a benchmark: 20 s instead of 180 s, checked every 5 s instead of 30 s.
    "recycle": ({"JOBCTRL_RECYCLE_QUIET_S": "20", "JOBCTRL_RECYCLE_CHECK_S": "5"}, {}),
}
PROCESS_NAMES = ("supervisor", "temporal", "worker", "api")


def by_role(sizes: dict[str, int], info) -> dict[str, float]:
    """RSS (MiB) by service name, from the pids in runtime.json."""
    names = {pid: name for name, pid in info.pids.items()}
    out: dict[str, float] = {}
    for key, size in sizes.items():
        pid = int(key.rsplit(":", 1)[1])
        out[names.get(pid, key)] = mib(size)
    out["total"] = round(sum(v for k, v in out.items() if k in PROCESS_NAMES), 1)
    return out


def measure(name: str, work: Path, jobs: int, idle_s: float, run: bool) -> dict:
    env_extra, settings = VARIANTS[name]
    app_dir = work / f"{name}-{'run' if run else 'empty'}"
    app_dir.mkdir()
    board = app_dir / "bench-board.json"
    board_file(board, jobs)
    (app_dir / "settings.json").write_text(json.dumps({"sources": [
        {"kind": "json_file", "id": "bench_board", "path": str(board)}],
        "minFitScore": 0, **settings}),
        encoding="utf-8")
    import os

    serve = ServeProcess(app_dir, env={**os.environ, **env_extra})
    result: dict = {"variant": name, "run": run}
    try:
        result["healthy_s"] = round(serve.start(), 2)
        if run:
            result["jobs"] = run_jobs(app_dir, jobs)
        else:  # the same profile, no run
            import httpx

            httpx.put(f"{serve.info.api_base_url}/v1/profile", json=PROFILE, timeout=30,
                      headers={"Authorization": f"Bearer {serve.info.api_token}"}
                      ).raise_for_status()
        from backend.config import read_runtime_info

        def reading() -> dict[str, float]:  # runtime.json again: a recycled child has a new pid
            return by_role(tree_rss(serve.process.pid), read_runtime_info(app_dir))

        started_worker = serve.info.pids.get("worker")
        time.sleep(5)
        result["rss_after_5s"] = reading()
        time.sleep(max(0.0, idle_s - 5))
        result[f"rss_after_{idle_s:.0f}s"] = reading()
        result["worker_recycled"] = read_runtime_info(app_dir).pids.get("worker") != started_worker
    finally:
        serve.stop()
    print(f"{name:16} {'run' if run else 'empty':5} " + json.dumps(result), flush=True)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--idle", type=float, default=30.0)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--empty", default="default,tuned",
                        help="variants also measured without a run (baselines)")
    parser.add_argument("--json")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="jobctrl-memory-knobs-"))
    plan = [(name, True) for name in args.variants.split(",")]
    plan += [(name, False) for name in args.empty.split(",") if name]
    results: list[dict] = []
    errors: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        while True:
            with lock:
                if not plan:
                    return
                name, run = plan.pop(0)
            try:
                measured = measure(name, work, args.jobs, args.idle, run)
            except (BenchError, Exception) as error:  # noqa: BLE001 - reported, others go on
                measured = {"variant": name, "run": run, "error": str(error)[-500:]}
                errors.append(name)
            with lock:
                results.append(measured)

    threads = [threading.Thread(target=worker) for _ in range(args.parallel)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_json(args.json, {"machine": machine_info(), "args": vars(args), "results": results})
    return 1 if errors else 0


if __name__ == "__main__":
    code = 1
    try:
        code = main()
    except BaseException:  # noqa: BLE001 - report, then leave without SDK finalization
        traceback.print_exc()
    hard_exit(code)
