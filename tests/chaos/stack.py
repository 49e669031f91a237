"""A private, supervised JobCtrl for one chaos module, and the faults it can suffer: a
service SIGKILLed by pid (the supervisor restarts it), a fault point armed (the next
process to pass it dies at once, ``os._exit(137)``), the write lock taken by another
process."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
from temporalio.client import Client

from backend.supervision.supervisor import Supervisor
from backend.temporal.client import connect_temporal
from tests.api_http import api_http
from tests.chaos.invariants import TERMINALS, rows, until, wait_quiet
from tests.fakes.llm_servers import FakeLlmServer
from tests.integration.conftest import write_settings
from tests.integration.env_helpers import override_environ
from tests.integration.test_paid_pipeline import demo_subset, scripted_reply
from tests.integration.test_preparation import PROFILE


@dataclass
class ChaosApp:
    app_dir: Path
    supervisor: Supervisor
    http: httpx.AsyncClient
    client: Client
    fake: FakeLlmServer | None

    def arm(self, point: str) -> None:
        """The next process that passes fault point ``point`` dies there."""
        (self.app_dir / "faults").mkdir(exist_ok=True)
        (self.app_dir / "faults" / point).touch()

    def armed(self, point: str) -> bool:
        return (self.app_dir / "faults" / point).exists()

    def pid(self, service: str) -> int:
        return self.supervisor.service(service).pid

    async def sigkill(self, service: str, *, timeout: float = 120) -> int:
        """SIGKILL ``service`` by pid (no cleanup code of ours runs) and wait until the
        supervisor has it running again; returns the new pid."""
        managed = self.supervisor.service(service)
        pid, restarts = managed.pid, managed.restarts
        os.kill(pid, signal.SIGKILL)
        return await self.restarted(service, pid, restarts, timeout=timeout)

    async def restarted(self, service: str, pid: int, restarts: int, *,
                        timeout: float = 120) -> int:
        managed = self.supervisor.service(service)
        await until(lambda: managed.restarts > restarts and managed.pid != pid,
                    timeout=timeout, what=f"the supervisor to restart {service}")
        return managed.pid

    def rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        return rows(self.app_dir, sql, params)

    def job_ids(self) -> list[str]:
        return [job for (job,) in self.rows("SELECT job_id FROM jobs ORDER BY job_id")]


@contextlib.asynccontextmanager
async def chaos_app(app_dir: Path, *, postings: int | list[dict], paid: bool,
                    environ: dict[str, str] | None = None, profile: dict = PROFILE,
                    **settings) -> AsyncIterator[ChaosApp]:
    """A running app over ``postings`` (the first N demo postings, or these postings), with
    ``profile`` saved and fault points enabled. ``paid``: priced by a loopback
    OpenAI-compatible provider (gpt-4o, 4,000 in / 1,200 out tokens a call) that counts its
    calls; otherwise the offline model. ``settings`` go to settings.json."""
    board = app_dir / "board.json"
    if isinstance(postings, int):
        demo_subset(board, postings)
    else:
        board.write_text(json.dumps({"postings": postings}), encoding="utf-8")
    fake = None
    if paid:
        fake = FakeLlmServer().start()
        fake.reply_with(scripted_reply)
        fake.set_usage(4000, 1200)
        settings.setdefault("llm", {"provider": "openai_compat", "baseUrl": fake.openai_base_url,
                                    "model": "gpt-4o", "apiKeySecret": "openai"})
    settings.setdefault("stageHeartbeatTimeoutS", 5)
    write_settings(app_dir, sources=[{"kind": "json_file", "id": "board", "path": str(board)}],
                   **settings)
    restore_environ = override_environ(JOBCTRL_ENABLE_FAULTS="1", JOBCTRL_SECRETS_BACKEND="file",
                                       **(environ or {}))
    supervisor = Supervisor(app_dir, temporal_ui=False)
    try:
        await supervisor.start()
        http = api_http(supervisor.info)
        try:
            if paid:
                assert (await http.put("/v1/secrets/openai", json={"value": "sk-chaos"})
                        ).status_code == 204
            assert (await http.put("/v1/profile", json=profile)).status_code == 200
            client = await connect_temporal(supervisor.settings.temporal,
                                            supervisor.info.temporal_address,
                                            app_dir=supervisor.paths.app_dir)
            yield ChaosApp(app_dir, supervisor, http, client, fake)
        finally:
            await http.aclose()
    finally:
        await supervisor.stop()
        if fake is not None:
            fake.stop()
        restore_environ()


async def discover_and_settle(app: ChaosApp, *, timeout: float = 240) -> str:
    """Run Discover and wait until it and every preparation it started have closed."""
    answer = await app.http.post("/v1/pipeline/actions/run-stage", json={"stage": "discover"})
    assert answer.status_code == 202, answer.text
    run_id = answer.json()["firstExecutionRunId"]
    await run_closed(app, run_id, timeout=timeout)
    await wait_quiet(app.app_dir, client=app.client, timeout=timeout)
    return run_id


async def run_closed(app: ChaosApp, run_id: str, *, timeout: float = 240) -> str:
    """Wait for the stored terminal event of ``run_id``; returns its type."""
    def terminal():
        found = app.rows(f"SELECT type FROM job_events WHERE run_id = ? AND type IN {TERMINALS}",
                         (run_id,))
        return found[0][0] if found else None

    return await until(terminal, timeout=timeout, what=f"run {run_id} to close")


async def outbox_settled(app: ChaosApp, *, timeout: float = 120) -> None:
    """Every profile save delivered (its continuation closed) or coalesced into a newer one."""
    def settled() -> bool:
        open_rows = app.rows("SELECT COUNT(*) FROM profile_outbox"
                             " WHERE status NOT IN ('finished', 'coalesced')")
        return open_rows[0][0] == 0

    await until(settled, timeout=timeout, what="the profile outbox to settle")


@contextlib.contextmanager
def write_lock_held(database: Path):
    """Another process's writer holding SQLite's write lock (``BEGIN IMMEDIATE``) until
    the block ends: every writer of the app waits on it (busy timeout)."""
    conn = sqlite3.connect(database, isolation_level=None, timeout=30)
    try:
        conn.execute("BEGIN IMMEDIATE")
        yield
    finally:
        conn.execute("ROLLBACK")
        conn.close()
