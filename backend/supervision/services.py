"""One supervised child process: start, readiness wait, restart with backoff, stop."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from backend.supervision.children import ChildRegistry
from backend.supervision.process import log_max_bytes, open_console_log, trim_console_log
from backend.supervision.recycle import RECYCLE_EXIT_CODE

log = logging.getLogger(__name__)

# "recycling": stopped on purpose to start again at once (a planned restart, not a fault:
# backend/supervision/recycle.py); "ready" follows with PLANNED_RESTART_DETAIL.
ServiceState = Literal["stopped", "starting", "ready", "restarting", "recycling", "failed",
                       "external"]
StatusCallback = Callable[["ServiceStatus"], None]

BACKOFF_START_S = 0.5
BACKOFF_MAX_S = 30.0
HEALTHY_RESETS_BACKOFF_S = 60.0
CONSOLE_CHECK_EVERY_S = 10.0
READY_POLL_S = 0.1           # a service without a readiness signal is checked this often
SIGNAL_FALLBACK_POLL_S = 5.0  # one with a signal: checked when it signals, else this often
EXIT_CHECK_S = 0.1           # how soon a child that dies while starting is noticed
PLANNED_RESTART_DETAIL = "restarted while idle to give memory back"
RECYCLING_DETAIL = "restarting while idle to give memory back"


def resident_bytes(pid: int | None) -> int | None:
    import psutil

    try:
        return psutil.Process(pid).memory_info().rss if pid else None
    except psutil.Error:
        return None


@dataclass(frozen=True)
class ServiceStatus:
    name: str
    state: ServiceState
    detail: str | None = None
    pid: int | None = None


class ServiceFailed(RuntimeError):
    pass


@dataclass
class ServiceSpec:
    name: str
    argv: Callable[[], list[str]]  # called at every (re)start: ports may change
    env: dict[str, str]
    ready: Callable[[int], Awaitable[bool]]  # given the child's pid
    ready_timeout: float
    # The child's raw stdout/stderr (see backend/supervision/process.py), rotated at each
    # (re)start once over console_max_bytes (None: the JOBCTRL_LOG_MAX_BYTES bound).
    console_log: Path
    log_file: Path | None = None  # the child's own rotating log, if it keeps one
    restart_on_crash: bool = True
    console_max_bytes: int | None = None
    console_check_every_s: float = CONSOLE_CHECK_EVERY_S  # while it runs: trim_console_log
    # Returns once the child with that pid says it is ready (backend/process/ready_signal);
    # ``ready`` then confirms it once. None: ``ready`` is polled every ``poll_s``.
    ready_signal: Callable[[int], Awaitable[None]] | None = None
    poll_s: float = READY_POLL_S
    # Run after the child's planned exit, before it starts again (the worker's: restart
    # Temporal too while nothing is connected to it, if that gives memory back).
    before_planned_restart: Callable[[], Awaitable[None]] | None = None

    def where_to_look(self) -> str:
        """The files a user reads to learn why the child failed: crash output first."""
        files = [self.console_log] + ([self.log_file] if self.log_file else [])
        return "see " + " and ".join(str(path) for path in files)

    def last_error(self, pid: int) -> str | None:
        """The last ERROR its own log holds from process ``pid``, without time and logger:
        often the reason itself (a port taken, a database refused)."""
        return last_error_line(self.log_file, pid) if self.log_file else None


LOG_TAIL_BYTES = 16 * 1024


def last_error_line(path: Path, pid: int) -> str | None:
    """Lines read ``<time> <name>[<pid>] ERROR <logger>: <message>`` (backend/logs)."""
    pattern = re.compile(rf"\[{pid}\] ERROR [\w.]+: (?P<message>.+)$")
    try:
        with path.open("rb") as log:
            log.seek(max(0, path.stat().st_size - LOG_TAIL_BYTES))
            tail = log.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    for line in reversed(tail.splitlines()):
        if match := pattern.search(line):
            return match["message"].strip()
    return None


class ManagedService:
    def __init__(self, spec: ServiceSpec, children: ChildRegistry, on_status: StatusCallback):
        self.spec = spec
        self._children = children
        self._on_status = on_status
        self._process: subprocess.Popen | None = None
        self._monitor: asyncio.Task | None = None
        self._stopping = False
        self.restarts = 0
        self.planned_restarts = 0  # idle recycles (backend/supervision/recycle.py)
        self.ready_rss: int | None = None  # resident bytes when it last became ready

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def _report(self, state: ServiceState, detail: str | None = None) -> None:
        self._on_status(ServiceStatus(self.spec.name, state, detail, self.pid))

    def _console_max_bytes(self) -> int:
        return self.spec.console_max_bytes or log_max_bytes()

    def _spawn(self) -> None:
        with open_console_log(self.spec.console_log, self._console_max_bytes()) as console:
            self._process = subprocess.Popen(
                self.spec.argv(),
                env=self.spec.env,
                stdin=subprocess.DEVNULL,
                stdout=console,
                stderr=subprocess.STDOUT,
                **self._children.popen_options(),
            )
        self._children.register(self.spec.name, self._process.pid)

    async def start(self) -> None:
        """Spawn and wait until ready; raises ServiceFailed with a readable reason."""
        self.launch()
        await self.until_ready()

    def launch(self) -> None:
        """Spawn only: the supervisor launches every service before it waits for any."""
        self._stopping = False
        self._report("starting")
        self._spawn()

    async def until_ready(self) -> None:
        await self._wait_ready()
        self._note_ready_size()
        self._report("ready")
        self._monitor = asyncio.create_task(self._watch(), name=f"watch-{self.spec.name}")

    async def _wait_ready(self) -> None:
        signalled = (asyncio.ensure_future(self.spec.ready_signal(self._process.pid))
                     if self.spec.ready_signal else None)
        try:
            await self._check_until_ready(signalled)
        finally:
            if signalled is not None:
                signalled.cancel()

    async def _check_until_ready(self, signalled: asyncio.Future | None) -> None:
        """Run ``ready`` when the child signals (or every ``poll_s`` without a signal),
        noticing within EXIT_CHECK_S when the child dies meanwhile."""
        interval = self.spec.poll_s if signalled is None else SIGNAL_FALLBACK_POLL_S
        start = time.monotonic()
        deadline = start + self.spec.ready_timeout
        next_check = start if signalled is None else start + interval
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                reason = self.spec.last_error(self._process.pid)
                raise ServiceFailed(
                    f"{self.spec.name} exited with code {self._process.returncode} while starting"
                    f"{f' ({reason})' if reason else ''}; {self.spec.where_to_look()}"
                )
            now = time.monotonic()
            if now >= next_check or (signalled is not None and signalled.done()):
                with contextlib.suppress(Exception):
                    if await self.spec.ready(self._process.pid):
                        return
                signalled = None if signalled is not None and signalled.done() else signalled
                next_check = time.monotonic() + interval
            pause = max(0.0, min(EXIT_CHECK_S, next_check - time.monotonic()))
            if signalled is not None:
                await asyncio.wait({signalled}, timeout=pause)
            else:
                await asyncio.sleep(pause)
        await self._terminate()
        raise ServiceFailed(
            f"{self.spec.name} was not ready within {self.spec.ready_timeout:.0f}s;"
            f" {self.spec.where_to_look()}"
        )

    async def _watch(self) -> None:
        """Restart a crashed child with exponential backoff; a long healthy run resets it."""
        backoff = BACKOFF_START_S
        while not self._stopping:
            started = time.monotonic()
            await self._until_exit()
            if self._stopping:
                return
            code = self._process.returncode
            self._children.unregister(self.spec.name)
            if code == RECYCLE_EXIT_CODE and await self._recycle():
                backoff = BACKOFF_START_S
                continue
            if not self.spec.restart_on_crash:
                self._report("failed", f"exited with code {code}")
                return
            if time.monotonic() - started > HEALTHY_RESETS_BACKOFF_S:
                backoff = BACKOFF_START_S
            self._report("restarting", f"exited with code {code}; restarting in {backoff:.1f}s")
            log.warning("%s exited with %s; restarting in %.1fs; %s",
                        self.spec.name, code, backoff, self.spec.where_to_look())
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, BACKOFF_MAX_S)
            if self._stopping:
                return
            try:
                self._spawn()
                await self._wait_ready()
            except ServiceFailed as error:
                self._report("restarting", str(error))
                continue
            self.restarts += 1
            self._note_ready_size()
            self._report("ready")

    async def _recycle(self) -> bool:
        """The child stopped on purpose, idle, to come back at its empty size: start it
        again at once. Reported "recycling", not "restarting" (it is not a fault), then
        "ready" with its new pid. False when it did not come back: the crash path
        (backoff, "restarting") takes over."""
        log.info("%s restarts while idle to give memory back (planned)", self.spec.name)
        self._report("recycling", RECYCLING_DETAIL)
        if self.spec.before_planned_restart is not None:
            try:
                await self.spec.before_planned_restart()
            except Exception:  # noqa: BLE001 - this child comes back regardless
                log.warning("before %s's planned restart", self.spec.name, exc_info=True)
        try:
            await self._start_planned()
        except ServiceFailed:
            log.warning("%s did not come back after a planned restart", self.spec.name,
                        exc_info=True)
            return False
        return True

    async def _start_planned(self) -> None:
        self._spawn()
        await self._wait_ready()
        self.planned_restarts += 1
        self._note_ready_size()
        self._report("ready", PLANNED_RESTART_DETAIL)

    async def restart_planned(self) -> None:
        """Stop and start again on purpose, while nothing uses this child: "recycling"
        before it stops (in-process listeners learn it before the child is gone: the
        desktop's client then waits for it instead of failing), the new pid reported
        "ready" once it is back. A child that does not come back goes through the crash
        path (backoff, "restarting")."""
        self._report("recycling", RECYCLING_DETAIL)
        self._stopping = True
        if self._monitor:
            self._monitor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._monitor
        await self._terminate()
        self._stopping = False
        try:
            await self._start_planned()
        finally:
            self._monitor = asyncio.create_task(self._watch(), name=f"watch-{self.spec.name}")

    def _note_ready_size(self) -> None:
        self.ready_rss = resident_bytes(self.pid)

    def grown_bytes(self) -> int | None:
        """How much more it holds now than when it became ready (None: unknown)."""
        now = resident_bytes(self.pid)
        return None if now is None or self.ready_rss is None else now - self.ready_rss

    async def _until_exit(self) -> None:
        """Wait for the child to exit, keeping its console log bounded meanwhile."""
        checked = time.monotonic()
        while self._process.poll() is None:
            await asyncio.sleep(0.2)
            if time.monotonic() - checked >= self.spec.console_check_every_s:
                checked = time.monotonic()
                try:
                    trim_console_log(self.spec.console_log, self._console_max_bytes())
                except OSError:  # a full disk must not stop the watch; retried next time
                    log.warning("could not trim %s", self.spec.console_log, exc_info=True)

    async def stop(self, timeout: float = 10.0) -> None:
        self._stopping = True
        if self._monitor:
            self._monitor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._monitor
        await self._terminate(timeout)
        self._report("stopped")

    async def _terminate(self, timeout: float = 10.0) -> None:
        process = self._process
        if process is None or process.poll() is not None:
            self._children.unregister(self.spec.name)
            return
        if sys.platform == "win32":
            process.terminate()
        else:
            process.send_signal(15)  # SIGTERM: every child shuts down cleanly on it
        deadline = time.monotonic() + timeout
        while process.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if process.poll() is None:
            log.warning("%s did not stop within %.0fs; killing it", self.spec.name, timeout)
            process.kill()
            await asyncio.to_thread(process.wait)
        self._children.unregister(self.spec.name)
