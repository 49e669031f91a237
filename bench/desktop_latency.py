"""The desktop shell's responsiveness, each number next to a baseline from the same run.

1. **Launch**, ``--launch-rounds`` times (medians): from ``Popen`` of the real
   ``jobctrl desktop`` command (display probe, window, tray, Supervisor) to the window's
   first paint, and to all services healthy (the controller's ``runtime_ready``), read
   from its start-up trace (``JOBCTRL_STARTUP_TRACE``). Baselines, in the same rounds: a
   bare ``QTableView`` process (``bench/bare_table.py``: PySide6 only; its first frame
   painted, the moment the shell's milestone is taken; until session 6 its first paint
   event, ~15 ms earlier, is still reported as ``bare_table_paint_event_s``) and
   headless ``jobctrl serve`` (health ok).
2. **Memory**: resident set of the shell and of each child (Temporal, worker, API) at idle
   after a 1,000-job run (a generated board file, with a profile so every job goes through
   Enrich → Score → Tailor → Cover → PDF on the offline provider). Baseline: idle
   ``jobctrl serve`` with an empty database, and the bare table process.
3. **Event → widget**: ``--events`` JobScored events (committed by this process, one per
   transaction, with the canonical ``job_scores`` row, as the Score activity does) while a
   view shows 10,000 jobs; latency = the Fit cell of that job painted with the new score
   (an item delegate records the paint) minus the time COMMIT returned; plus the GUI
   thread's longest stall (gaps of a 5 ms timer) during the burst. Baseline: a bare
   ``QTableView`` over a plain model that sets the value and emits ``dataChanged``, fed by
   the same SSE client. The Jobs view is the real one (proxy, keyed model, event patches).

    .venv/bin/python bench/desktop_latency.py [--events 1000] [--rows 10000] [--skip-latency]
        [--run-jobs 1000] [--interval-ms 2] [--launch-rounds 3] [--skip-run] [--no-compile]
        [--json out.json]

The app's bytecode is compiled first (as installed; ``--no-compile``: as before session 6).

The ``ui`` child role is this script started by itself.
Results and their reading: bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import psutil
from _common import (
    BenchError,
    ServeProcess,
    compile_bytecode,
    hard_exit,
    interrupt,
    jobctrl_argv,
    machine_info,
    owned_popen_options,
    percentile,
    sigterm_raises_interrupt,
    write_json,
)

TRACE_ENV = "JOBCTRL_STARTUP_TRACE"  # backend/process/startup_trace.py
STALL_TICK_MS = 5
STALL_TARGET_MS = 50
VISIBLE_KEYS = 20
FIT_COLUMN = 4  # the Jobs table's Fit column (jobs_table_model.FIT); the baseline mirrors it
WINDOW = (1100, 820)
IDLE_QUIET_S = 5.0
RUN_TIMEOUT_S = 1800.0
CHILD_TIMEOUT_S = 180.0
PROFILE = {
    "name": "Ada Example", "email": "ada@example.org", "headline": "Backend engineer",
    "targetTitles": ["Backend Engineer", "Platform Engineer", "Data Engineer"],
    "locations": ["Berlin", "Remote"], "remotePreference": "remote_or_hybrid",
    "salaryFloor": 70000, "salaryCurrency": "EUR",
    "skills": ["Python", "PostgreSQL", "Kubernetes", "AWS", "Terraform", "Go", "SQL"],
    "mustHaveKeywords": [], "dealBreakerKeywords": [],
    "resumeText": "Ada Example\nBackend engineer with eight years of Python.\n\nEXPERIENCE\n"
                  "- Built a PostgreSQL-backed billing platform\n- Moved 40 services to "
                  "Kubernetes on AWS\n\nEDUCATION\n- BSc Computer Science\n",
}


def out(payload: dict) -> None:
    sys.stdout.write(json.dumps(payload) + "\n")
    sys.stdout.flush()


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    if not env.get("DISPLAY") and not env.get("WAYLAND_DISPLAY"):
        env.setdefault("QT_QPA_PLATFORM", "offscreen")
    return env


def tree_rss(pid: int) -> dict[str, int]:
    """RSS of a process and each descendant, by name (``name:pid``)."""
    root = psutil.Process(pid)
    sizes = {f"{root.name()}:{pid}": root.memory_info().rss}
    for child in root.children(recursive=True):
        with contextlib.suppress(psutil.Error):
            sizes[f"{child.name()}:{child.pid}"] = child.memory_info().rss
    return sizes


def mib(value: float) -> float:
    return round(value / 2**20, 1)


# -- data ---------------------------------------------------------------------------------

def fake_rows(count: int) -> list[dict]:
    return [{"jobId": f"job_{i:024x}", "title": f"Engineer {i}", "company": f"Company {i % 97}",
             "location": "Berlin", "remote": "hybrid", "score": None, "stages": {},
             "userStatus": None} for i in range(count)]


def seed_jobs(database: str, count: int) -> None:
    """``count`` jobs straight into the app db (no events: nothing else reacts)."""
    with sqlite3.connect(database, timeout=30) as conn:
        conn.executemany(
            "INSERT INTO jobs (job_id, tenant_id, canonical_url, url, title, company, location,"
            " remote, first_source, first_seen_at, last_seen_at)"
            " VALUES (?, 'local', ?, ?, ?, ?, ?, 'hybrid', 'bench', ?, ?)",
            [(f"job_{i:024x}", f"https://bench.example/{i}", f"https://bench.example/{i}",
              f"Engineer {i}", f"Company {i % 97}", ["Berlin", "Remote (EU)", "Lisbon"][i % 3],
              f"2026-01-01T00:00:{i / 1000:09.3f}Z", "2026-01-01T00:00:00Z")
             for i in range(count)])


def board_file(path: Path, count: int) -> None:
    """``count`` postings from the demo board's, with distinct URLs and ids."""
    from backend.sources.board_file import demo_board_text

    demo = json.loads(demo_board_text())["postings"]
    postings = []
    for i in range(count):
        base = demo[i % len(demo)]
        postings.append({**base, "id": f"bench-{i:05d}", "url": f"{base['url']}-b{i}",
                         "applyUrl": f"{base['url']}-b{i}/apply"})
    path.write_text(json.dumps({"postings": postings}), encoding="utf-8")


# -- child: the event → widget measurement ------------------------------------------------

class PlainModel:  # replaced by a real class in _qt_classes() (PySide6 imported lazily)
    pass


def _qt_classes():
    global PlainModel
    from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
    from PySide6.QtWidgets import QStyledItemDelegate

    from desktop.models.keyed_table_model import KeyRole

    class _PlainModel(QAbstractTableModel):
        """The baseline: a list of lists; an event sets one value and emits dataChanged."""

        titles = ("Title", "Company", "Location", "Salary", "Fit", "Stage", "Status")

        def __init__(self, rows: list[dict]):
            super().__init__()
            self.keys = [row["jobId"] for row in rows]
            self.cells = [[row["title"], row["company"], row.get("location") or "", "",
                           "" if row.get("score") is None else str(row["score"]), "", ""]
                          for row in rows]
            self.position = {key: i for i, key in enumerate(self.keys)}

        def rowCount(self, parent=QModelIndex()):  # noqa: N802, B008 - Qt API
            return 0 if parent.isValid() else len(self.cells)

        def columnCount(self, parent=QModelIndex()):  # noqa: N802, B008 - Qt API
            return 0 if parent.isValid() else len(self.titles)

        def data(self, index, role=Qt.ItemDataRole.DisplayRole):
            if role == Qt.ItemDataRole.DisplayRole:
                return self.cells[index.row()][index.column()]
            if role == KeyRole:
                return self.keys[index.row()]
            return None

        def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802
            if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
                return self.titles[section]
            return None

        def set_score(self, key: str, score: int) -> None:
            row = self.position.get(key)
            if row is not None:
                self.cells[row][FIT_COLUMN] = str(score)
                index = self.index(row, FIT_COLUMN)
                self.dataChanged.emit(index, index)

    class PaintProbe(QStyledItemDelegate):
        """Records when each (job, shown value) of the Fit column is first painted."""

        def __init__(self, parent=None):
            super().__init__(parent)
            self.painted: dict[tuple[str, str], float] = {}

        def paint(self, painter, option, index):
            stamp = time.perf_counter()
            self.painted.setdefault((index.data(KeyRole), index.data()), stamp)
            super().paint(painter, option, index)

    PlainModel = _PlainModel
    return _PlainModel, PaintProbe


def role_ui(app_dir: Path) -> None:
    from PySide6.QtWidgets import QApplication

    from desktop.qt_loop import QEventLoop

    app = QApplication(sys.argv[:1])
    with asyncio.Runner(loop_factory=lambda: QEventLoop(app)) as runner:
        runner.run(ui_main(app_dir))
    hard_exit(0)


async def ui_main(app_dir: Path) -> None:
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QTableView

    from backend.config import read_runtime_info
    from desktop.shell import ShellController
    from desktop.views.jobs_view import JobsView

    plain_model_cls, probe_cls = _qt_classes()
    loop = asyncio.get_running_loop()
    commands: asyncio.Queue[str] = asyncio.Queue()

    def read_stdin() -> None:
        for line in sys.stdin:
            loop.call_soon_threadsafe(commands.put_nowait, line.strip())
        loop.call_soon_threadsafe(commands.put_nowait, "quit")

    threading.Thread(target=read_stdin, daemon=True).start()
    controller = ShellController(app_dir)
    live = asyncio.Event()
    controller.stream_state.connect(lambda state: live.set() if state == "live" else None)
    controller.attach(read_runtime_info(app_dir))
    await asyncio.wait_for(live.wait(), 30)
    out({"live": True})

    widget = None
    probe = None
    profiler = None
    gaps: list[float] = []
    last_tick = [0.0]
    ticker = QTimer()
    ticker.setInterval(STALL_TICK_MS)

    def tick() -> None:
        now = time.perf_counter()
        gaps.append((now - last_tick[0]) * 1000)
        last_tick[0] = now

    ticker.timeout.connect(tick)
    refreshes = [0]
    gc_pauses: list[float] = []
    gc_started = [0.0]

    def on_gc(phase: str, _info: dict) -> None:
        if phase == "start":
            gc_started[0] = time.perf_counter()
        else:
            gc_pauses.append((time.perf_counter() - gc_started[0]) * 1000)

    gc.callbacks.append(on_gc)

    while True:
        command, _, rest = (await commands.get()).partition(" ")
        if command == "quit":
            break
        if command == "ping":
            out({"pong": time.perf_counter()})
        elif command == "variant":
            name, rows = rest.split()
            widget, table, probe = await build_variant(name, int(rows), controller,
                                                       plain_model_cls, probe_cls, QTableView,
                                                       JobsView)
            keys = visible_keys(table)
            if hasattr(widget, "refreshed"):
                widget.refreshed.connect(lambda: refreshes.__setitem__(0, refreshes[0] + 1))
            out({"ready": name, "rows": table.model().rowCount(), "keys": keys})
        elif command == "go":
            gaps.clear()
            gc_pauses.clear()
            refreshes[0] = 0
            last_tick[0] = time.perf_counter()
            ticker.start()
            profiler = None
            if os.environ.get("BENCH_PROFILE"):  # diagnosis: where the GUI thread goes
                import cProfile
                profiler = cProfile.Profile()
                profiler.enable()
            out({"going": True})
        elif command == "done":
            timeout, expected = rest.split(" ", 1)
            wanted = [tuple(item) for item in json.loads(expected)]
            deadline = time.perf_counter() + float(timeout)
            while (not all(item in probe.painted for item in wanted)
                   and time.perf_counter() < deadline):
                await asyncio.sleep(0.01)
            ticker.stop()
            if profiler is not None:
                profiler.disable()
                profiler.dump_stats(f"{os.environ['BENCH_PROFILE']}.{type(widget).__name__}")
            out({"paints": [[k, v, t] for (k, v), t in probe.painted.items()],
                 "gaps_ms": gaps, "complete": all(item in probe.painted for item in wanted),
                 "refetches": refreshes[0], "gc_max_ms": max(gc_pauses, default=0.0),
                 "gc_count": len(gc_pauses)})
            widget.hide()
            widget.deleteLater()
            widget = probe = None
    for task in list(controller._tasks):
        task.cancel()


async def build_variant(name, rows, controller, plain_model_cls, probe_cls, table_cls,
                        jobs_view_cls):
    if name == "bare":
        items: list[dict] = []
        while len(items) < rows:
            page = await controller.client.jobs(limit=500, offset=len(items))
            items.extend(page["items"])
            if not page["items"]:
                break
        model = plain_model_cls(items)
        table = table_cls()
        table.setModel(model)
        table.verticalHeader().setDefaultSectionSize(24)
        def on_event(event) -> None:
            if event.type == "JobScored":
                model.set_score(event.payload["jobId"], event.payload["score"])

        controller.event_received.connect(on_event)
        table.destroyed.connect(lambda: controller.event_received.disconnect(on_event))
        widget = table
    else:
        from desktop.views.partials.jobs_table_model import FIT

        # A probe on another column never sees a score: the run would report no paints.
        assert FIT == FIT_COLUMN, f"the Jobs table's Fit column is {FIT}, not {FIT_COLUMN}"
        widget = jobs_view_cls(controller, row_limit=rows)
        table = widget.table
    probe = probe_cls(table)
    table.setItemDelegateForColumn(FIT_COLUMN, probe)
    widget.resize(*WINDOW)
    widget.show()
    if name != "bare":
        while widget.model.rowCount() < rows or widget.refreshing:
            await asyncio.sleep(0.05)
    await asyncio.sleep(0.5)  # first paints settle
    return widget, table, probe


def visible_keys(table) -> list[str]:
    from desktop.models.keyed_table_model import KeyRole

    keys = []
    for row in range(table.model().rowCount()):
        if table.visualRect(table.model().index(row, 0)).bottom() > table.viewport().height():
            break
        keys.append(table.model().index(row, 0).data(KeyRole))
    return keys[:VISIBLE_KEYS]


# -- parent -------------------------------------------------------------------------------

class Child:
    """A child role process speaking JSON lines (a reader thread keeps them in order)."""

    def __init__(self, argv: list[str], env: dict[str, str]):
        self.launched_at = time.perf_counter()
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, env=env,
                                        **owned_popen_options())
        self.lines: list[dict] = []
        self._cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            with contextlib.suppress(ValueError):
                message = json.loads(line)
                with self._cond:
                    self.lines.append(message)
                    self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def wait_for(self, key: str, timeout: float = CHILD_TIMEOUT_S) -> dict:
        deadline = time.perf_counter() + timeout
        with self._cond:
            while True:
                for message in self.lines:
                    if key in message:
                        self.lines.remove(message)
                        return message
                if "failed" in {k for m in self.lines for k in m}:
                    raise BenchError(f"child failed: {self.lines}")
                if self.process.poll() is not None:
                    raise BenchError(f"child exited with {self.process.returncode} before "
                                     f"{key!r}")
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    raise BenchError(f"child sent no {key!r} within {timeout:.0f}s")
                self._cond.wait(min(remaining, 1.0))

    def send(self, text: str) -> None:
        self.process.stdin.write(text + "\n")
        self.process.stdin.flush()

    def stop(self, sig: str = "int", timeout: float = 60) -> None:
        if self.process.poll() is None:
            if sig == "int":
                interrupt(self.process)
            else:
                with contextlib.suppress(OSError):
                    self.process.stdin.close()
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def script_argv(*args: str) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), *args]


def launch_bare(rows: int) -> dict:
    bare = Child([sys.executable, str(Path(__file__).with_name("bare_table.py")),
                  "--rows", str(rows)], child_env())
    try:
        event = bare.wait_for("paint_event")
        paint = bare.wait_for("first_paint")
        return {"first_paint_s": paint["first_paint"] - bare.launched_at,
                "paint_event_s": event["paint_event"] - bare.launched_at,
                "rss_mib": mib(bare.wait_for("rss")["rss"])}
    finally:
        bare.stop()


class DesktopLaunch:
    """``jobctrl desktop`` as a user starts it; milestones from its start-up trace."""

    def __init__(self, app_dir: Path):
        self.app_dir = app_dir
        self.trace = app_dir.parent / f"{app_dir.name}-startup.jsonl"
        env = {**child_env(), TRACE_ENV: str(self.trace)}
        self.launched_at = time.perf_counter()
        self.process = subprocess.Popen(
            jobctrl_argv(app_dir, command="desktop"), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
            **owned_popen_options())

    def wait_for(self, name: str, timeout: float = CHILD_TIMEOUT_S) -> float:
        """Seconds from launch to the milestone ``name``."""
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            with contextlib.suppress(OSError, ValueError):
                for line in self.trace.read_text(encoding="utf-8").splitlines():
                    entry = json.loads(line)
                    if entry["milestone"] == name:
                        return entry["perf_counter"] - self.launched_at
            if self.process.poll() is not None:
                raise BenchError(f"jobctrl desktop exited with {self.process.returncode}"
                                 f" before {name!r}")
            time.sleep(0.01)
        raise BenchError(f"jobctrl desktop reached no {name!r} within {timeout:.0f}s")

    def stop(self) -> None:
        if self.process.poll() is None:
            interrupt(self.process)  # SIGINT: the shell's ordered shutdown
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def desktop_app_dir(work: Path, name: str, run_jobs: int) -> Path:
    """A fresh app dir whose only source is a generated board of ``run_jobs`` postings."""
    app_dir = work / name
    app_dir.mkdir()
    board = app_dir / "bench-board.json"
    board_file(board, run_jobs)
    (app_dir / "settings.json").write_text(json.dumps({"sources": [
        {"kind": "json_file", "id": "bench_board", "path": str(board)}],
        "minFitScore": 0}), encoding="utf-8")
    return app_dir


def launch_round(work: Path, index: int, args) -> dict:
    """One bare table, one headless serve and one desktop launch; the order rotates so a
    load drift on this shared machine does not always hit the same side."""
    result: dict = {"round": index + 1}

    def bare() -> None:
        measured = launch_bare(args.rows)
        result["bare_table_first_paint_s"] = measured["first_paint_s"]
        result["bare_table_paint_event_s"] = measured["paint_event_s"]  # before session 6
        result["bare_table_rss_mib"] = measured["rss_mib"]

    def serve() -> None:
        process = ServeProcess(work / f"serve-{index}")
        try:
            result["serve_healthy_s"] = process.start()
        finally:
            process.stop()

    def desktop() -> None:
        # A first launch on a fresh app dir (the display probe runs, the database and the
        # Temporal history are created), then the next launch on the same dir.
        app_dir = desktop_app_dir(work, f"desktop-{index}", args.run_jobs)
        for prefix in ("shell_first_launch", "shell"):
            shell = DesktopLaunch(app_dir)
            try:
                result[f"{prefix}_first_paint_s"] = shell.wait_for("first_paint")
                result[f"{prefix}_healthy_s"] = shell.wait_for("services_ready")
            finally:
                shell.stop()
            shell.trace.unlink(missing_ok=True)

    steps = [bare, serve, desktop]
    shift = index % len(steps)
    for step in steps[shift:] + steps[:shift]:
        step()
    print(f"launch round {index + 1}: " + ", ".join(
        f"{key} {value:.2f}" for key, value in result.items() if key != "round"), flush=True)
    return result


def measure_launch(work: Path, args) -> dict:
    rounds = [launch_round(work, index, args) for index in range(args.launch_rounds)]
    result: dict = {"rounds": rounds}
    for key in ("bare_table_first_paint_s", "bare_table_paint_event_s", "bare_table_rss_mib",
                "serve_healthy_s",
                "shell_first_launch_first_paint_s", "shell_first_launch_healthy_s",
                "shell_first_paint_s", "shell_healthy_s"):
        result[key] = percentile([r[key] for r in rounds], 50)
    result.update(measure_memory(work, args))
    return result


def measure_memory(work: Path, args) -> dict:
    """Idle RSS of an empty headless serve (the baseline, plus the bare table's), then of
    the desktop and its children after the ``--run-jobs`` run."""
    result: dict = {}
    serve = ServeProcess(work / "serve-baseline")
    try:
        serve.start()
        time.sleep(IDLE_QUIET_S)
        sizes = tree_rss(serve.process.pid)
        result["serve_idle_rss_mib"] = {name: mib(size) for name, size in sizes.items()}
        result["serve_idle_rss_total_mib"] = mib(sum(sizes.values()))
    finally:
        serve.stop()
    shell = DesktopLaunch(desktop_app_dir(work, "desktop-run", args.run_jobs))
    try:
        shell.wait_for("services_ready")
        if not args.skip_run:
            result["run"] = run_jobs(shell.app_dir, args.run_jobs)
        if args.recycle_wait:
            result["recycle"] = wait_for_recycle(shell.app_dir, args.recycle_wait)
        time.sleep(IDLE_QUIET_S)
        sizes = tree_rss(shell.process.pid)
        result["shell_idle_rss_mib"] = {name: mib(size) for name, size in sizes.items()}
        result["shell_idle_rss_total_mib"] = mib(sum(sizes.values()))
    finally:
        shell.stop()
    return result


def wait_for_recycle(app_dir: Path, timeout_s: float) -> dict:
    """Wait (up to ``timeout_s``) for the idle worker's planned restart — the worker's pid
    in runtime.json changes — and say how long it took and what else restarted with it."""
    from backend.config import read_runtime_info

    before = dict(read_runtime_info(app_dir).pids)
    started = time.perf_counter()
    while time.perf_counter() - started < timeout_s:
        now = read_runtime_info(app_dir).pids
        if now.get("worker") != before.get("worker"):
            return {"after_s": round(time.perf_counter() - started, 1),
                    "restarted": sorted(name for name in now if now[name] != before.get(name))}
        time.sleep(1.0)
    return {"after_s": None, "restarted": []}


def run_jobs(app_dir: Path, count: int) -> dict:
    """Discover the generated board and wait until no stage is queued or running."""
    from backend.config import read_runtime_info

    info = read_runtime_info(app_dir)
    started = time.perf_counter()
    with httpx.Client(base_url=info.api_base_url, timeout=30,
                      headers={"Authorization": f"Bearer {info.api_token}"}) as http:
        http.put("/v1/profile", json=PROFILE).raise_for_status()
        http.post("/v1/pipeline/actions/run-stage", json={"stage": "discover"}).raise_for_status()
        # Settled: the Discover run ended, nothing is queued or running, and no count has
        # moved for IDLE_QUIET_S (jobs below the fit threshold stay pending/skipped).
        last, quiet_since = None, None
        while time.perf_counter() - started < RUN_TIMEOUT_S:
            runs = http.get("/v1/discovery-runs", params={"limit": 1}).json()
            counts = tuple(
                http.get("/v1/jobs", params={**params, "limit": 1}).json()["total"]
                for params in ({}, {"stageStatus": "queued"}, {"stageStatus": "running"},
                               {"stageStatus": "pending"}, {"stageStatus": "succeeded"}))
            idle = bool(runs) and runs[0]["status"] != "running" and counts[1] + counts[2] == 0
            if idle and counts == last:
                quiet_since = quiet_since or time.perf_counter()
                if time.perf_counter() - quiet_since >= IDLE_QUIET_S:
                    break
            else:
                quiet_since = None
            last = counts
            time.sleep(1.0)
        else:
            raise BenchError(f"the {count}-job run did not settle in {RUN_TIMEOUT_S:.0f}s")
        jobs = counts[0]
        ready = http.get("/v1/jobs", params={"stage": "pdf", "stageStatus": "succeeded",
                                             "limit": 1}).json()["total"]
    return {"postings": count, "jobs": jobs, "jobs_with_pdfs": ready,
            "wall_s": round(time.perf_counter() - started, 1)}


async def write_scores(database: str, keys: list[str], events: int, interval_s: float,
                       base: int, versions: dict[str, int]) -> tuple[dict, list]:
    """One JobScored + its job_scores row per transaction; returns commit times by
    (key, shown text) and the last value per key."""
    from backend.domain.events import JobScored
    from backend.store import materials
    from backend.store.db import Database
    from backend.store.events import append_event

    db = await Database.open(Path(database), run_migrations=False)
    commits: dict[tuple[str, str], float] = {}
    last: dict[str, str] = {}
    try:
        started = time.perf_counter()
        for i in range(events):
            key = keys[i % len(keys)]
            score = (base + i // len(keys)) % 101
            versions[key] = versions.get(key, 0) + 1
            async with db.transaction() as conn:
                await materials.insert_score(
                    conn, key, version=versions[key], score=score, rationale="bench",
                    matched=[], missing=[], provider="bench", model="bench",
                    profile_revision=0, workflow_id="bench", run_id="bench")
                await append_event(conn, JobScored(job_id=key, score=score, rationale="bench",
                                                   version=versions[key], provider="bench",
                                                   model="bench"), job_id=key)
            commits[(key, str(score))] = time.perf_counter()
            last[key] = str(score)
            if interval_s > 0:
                await asyncio.sleep(max(0.0, started + (i + 1) * interval_s
                                        - time.perf_counter()))
        writer_s = time.perf_counter() - started
    finally:
        await db.close()
    return {"commits": commits, "writer_s": writer_s}, [[k, v] for k, v in last.items()]


def analyse(commits: dict, paints: list, gaps: list[float], complete: bool) -> dict:
    painted = {(key, text): t for key, text, t in paints}
    latencies = [(painted[item] - t) * 1000 for item, t in commits.items() if item in painted]
    stalls = [gap - STALL_TICK_MS for gap in gaps]
    return {
        "events": len(commits),
        "painted": len(latencies),
        "superseded": len(commits) - len(latencies),  # a newer score painted first
        "complete": complete,
        "p50_ms": round(percentile(latencies, 50), 2),
        "p99_ms": round(percentile(latencies, 99), 2),
        "max_ms": round(max(latencies), 2) if latencies else None,
        "longest_stall_ms": round(max(stalls), 2) if stalls else None,
        "stalls_over_target": sum(1 for s in stalls if s > STALL_TARGET_MS),
    }


def measure_latency(work: Path, args) -> dict:
    serve = ServeProcess(work / "latency")
    results: dict = {}
    try:
        serve.start()
        seed_jobs(serve.info.database, args.rows)
        ui = Child(script_argv("--role", "ui", "--app-dir", str(serve.app_dir)), child_env())
        try:
            ui.wait_for("live")
            versions: dict[str, int] = {}
            for base, name in ((0, "bare"), (50, "jobs")):
                ui.send(f"variant {name} {args.rows}")
                ready = ui.wait_for("ready", timeout=300)
                if len(ready["keys"]) < VISIBLE_KEYS:
                    raise BenchError(f"only {len(ready['keys'])} rows visible")
                ui.send("go")
                ui.wait_for("going")
                written, last = asyncio.run(write_scores(
                    serve.info.database, ready["keys"], args.events, args.interval_ms / 1000,
                    base, versions))
                ui.send(f"done 60 {json.dumps(last)}")
                message = ui.wait_for("paints", timeout=120)
                results[name] = {"rows": ready["rows"],
                                 "writer_events_per_s": round(args.events / written["writer_s"]),
                                 **analyse(written["commits"], message["paints"],
                                           message["gaps_ms"], message["complete"]),
                                 "refetches_during_burst": message["refetches"],
                                 "gc_max_ms": round(message["gc_max_ms"], 2),
                                 "gc_runs": message["gc_count"]}
        finally:
            ui.stop(sig="close")
    finally:
        serve.stop()
    return results


def ratio(a, b) -> float | None:
    return round(a / b, 2) if a and b else None


def report(launch: dict, latency: dict) -> dict:
    bare, jobs = latency.get("bare", {}), latency.get("jobs", {})
    ratios = {
        "first_paint_vs_bare_table": ratio(launch.get("shell_first_paint_s"),
                                           launch.get("bare_table_first_paint_s")),
        # The baseline's clock before session 6: its first paint event, not the painted frame.
        "first_paint_vs_bare_paint_event": ratio(launch.get("shell_first_paint_s"),
                                                 launch.get("bare_table_paint_event_s")),
        "healthy_vs_headless_serve": ratio(launch.get("shell_healthy_s"),
                                           launch.get("serve_healthy_s")),
        "first_launch_first_paint_vs_bare_table": ratio(
            launch.get("shell_first_launch_first_paint_s"),
            launch.get("bare_table_first_paint_s")),
        "first_launch_healthy_vs_headless_serve": ratio(
            launch.get("shell_first_launch_healthy_s"), launch.get("serve_healthy_s")),
        "idle_rss_vs_empty_serve_plus_bare_table": ratio(
            launch.get("shell_idle_rss_total_mib"),
            (launch.get("serve_idle_rss_total_mib") or 0)
            + (launch.get("bare_table_rss_mib") or 0)),
        "p50_vs_bare": ratio(jobs.get("p50_ms"), bare.get("p50_ms")),
        "p99_vs_bare": ratio(jobs.get("p99_ms"), bare.get("p99_ms")),
        "stall_vs_bare": ratio(jobs.get("longest_stall_ms"), bare.get("longest_stall_ms")),
    }
    print(json.dumps({"launch": launch, "latency": latency, "ratios": ratios}, indent=2))
    stall = jobs.get("longest_stall_ms")
    if stall is not None:
        verdict = "met" if stall <= STALL_TARGET_MS else "MISSED"
        print(f"Jobs view longest UI stall {stall} ms: target <= {STALL_TARGET_MS} ms {verdict}")
    return ratios


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--role", choices=("ui",))
    parser.add_argument("--app-dir", type=Path)
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--events", type=int, default=1_000)
    parser.add_argument("--interval-ms", type=float, default=2.0)
    parser.add_argument("--run-jobs", type=int, default=1_000)
    parser.add_argument("--skip-run", action="store_true", help="no 1,000-job run before RSS")
    parser.add_argument("--launch-rounds", type=int, default=3)
    parser.add_argument("--skip-launch", action="store_true")
    parser.add_argument("--skip-latency", action="store_true", help="launch and memory only")
    parser.add_argument("--recycle-wait", type=float, default=0.0,
                        help="after the run, wait up to this many seconds for the idle worker's"
                             " planned restart before the RSS reading (0: read at once)")
    parser.add_argument("--no-compile", action="store_true",
                        help="launch without compiling the app's bytecode first (with"
                             " PYTHONDONTWRITEBYTECODE each launch then compiles it from source)")
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.role == "ui":
        role_ui(args.app_dir)

    sigterm_raises_interrupt()
    if not args.no_compile:
        compile_bytecode()
    work = Path(tempfile.mkdtemp(prefix="jobctrl-desktop-bench-"))
    code = 0
    try:
        launch = {} if args.skip_launch else measure_launch(work, args)
        latency = {} if args.skip_latency else measure_latency(work, args)
        ratios = report(launch, latency)
        write_json(args.json, {"machine": machine_info(), "args": vars(args) | {
            "app_dir": None}, "launch": launch, "latency": latency, "ratios": ratios})
    except BenchError as error:
        print(f"benchmark failed: {error}", file=sys.stderr)
        code = 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    hard_exit(code)


if __name__ == "__main__":
    main()
