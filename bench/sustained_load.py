"""Sustained load: Discover cycles over a generated board with a paid model that is slow
and sometimes fails, while 50 desktops watch the event stream and a reader polls the
operations snapshot.

``jobctrl serve`` on a fresh app dir, priced by a paid-model stand-in (the loopback
OpenAI-compatible ``FakeLlmServer`` of the tests: gpt-4o, 4,000 in / 1,200 out tokens a
call, ``--latency-ms`` 200 before every answer and ``--fault-rate`` 5 % of requests
answered HTTP 429 or 500, seeded) and an unlimited daily ceiling, with the tests' profile
saved. The board (``--postings``, 2,000) is generated with the demo board's generator
(``scripts/generate_demo_board.py``: its companies, roles and descriptions, one seeded
random stream, distinct URLs) and grows by an equal share every cycle: cycle k's board
file holds the first k/``--cycles`` of it, so each Discover re-sees every earlier posting
(dedupe) and brings new ones that are enriched, scored, tailored, written and rendered
(three paid calls each). A cycle POSTs Discover and waits until everything settled (no
run open in the event log, no stage queued or running, every pipeline step of the run
terminal (its Enrich and PDF passes close after their jobs, on the worker's reconciler
pass), no new event for 2 s).

All the while ``--clients`` (50) SSE clients, each the desktop's own ``ApiClient.events()``
from event 0, stay connected, and a reader GETs ``/v1/pipeline/operations`` every
``--poll-ms`` (250).

Reported: events/s (events appended over the cycles' wall time, and per cycle); the
operations read's p50/p95/p99/max under load, against the same reader on the idle app
before the first cycle (the baseline, same run); the spend ledger's calls and cost
against the stand-in's own count of calls it answered 200 (must be equal) and of the
faults it injected; events each SSE client missed, repeated or got out of order, and its
reconnects (must be 0); RSS of serve, Temporal, the worker, the API and this process at
the start and the end.

    .venv/bin/python bench/sustained_load.py                 # 2,000 postings, 10 cycles
    .venv/bin/python bench/sustained_load.py --quick         # 300 postings, 3 cycles
    .venv/bin/python bench/sustained_load.py --json load.json --keep

Exit 1 when the ledger and the stand-in disagree or any client missed or repeated an
event. Results and their reading: bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import shutil
import sys
import tempfile
import time
import traceback
from array import array
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import httpx
import psutil

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from _common import (  # noqa: E402
    REPO,
    BenchError,
    ServeProcess,
    hard_exit,
    machine_info,
    percentile,
    sigterm_raises_interrupt,
    write_json,
)
from soak import PROCESSES, StreamWatch, connect_ro, process_sample, settle  # noqa: E402

sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "scripts"))
import generate_demo_board as demo  # noqa: E402

from backend.config import read_runtime_info  # noqa: E402
from desktop.client import ApiClient  # noqa: E402
from tests.fakes.llm_servers import FakeLlmServer  # noqa: E402
from tests.integration.test_paid_pipeline import scripted_reply  # noqa: E402
from tests.integration.test_preparation import PROFILE  # noqa: E402

MB = 2**20
MODEL = "gpt-4o"
USAGE = (4000, 1200)
CALL_MICRO_USD = 22_000  # gpt-4o: 4,000 x $2.50/M + 1,200 x $10/M
IDLE_POLLS = 40  # baseline reads of the operations snapshot on the idle app
CATCH_UP_TIMEOUT_S = 120.0
QUICK = {"postings": 300, "cycles": 3}


# -- the board ----------------------------------------------------------------------------


def generated_postings(count: int, seed: int) -> list[dict]:
    """``count`` postings from the demo board's generator (no deliberate re-lists: every
    posting is a distinct job)."""
    rng = random.Random(seed)
    companies = demo.build_companies()
    # Two per company first (the generator's rule), so a small board is a slice of it.
    schedule = demo.company_schedule(rng, companies, max(count, 2 * len(companies)))[:count]
    used: set[str] = set()
    return [demo.make_posting(rng, number, company, used)
            for number, company in enumerate(schedule, start=1)]


def write_board(path: Path, postings: list[dict]) -> None:
    """Replace the board file in one rename (Discover never reads half a file)."""
    partial = path.with_suffix(".tmp")
    partial.write_text(json.dumps({"postings": postings}), encoding="utf-8")
    os.replace(partial, path)


def board_share(postings: list[dict], cycle: int, cycles: int) -> list[dict]:
    return postings[:round(len(postings) * cycle / cycles)]


# -- the watchers -------------------------------------------------------------------------


@dataclass
class OperationsReader:
    """GET /v1/pipeline/operations every ``interval_s`` (a late read is not made up)."""

    http: httpx.AsyncClient
    interval_s: float
    latencies_ms: list[float] = field(default_factory=list)
    failures: dict[str, int] = field(default_factory=dict)
    task: asyncio.Task | None = None

    async def read_once(self) -> float | None:
        started = time.perf_counter()
        try:
            response = await self.http.get("/v1/pipeline/operations")
        except httpx.HTTPError as exc:
            self._fail(type(exc).__name__)
            return None
        elapsed = (time.perf_counter() - started) * 1000
        if response.status_code != 200:
            self._fail(str(response.status_code))
            return None
        return elapsed

    def _fail(self, what: str) -> None:
        self.failures[what] = self.failures.get(what, 0) + 1

    async def sample(self, count: int) -> list[float]:
        """``count`` reads at the interval (the idle baseline)."""
        values = []
        for _ in range(count):
            started = time.perf_counter()
            value = await self.read_once()
            if value is not None:
                values.append(value)
            await asyncio.sleep(max(0.0, self.interval_s - (time.perf_counter() - started)))
        return values

    def start(self) -> None:
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        next_at = time.perf_counter()
        while True:
            value = await self.read_once()
            if value is not None:
                self.latencies_ms.append(value)
            next_at = max(next_at + self.interval_s, time.perf_counter())
            await asyncio.sleep(next_at - time.perf_counter())

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task


# -- facts from the database --------------------------------------------------------------


def newest_event(database: Path) -> int:
    with contextlib.closing(connect_ro(database)) as conn:
        return conn.execute("SELECT COALESCE(MAX(id), 0) FROM job_events").fetchone()[0]


def events_between(database: Path, after: int, upto: int) -> int:
    """Events appended in ``(after, upto]`` (ids have gaps: a deduplicated insert uses one)."""
    with contextlib.closing(connect_ro(database)) as conn:
        return conn.execute("SELECT COUNT(*) FROM job_events WHERE id > ? AND id <= ?",
                            (after, upto)).fetchone()[0]


def open_steps(database: Path, run_id: str) -> int:
    """The run's pipeline steps queued but not yet terminal (its Enrich and PDF passes end
    when their jobs have, judged by the worker's terminal reconciliation)."""
    with contextlib.closing(connect_ro(database)) as conn:
        return conn.execute(
            "SELECT COUNT(DISTINCT json_extract(payload_json, '$.itemKey')) FROM job_events"
            " WHERE run_id = ? AND type = 'PipelineStepQueued' AND json_extract(payload_json,"
            " '$.itemKey') NOT IN (SELECT json_extract(payload_json, '$.itemKey') FROM job_events"
            " WHERE run_id = ? AND type IN ('PipelineStepCompleted', 'PipelineStepFailed'))",
            (run_id, run_id)).fetchone()[0]


async def steps_closed(database: Path, run_id: str, timeout: float) -> int:
    """Wait until every pipeline step of the run is terminal; returns those still open."""
    deadline = time.perf_counter() + timeout
    while (left := open_steps(database, run_id)) and time.perf_counter() < deadline:
        await asyncio.sleep(0.25)
    return left


def discover_terminal(database: Path, run_id: str) -> str | None:
    with contextlib.closing(connect_ro(database)) as conn:
        row = conn.execute(
            "SELECT type FROM job_events WHERE run_id = ? AND type IN ('WorkflowCompleted',"
            " 'WorkflowFailed', 'WorkflowCanceled')", (run_id,)).fetchone()
    return row[0] if row else None


def ledger(database: Path) -> dict:
    with contextlib.closing(connect_ro(database)) as conn:
        calls, micro = conn.execute(
            "SELECT COALESCE(SUM(calls), 0), COALESCE(SUM(cost_micro_usd), 0) FROM llm_spend"
        ).fetchone()
        jobs = conn.execute("SELECT COUNT(*) FROM jobs").fetchone()[0]
        prepared = conn.execute("SELECT COUNT(*) FROM job_stage_states WHERE stage = 'pdf'"
                                " AND status = 'succeeded'").fetchone()[0]
        stage_rows = dict(conn.execute(
            "SELECT status, COUNT(*) FROM job_stage_states GROUP BY status").fetchall())
        failed_runs = [f"{kind} {code}: {count}" for kind, code, count in conn.execute(
            "SELECT json_extract(payload_json, '$.workflowType'),"
            " json_extract(payload_json, '$.errorCode'), COUNT(*) FROM job_events"
            " WHERE type = 'WorkflowFailed' GROUP BY 1, 2")]
    return {"calls": int(calls), "cost_usd": str(Decimal(micro) / 1_000_000), "jobs": jobs,
            "pdf_succeeded": prepared, "stage_rows": stage_rows, "failed_runs": failed_runs}


def stream_problems(database: Path, clients: list[StreamWatch]) -> list[dict]:
    """Per client: ids missing against ``job_events`` (up to the newest one), repeated,
    out of order, or not in the log at all."""
    newest = max((newest_seen(client) for client in clients), default=0)
    with contextlib.closing(connect_ro(database)) as conn:
        stored = array("q", (row[0] for row in conn.execute(
            "SELECT id FROM job_events WHERE id <= ? ORDER BY id", (newest,))))
    stored_set = set(stored)
    report = []
    for number, client in enumerate(clients):
        ids = client.ids
        seen = set(ids)
        report.append({
            "client": number, "received": len(ids),
            "missing": len(stored_set - seen),
            "repeated": len(ids) - len(seen),
            "out_of_order": sum(1 for a, b in zip(ids, ids[1:], strict=False) if b <= a),
            "unknown": len(seen - stored_set),
            "connects": client.connects, "reconnects": client.reconnects,
            "error": client.error})
    return report


def rss_sample(app_dir: Path) -> dict[str, float | None]:
    info = read_runtime_info(app_dir)
    sample = process_sample(info.pids if info else {})
    rss = {name: round(sample[name]["rss"] / MB, 1) if "rss" in sample.get(name, {}) else None
           for name in PROCESSES}
    rss["bench (clients, reader)"] = round(psutil.Process().memory_info().rss / MB, 1)
    return rss


# -- the run ------------------------------------------------------------------------------


def write_settings(app_dir: Path, board: Path, fake: FakeLlmServer) -> None:
    settings = {
        "sources": [{"kind": "json_file", "id": "generated", "path": str(board)}],
        "llm": {"provider": "openai_compat", "baseUrl": fake.openai_base_url, "model": MODEL,
                "apiKeySecret": "openai"},
        "dailyBudgetUsd": 0,  # unlimited: the ceiling is not what this measures
        "minFitScore": 0,  # every job is tailored and written: three paid calls each
    }
    (app_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")


def start_stand_in(args) -> FakeLlmServer:
    fake = FakeLlmServer().start()
    fake.reply_with(scripted_reply)
    fake.set_usage(*USAGE)
    fake.delay(args.latency_ms / 1000)
    fake.fail_randomly(args.fault_rate, (429, 500), seed=args.seed)
    return fake


async def run_cycle(number: int, args, api: ApiClient, serve: ServeProcess,
                    postings: list[dict], board: Path, reader: OperationsReader) -> dict:
    database = serve.app_dir / "jobctrl.db"
    share = board_share(postings, number, args.cycles)
    write_board(board, share)
    first_event = newest_event(database)
    first_read = len(reader.latencies_ms)
    started = time.perf_counter()
    accepted = await api.run_stage("discover")
    if accepted.get("alreadyRunning"):
        raise BenchError(f"cycle {number}: a Discover was still running: {accepted}")
    run_id = accepted["firstExecutionRunId"]
    busy = await settle(database, args.cycle_timeout)
    still_open = await steps_closed(database, run_id, args.cycle_timeout)
    busy = await settle(database, args.cycle_timeout)
    elapsed = time.perf_counter() - started
    terminal = discover_terminal(database, run_id)
    events = events_between(database, first_event, busy["newest_event"])
    reads = reader.latencies_ms[first_read:]
    return {"cycle": number, "board": len(share), "terminal": terminal, "open_steps": still_open,
            "seconds": round(elapsed, 1), "events": events,
            "events_per_s": round(events / elapsed, 1), "newest_event": busy["newest_event"],
            "operations_p95_ms": round(percentile(reads, 95), 1)}


def newest_seen(client: StreamWatch) -> int:
    return client.ids[-1] if client.ids else 0


async def wait_caught_up(clients: list[StreamWatch], newest: int) -> None:
    deadline = time.perf_counter() + CATCH_UP_TIMEOUT_S
    while any(newest_seen(client) < newest and client.error is None for client in clients):
        if time.perf_counter() > deadline:
            behind = sum(1 for client in clients if newest_seen(client) < newest)
            raise BenchError(f"{behind} SSE client(s) not caught up with event {newest}")
        await asyncio.sleep(0.2)


def latency_summary(values: list[float]) -> dict:
    return {"n": len(values), "p50": round(percentile(values, 50), 1),
            "p95": round(percentile(values, 95), 1), "p99": round(percentile(values, 99), 1),
            "max": round(max(values), 1) if values else None}


async def sustained(args, app_dir: Path) -> dict:
    board = app_dir / "board.json"
    postings = generated_postings(args.postings, args.seed)
    app_dir.mkdir(parents=True, exist_ok=True)
    write_board(board, [])
    fake = start_stand_in(args)
    write_settings(app_dir, board, fake)
    serve = ServeProcess(app_dir, env={**os.environ, "JOBCTRL_SECRETS_BACKEND": "file"})
    clients: list[StreamWatch] = []
    reader = http = api = None
    try:
        serve.start()
        info = serve.info
        api = ApiClient.from_runtime(info)
        await api.put_secret("openai", "sk-bench")
        await api.put_profile(PROFILE)
        await settle(app_dir / "jobctrl.db", args.cycle_timeout)
        http = httpx.AsyncClient(base_url=info.api_base_url, timeout=30,
                                 headers={"Authorization": f"Bearer {info.api_token}"})
        reader = OperationsReader(http, args.poll_ms / 1000)
        idle = await reader.sample(IDLE_POLLS)
        clients = [StreamWatch(ApiClient.from_runtime(info)) for _ in range(args.clients)]
        for client in clients:
            client.start()
        await wait_caught_up(clients, newest_event(app_dir / "jobctrl.db"))
        rss_start = rss_sample(app_dir)
        reader.start()
        load_started = time.perf_counter()
        cycles = []
        for number in range(1, args.cycles + 1):
            cycle = await run_cycle(number, args, api, serve, postings, board, reader)
            cycles.append(cycle)
            print(f"cycle {number:2d}: board {cycle['board']:5d}  {cycle['seconds']:7.1f} s"
                  f"  {cycle['events']:7d} events  {cycle['events_per_s']:7.1f}/s"
                  f"  stand-in {fake.succeeded} ok / {fake.faults} faults"
                  f"  operations p95 {cycle['operations_p95_ms']:.1f} ms", flush=True)
        load_s = time.perf_counter() - load_started
        await reader.stop()
        database = app_dir / "jobctrl.db"
        newest = newest_event(database)
        await wait_caught_up(clients, newest)
        rss_end = rss_sample(app_dir)
        spend = ledger(database)
        streams = stream_problems(database, clients)
        events = sum(cycle["events"] for cycle in cycles)
        return {
            "postings": args.postings, "cycles": cycles, "clients": args.clients,
            "load_s": round(load_s, 1), "events": events,
            "events_per_s": round(events / load_s, 1),
            "operations_idle_ms": latency_summary(idle),
            "operations_load_ms": latency_summary(reader.latencies_ms),
            "operations_failures": reader.failures,
            "ledger": spend,
            "stand_in": {"requests": fake.calls, "answered_200": fake.succeeded,
                         "faults": fake.faults, "max_in_flight": fake.max_in_flight},
            "streams": streams, "rss_mb_start": rss_start, "rss_mb_end": rss_end,
        }
    except BaseException:
        if serve.process is not None:
            print(serve.log_tails(20), file=sys.stderr)
        raise
    finally:
        for client in clients:
            await client.stop()
            await client.api.close()
        if reader is not None:
            await reader.stop()
        if http is not None:
            await http.aclose()
        if api is not None:
            await api.close()
        stopped = serve.stop()
        fake.stop()
        if stopped.get("survivors"):
            print(f"killed survivors after stop: {stopped['survivors']}", file=sys.stderr)


def verdict(result: dict) -> list[str]:
    """What must hold (exit 1 otherwise)."""
    problems = []
    spend, stand_in = result["ledger"], result["stand_in"]
    if spend["calls"] != stand_in["answered_200"]:
        problems.append(f"ledger {spend['calls']} calls != stand-in {stand_in['answered_200']}")
    expected_cost = Decimal(stand_in["answered_200"] * CALL_MICRO_USD) / 1_000_000
    if Decimal(spend["cost_usd"]) != expected_cost:
        problems.append(f"ledger ${spend['cost_usd']} != ${expected_cost} for the calls made")
    for stream in result["streams"]:
        bad = {key: stream[key] for key in ("missing", "repeated", "out_of_order", "unknown",
                                             "reconnects") if stream[key]}
        if bad or stream["error"]:
            problems.append(f"SSE client {stream['client']}: {bad} {stream['error'] or ''}")
    if any(cycle["terminal"] != "WorkflowCompleted" for cycle in result["cycles"]):
        problems.append("a Discover did not complete")
    if any(cycle["open_steps"] for cycle in result["cycles"]):
        problems.append("a Discover's pipeline step stayed open")
    if not spend["jobs"] == spend["pdf_succeeded"] == result["postings"]:
        # Nothing is lost: every posting became a job, and every job was prepared.
        problems.append(f"{result['postings']} postings, {spend['jobs']} jobs,"
                        f" {spend['pdf_succeeded']} prepared; stage rows {spend['stage_rows']};"
                        f" failed runs {spend['failed_runs'] or 'none'}")
    return problems


def print_report(result: dict, problems: list[str]) -> None:
    idle, load = result["operations_idle_ms"], result["operations_load_ms"]
    spend, stand_in = result["ledger"], result["stand_in"]
    streams = result["streams"]
    print(f"\n{result['postings']} postings, {len(result['cycles'])} cycles in"
          f" {result['load_s']:.0f} s: {result['events']} events, {result['events_per_s']:.1f}"
          f" events/s; {spend['jobs']} jobs, {spend['pdf_succeeded']} with PDFs")
    print(f"operations snapshot (ms)   p50 {load['p50']:7.1f}  p95 {load['p95']:7.1f}"
          f"  p99 {load['p99']:7.1f}  max {load['max']:7.1f}  ({load['n']} reads,"
          f" failures {result['operations_failures'] or 'none'})")
    print(f"  idle baseline            p50 {idle['p50']:7.1f}  p95 {idle['p95']:7.1f}"
          f"  → p95 ratio {load['p95'] / idle['p95']:.1f}×")
    print(f"ledger {spend['calls']} calls ${spend['cost_usd']}  vs stand-in"
          f" {stand_in['answered_200']} answered 200 ({stand_in['faults']} faults of"
          f" {stand_in['requests']} requests, at most {stand_in['max_in_flight']} in flight)")
    print(f"SSE: {len(streams)} clients, each {min(s['received'] for s in streams)}–"
          f"{max(s['received'] for s in streams)} events; missing"
          f" {sum(s['missing'] for s in streams)}, repeated {sum(s['repeated'] for s in streams)},"
          f" out of order {sum(s['out_of_order'] for s in streams)}, reconnects"
          f" {sum(s['reconnects'] for s in streams)}")
    print("RSS MB (start → end): " + ", ".join(
        f"{name} {result['rss_mb_start'][name]} → {result['rss_mb_end'][name]}"
        for name in result["rss_mb_start"]))
    print("Verdict: " + ("ok" if not problems else "; ".join(problems)))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help=f"{QUICK['postings']} postings, {QUICK['cycles']} cycles")
    parser.add_argument("--postings", type=int, default=2000)
    parser.add_argument("--cycles", type=int, default=10)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--latency-ms", type=float, default=200)
    parser.add_argument("--fault-rate", type=float, default=0.05)
    parser.add_argument("--poll-ms", type=float, default=250)
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--cycle-timeout", type=float, default=1800,
                        help="seconds for one cycle to settle")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--keep", action="store_true", help="keep the temporary app dir")
    args = parser.parse_args()
    if args.quick:
        args.postings, args.cycles = QUICK["postings"], QUICK["cycles"]
    sigterm_raises_interrupt()
    machine = machine_info()
    app_dir = Path(tempfile.mkdtemp(prefix="jobctrl-bench-load-"))
    try:
        result = asyncio.run(sustained(args, app_dir))
    finally:
        if args.keep:
            print(f"kept {app_dir}")
        else:
            shutil.rmtree(app_dir, ignore_errors=True)
    problems = verdict(result)
    print_report(result, problems)
    mode = "quick" if args.quick else "custom" if (args.postings, args.cycles) != (2000, 10) \
        else "full"
    write_json(args.json, {"machine": machine, "mode": mode, "args": vars(args),
                           "problems": problems, **result})
    return 1 if problems else 0


if __name__ == "__main__":
    code = 0
    try:
        code = main()
    except KeyboardInterrupt:
        code = 130
    except Exception:  # noqa: BLE001 - printed, then a hard exit (sdk-python issue 300)
        traceback.print_exc()
        code = 1
    hard_exit(code)
