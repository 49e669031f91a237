"""The demo board through every stage with the offline provider, against a bare
Temporal baseline of the same shape measured in the same run.

JobCtrl: ``jobctrl serve`` on a fresh app dir with a profile; from the Discover request
until every job's PDF stage has succeeded.

Baseline: the same ``temporal`` binary and history settings, one Python worker, and as
many workflows as JobCtrl prepared, each running the same number of activities that do
nothing (preflight + 5 stages + 2 lifecycle records), started the same way (in batches
from one parent workflow). The ratio is what orchestration-plus-persistence costs on top
of Temporal itself. Target (issue 18, item 6): at most 1.2x, the median of 3 runs.

Since session 9 JobCtrl runs a job's preflight and lifecycle records as local activities,
so it asks less of Temporal than that baseline does. A second baseline of that shape (3
local + 5 regular no-op activities a job) is measured too and reported beside it
(``--skip-same-shape``: not measured).

    .venv/bin/python bench/pipeline_throughput.py [--json out.json] [--skip-same-shape]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sqlite3
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx
from temporalio.client import Client
from temporalio.worker import Worker

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    BenchError,
    ServeProcess,
    machine_info,
    owned_popen_options,
    run_then_exit,
    sigterm_raises_interrupt,
    stop_process,
    write_json,
)
from bare_workflows import (  # noqa: E402
    ACTIVITIES_PER_JOB,
    STAGES_PER_JOB,
    BareFanout,
    BareJob,
    BareJobLocal,
    noop,
)

from backend.supervision.embedded_temporal import dev_server_argv, temporal_binary  # noqa: E402
from backend.supervision.ports import free_port  # noqa: E402

PROFILE = {
    "name": "Bench Candidate", "targetTitles": ["Backend Engineer", "Data Engineer"],
    "skills": ["Python", "PostgreSQL", "Kubernetes", "AWS", "SQL", "React"],
    "resumeText": "Bench Candidate\nEngineer.\n\nEXPERIENCE\n- Built Python services on AWS\n",
}


def pdf_stage_counts(app_dir: Path) -> dict[str, int]:
    with sqlite3.connect(app_dir / "jobctrl.db") as conn:
        return dict(conn.execute("SELECT status, COUNT(*) FROM job_stage_states"
                                 " WHERE stage = 'pdf' GROUP BY status").fetchall())


def prepared_jobs(app_dir: Path, expected_jobs: int) -> int:
    """PDF stages succeeded; a BenchError once every PDF stage settled short of that (a
    skipped or failed job would otherwise leave this waiting forever)."""
    counts = pdf_stage_counts(app_dir)
    succeeded = counts.get("succeeded", 0)
    settled = sum(counts.get(status, 0) for status in ("succeeded", "skipped", "failed"))
    if succeeded < expected_jobs <= settled:
        raise BenchError(f"only {succeeded} of {expected_jobs} PDF stages succeeded: {counts}")
    return succeeded


def run_jobctrl(expected_jobs: int) -> dict:
    app_dir = Path(tempfile.mkdtemp(prefix="jobctrl-bench-pipeline-"))
    # Every job through every stage, like the baseline's 8 activities: with the default
    # minimum fit most demo jobs skip Tailor, Cover and PDF.
    (app_dir / "settings.json").write_text(json.dumps({"minFitScore": 0}), encoding="utf-8")
    serve = ServeProcess(app_dir)
    try:
        serve.start()
        info = serve.info
        headers = {"Authorization": f"Bearer {info.api_token}"}
        httpx.put(f"{info.api_base_url}/v1/profile", json=PROFILE, headers=headers).raise_for_status()
        started = time.perf_counter()
        httpx.post(f"{info.api_base_url}/v1/pipeline/actions/run-stage",
                   json={"stage": "discover"}, headers=headers).raise_for_status()
        while prepared_jobs(app_dir, expected_jobs) < expected_jobs:
            time.sleep(0.05)
        return {"seconds": time.perf_counter() - started, "jobs": expected_jobs}
    finally:
        serve.stop()


async def run_baseline(jobs: int, job_type: str = "BareJob") -> dict:
    import subprocess

    folder = Path(tempfile.mkdtemp(prefix="jobctrl-bench-bare-"))
    port = free_port()
    server = subprocess.Popen(
        dev_server_argv(temporal_binary(), history_file=folder / "history.db", port=port,
                        ui_port=None),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **owned_popen_options())
    try:
        client = None
        for _ in range(300):
            try:
                client = await Client.connect(f"127.0.0.1:{port}")
                break
            except Exception:  # noqa: BLE001 - still starting
                await asyncio.sleep(0.1)
        queue = f"bare-{uuid.uuid4().hex[:6]}"
        async with Worker(client, task_queue=queue, workflows=[BareJob, BareJobLocal, BareFanout],
                          activities=[noop], max_concurrent_activities=8):
            started = time.perf_counter()
            await client.execute_workflow("BareFanout", args=[jobs, job_type], id="bare-fanout",
                                          task_queue=queue)
            while True:
                running = [w async for w in client.list_workflows(
                    f"WorkflowType = '{job_type}' AND ExecutionStatus = 'Running'")]
                closed = [w async for w in client.list_workflows(
                    f"WorkflowType = '{job_type}' AND ExecutionStatus = 'Completed'")]
                if not running and len(closed) >= jobs:
                    break
                await asyncio.sleep(0.05)
            return {"seconds": time.perf_counter() - started, "jobs": jobs}
    finally:
        stop_process(server, sig="term", timeout=15)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=234, help="distinct demo-board jobs")
    parser.add_argument("--json", help="write results here")
    parser.add_argument("--skip-same-shape", action="store_true",
                        help="do not measure the baseline of JobCtrl's shape (3 local activities)")
    args = parser.parse_args()
    sigterm_raises_interrupt()
    jobctrl = run_jobctrl(args.jobs)
    baseline = asyncio.run(run_baseline(args.jobs))
    ratio = jobctrl["seconds"] / baseline["seconds"]
    result = {
        "machine": machine_info(),
        "jobctrl": {**jobctrl, "jobsPerMinute": 60 * jobctrl["jobs"] / jobctrl["seconds"]},
        "baseline": {**baseline, "activitiesPerJob": ACTIVITIES_PER_JOB},
        "ratio": ratio,
        "target": "median of 3 runs: ratio <= 1.2",
    }
    print(f"JobCtrl : {jobctrl['jobs']} jobs through every stage in {jobctrl['seconds']:.1f}s "
          f"({result['jobctrl']['jobsPerMinute']:.0f} jobs/min)")
    print(f"Baseline: {baseline['jobs']} bare workflows x {ACTIVITIES_PER_JOB} no-op activities "
          f"in {baseline['seconds']:.1f}s")
    print(f"Ratio   : {ratio:.2f}x (target: the median of 3 runs <= 1.2x)")
    if not args.skip_same_shape:
        same = asyncio.run(run_baseline(args.jobs, "BareJobLocal"))
        result["sameShapeBaseline"] = {**same, "localActivitiesPerJob": 3,
                                       "activitiesPerJob": STAGES_PER_JOB}
        result["sameShapeRatio"] = jobctrl["seconds"] / same["seconds"]
        print(f"Same shape: {same['jobs']} bare workflows x (3 local + {STAGES_PER_JOB}) no-op"
              f" activities in {same['seconds']:.1f}s; ratio {result['sameShapeRatio']:.2f}x")
    write_json(args.json, result)


if __name__ == "__main__":
    run_then_exit(main)
