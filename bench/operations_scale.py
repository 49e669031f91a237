"""Operations read-model scale: ``GET /v1/pipeline/operations`` and ``GET /v1/workflow-runs``
latency as the database grows, and the projection rebuild rate.

For each size (default 1,000 / 10,000 / 100,000 jobs) a fresh migrated database is
seeded straight into SQLite with a realistic shape (see ``seed``): jobs with five
canonical stage rows each (mostly succeeded with durations, a tail pending, queued,
running, failed, blocked), a score per scored job, ~11 events per job (``JobDiscovered`` +
``StageStarted`` / ``StageCompleted`` per stage), 50 Discover executions with lineage and
the seven PipelineStep* lifecycles each and a ready native coverage checkpoint (so every
operations read revalidates the selected execution's digest), and one preparation run per
20 jobs (5,000 at 100k, ``WorkflowStarted`` + a terminal event). At 100k that is ~1 M
events.

Then, per size:

* projection rebuild: ``rebuild_workflow_runs`` and ``rebuild_pipeline_steps`` from event
  0, as events/s (the folded lifecycle events, and the whole log they scan);
* the real API (``create_app``, uvicorn on a loopback port, bearer token, Temporal
  deliberately unreachable: neither route needs it) answering each route ``--requests``
  times sequentially after ``--warmup`` requests; p50 / p95 / p99 in ms.

The baseline, measured in the same run, is the smallest size: each row reports its p50 /
p99 as a ratio to the same route at that size, next to the job-count ratio, so growth
can be read as sub-linear (ratio well below the size ratio) or not.

    .venv/bin/python bench/operations_scale.py
    .venv/bin/python bench/operations_scale.py --sizes 1000,100000 --requests 100 --json ops.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import secrets
import shutil
import socket
import sqlite3
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_info, percentile, write_json  # noqa: E402

from backend.api.app import create_app  # noqa: E402
from backend.config import AppPaths  # noqa: E402
from backend.domain import events as ev  # noqa: E402
from backend.domain.clock import to_iso  # noqa: E402
from backend.projections.pipeline_steps import rebuild_pipeline_steps  # noqa: E402
from backend.projections.workflow_runs import rebuild_workflow_runs  # noqa: E402
from backend.store.coverage import (  # noqa: E402
    NATIVE_DECODER_VERSION,
    canonical_digest,
    member_key,
    step_key,
)
from backend.store.db import Database, migrate  # noqa: E402

TENANT = "local"
STAGES = ("enrich", "score", "tailor", "cover", "pdf")
EXECUTIONS = 50
JOBS_PER_PREP_RUN = 20
ROUTES = {
    "operations": ("/v1/pipeline/operations", {}),
    "workflow-runs": ("/v1/workflow-runs", {"limit": 50}),
    "workflow-runs?status&type": ("/v1/workflow-runs",
                                  {"status": "completed", "workflowType": "JobPreparationWorkflow",
                                   "sort": "durationMs", "limit": 50, "offset": 100}),
}


# -- seeding ----------------------------------------------------------------------------


def _iso(moment: datetime) -> str:
    return to_iso(moment)


def _job_status_plan(rng: random.Random) -> list[tuple[str, str | None]]:
    """One job's five stage rows: (status, blocked reason). Mostly done, a real tail."""
    roll = rng.random()
    if roll < 0.85:
        return [("succeeded", None)] * 5
    if roll < 0.90:
        return [("pending", None)] * 5
    if roll < 0.92:
        return [("succeeded", None), ("queued", None)] + [("pending", None)] * 3
    if roll < 0.93:
        return [("succeeded", None), ("running", None)] + [("pending", None)] * 3
    if roll < 0.96:
        return [("succeeded", None), ("failed", None)] + [("pending", None)] * 3
    return [("blocked", "ENRICH_ROBOTS_DISALLOWED")] + [("pending", None)] * 4


class Seeder:
    def __init__(self, path: Path, jobs: int, seed: int = 7):
        self.path = path
        self.jobs = jobs
        self.rng = random.Random(seed)
        self.now = datetime.now(UTC)
        self.events: list[tuple] = []
        self.counts: dict[str, int] = {}

    def _event(self, event: ev.DomainEvent, *, job_id=None, workflow_id=None, run_id=None,
               at: datetime, payload: str | None = None) -> None:
        self.events.append((TENANT, event.event_type if event else "?", job_id, workflow_id,
                            run_id, payload or event.payload_json(), None, _iso(at)))

    def _raw_event(self, kind: str, payload: dict, *, job_id, workflow_id, run_id,
                   at: datetime) -> None:
        self.events.append((TENANT, kind, job_id, workflow_id, run_id,
                            json.dumps(payload, separators=(",", ":")), None, _iso(at)))

    def run(self) -> dict[str, int]:
        migrate(self.path)
        conn = sqlite3.connect(self.path, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=OFF")
        conn.execute("BEGIN")
        try:
            executions = self._executions(conn)
            self._jobs(conn, executions)
            self._prep_runs()
            self._steps(executions)
            self._checkpoints(conn, executions)
            self.events.sort(key=lambda row: row[7])  # the log in time order
            conn.executemany(
                "INSERT INTO job_events (tenant_id, type, job_id, workflow_id, run_id,"
                " payload_json, dedupe_key, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                self.events)
            conn.execute("INSERT INTO candidate_profiles VALUES (?, 1, '{}', ?)",
                         (TENANT, _iso(self.now)))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        finally:
            conn.execute("ANALYZE")
            conn.close()
        self.counts["events"] = len(self.events)
        return self.counts

    def _executions(self, conn) -> list[dict]:
        executions = []
        for index in range(EXECUTIONS):
            started = self.now - timedelta(hours=(EXECUTIONS - index) * 6)
            newest = index == EXECUTIONS - 1
            execution = {"workflow_id": "discover-local", "run_id": f"disc-run-{index:04d}",
                         "started": started, "running": newest}
            executions.append(execution)
            conn.execute(
                "INSERT INTO discovery_runs (discover_run_id, tenant_id, discover_workflow_id,"
                " status, families_json, progress_current, progress_total, progress_json,"
                " started_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (execution["run_id"], TENANT, "discover-local",
                 "running" if newest else "completed", json.dumps(["demo", "broad"]),
                 1 if newest else 4, 4,
                 json.dumps({"families": {"demo": {"status": "succeeded", "newJobs": 10}}}),
                 _iso(started), None if newest else _iso(started + timedelta(minutes=20))))
            self._event(ev.WorkflowStarted(
                workflow_id="discover-local", run_id=execution["run_id"],
                workflow_type="DiscoverWorkflow", occurred_at=_iso(started)),
                workflow_id="discover-local", run_id=execution["run_id"], at=started)
            if not newest:
                closed = started + timedelta(minutes=20)
                self._event(ev.WorkflowCompleted(
                    workflow_id="discover-local", run_id=execution["run_id"],
                    workflow_type="DiscoverWorkflow", occurred_at=_iso(closed)),
                    workflow_id="discover-local", run_id=execution["run_id"], at=closed)
        self.counts["executions"] = EXECUTIONS
        return executions

    def _jobs(self, conn, executions: list[dict]) -> None:
        jobs, stages, members, scores = [], [], [], []
        newest = executions[-1]
        for number in range(self.jobs):
            job_id = f"job_{number:08d}"
            execution = executions[min(number * EXECUTIONS // self.jobs, EXECUTIONS - 1)]
            seen = execution["started"] + timedelta(seconds=self.rng.randint(1, 600))
            jobs.append((job_id, TENANT, f"https://jobs.example.com/{number}",
                         f"https://jobs.example.com/{number}", f"Engineer {number}",
                         f"Company {number % 997}", "Remote", "remote", "[]", "demo",
                         _iso(seen), _iso(seen)))
            cohort = "observed_this_run"
            if execution is not newest and number % 199 == 0:
                # Pre-existing backlog the current execution swept.
                execution, cohort = newest, "existing_backlog"
            members.append((TENANT, execution["workflow_id"], execution["run_id"], job_id,
                            cohort, "planned", json.dumps(list(STAGES)), f"prep-{job_id}",
                            _iso(seen)))
            execution.setdefault("member_keys", []).append(member_key(job_id, cohort))
            self._raw_event("JobDiscovered", {
                "occurredAt": _iso(seen), "discoverWorkflowId": execution["workflow_id"],
                "discoverRunId": execution["run_id"], "jobId": job_id,
                "title": f"Engineer {number}", "company": f"Company {number % 997}",
                "location": "Remote", "remote": "remote", "sourceFamily": "demo"},
                job_id=job_id, workflow_id=execution["workflow_id"],
                run_id=execution["run_id"], at=seen)
            moment = seen
            for stage, (status, reason) in zip(STAGES, _job_status_plan(self.rng), strict=True):
                duration = self.rng.randint(2_000, 90_000)
                started = moment + timedelta(seconds=1)
                finished = started + timedelta(milliseconds=duration)
                done = status in ("succeeded", "failed")
                stages.append((
                    TENANT, job_id, stage, status, 1 if status != "pending" else 0,
                    f"prep-{job_id}" if status in ("running", "queued") else None,
                    None, 1 if status == "succeeded" else 0,
                    "provider_unavailable" if status == "failed" else None, reason,
                    _iso(started) if status != "pending" else None,
                    _iso(finished) if done else None,
                    duration if status == "succeeded" else None, _iso(finished)))
                if status != "pending":
                    self._raw_event("StageStarted", {
                        "occurredAt": _iso(started), "jobId": job_id, "stage": stage,
                        "attempt": 1, "workflowId": f"prep-{job_id}", "runId": None},
                        job_id=job_id, workflow_id=f"prep-{job_id}", run_id=None, at=started)
                if done:
                    self._raw_event(
                        "StageCompleted" if status == "succeeded" else "StageFailed",
                        {"occurredAt": _iso(finished), "jobId": job_id, "stage": stage,
                         "durationMs": duration}, job_id=job_id,
                        workflow_id=f"prep-{job_id}", run_id=None, at=finished)
                if stage == "score" and status == "succeeded":
                    scores.append((TENANT, job_id, 1, self.rng.randint(20, 95), "fit",
                                   "offline", "offline", 1, _iso(finished)))
                moment = finished
        conn.executemany(
            "INSERT INTO jobs (job_id, tenant_id, canonical_url, url, title, company, location,"
            " remote, tags_json, first_source, first_seen_at, last_seen_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", jobs)
        conn.executemany(
            "INSERT INTO job_stage_states (tenant_id, job_id, stage, status, attempt,"
            " owner_workflow_id, owner_run_id, result_version, error_code, blocked_reason,"
            " started_at, finished_at, duration_ms, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            stages)
        conn.executemany(
            "INSERT INTO discovery_execution_jobs (tenant_id, discover_workflow_id,"
            " discover_run_id, job_id, cohort, plan_state, required_steps_json,"
            " preparation_workflow_id, linked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", members)
        conn.executemany(
            "INSERT INTO job_scores (tenant_id, job_id, version, score, rationale, provider,"
            " model, profile_revision, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", scores)
        self.counts.update(jobs=len(jobs), stage_rows=len(stages), members=len(members))

    def _prep_runs(self) -> None:
        runs = max(self.jobs // JOBS_PER_PREP_RUN, 1)
        for number in range(runs):
            job_id = f"job_{number * JOBS_PER_PREP_RUN:08d}"
            workflow_id, run_id = f"prep-{job_id}", f"prep-run-{number:06d}"
            started = self.now - timedelta(days=13) + timedelta(seconds=number * 7)
            self._event(ev.WorkflowStarted(
                workflow_id=workflow_id, run_id=run_id, workflow_type="JobPreparationWorkflow",
                input_summary={"jobId": job_id}, occurred_at=_iso(started)),
                job_id=job_id, workflow_id=workflow_id, run_id=run_id, at=started)
            closed = started + timedelta(seconds=self.rng.randint(20, 400))
            terminal = (ev.WorkflowFailed(workflow_id=workflow_id, run_id=run_id,
                                          workflow_type="JobPreparationWorkflow",
                                          error_code="provider_unavailable",
                                          occurred_at=_iso(closed))
                        if number % 25 == 0 else
                        ev.WorkflowCompleted(workflow_id=workflow_id, run_id=run_id,
                                             workflow_type="JobPreparationWorkflow",
                                             occurred_at=_iso(closed)))
            self._event(terminal, job_id=job_id, workflow_id=workflow_id, run_id=run_id,
                        at=closed)
        self.counts["prep_runs"] = runs

    def _steps(self, executions: list[dict]) -> None:
        steps = 0
        for execution in executions:
            ids = {"discover_workflow_id": execution["workflow_id"],
                   "discover_run_id": execution["run_id"]}
            keys = [("source_planning", "planning"), ("source_family", "family:demo"),
                    ("source_family", "family:broad"), ("preparation_fanout", "fanout:family:demo"),
                    ("existing_backlog_sweep", "sweep"), ("preparation_fanout", "fanout:sweep"),
                    ("enrichment_pass", "pass:enrich")]
            moment = execution["started"]
            execution["step_keys"] = [step_key(kind, item_key) for kind, item_key in keys]
            for kind, item_key in keys:
                common = {**ids, "step_kind": kind, "item_key": item_key, "attempt": 1}
                moment += timedelta(seconds=5)
                self._event(ev.PipelineStepQueued(**common, queued_at=_iso(moment),
                                                  occurred_at=_iso(moment)),
                            workflow_id=execution["workflow_id"], run_id=execution["run_id"],
                            at=moment)
                if execution["running"] and kind != "source_planning":
                    steps += 1
                    continue  # the current execution is still discovering
                moment += timedelta(seconds=1)
                self._event(ev.PipelineStepStarted(**common, started_at=_iso(moment),
                                                   occurred_at=_iso(moment)),
                            workflow_id=execution["workflow_id"], run_id=execution["run_id"],
                            at=moment)
                moment += timedelta(seconds=30)
                self._event(ev.PipelineStepCompleted(**common, duration_ms=30_000,
                                                     occurred_at=_iso(moment)),
                            workflow_id=execution["workflow_id"], run_id=execution["run_id"],
                            at=moment)
                steps += 1
        self.counts["steps"] = steps


    def _checkpoints(self, conn, executions: list[dict]) -> None:
        """A ready native coverage checkpoint per execution, as plan_discovery opens and
        every link advances it: each operations read revalidates the selected one's
        digest over its member and step keys (the realistic, costlier path)."""
        for execution in executions:
            members, steps = execution.get("member_keys", []), execution["step_keys"]
            conn.execute(
                "INSERT INTO discovery_execution_recoveries (tenant_id, discover_workflow_id,"
                " discover_run_id, decoder_version, mode, status, history_event_watermark,"
                " expected_members, persisted_members, expected_steps, persisted_steps,"
                " digest, error_code, checked_at)"
                " VALUES (?, ?, ?, ?, 'native', 'ready', 0, ?, ?, ?, ?, ?, NULL, ?)",
                (TENANT, execution["workflow_id"], execution["run_id"],
                 NATIVE_DECODER_VERSION, len(members), len(members), len(steps), len(steps),
                 canonical_digest(members, steps), _iso(self.now)))


# -- measuring --------------------------------------------------------------------------


async def rebuild_rates(paths: AppPaths) -> dict:
    db = await Database.open(paths.database)
    try:
        total = (await db.fetchone("SELECT COUNT(*) FROM job_events"))[0]
        results = {}
        for name, rebuild, types in (
            ("workflow_run_projections", rebuild_workflow_runs, "'WorkflowStarted',"
             " 'WorkflowCompleted', 'WorkflowFailed', 'WorkflowCanceled',"
             " 'WorkflowCancellationRequested', 'WorkflowReconciled'"),
            ("pipeline_step_projections", rebuild_pipeline_steps, "'PipelineStepQueued',"
             " 'PipelineStepStarted', 'PipelineStepCompleted', 'PipelineStepFailed'"),
        ):
            folded = (await db.fetchone(
                f"SELECT COUNT(*) FROM job_events WHERE type IN ({types})"))[0]
            started = time.perf_counter()
            await rebuild(db)
            seconds = time.perf_counter() - started
            results[name] = {"folded_events": folded, "log_events": total,
                             "seconds": round(seconds, 3),
                             "folded_per_s": round(folded / seconds),
                             "log_per_s": round(total / seconds)}
        return results
    finally:
        await db.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class ApiThread:
    """The real FastAPI app under uvicorn on a loopback port, in a background thread."""

    def __init__(self, paths: AppPaths):
        self.token = secrets.token_urlsafe(24)
        self.port = _free_port()
        app = create_app(paths, api_token=self.token, temporal_address="127.0.0.1:1")
        config = uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning",
                                lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> ApiThread:
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the API did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


def measure_routes(api: ApiThread, requests: int, warmup: int) -> dict:
    results = {}
    with httpx.Client(base_url=f"http://127.0.0.1:{api.port}", timeout=120,
                      headers={"Authorization": f"Bearer {api.token}"}) as client:
        for name, (path, params) in ROUTES.items():
            for _ in range(warmup):
                response = client.get(path, params=params)
                response.raise_for_status()
            samples = []
            for _ in range(requests):
                started = time.perf_counter()
                response = client.get(path, params=params)
                samples.append((time.perf_counter() - started) * 1000)
                response.raise_for_status()
            body = response.json()
            results[name] = {"p50_ms": round(percentile(samples, 50), 2),
                             "p95_ms": round(percentile(samples, 95), 2),
                             "p99_ms": round(percentile(samples, 99), 2),
                             "max_ms": round(max(samples), 2), "n": len(samples),
                             "bytes": len(response.content),
                             "total": body.get("total") if isinstance(body, dict) else None}
            if path == "/v1/pipeline/operations":
                # The measured path must be the ready checkpoint's revalidation.
                coverage = body["projectionCoverage"]["status"]
                if coverage != "ready":
                    raise RuntimeError(f"projectionCoverage is {coverage}, not ready")
    return results


def run_size(jobs: int, args) -> dict:
    folder = Path(tempfile.mkdtemp(prefix=f"ops-scale-{jobs}-"))
    try:
        paths = AppPaths(folder)
        started = time.perf_counter()
        counts = Seeder(paths.database, jobs).run()
        seed_s = time.perf_counter() - started
        print(f"  {jobs:>7} jobs: seeded {counts['events']:,} events in {seed_s:.1f} s",
              flush=True)
        rebuild = asyncio.run(rebuild_rates(paths))
        with ApiThread(paths) as api:
            routes = measure_routes(api, args.requests, args.warmup)
        return {"jobs": jobs, "counts": counts, "seed_s": round(seed_s, 1),
                "db_mb": round(paths.database.stat().st_size / 2**20, 1),
                "rebuild": rebuild, "routes": routes}
    finally:
        if args.keep:
            print(f"  kept {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)


def print_tables(results: list[dict]) -> None:
    base = results[0]
    print("\nLatency (sequential requests; ratio = p50 / p99 against the same route at"
          f" {base['jobs']:,} jobs, measured in this run)")
    print(f"{'route':<28}{'jobs':>9}{'x jobs':>8}{'p50 ms':>9}{'p95 ms':>9}{'p99 ms':>9}"
          f"{'p50 x':>8}{'p99 x':>8}")
    for name in ROUTES:
        for result in results:
            route, ref = result["routes"][name], base["routes"][name]
            print(f"{name:<28}{result['jobs']:>9,}{result['jobs'] / base['jobs']:>8.0f}"
                  f"{route['p50_ms']:>9.1f}{route['p95_ms']:>9.1f}{route['p99_ms']:>9.1f}"
                  f"{route['p50_ms'] / ref['p50_ms']:>8.1f}{route['p99_ms'] / ref['p99_ms']:>8.1f}")
    print("\nProjection rebuild from event 0")
    print(f"{'projection':<28}{'jobs':>9}{'log events':>12}{'folded':>9}{'s':>8}"
          f"{'folded/s':>10}{'log/s':>11}")
    for result in results:
        for name, rate in result["rebuild"].items():
            print(f"{name:<28}{result['jobs']:>9,}{rate['log_events']:>12,}"
                  f"{rate['folded_events']:>9,}{rate['seconds']:>8.2f}"
                  f"{rate['folded_per_s']:>10,}{rate['log_per_s']:>11,}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000",
                        help="comma-separated job counts; the first is the baseline")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--json", help="write the raw results here")
    parser.add_argument("--keep", action="store_true", help="keep the seeded databases")
    args = parser.parse_args()
    # Temporal is deliberately unreachable: quiet the API's outbox retries about it.
    for name in ("backend.temporal.continuations", "backend.api.context"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    sizes = [int(size) for size in args.sizes.split(",")]
    print(f"operations scale: sizes {sizes}, {args.requests} requests per route", flush=True)
    results = [run_size(size, args) for size in sizes]
    print_tables(results)
    write_json(args.json, {"machine": machine_info(), "args": vars(args), "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
