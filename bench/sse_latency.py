"""Commit-to-client latency of ``GET /v1/events/stream`` against a naive 250 ms poller.

Starts ``jobctrl serve`` on a temporary app dir, then for each variant:

1. starts two client processes: the desktop's SSE client (``desktop.client.ApiClient
   .events()`` with no Last-Event-ID) and the baseline, a poller that runs
   ``SELECT ... FROM job_events WHERE id > ?`` on the same database every 250 ms (the
   spec's original design);
2. appends ``--events`` events from this process, one per transaction, through
   ``backend.store.events.append_event``, recording ``time.perf_counter()`` after each
   commit per event id;
3. collects each client's receipt time per id (``perf_counter`` is the system-wide
   monotonic clock, so the processes' readings compare; a ping checks that), and reports
   latency percentiles, missing and duplicate ids, and delivered events/s.

Variants: ``steady`` (one event every ``--interval-ms``, default 5 ms) and ``burst`` (all
events as fast as one writer can commit them). Target: steady SSE p99 < 100 ms.
``--diag-tail`` adds the API's own ``EventTail`` in a separate process (no HTTP) to tell
change detection from delivery. Results and their interpretation: bench/README.md.

    .venv/bin/python bench/sse_latency.py [--events 1000] [--interval-ms 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
import traceback
from pathlib import Path

from _common import (
    BenchError,
    ServeProcess,
    hard_exit,
    machine_info,
    owned_popen_options,
    percentile,
    sigterm_raises_interrupt,
    write_json,
)

TARGET_P99_MS = 100.0
POLL_INTERVAL_MS = 250.0  # the spec's design
CLIENT_START_TIMEOUT_S = 30.0
STREAM_LINE_LIMIT = 1 << 26
TOKEN_ENV = "JOBCTRL_BENCH_API_TOKEN"


# -- client processes -------------------------------------------------------------------
# Protocol (one JSON object per stdout line; commands on stdin):
#   -> {"live": true}              the stream is open / the poller has its starting id
#   <- "ping"  -> {"pong": t}      t = perf_counter() in the client
#   <- "until <id> <timeout_s>"    finish once <id> arrived (or the timeout passed)
#   -> {"receipts": [[id, t], ...], "states": [...], "errors": [...]}


def emit(payload: dict) -> None:
    sys.stdout.write(json.dumps(payload) + "\n")
    sys.stdout.flush()


async def client_protocol(
    receipts: list, states: list, live: asyncio.Event, errors: list[str]
) -> None:
    await live.wait()
    emit({"live": True})
    while True:
        line = (await asyncio.to_thread(sys.stdin.readline)).split()
        if not line:
            return  # parent went away
        if line[0] == "ping":
            emit({"pong": time.perf_counter()})
        elif line[0] == "until":
            last_id, timeout = int(line[1]), float(line[2])
            deadline = time.perf_counter() + timeout
            while (time.perf_counter() < deadline and not errors
                   and not (receipts and receipts[-1][0] >= last_id)):
                await asyncio.sleep(0.01)
            emit({"receipts": receipts, "states": states, "errors": errors})
            return


async def desktop_events(base_url: str, token: str, on_state):
    """What the desktop uses: ``ApiClient.events()`` (reconnects with Last-Event-ID)."""
    from desktop.client import ApiClient

    api = ApiClient(base_url, token)
    try:
        stream = api.events(None, on_state=on_state)
        async with contextlib.aclosing(stream):
            async for event in stream:
                yield event.id
    finally:
        await api.close()


async def raw_events(base_url: str, token: str, on_state):
    """httpx + httpx-sse directly, skipping data-less dispatches (httpx-sse issue #35:
    a keepalive comment after an event yields a phantom event with the sticky id)."""
    import httpx
    from httpx_sse import aconnect_sse

    async with httpx.AsyncClient(
        base_url=base_url, headers={"Authorization": f"Bearer {token}"},
        timeout=httpx.Timeout(10, read=None),
    ) as http, aconnect_sse(http, "GET", "/v1/events/stream") as source:
        source.response.raise_for_status()
        on_state("live")
        async with contextlib.aclosing(source.aiter_sse()) as stream:
            async for sse in stream:
                if sse.id and sse.data:
                    json.loads(sse.data)  # the same decoding work as ApiClient
                    yield int(sse.id)


async def sse_client(base_url: str, token: str, kind: str) -> None:
    receipts: list[list] = []
    states: list[str] = []
    errors: list[str] = []
    live = asyncio.Event()

    def on_state(state: str) -> None:
        states.append(state)
        if state == "live":
            live.set()

    async def consume() -> None:
        events = desktop_events if kind == "apiclient" else raw_events
        try:
            async for event_id in events(base_url, token, on_state):
                receipts.append([event_id, time.perf_counter()])
        except Exception as error:  # noqa: BLE001 - reported to the benchmark
            errors.append(f"{type(error).__name__}: {error}")
            live.set()

    consumer = asyncio.create_task(consume())
    try:
        await client_protocol(receipts, states, live, errors)
    finally:
        consumer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await consumer


async def poll_client(database: str, interval: float) -> None:
    """The spec's design: every 250 ms (``--poll-ms``), read the rows after the last id."""
    conn = sqlite3.connect(database, isolation_level=None, timeout=10)
    conn.execute("PRAGMA busy_timeout=10000")
    receipts: list[list] = []
    live = asyncio.Event()
    last_id = conn.execute("SELECT COALESCE(MAX(id), 0) FROM job_events").fetchone()[0]

    async def poll() -> None:
        nonlocal last_id
        next_tick = time.perf_counter()
        while True:
            rows = conn.execute(
                "SELECT id, type, payload_json FROM job_events WHERE tenant_id = 'local'"
                " AND id > ? ORDER BY id", (last_id,),
            ).fetchall()
            now = time.perf_counter()
            for row in rows:
                receipts.append([row[0], now])
                last_id = row[0]
            live.set()
            next_tick += interval
            await asyncio.sleep(max(0.0, next_tick - time.perf_counter()))

    poller = asyncio.create_task(poll())
    try:
        await client_protocol(receipts, [], live, [])
    finally:
        poller.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await poller
        conn.close()


async def tail_client(database: str) -> None:
    """Diagnostic (``--diag-tail``): the API's own change detector and page read
    (``backend.api.sse.EventTail`` + ``read_events_after``) in a process of its own, with
    no HTTP, uvicorn or SSE framing in between."""
    from backend.api.sse import PAGE_SIZE, EventTail
    from backend.store.db import Database
    from backend.store.events import latest_event_id, read_events_after

    db = await Database.open(Path(database), run_migrations=False)
    tail = EventTail(Path(database))
    await tail.start()
    receipts: list[list] = []
    live = asyncio.Event()

    async def follow() -> None:
        last_id = await latest_event_id(db)
        live.set()
        while True:
            marker = tail.marker()
            page = await read_events_after(db, last_id, PAGE_SIZE)
            now = time.perf_counter()
            for event in page:
                receipts.append([event.id, now])
                last_id = event.id
            if len(page) < PAGE_SIZE:
                await marker.wait()

    follower = asyncio.create_task(follow())
    try:
        await client_protocol(receipts, [], live, [])
    finally:
        follower.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await follower
        await tail.stop()
        await db.close()


class ClientProcess:
    def __init__(self, name: str, argv: list[str], env: dict[str, str]):
        self.name = name
        self.argv = argv
        self.env = env
        self.process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            env=self.env, limit=STREAM_LINE_LIMIT, **owned_popen_options(),
        )
        message = await self._read(CLIENT_START_TIMEOUT_S)
        if not message.get("live"):
            raise BenchError(f"{self.name} client did not go live: {message}")

    async def _read(self, timeout: float) -> dict:
        line = await asyncio.wait_for(self.process.stdout.readline(), timeout)
        if not line:
            raise BenchError(f"{self.name} client exited with {await self.process.wait()}")
        return json.loads(line)

    async def _send(self, text: str) -> None:
        self.process.stdin.write(text.encode() + b"\n")
        await self.process.stdin.drain()

    async def clock_offset(self) -> float:
        """Check the client's perf_counter is ours: its reading must fall inside our
        send/receive window. Returns the round trip in seconds."""
        before = time.perf_counter()
        await self._send("ping")
        pong = (await self._read(10))["pong"]
        after = time.perf_counter()
        if not before <= pong <= after:
            raise BenchError(f"{self.name} client's clock differs ({before} {pong} {after}):"
                             " perf_counter is not shared between processes here")
        return after - before

    async def finish(self, last_id: int, timeout: float) -> dict:
        await self._send(f"until {last_id} {timeout}")
        message = await self._read(timeout + 30)
        await asyncio.wait_for(self.process.wait(), 10)
        return message

    async def kill(self) -> None:
        if self.process is not None and self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.process.wait(), 5)


# -- the benchmark ----------------------------------------------------------------------


def analyse(commits: dict[int, float], pre_commits: dict[int, float], message: dict) -> dict:
    """Latency is receipt minus the time after COMMIT returned (the brief's definition).
    The commit really happened between the COMMIT call and its return to this loop, so a
    very fast client can be a fraction of a millisecond early (``negative_latencies``);
    ``latency_from_commit_call_ms`` is the upper bound measured from the COMMIT call."""
    receipts = message["receipts"]
    first_seen: dict[int, float] = {}
    duplicates = 0
    extra = 0
    for event_id, received in receipts:
        if event_id not in commits:
            extra += 1
        elif event_id in first_seen:
            duplicates += 1
        else:
            first_seen[event_id] = received
    latencies = [(first_seen[i] - commits[i]) * 1000 for i in first_seen]
    upper = [(first_seen[i] - pre_commits[i]) * 1000 for i in first_seen]
    delivered = len(first_seen)
    span = (max(first_seen.values()) - min(commits.values())) if first_seen else float("nan")
    return {
        "received": delivered,
        "missing": len(commits) - delivered,
        "duplicates": duplicates,
        "unexpected_ids": extra,
        "negative_latencies": sum(1 for x in latencies if x < 0),
        "latency_ms": {
            "p50": percentile(latencies, 50),
            "p95": percentile(latencies, 95),
            "p99": percentile(latencies, 99),
            "max": max(latencies) if latencies else float("nan"),
            "mean": sum(latencies) / len(latencies) if latencies else float("nan"),
        },
        "latency_from_commit_call_ms": {
            "p50": percentile(upper, 50),
            "p99": percentile(upper, 99),
            "max": max(upper) if upper else float("nan"),
        },
        "delivered_events_per_s": delivered / span if span and span > 0 else float("nan"),
        "stream_states": message.get("states", []),
        "client_errors": message.get("errors", []),
    }


async def run_variant(
    name: str, info, db, *, events: int, interval_s: float, drain_timeout: float, client: str,
    poll_ms: float, diag_tail: bool,
) -> dict:
    from backend.domain.events import WorkflowStarted
    from backend.store.events import append_event

    script = str(Path(__file__).resolve())
    env = {**os.environ, TOKEN_ENV: info.api_token}
    clients = [
        ClientProcess("sse", [sys.executable, script, "--role", "sse", "--client", client,
                              "--base-url", info.api_base_url], env),
        ClientProcess("poll", [sys.executable, script, "--role", "poll",
                               "--poll-ms", str(poll_ms),
                               "--database", info.database], env),
    ]
    if diag_tail:
        clients.append(ClientProcess("tail", [sys.executable, script, "--role", "tail",
                                              "--database", info.database], env))
    try:
        await asyncio.gather(*(client.start() for client in clients))
        round_trips = {c.name: await c.clock_offset() * 1000 for c in clients}

        commits: dict[int, float] = {}
        pre_commits: dict[int, float] = {}  # just before COMMIT (the upper bound)
        started = time.perf_counter()
        for index in range(events):
            async with db.transaction() as conn:
                event_id = await append_event(
                    conn,
                    WorkflowStarted(workflow_id=f"bench-{name}-{index}", run_id="bench",
                                    workflow_type="DiscoverWorkflow"),
                    workflow_id=f"bench-{name}-{index}", run_id="bench",
                )
                before_commit = time.perf_counter()
            commits[event_id] = time.perf_counter()
            pre_commits[event_id] = before_commit
            if interval_s > 0:
                await asyncio.sleep(max(0.0, started + (index + 1) * interval_s
                                        - time.perf_counter()))
        writing_s = time.perf_counter() - started

        messages = await asyncio.gather(
            *(client.finish(max(commits), drain_timeout) for client in clients)
        )
    finally:
        for client in clients:
            await client.kill()
    result = {
        "variant": name,
        "events": events,
        "interval_ms": interval_s * 1000,
        "writer_events_per_s": events / writing_s,
        "writer_s": writing_s,
        "clock_check_round_trip_ms": round_trips,
        "commit_ms": {
            "p50": percentile([(commits[i] - pre_commits[i]) * 1000 for i in commits], 50),
            "p99": percentile([(commits[i] - pre_commits[i]) * 1000 for i in commits], 99),
        },
        "sse": analyse(commits, pre_commits, messages[0]),
        "poll_ms": poll_ms,
        "poll": analyse(commits, pre_commits, messages[1]),
    }
    if diag_tail:
        result["tail"] = analyse(commits, pre_commits, messages[2])
    return result


async def bench(info, args) -> list[dict]:
    from backend.store.db import Database

    db = await Database.open(Path(info.database), run_migrations=False)
    try:
        variants = [("steady", args.interval_ms / 1000)]
        if not args.no_burst:
            variants.append(("burst", 0.0))
        results = []
        for name, interval in variants:
            result = await run_variant(name, info, db, events=args.events, interval_s=interval,
                                       drain_timeout=args.drain_timeout, client=args.client,
                                       poll_ms=args.poll_ms, diag_tail=args.diag_tail)
            print_variant(result)
            results.append(result)
        return results
    finally:
        await db.close()


def print_variant(result: dict) -> None:
    label = (f"{result['variant']}: {result['events']} events"
             + (f", one every {result['interval_ms']:.1f} ms" if result["interval_ms"] else
                ", as fast as possible")
             + f" (writer {result['writer_events_per_s']:.0f} events/s)")
    print(label)
    print(f"  {'client':<12}{'p50':>8}{'p95':>8}{'p99':>8}{'max':>8}   ms"
          f"{'missing':>9}{'dup':>5}{'events/s':>10}")
    rows = [("sse", "SSE"), ("poll", f"poll {result['poll_ms']:g}ms"), ("tail", "EventTail")]
    for key, title in rows:
        if key not in result:
            continue
        r = result[key]
        lat = r["latency_ms"]
        print(f"  {title:<12}{lat['p50']:>8.1f}{lat['p95']:>8.1f}{lat['p99']:>8.1f}"
              f"{lat['max']:>8.1f}     {r['missing']:>9}{r['duplicates']:>5}"
              f"{r['delivered_events_per_s']:>10.0f}")
    sse, poll = result["sse"]["latency_ms"], result["poll"]["latency_ms"]
    upper = result["sse"]["latency_from_commit_call_ms"]
    print(f"  ratio SSE/poller: p50 {sse['p50'] / poll['p50']:.3f}, "
          f"p99 {sse['p99'] / poll['p99']:.3f}")
    print(f"  COMMIT call to return: p50 {result['commit_ms']['p50']:.2f} ms, p99"
          f" {result['commit_ms']['p99']:.2f} ms; SSE from the COMMIT call: p99"
          f" {upper['p99']:.1f} ms, max {upper['max']:.1f} ms;"
          f" early receipts {result['sse']['negative_latencies']}", flush=True)


def main_bench(args) -> int:
    app_dir = Path(tempfile.mkdtemp(prefix="jobctrl-sse-latency-"))
    results: dict = {
        "benchmark": "sse_latency",
        "params": {"events": args.events, "interval_ms": args.interval_ms,
                   "client": args.client, "sse_keepalive_s": 15.0 if args.sse_keepalive_s is None
                   else args.sse_keepalive_s,
                   "poll_interval_ms": args.poll_ms, "target_p99_ms": TARGET_P99_MS},
        "machine": machine_info(),
    }
    env = None
    if args.sse_keepalive_s is not None:
        env = {**os.environ, "JOBCTRL_SSE_KEEPALIVE_S": str(args.sse_keepalive_s)}
    serve = ServeProcess(app_dir, env=env)
    failed = False
    try:
        startup = serve.start()
        print(f"jobctrl serve healthy after {startup:.2f} s ({serve.info.api_base_url})",
              flush=True)
        results["variants"] = asyncio.run(bench(serve.info, args))
    except BenchError as error:
        print(f"benchmark failed: {error}", file=sys.stderr)
        failed = True
    finally:
        stopped = serve.stop()
        if stopped.get("survivors"):
            print(f"children survived jobctrl serve (killed): {stopped['survivors']}",
                  file=sys.stderr)
            failed = True
        if not args.keep:
            shutil.rmtree(app_dir, ignore_errors=True)
    if failed:
        return 1

    results["serve_stop"] = stopped
    problems = []
    for variant in results["variants"]:
        for key in ("sse", "poll", "tail"):
            r = variant.get(key)
            if r is None:
                continue
            if r["missing"] or r["duplicates"] or r["unexpected_ids"] or r["client_errors"]:
                problems.append(f"{variant['variant']} {key}: {r['missing']} missing,"
                                f" {r['duplicates']} duplicates, {r['unexpected_ids']} unexpected,"
                                f" client errors {r['client_errors']}")
    steady = results["variants"][0]["sse"]["latency_ms"]["p99"]
    results["target_met"] = steady < TARGET_P99_MS
    results["problems"] = problems
    print(f"\nsteady SSE p99 {steady:.1f} ms: target < {TARGET_P99_MS:.0f} ms "
          + ("met" if results["target_met"] else "MISSED"))
    for problem in problems:
        print(f"PROBLEM: {problem}")
    write_json(args.json, results)
    return 0 if not problems else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1000, help="events per variant (1000)")
    parser.add_argument("--interval-ms", type=float, default=5.0,
                        help="steady variant: one commit every this many ms (default 5)")
    parser.add_argument("--no-burst", action="store_true", help="skip the burst variant")
    parser.add_argument("--drain-timeout", type=float, default=10.0,
                        help="seconds the clients may take to receive the last event")
    parser.add_argument("--client", choices=["apiclient", "httpx"], default="apiclient",
                        help="SSE client: the desktop's ApiClient (default) or raw httpx-sse")
    parser.add_argument("--poll-ms", type=float, default=POLL_INTERVAL_MS,
                        help="baseline poller interval (default 250 ms, the spec's design)")
    parser.add_argument("--sse-keepalive-s", type=float,
                        help="API keepalive ping interval (JOBCTRL_SSE_KEEPALIVE_S; default 15)")
    parser.add_argument("--diag-tail", action="store_true",
                        help="diagnostic: also run the API's EventTail in a process of its own"
                        " (no HTTP) to separate change detection from HTTP/SSE delivery")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the temporary app dir")
    parser.add_argument("--role", choices=["bench", "sse", "poll", "tail"], default="bench",
                        help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    parser.add_argument("--database", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "sse":
        asyncio.run(sse_client(args.base_url, os.environ[TOKEN_ENV], args.client))
        return 0
    if args.role == "tail":
        asyncio.run(tail_client(args.database))
        return 0
    if args.role == "poll":
        asyncio.run(poll_client(args.database, args.poll_ms / 1000))
        return 0
    sigterm_raises_interrupt()
    if args.events < 1 or args.interval_ms < 0:
        parser.error("--events must be >= 1 and --interval-ms >= 0")
    return main_bench(args)


if __name__ == "__main__":
    exit_code = 1
    try:
        exit_code = main()
    except KeyboardInterrupt:
        print("interrupted; services stopped", file=sys.stderr)
        exit_code = 130
    except Exception:  # noqa: BLE001 - print it, then leave without finalization
        traceback.print_exc()
    finally:
        hard_exit(exit_code)
