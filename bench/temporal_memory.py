"""The Temporal dev server's memory knobs, each measured alone: resident size empty, and at
rest after ``--workflows`` workflows (bench/bare_workflows.py: 8 activities each, started
in batches of 50 like Discover's fan-out) ran through one Python worker.

The dev server is started exactly as the supervisor starts it (``dev_server_argv``: same
binary, WAL history file, the dynamic config the code sets), plus each variant's own
``--dynamic-config-value`` entries (through ``JOBCTRL_TEMPORAL_DYNAMIC_CONFIG``) or Go
runtime variables. Its RSS is read 5 s after start, then ``--idle`` seconds and
``--long-idle`` seconds after the last workflow closed (Go returns freed heap pages to
the system over minutes, and forces a collection every 2 minutes). Variants run
``--parallel`` at a time, each in its own process.

    .venv/bin/python bench/temporal_memory.py [--workflows 1000] [--parallel 3]
        [--variants default,cache-64,...] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import hard_exit, machine_info, owned_popen_options, stop_process, write_json  # noqa: E402

DYNAMIC = "JOBCTRL_TEMPORAL_DYNAMIC_CONFIG"
# name -> environment of the dev server (on top of the code's defaults)
VARIANTS: dict[str, dict[str, str]] = {
    "default": {},
    "none": {DYNAMIC: "history.cacheMaxSize=,history.hostLevelCacheMaxSize=,"
                      "history.cacheTTL=,history.eventsCacheMaxSizeBytes=,"
                      "history.eventsCacheTTL="},  # the server's own defaults
    "cache-64": {DYNAMIC: "history.cacheMaxSize=64,history.hostLevelCacheMaxSize=64"},
    # Values are JSON: a duration is a quoted string.
    "cache-ttl-30s": {DYNAMIC: 'history.cacheTTL="30s",history.eventsCacheTTL="30s"'},
    "events-128k": {DYNAMIC: "history.eventsCacheMaxSizeBytes=131072"},
    "gogc-50": {"GOGC": "50"},
    "memlimit-96m": {"GOMEMLIMIT": "96MiB"},
}


def rss_mib(pid: int) -> float:
    return round(psutil.Process(pid).memory_info().rss / 2**20, 1)


async def run_workflows(port: int, count: int) -> float:
    from bare_workflows import BareFanout, BareJob, noop
    from temporalio.client import Client
    from temporalio.worker import Worker

    client = None
    for _ in range(600):
        try:
            client = await Client.connect(f"127.0.0.1:{port}")
            break
        except Exception:  # noqa: BLE001 - still starting
            await asyncio.sleep(0.1)
    queue = f"bare-{uuid.uuid4().hex[:6]}"
    started = time.perf_counter()
    async with Worker(client, task_queue=queue, workflows=[BareJob, BareFanout],
                      activities=[noop], max_concurrent_activities=8):
        await client.execute_workflow("BareFanout", count, id="bare-fanout", task_queue=queue)
        while True:
            open_count = (await client.count_workflows(
                "WorkflowType = 'BareJob' AND ExecutionStatus = 'Running'")).count
            closed = (await client.count_workflows(
                "WorkflowType = 'BareJob' AND ExecutionStatus = 'Completed'")).count
            if not open_count and closed >= count:
                break
            await asyncio.sleep(0.5)
    return time.perf_counter() - started


def one(name: str, workflows: int, idle_s: float, long_idle_s: float) -> dict:
    from backend.supervision.embedded_temporal import dev_server_argv, temporal_binary
    from backend.supervision.ports import free_port

    os.environ.update(VARIANTS[name])  # read by dynamic_config() and by the Go runtime
    folder = Path(tempfile.mkdtemp(prefix=f"jobctrl-temporal-memory-{name}-"))
    port = free_port()
    argv = dev_server_argv(temporal_binary(), history_file=folder / "history.db", port=port,
                           ui_port=None)
    server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              env=dict(os.environ), **owned_popen_options())
    result: dict = {"variant": name, "argv_tail": argv[argv.index("--log-level"):]}
    try:
        time.sleep(5)
        result["empty_mib"] = rss_mib(server.pid)
        result["run_s"] = round(asyncio.run(run_workflows(port, workflows)), 1)
        result["after_run_mib"] = rss_mib(server.pid)
        time.sleep(idle_s)
        result[f"idle_{idle_s:.0f}s_mib"] = rss_mib(server.pid)
        time.sleep(max(0.0, long_idle_s - idle_s))
        result[f"idle_{long_idle_s:.0f}s_mib"] = rss_mib(server.pid)
    finally:
        stop_process(server, sig="term", timeout=15)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workflows", type=int, default=1000)
    parser.add_argument("--parallel", type=int, default=3)
    parser.add_argument("--idle", type=float, default=30.0)
    parser.add_argument("--long-idle", type=float, default=150.0)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a child: this variant only
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.workflows, args.idle, args.long_idle)), flush=True)
        return 0

    def child(name: str) -> dict:
        done = subprocess.run([sys.executable, __file__, "--one", name, "--workflows",
                               str(args.workflows), "--idle", str(args.idle), "--long-idle",
                               str(args.long_idle)], capture_output=True, text=True)
        try:
            measured = json.loads(done.stdout.strip().splitlines()[-1])
        except (IndexError, ValueError):
            measured = {"variant": name, "error": done.stderr[-800:]}
        print(json.dumps(measured), flush=True)
        return measured

    with ThreadPoolExecutor(args.parallel) as pool:
        results = list(pool.map(child, args.variants.split(",")))
    write_json(args.json, {"machine": machine_info(), "args": vars(args), "results": results})
    return 0 if all("error" not in r for r in results) else 1


if __name__ == "__main__":
    code = 1
    try:
        code = main()
    except BaseException:  # noqa: BLE001 - report, then leave without SDK finalization
        traceback.print_exc()
    hard_exit(code)
