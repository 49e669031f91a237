"""Soak: many unattended Discover cycles back to back; does anything grow without bound?

"A job seeker must be able to trust it with a week of unattended work", compressed:
``jobctrl serve`` on a fresh app dir (demo board, offline provider) with a saved profile,
then ``--cycles`` Discover runs one after the other. Each cycle POSTs the Discover
run-stage, waits for the run's terminal event on ONE SSE connection (the desktop's
``ApiClient``, opened once at the start and kept for the whole soak, as the desktop does)
and for every preparation to settle, then samples:

- RSS, open file descriptors and threads of serve, Temporal, the worker and the API
  (pids from ``runtime.json``, re-read each cycle so a restart shows up);
- the SQLite database (+ WAL), Temporal's history database (+ WAL), the logs folder and
  the artifacts folder;
- row counts of every table and event counts by type.

Correctness, checked every cycle (exit 1 if any fails): exactly ``--expect-jobs`` jobs
with distinct canonical URLs, no dedupe key used twice in ``job_events``, and the SSE
stream delivered every ``job_events`` id exactly once and in order. Growth numbers are
reported, never asserted. At the end, on a copy of the database, a probe times a stage
status change of every job with the Discover memberships the soak accumulated against one
membership per job (the cohort-count triggers fan out per membership).

    .venv/bin/python bench/soak.py [--cycles 20] [--json soak.json] [--keep]

Results and their reading: bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import shutil
import sqlite3
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import (  # noqa: E402
    BenchError,
    ServeProcess,
    hard_exit,
    machine_info,
    sigterm_raises_interrupt,
    write_json,
)

from backend.config import read_runtime_info  # noqa: E402
from desktop.client import ApiClient, StreamedEvent  # noqa: E402

PROFILE = {
    "name": "Soak Candidate", "targetTitles": ["Backend Engineer", "Data Engineer"],
    "skills": ["Python", "PostgreSQL", "Kubernetes", "AWS", "SQL", "React"],
    "resumeText": "Soak Candidate\nEngineer.\n\nEXPERIENCE\n- Built Python services on AWS\n",
}
TERMINAL_TYPES = ("WorkflowCompleted", "WorkflowFailed", "WorkflowCanceled")
PROCESSES = ("supervisor", "temporal", "worker", "api")
SETTLE_QUIET_S = 2.0  # no new event for this long, nothing running: the cycle has settled
SETTLE_POLL_S = 0.25
CATCH_UP_TIMEOUT_S = 30.0
MB = 2**20


# -- the one SSE connection --------------------------------------------------------------


@dataclass
class StreamWatch:
    """Consumes ``ApiClient.events()`` for the whole soak, from event 0, remembering every
    id in arrival order and how often the stream (re)connected."""

    api: ApiClient
    ids: list[int] = field(default_factory=list)
    connects: int = 0
    reconnects: int = 0
    error: str | None = None
    _terminal: dict[str, StreamedEvent] = field(default_factory=dict)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        def on_state(state: str) -> None:
            if state == "live":
                self.connects += 1
            elif state == "reconnecting":
                self.reconnects += 1
            self._changed.set()

        stream = self.api.events(0, on_state=on_state)
        try:
            async with contextlib.aclosing(stream):
                async for event in stream:
                    self.ids.append(event.id)
                    if event.type in TERMINAL_TYPES and event.payload.get("runId"):
                        self._terminal[event.payload["runId"]] = event
                    self._changed.set()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # noqa: BLE001 - reported as a correctness failure
            self.error = f"{type(exc).__name__}: {exc}"
            self._changed.set()

    async def wait_for(self, predicate, timeout: float, what: str):
        deadline = time.perf_counter() + timeout
        while True:
            result = predicate()
            if result:
                return result
            if self.error:
                raise BenchError(f"SSE stream ended: {self.error}")
            left = deadline - time.perf_counter()
            if left <= 0:
                raise BenchError(f"timed out after {timeout:.0f}s waiting for {what}")
            self._changed.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(left, 1.0))

    async def terminal(self, run_id: str, timeout: float) -> StreamedEvent:
        return await self.wait_for(lambda: self._terminal.get(run_id), timeout,
                                   f"the terminal event of run {run_id}")

    async def caught_up(self, newest_id: int) -> None:
        await self.wait_for(lambda: bool(self.ids) and self.ids[-1] >= newest_id,
                            CATCH_UP_TIMEOUT_S, f"event {newest_id} on the stream")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task


# -- the database, read from outside ------------------------------------------------------


def connect_ro(database: Path) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=30)


def table_counts(conn: sqlite3.Connection) -> dict[str, int]:
    tables = [row[0] for row in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        " ORDER BY name")]
    return {name: conn.execute(f'SELECT COUNT(*) FROM "{name}"').fetchone()[0] for name in tables}


def event_type_counts(conn: sqlite3.Connection) -> dict[str, int]:
    return dict(conn.execute("SELECT type, COUNT(*) FROM job_events GROUP BY type"))


def busy_counts(conn: sqlite3.Connection) -> dict[str, int]:
    """What still moves: running runs, queued/running stage rows, the newest event id."""
    # From the log itself: workflow_run_projections is folded lazily (on reads and by the
    # reconciler), so its "running" rows lag behind.
    return {
        "running_runs": conn.execute(
            "SELECT COUNT(*) FROM (SELECT run_id FROM job_events"
            " WHERE tenant_id = 'local' AND type IN ('WorkflowStarted', 'WorkflowCompleted',"
            " 'WorkflowFailed', 'WorkflowCanceled') GROUP BY run_id"
            " HAVING SUM(type = 'WorkflowStarted') > SUM(type <> 'WorkflowStarted'))"
        ).fetchone()[0],
        "busy_stages": conn.execute("SELECT COUNT(*) FROM job_stage_states"
                                    " WHERE status IN ('queued', 'running')").fetchone()[0],
        "newest_event": conn.execute("SELECT COALESCE(MAX(id), 0) FROM job_events").fetchone()[0],
    }


def correctness(conn: sqlite3.Connection, stream_ids: list[int], expect_jobs: int) -> list[str]:
    """Every problem found, as one line each (empty: all good)."""
    problems = []
    jobs, distinct = conn.execute(
        "SELECT COUNT(*), COUNT(DISTINCT canonical_url) FROM jobs").fetchone()
    if jobs != expect_jobs or distinct != jobs:
        problems.append(f"jobs: {jobs} rows, {distinct} distinct URLs (expected {expect_jobs})")
    doubled = conn.execute(
        "SELECT COUNT(*) FROM (SELECT 1 FROM job_events WHERE dedupe_key IS NOT NULL"
        " GROUP BY tenant_id, dedupe_key HAVING COUNT(*) > 1)").fetchone()[0]
    if doubled:
        problems.append(f"{doubled} dedupe keys used by more than one event")
    newest = stream_ids[-1] if stream_ids else 0
    stored = [row[0] for row in conn.execute(
        "SELECT id FROM job_events WHERE id <= ? ORDER BY id", (newest,))]
    seen = [event_id for event_id in stream_ids if event_id <= newest]
    if seen != stored:
        missing = sorted(set(stored) - set(seen))
        repeated = len(seen) - len(set(seen))
        out_of_order = sum(1 for a, b in zip(seen, seen[1:], strict=False) if b <= a)
        problems.append(f"SSE stream: {len(missing)} missing (first {missing[:5]}),"
                        f" {repeated} repeated, {out_of_order} out of order,"
                        f" {len(set(seen) - set(stored))} not in job_events")
    return problems


# -- processes and files ------------------------------------------------------------------


def process_sample(pids: dict[str, int]) -> dict[str, dict]:
    sample = {}
    for name in PROCESSES:
        pid = pids.get(name)
        if pid is None:
            continue
        try:
            proc = psutil.Process(pid)
            with proc.oneshot():
                fds = proc.num_handles() if sys.platform == "win32" else proc.num_fds()
                sample[name] = {"pid": pid, "rss": proc.memory_info().rss, "fds": fds,
                                "threads": proc.num_threads(),
                                "children": len(proc.children(recursive=True))}
        except psutil.Error as exc:
            sample[name] = {"pid": pid, "error": type(exc).__name__}
    return sample


def file_size(path: Path) -> int:
    return path.stat().st_size if path.exists() else 0


def folder_size(path: Path) -> int:
    return sum(file_size(item) for item in path.rglob("*") if item.is_file()) if path.exists() else 0


def used_bytes(database: Path) -> int | None:
    """Pages in use (page count minus free pages, WAL included): the logical size, which
    the file size hides while SQLite reuses free pages or the WAL is not checkpointed."""
    if not database.exists():
        return None
    with contextlib.suppress(sqlite3.Error), contextlib.closing(connect_ro(database)) as conn:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
        return (pages - free) * conn.execute("PRAGMA page_size").fetchone()[0]
    return None


def file_sample(app_dir: Path) -> dict[str, int]:
    database = app_dir / "jobctrl.db"
    history = app_dir / "temporal" / "history.db"
    return {
        "db": file_size(database), "db_wal": file_size(Path(f"{database}-wal")),
        "db_used": used_bytes(database) or 0,
        "history": file_size(history), "history_wal": file_size(Path(f"{history}-wal")),
        "history_used": used_bytes(history) or 0,
        "logs": folder_size(app_dir / "logs"), "artifacts": folder_size(app_dir / "artifacts"),
    }


# -- one cycle ----------------------------------------------------------------------------


async def settle(database: Path, timeout: float) -> dict[str, int]:
    """Waits until nothing runs and no event was added for ``SETTLE_QUIET_S``."""
    deadline = time.perf_counter() + timeout
    last_newest, quiet_since = -1, time.perf_counter()
    while True:
        with contextlib.closing(connect_ro(database)) as conn:
            busy = busy_counts(conn)
        if busy["newest_event"] != last_newest:
            last_newest, quiet_since = busy["newest_event"], time.perf_counter()
        idle = busy["running_runs"] == 0 and busy["busy_stages"] == 0
        if idle and time.perf_counter() - quiet_since >= SETTLE_QUIET_S:
            return busy
        if time.perf_counter() > deadline:
            raise BenchError(f"not settled after {timeout:.0f}s: {busy}")
        await asyncio.sleep(SETTLE_POLL_S)


async def read_latencies(api: ApiClient) -> dict[str, float]:
    """Median ms of 3 calls of each read the desktop makes: do reads slow down as the
    history of runs grows?"""
    reads = {
        "operations": api.pipeline_operations, "jobs": lambda: api.jobs(limit=50),
        "discovery_runs": api.discovery_runs,
        "workflow_runs": lambda: api.workflow_runs(limit=50),
    }
    result = {}
    for name, call in reads.items():
        times = []
        for _ in range(3):
            started = time.perf_counter()
            await call()
            times.append((time.perf_counter() - started) * 1000)
        result[name] = round(sorted(times)[1], 2)
    return result


async def run_cycle(number: int, api: ApiClient, watch: StreamWatch, serve: ServeProcess,
                    args) -> dict:
    database = serve.app_dir / "jobctrl.db"
    started = time.perf_counter()
    accepted = await api.run_stage("discover")
    if accepted.get("alreadyRunning"):
        raise BenchError(f"cycle {number}: a Discover was still running: {accepted}")
    run_id = accepted["firstExecutionRunId"]
    terminal = await watch.terminal(run_id, args.cycle_timeout)
    discovered_s = time.perf_counter() - started
    busy = await settle(database, args.cycle_timeout)
    settled_s = time.perf_counter() - started
    await watch.caught_up(busy["newest_event"])
    await api.workflow_runs(limit=1)  # folds the projection up to date, as a desktop read does
    latencies = await read_latencies(api)
    info = read_runtime_info(serve.app_dir)
    with contextlib.closing(connect_ro(database)) as conn:
        problems = correctness(conn, watch.ids, args.expect_jobs)
        tables = table_counts(conn)
        events = event_type_counts(conn)
    return {
        "cycle": number, "run_id": run_id, "terminal": terminal.type,
        "discover_s": round(discovered_s, 2), "settled_s": round(settled_s, 2),
        "newest_event": busy["newest_event"], "stream_events": len(watch.ids),
        "stream_connects": watch.connects, "stream_reconnects": watch.reconnects,
        "processes": process_sample(info.pids if info else {}),
        "files": file_sample(serve.app_dir), "tables": tables, "event_types": events,
        "read_ms": latencies,
        "problems": problems,
    }


def print_cycle(sample: dict) -> None:
    procs = sample["processes"]
    rss = " ".join(f"{name[:4]} {procs[name]['rss'] / MB:6.1f}" if "rss" in procs.get(name, {})
                   else f"{name[:4]}      ?" for name in PROCESSES)
    files = sample["files"]
    print(f"cycle {sample['cycle']:3d}  {sample['discover_s']:6.1f}s /{sample['settled_s']:6.1f}s"
          f"  events {sample['newest_event']:7d}  jobs {sample['tables'].get('jobs', 0):4d}"
          f"  RSS MB: {rss}  db {(files['db'] + files['db_wal']) / MB:6.1f}"
          f"  hist {(files['history'] + files['history_wal']) / MB:6.1f}"
          f"  logs {files['logs'] / MB:5.2f}"
          + (f"  PROBLEMS: {'; '.join(sample['problems'])}" if sample["problems"] else ""),
          flush=True)


# -- the report ---------------------------------------------------------------------------


def per_cycle(first: float, last: float, cycles: int) -> float | None:
    return (last - first) / cycles if cycles > 0 else None


def slope(points: list[tuple[float, float]]) -> float | None:
    """Least-squares slope: per-cycle growth less sensitive to one noisy endpoint."""
    if len(points) < 2:
        return None
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    spread = sum((x - mean_x) ** 2 for x, _ in points)
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / spread if spread else None


def growth_report(samples: list[dict]) -> dict:
    """Warm = cycle 2 (cycle 1 discovers and prepares every job); numbers from it to the
    last cycle."""
    warm = samples[1] if len(samples) > 1 else samples[0]
    last = samples[-1]
    span = last["cycle"] - warm["cycle"]
    report: dict = {"warm_cycle": warm["cycle"], "last_cycle": last["cycle"], "processes": {},
                    "files": {}, "tables": {}, "event_types": {}}
    for name in PROCESSES:
        a, b = warm["processes"].get(name, {}), last["processes"].get(name, {})
        if "rss" not in a or "rss" not in b:
            report["processes"][name] = {"error": "not sampled"}
            continue
        first = samples[0]["processes"].get(name, {})
        report["processes"][name] = {
            "pid_changed": a["pid"] != b["pid"],
            "rss_mb_cycle1": round(first.get("rss", 0) / MB, 1),
            "rss_mb_warm": round(a["rss"] / MB, 1), "rss_mb_last": round(b["rss"] / MB, 1),
            "rss_ratio": round(b["rss"] / a["rss"], 3),
            "rss_mb_per_cycle": _round(per_cycle(a["rss"] / MB, b["rss"] / MB, span), 2),
            "rss_mb_per_cycle_fit": _round(slope(
                [(s["cycle"], s["processes"][name]["rss"] / MB) for s in samples[1:]
                 if "rss" in s["processes"].get(name, {})]), 3),
            "fds_first_last": [first.get("fds"), b["fds"]],
            "threads_first_last": [first.get("threads"), b["threads"]],
            "children_first_last": [first.get("children"), b["children"]],
        }
    for name in warm["files"]:
        report["files"][name] = {
            "mb_warm": round(warm["files"][name] / MB, 2),
            "mb_last": round(last["files"][name] / MB, 2),
            "kb_per_cycle": _round(per_cycle(warm["files"][name] / 1024,
                                             last["files"][name] / 1024, span), 1)}
    for kind, key in (("tables", "tables"), ("event_types", "event_types")):
        for name in sorted(set(warm[key]) | set(last[key])):
            a, b = warm[key].get(name, 0), last[key].get(name, 0)
            report[kind][name] = {"warm": a, "last": b,
                                  "per_cycle": _round(per_cycle(a, b, span), 1)}
    report["read_ms"] = {name: {"warm": warm["read_ms"][name], "last": last["read_ms"][name],
                                "max": max(s["read_ms"][name] for s in samples[1:] or samples)}
                         for name in warm["read_ms"]}
    report["discover_s"] = {"warm": warm["discover_s"], "last": last["discover_s"],
                            "max": max(s["discover_s"] for s in samples[1:] or samples)}
    report["jobs_added_after_warm"] = (last["tables"].get("jobs", 0)
                                       - warm["tables"].get("jobs", 0))
    return report


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def print_report(report: dict, samples: list[dict], watch: StreamWatch) -> None:
    span = f"cycle {report['warm_cycle']} → {report['last_cycle']}"
    print(f"\nProcesses ({span}):")
    print(f"  {'process':10} {'RSS c1':>7} {'warm':>7} {'last':>7} {'ratio':>6} {'MB/cyc':>7}"
          f" {'fit':>7} {'fds':>9} {'threads':>9}")
    for name, row in report["processes"].items():
        if "error" in row:
            print(f"  {name:10} {row['error']}")
            continue
        print(f"  {name:10} {row['rss_mb_cycle1']:7.1f} {row['rss_mb_warm']:7.1f}"
              f" {row['rss_mb_last']:7.1f} {row['rss_ratio']:6.3f}"
              f" {_fmt(row['rss_mb_per_cycle']):>7} {_fmt(row['rss_mb_per_cycle_fit']):>7}"
              f" {'→'.join(str(x) for x in row['fds_first_last']):>9}"
              f" {'→'.join(str(x) for x in row['threads_first_last']):>9}"
              + ("  (pid changed: restarted)" if row["pid_changed"] else ""))
    print(f"\nFiles ({span}):")
    for name, row in report["files"].items():
        print(f"  {name:12} {row['mb_warm']:9.2f} MB → {row['mb_last']:9.2f} MB"
              f"  {_fmt(row['kb_per_cycle']):>8} KB/cycle")
    print(f"\nRows that grow after the warm cycle ({span}; jobs added:"
          f" {report['jobs_added_after_warm']}):")
    growing = {name: row for name, row in report["tables"].items() if row["per_cycle"]}
    for name, row in sorted(growing.items(), key=lambda item: -(item[1]["per_cycle"] or 0)):
        print(f"  {name:42} {row['warm']:8d} → {row['last']:8d}  {row['per_cycle']:8.1f}/cycle")
    if not growing:
        print("  none")
    print("  events by type:")
    for name, row in report["event_types"].items():
        if row["per_cycle"]:
            print(f"    {name:40} {row['per_cycle']:8.1f}/cycle")
    print(f"\nReads, median of 3 (ms, {span}): " + ", ".join(
        f"{name} {row['warm']:.1f} → {row['last']:.1f} (max {row['max']:.1f})"
        for name, row in report["read_ms"].items()))
    row = report["discover_s"]
    print(f"Discover request → terminal event (s): {row['warm']:.2f} → {row['last']:.2f}"
          f" (max {row['max']:.2f})")
    print(f"\nSSE: one connection, {watch.connects} connect(s), {watch.reconnects} reconnect(s),"
          f" {len(watch.ids)} events received"
          + (f", ended with {watch.error}" if watch.error else ", live to the end"))
    bad = [s for s in samples if s["problems"]]
    print("Correctness: " + ("every cycle ok" if not bad else
                             f"{len(bad)} cycle(s) with problems (first: cycle {bad[0]['cycle']}:"
                             f" {'; '.join(bad[0]['problems'])})"))


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


# -- write amplification ------------------------------------------------------------------


def memberships_per_job(conn: sqlite3.Connection) -> int:
    """How many Discover executions the most-linked job belongs to (under migration 0013
    every stage write of a job updated the cohort counts of each of them; since 0014 only
    those of the few counted executions, which is what the probe shows)."""
    return conn.execute("SELECT COALESCE(MAX(n), 0) FROM (SELECT COUNT(*) AS n"
                        " FROM discovery_execution_jobs GROUP BY tenant_id, job_id)").fetchone()[0]


def time_score_flip(database: Path, rounds: int = 5) -> float:
    """Median ms to move every job's score row to ``queued`` and back, as a rescore does,
    each flip in a transaction that is rolled back."""
    times = []
    with contextlib.closing(sqlite3.connect(database, isolation_level=None)) as conn:
        for _ in range(rounds):
            conn.execute("BEGIN")
            started = time.perf_counter()
            conn.execute("CREATE TEMP TABLE saved AS SELECT rowid AS rid, status"
                         " FROM job_stage_states WHERE stage = 'score'")
            conn.execute("UPDATE job_stage_states SET status = 'queued' WHERE stage = 'score'")
            conn.execute("UPDATE job_stage_states SET status = (SELECT status FROM saved"
                         " WHERE rid = job_stage_states.rowid) WHERE stage = 'score'")
            times.append((time.perf_counter() - started) * 1000)
            conn.execute("ROLLBACK")
    return sorted(times)[len(times) // 2]


def write_amplification_probe(database: Path, first_run_id: str) -> dict:
    """On a copy of the soaked database: the cost of a stage status change for every job
    with the memberships the soak accumulated, against the same copy trimmed to the first
    Discover's memberships only (the baseline: one execution per job)."""
    folder = Path(tempfile.mkdtemp(prefix="jobctrl-bench-soak-probe-"))
    try:
        copy = folder / "copy.db"
        with contextlib.closing(connect_ro(database)) as source, \
                contextlib.closing(sqlite3.connect(copy)) as target:
            source.backup(target)
            soaked_memberships = memberships_per_job(target)
        soaked_ms = time_score_flip(copy)
        with contextlib.closing(sqlite3.connect(copy)) as conn:
            conn.execute("DELETE FROM discovery_execution_jobs WHERE discover_run_id <> ?",
                         (first_run_id,))
            conn.commit()
            baseline_memberships = memberships_per_job(conn)
        baseline_ms = time_score_flip(copy)
        return {"memberships_per_job": soaked_memberships, "flip_ms": round(soaked_ms, 1),
                "baseline_memberships_per_job": baseline_memberships,
                "baseline_flip_ms": round(baseline_ms, 1),
                "ratio": round(soaked_ms / baseline_ms, 1) if baseline_ms else None}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def print_probe(probe: dict) -> None:
    print(f"\nStage write cost (every job's score row → queued → back, median of 5, on a copy):"
          f" {probe['flip_ms']:.1f} ms with {probe['memberships_per_job']} Discover"
          f" memberships per job vs {probe['baseline_flip_ms']:.1f} ms with"
          f" {probe['baseline_memberships_per_job']} → {probe['ratio']}x")


# -- main ---------------------------------------------------------------------------------


async def soak(args, app_dir: Path) -> dict:
    serve = ServeProcess(app_dir)
    samples: list[dict] = []
    watch = None
    api = None
    try:
        serve.start()
        api = ApiClient.from_runtime(serve.info)
        watch = StreamWatch(api)
        watch.start()
        await watch.wait_for(lambda: watch.connects > 0, 30, "the SSE stream to go live")
        await api.put_profile(PROFILE)
        # The first profile save may start a continuation run: let it finish first.
        await settle(app_dir / "jobctrl.db", args.cycle_timeout)
        soak_started = time.perf_counter()
        for number in range(1, args.cycles + 1):
            sample = await run_cycle(number, api, watch, serve, args)
            samples.append(sample)
            print_cycle(sample)
            if args.max_minutes and time.perf_counter() - soak_started > args.max_minutes * 60:
                print(f"stopping after cycle {number}: --max-minutes {args.max_minutes} reached")
                break
        report = growth_report(samples)
        print_report(report, samples, watch)
        probe = write_amplification_probe(app_dir / "jobctrl.db", samples[0]["run_id"])
        print_probe(probe)
        return {"samples": samples, "report": report, "write_probe": probe,
                "stream": {"connects": watch.connects, "reconnects": watch.reconnects,
                           "events": len(watch.ids), "error": watch.error},
                "soak_s": round(time.perf_counter() - soak_started, 1)}
    except BaseException:
        if serve.process is not None:
            print(serve.log_tails(20), file=sys.stderr)
        raise
    finally:
        if watch is not None:
            await watch.stop()
        if api is not None:
            await api.close()
        stopped = serve.stop()
        if stopped.get("survivors"):
            print(f"killed survivors after stop: {stopped['survivors']}", file=sys.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cycles", type=int, default=20)
    parser.add_argument("--max-minutes", type=float, default=0,
                        help="stop after the cycle that crosses this many minutes (0: no limit)")
    parser.add_argument("--expect-jobs", type=int, default=234,
                        help="distinct jobs after every cycle (the demo board: 234)")
    parser.add_argument("--cycle-timeout", type=float, default=900,
                        help="seconds for one cycle's terminal event and for settling")
    parser.add_argument("--json", help="write every sample and the report here")
    parser.add_argument("--keep", action="store_true", help="keep the temporary app dir")
    args = parser.parse_args()
    sigterm_raises_interrupt()
    machine = machine_info()
    app_dir = Path(tempfile.mkdtemp(prefix="jobctrl-bench-soak-"))
    try:
        result = asyncio.run(soak(args, app_dir))
    finally:
        if args.keep:
            print(f"kept {app_dir}")
        else:
            shutil.rmtree(app_dir, ignore_errors=True)
    write_json(args.json, {"machine": machine, "cycles": args.cycles, **result})
    failed = result["stream"]["error"] or any(s["problems"] for s in result["samples"])
    return 1 if failed else 0


if __name__ == "__main__":
    code = 0
    try:
        code = main()
    except KeyboardInterrupt:
        code = 130
    except BaseException:  # noqa: BLE001 - report, then leave without SDK finalization
        traceback.print_exc()
        code = 1
    hard_exit(code)
