"""Record real ``GET /v1/pipeline/operations`` snapshots for tests/desktop/fixtures/operations/.

The Pipelines headline, its progress bar, the tray tooltip and the notifications are all
derived from one presenter of this snapshot (desktop/presenters/operations.py); their tests
feed it these recorded answers, so every state is one the real backend produces, not a
hand-written guess. The script starts a real Supervisor (Temporal dev server, worker, API)
on a temporary app dir and drives it through the API like the desktop does, polling the
snapshot every ~0.3 s:

1. ``recovering``: only if the first read after start comes before the worker's first
   heartbeat (usually it does not; ``worker-stopped-no-run`` below is the sure case).
2. ``idle``: the sample profile imported and saved, no run yet, the worker fresh and idle.
3. ``discovering`` / ``draining-sources-done`` / ``draining-eta`` / ``completed``: a
   Discover of the bundled demo board (234 postings) with the built-in offline model; a
   subsampled ``discover-series.json`` of the whole run is kept for the "the bar never
   stands still while work moves" test.
4. ``recovering-history``: the completed run's coverage checkpoint row is deleted (as if
   the projection were lost); the next reads say ``recovering`` until the worker's
   heartbeat has rebuilt and proven it from Temporal history.
5. ``canceled``: a Discover of only a Greenhouse board on loopback that holds its answer,
   canceled while it crawls (``discovering-held`` is its in-flight state).
6. ``failed``: a Discover of only a malformed board file (every family failed).
7. ``worker-stopped-no-run``: a second, fresh app whose worker is stopped before any run:
   no run is selected and nothing proves the worker idle (coverage ``recovering``).
8. ``paused-budget``: the second app with a "paid" model on loopback (gpt-4o pricing) and a
   daily ceiling of exactly one job's three calls ($0.066) over 12 demo postings: the budget
   is used up by the first job and the other eleven wait for the reset.

Each file is ``{"recorded": {...how...}, "snapshot": {...the API's answer...}}``.

Usage (from the repository root)::

    PYTHONPATH=. .venv/bin/python scripts/record_operations_snapshots.py [--out DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a plain script from a checkout

from backend.supervision.supervisor import Supervisor  # noqa: E402
from tests.fakes.job_boards import JobBoards  # noqa: E402
from tests.fakes.llm_servers import FakeLlmServer  # noqa: E402
from tests.integration.test_paid_pipeline import demo_subset, scripted_reply  # noqa: E402

DEFAULT_OUT = ROOT / "tests" / "desktop" / "fixtures" / "operations"
POLL_S = 0.3
WAIT_S = 900.0
SERIES_MAX = 40
BROKEN_BOARD = '{"postings": [{"id": "x-1", "url": "not a url", "title": ""}]}'

Snapshot = dict[str, Any]
Predicate = Callable[[Snapshot], bool]


def phase(snapshot: Snapshot) -> str | None:
    return (snapshot.get("execution") or {}).get("phase")


def families_done(snapshot: Snapshot) -> bool:
    families = snapshot.get("sourceFamilies") or {}
    return bool(families) and families.get("remaining") == 0


def done_count(snapshot: Snapshot, stage: str = "enrich") -> int:
    block = ((snapshot.get("scopes") or {}).get("current_execution") or {}).get(stage) or {}
    return block.get("succeeded", 0)


class Poller:
    """Polls the snapshot in the background; every answer is kept with its time."""

    def __init__(self, http: httpx.AsyncClient):
        self.http = http
        self.seen: list[tuple[float, Snapshot]] = []
        self._task: asyncio.Task | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while True:
            response = await self.http.get("/v1/pipeline/operations")
            if response.status_code == 200:
                self.seen.append((time.monotonic(), response.json()))
            await asyncio.sleep(POLL_S)

    async def wait(self, predicate: Predicate, *, after: float = 0.0,
                   timeout: float = WAIT_S) -> Snapshot:
        """The first snapshot polled after ``after`` (monotonic) that satisfies it."""
        deadline = time.monotonic() + timeout
        index = 0
        while time.monotonic() < deadline:
            while index < len(self.seen):
                at, snapshot = self.seen[index]
                index += 1
                if at >= after and predicate(snapshot):
                    return snapshot
            await asyncio.sleep(POLL_S / 2)
        raise TimeoutError("no snapshot matched in time")

    def first(self, predicate: Predicate, *, after: float = 0.0) -> Snapshot | None:
        return next((s for at, s in self.seen if at >= after and predicate(s)), None)


def save(out: Path, name: str, snapshot: Snapshot, how: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    body = {"recorded": {"how": how, "by": "scripts/record_operations_snapshots.py"},
            "snapshot": snapshot}
    (out / f"{name}.json").write_text(json.dumps(body, indent=1, sort_keys=True) + "\n",
                                      encoding="utf-8")
    print(f"saved {name}: phase={phase(snapshot)} coverage="
          f"{(snapshot.get('projectionCoverage') or {}).get('status')} "
          f"eta={(snapshot.get('overallEta') or {}).get('state')}/"
          f"{(snapshot.get('overallEta') or {}).get('reason')}", flush=True)


def subsample(series: list[Snapshot], limit: int) -> list[Snapshot]:
    """Distinct progress states, evenly thinned to ``limit`` (first and last kept)."""
    distinct: list[Snapshot] = []
    last_key = None
    for snapshot in series:
        key = json.dumps([phase(snapshot), snapshot.get("sourceFamilies"),
                          (snapshot.get("scopes") or {}).get("current_execution"),
                          snapshot.get("overallEta", {}) and
                          (snapshot.get("overallEta") or {}).get("state")], sort_keys=True)
        if key != last_key:
            distinct.append(snapshot)
            last_key = key
    if len(distinct) <= limit:
        return distinct
    step = (len(distinct) - 1) / (limit - 1)
    return [distinct[round(i * step)] for i in range(limit)]


def write_settings(app_dir: Path, **settings: Any) -> None:
    app_dir.mkdir(parents=True, exist_ok=True)
    (app_dir / "settings.json").write_text(json.dumps(settings), encoding="utf-8")


async def save_sample_profile(http: httpx.AsyncClient) -> None:
    draft = (await http.post("/v1/profile/import", params={"sample": "true"},
                             timeout=60)).json()
    (await http.put("/v1/profile", json=draft["profile"])).raise_for_status()


async def start_discover(http: httpx.AsyncClient, **extra: Any) -> str:
    response = await http.post("/v1/pipeline/actions/run-stage",
                               json={"stage": "discover", **extra})
    response.raise_for_status()
    return response.json()["firstExecutionRunId"]


def run_is(run_id: str, *phases: str) -> Predicate:
    def check(snapshot: Snapshot) -> bool:
        selected = snapshot.get("execution") or {}
        return selected.get("discoverRunId") == run_id and selected.get("phase") in phases
    return check


async def open_app(app_dir: Path) -> tuple[Supervisor, httpx.AsyncClient]:
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    http = httpx.AsyncClient(base_url=supervisor.info.api_base_url, timeout=60,
                             headers={"Authorization": f"Bearer {supervisor.info.api_token}"})
    return supervisor, http


async def close_app(poller: Poller, http: httpx.AsyncClient, supervisor: Supervisor) -> None:
    await poller.stop()
    await http.aclose()
    await supervisor.stop()


# ---------------------------------------------------------------------------- the offline app


async def record_offline(out: Path, base: Path) -> None:
    app_dir = base / "offline"
    broken = base / "broken-board.json"
    broken.write_text(BROKEN_BOARD, encoding="utf-8")
    held = JobBoards().start()
    held.serve_json(JobBoards.GREENHOUSE_PATH, {"jobs": [], "meta": {"total": 0}})
    held.slow(JobBoards.GREENHOUSE_PATH, 600)
    write_settings(app_dir, sources=[
        {"kind": "demo_board", "id": "demo_board"},
        {"kind": "json_file", "id": "broken", "path": str(broken), "enabled": False},
        {"kind": "greenhouse", "id": "held-gh", "boardToken": "acme",
         "baseUrl": held.base_url, "enabled": False}])
    supervisor, http = await open_app(app_dir)
    poller = Poller(http)
    poller.start()
    try:
        early = await poller.wait(lambda s: True)
        if (early.get("projectionCoverage") or {}).get("status") == "recovering":
            save(out, "recovering", early, "right after start, before the worker was "
                 "proven idle: no run selected, coverage recovering")
        await save_sample_profile(http)
        idle = await poller.wait(lambda s: s.get("execution") is None
                                 and (s.get("overallEta") or {}).get("reason") == "no_work",
                                 after=time.monotonic())
        save(out, "idle", idle, "sample profile saved, no Discover run yet, worker fresh")

        started = time.monotonic()
        run_id = await start_discover(http)
        discovering = await poller.wait(run_is(run_id, "discovering"), after=started)
        save(out, "discovering", discovering, "demo board Discover, offline model, "
             "the source still crawling")
        sources_done = await poller.wait(
            lambda s: run_is(run_id, "draining")(s) and families_done(s)
            and done_count(s) > 0, after=started)
        save(out, "draining-sources-done", sources_done, "demo board Discover: the source "
             "is done, jobs are being prepared")
        completed = await poller.wait(run_is(run_id, "completed", "completed_with_issues"),
                                      after=started)
        series = [s for at, s in poller.seen if at >= started
                  and (s.get("execution") or {}).get("discoverRunId") == run_id]
        eta = next((s for s in series if run_is(run_id, "draining")(s)
                    and (s.get("overallEta") or {}).get("state") == "available"), None)
        if eta is not None:
            save(out, "draining-eta", eta, "demo board Discover: draining with a numeric "
                 "overall ETA")
        middle = [s for s in series if run_is(run_id, "draining")(s)
                  and done_count(s, "score") > 0]
        if middle:
            save(out, "draining-midway", middle[len(middle) // 2],
                 "demo board Discover: half-way through preparation")
        save(out, "completed", completed, "demo board Discover finished")
        save_series(out, "discover-series", subsample(series, SERIES_MAX),
                    "every distinct progress state of one demo board Discover, thinned")

        await record_history_loss(out, app_dir, poller, run_id)

        started = time.monotonic()
        run_id = await start_discover(http, sourceIds=["held-gh"])
        in_flight = await poller.wait(run_is(run_id, "discovering"), after=started)
        await asyncio.sleep(3)  # let the poller see the crawl in flight with a heartbeat
        in_flight = poller.first(run_is(run_id, "discovering"),
                                 after=time.monotonic() - 1) or in_flight
        save(out, "discovering-held", in_flight, "a Discover of one Greenhouse board that "
             "holds its answer, while it crawls")
        (await http.post(f"/v1/workflow-runs/{run_id}/actions/cancel", json={})
         ).raise_for_status()
        canceled = await poller.wait(run_is(run_id, "canceled"), after=started)
        save(out, "canceled", canceled, "the held Discover canceled while it crawled")

        started = time.monotonic()
        run_id = await start_discover(http, sourceIds=["broken"])
        failed = await poller.wait(run_is(run_id, "failed"), after=started)
        save(out, "failed", failed, "a Discover of only a malformed board file: every "
             "source family failed")
    finally:
        await close_app(poller, http, supervisor)
        held.stop()


def save_series(out: Path, name: str, series: list[Snapshot], how: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    body = {"recorded": {"how": how, "by": "scripts/record_operations_snapshots.py"},
            "snapshots": series}
    (out / f"{name}.json").write_text(json.dumps(body, indent=None, sort_keys=True) + "\n",
                                      encoding="utf-8")
    print(f"saved {name}: {len(series)} snapshots", flush=True)


async def record_history_loss(out: Path, app_dir: Path, poller: Poller, run_id: str) -> None:
    """Delete the run's coverage checkpoint: reads say recovering until the worker has
    rebuilt it from Temporal history (at its next heartbeat)."""
    started = time.monotonic()
    with sqlite3.connect(app_dir / "jobctrl.db") as conn:
        conn.execute("DELETE FROM discovery_execution_recoveries WHERE discover_run_id = ?",
                     (run_id,))
    try:
        recovering = await poller.wait(
            lambda s: (s.get("projectionCoverage") or {}).get("status") in ("recovering",
                                                                             "retrying"),
            after=started, timeout=60)
        save(out, "recovering-history", recovering, "the completed run's coverage "
             "checkpoint deleted: the worker rebuilds it from Temporal history")
    except TimeoutError:
        print("the worker rebuilt the checkpoint before a read saw it missing", flush=True)
    await poller.wait(lambda s: (s.get("projectionCoverage") or {}).get("status") == "ready",
                      after=started)


# ---------------------------------------------------------------------------- the paid app


async def record_budget(out: Path, base: Path) -> None:
    app_dir = base / "paid"
    board = base / "paid-board.json"
    demo_subset(board, 12)
    fake = FakeLlmServer().start()
    fake.reply_with(scripted_reply)
    fake.set_usage(4000, 1200)  # $0.022 a call at gpt-4o rates
    write_settings(app_dir, sources=[{"kind": "json_file", "id": "subset", "path": str(board)}],
                   llm={"provider": "openai_compat", "baseUrl": fake.openai_base_url,
                        "model": "gpt-4o", "apiKeySecret": "openai"},
                   dailyBudgetUsd=0.066, minFitScore=0)
    os.environ["JOBCTRL_SECRETS_BACKEND"] = "file"
    supervisor, http = await open_app(app_dir)
    poller = Poller(http)
    poller.start()
    try:
        await record_worker_stopped(out, supervisor, poller)
        (await http.put("/v1/secrets/openai", json={"value": "sk-test-123"})).raise_for_status()
        await save_sample_profile(http)
        started = time.monotonic()
        await start_discover(http)
        paused = await poller.wait(
            lambda s: (s.get("budget") or {}).get("exhausted")
            and s.get("execution") is not None
            and (s.get("overallEta") or {}).get("reason") == "budget_exceeded", after=started)
        await asyncio.sleep(5)  # settle: the halted jobs are back to waiting
        paused = poller.first(lambda s: (s.get("budget") or {}).get("exhausted")
                              and s.get("execution") is not None,
                              after=time.monotonic() - 1) or paused
        save(out, "paused-budget", paused, "12 demo postings, a paid model on loopback at "
             "gpt-4o rates (3 calls a job, $0.066), a $0.066 daily ceiling: one job spends it all")
    finally:
        await close_app(poller, http, supervisor)
        fake.stop()


async def record_worker_stopped(out: Path, supervisor: Supervisor, poller: Poller) -> None:
    """No run yet and the worker stopped: the API cannot prove that nothing runs."""
    worker = supervisor.service("worker")
    started = time.monotonic()
    await worker.stop()
    stopped = await poller.wait(
        lambda s: s.get("execution") is None
        and (s.get("projectionCoverage") or {}).get("status") == "recovering", after=started)
    save(out, "worker-stopped-no-run", stopped, "a fresh app, no run yet, the worker "
         "stopped: nothing proves the runtime idle")
    await worker.start()
    await poller.wait(lambda s: (s.get("overallEta") or {}).get("reason") == "no_work",
                      after=time.monotonic())


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--only", choices=("offline", "budget"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ops-record-") as tmp:
        base = Path(tmp)
        if args.only in (None, "offline"):
            await record_offline(args.out, base)
        if args.only in (None, "budget"):
            await record_budget(args.out, base)


if __name__ == "__main__":
    asyncio.run(main())
    os._exit(0)  # the Temporal SDK can abort at interpreter exit (PLATFORM-NOTES)
