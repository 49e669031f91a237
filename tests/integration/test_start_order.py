"""Start-up order and readiness (issue 18): ``serve`` spawns Temporal, the worker and the
API before it imports anything heavy; the children say when they are ready, so the
supervisor's readiness check runs once, not every 100 ms; the desktop's first frame
imports no view module and none of the heavy libraries."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import time

import pytest

from backend.process.ready_signal import ReadyListener, signal_ready
from backend.supervision.children import ChildRegistry
from backend.supervision.process import console_log_file
from backend.supervision.services import ManagedService, ServiceSpec

pytestmark = pytest.mark.integration

HEAVY = ("pydantic", "temporalio", "httpx", "fastapi", "aiosqlite", "uvicorn", "PySide6")

# Runs `jobctrl serve` in a child interpreter with subprocess.Popen watched: at each of the
# three spawns it records which heavy libraries were already imported; after the third it
# stops the real children and leaves.
SPAWN_WATCH = textwrap.dedent("""
    import json, os, subprocess, sys
    heavy, spawned, seen = json.loads(sys.argv[2]), [], []
    real = subprocess.Popen

    class Watched(real):
        def __init__(self, args, *rest, **options):
            role = next((r for r in ("start-dev", "worker", "api") if r in args), None)
            if role:
                loaded = [m for m in heavy if sys.modules.get(m) is not None]
                seen.append([role, loaded])
            super().__init__(args, *rest, **options)
            if role:
                spawned.append(self)
            if len(spawned) == 3:
                for child in spawned:
                    child.kill()
                    child.wait()
                print(json.dumps(seen), flush=True)
                os._exit(0)

    subprocess.Popen = Watched
    from backend.cli import main
    main(["--app-dir", sys.argv[1], "serve", "--no-temporal-ui"])
""")


def test_serve_spawns_all_three_services_before_any_heavy_import(tmp_path):
    done = subprocess.run([sys.executable, "-c", SPAWN_WATCH, str(tmp_path / "app"),
                           json.dumps(HEAVY)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert [role for role, _ in seen] == ["start-dev", "worker", "api"]
    assert all(loaded == [] for _, loaded in seen), seen


# The first frame paints in a local Qt loop; the asyncio loop (qasync) starts after it.
FIRST_FRAME_WITHOUT = ("asyncio", "qasync", "desktop.qt_loop")


def test_the_desktops_first_frame_imports_no_view_and_no_heavy_library():
    probe = ("import json, sys, desktop.app; print(json.dumps(["
             "[m for m in sys.modules if m.startswith('desktop.views.') and"
             " m.rsplit('.', 1)[-1].endswith('_view')],"
             f" [m for m in {[*HEAVY[:-1], *FIRST_FRAME_WITHOUT]!r}"
             " if sys.modules.get(m) is not None]]))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr[-2000:]
    views, heavy = json.loads(done.stdout)
    assert views == [] and heavy == []


SIGNALLING_CHILD = ("import time; time.sleep({delay});"
                    " from backend.process.ready_signal import signal_ready;"
                    " signal_ready('probe'); time.sleep(60)")


async def test_a_signalling_child_is_checked_once_when_it_says_so(tmp_path):
    listener = ReadyListener()
    await listener.start()
    checks: list[float] = []

    async def ready(_pid: int) -> bool:
        checks.append(time.monotonic())
        return True

    spec = ServiceSpec(
        name="probe", argv=lambda: [sys.executable, "-c", SIGNALLING_CHILD.format(delay=1.0)],
        env={**os.environ, **listener.child_env(),
             "PYTHONPATH": os.pathsep.join(sys.path)},
        ready=ready, ready_timeout=60, console_log=console_log_file(tmp_path, "probe"),
        ready_signal=lambda pid: listener.wait("probe", pid), restart_on_crash=False)
    service = ManagedService(spec, ChildRegistry(tmp_path / "children.json"), lambda s: None)
    started = time.monotonic()
    try:
        await service.start()
    finally:
        await service.stop()
        await listener.close()
    assert len(checks) == 1, "checked once, at the signal: no polling"
    assert checks[0] - started >= 1.0


async def test_a_signal_with_a_wrong_secret_or_shape_is_ignored(monkeypatch):
    listener = ReadyListener()
    await listener.start()
    try:
        monkeypatch.setenv("JOBCTRL_READY_ADDRESS", listener.address)
        monkeypatch.setenv("JOBCTRL_READY_SECRET", "not-the-secret")
        assert await asyncio.to_thread(signal_ready, "worker")  # delivered, not accepted
        await asyncio.sleep(0.2)
        assert not listener.signalled("worker", os.getpid())
        monkeypatch.setenv("JOBCTRL_READY_SECRET", listener.secret)
        await asyncio.to_thread(signal_ready, "worker")
        await asyncio.wait_for(listener.wait("worker", os.getpid()), 5)
        assert listener.signalled("worker", os.getpid())
        assert not listener.signalled("api", os.getpid())
    finally:
        await listener.close()


def test_without_a_supervisor_a_child_signals_nothing(monkeypatch):
    monkeypatch.delenv("JOBCTRL_READY_ADDRESS", raising=False)
    assert signal_ready("worker") is False


# What the worker's first activity of a kind needs, not its start: the per-activity
# libraries (PDF, feeds, HTML parsing, retries, the jobspy crawler), every source adapter
# and the stage logic of Score, Tailor and Cover (imported by those stages when they run).
NOT_AT_WORKER_START = ("typst", "pypdf", "fpdf", "feedparser", "bs4", "lxml", "tenacity",
                       "jobspy", "markdown_it", "backend.sources.greenhouse",
                       "backend.sources.feeds", "backend.sources.html_clean",
                       "backend.pipeline.fit", "backend.pipeline.score",
                       "backend.pipeline.tailor", "backend.pipeline.cover",
                       "backend.pipeline.truth", "backend.pipeline.pdf")

WORKER_START = textwrap.dedent("""
    import asyncio, json, sys
    from pathlib import Path
    from backend.config import AppPaths
    from backend.store.db import Database
    from backend.temporal import worker

    async def build(app_dir):
        paths = AppPaths(app_dir)
        paths.app_dir.mkdir(parents=True, exist_ok=True)
        db = await Database.open(paths.database)
        # Everything the worker registers at start, built as run_worker builds it.
        registered = worker.orchestration_activities(db, paths) + worker.preparation_activities(db, paths)
        await db.close()
        return len(registered)

    count = asyncio.run(build(Path(sys.argv[1])))
    print(json.dumps([count, [m for m in json.loads(sys.argv[2]) if m in sys.modules]]))
""")


def test_the_workers_start_imports_no_per_activity_library(tmp_path):
    done = subprocess.run([sys.executable, "-c", WORKER_START, str(tmp_path / "app"),
                           json.dumps(NOT_AT_WORKER_START)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr[-2000:]
    registered, loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert registered > 20 and loaded == []


def test_a_child_collects_no_garbage_until_it_is_ready():
    probe = ("import gc, json; from backend.supervision import startup_gc;"
             " startup_gc.pause(); paused = gc.isenabled(); startup_gc.resume();"
             " print(json.dumps([paused, gc.isenabled(), gc.get_freeze_count() > 0]))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == [False, True, True]
