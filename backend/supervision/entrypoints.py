"""The child processes: ``jobctrl worker`` and ``jobctrl api``."""

from __future__ import annotations

import asyncio
import logging
import os
import sys

from backend.paths import AppPaths
from backend.process.ready_signal import signal_ready
from backend.process.startup_trace import milestone
from backend.supervision import startup_gc
from backend.supervision.ports import LOOPBACK
from backend.supervision.process import (
    configure_logging,
    hard_exit,
    stop_on_signals,
    stop_when_parent_dies,
    supervised,
)
from backend.supervision.recycle import RECYCLE_EXIT_CODE

log = logging.getLogger(__name__)


def _temporal_address() -> str:
    address = os.environ.get("JOBCTRL_TEMPORAL_ADDRESS")
    if not address:
        sys.exit("JOBCTRL_TEMPORAL_ADDRESS is not set: start the worker through `jobctrl serve`.")
    return address


def _ready(service: str) -> None:
    """The child is ready: collection resumes (paused by the cli), the supervisor is told."""
    startup_gc.resume()
    milestone(f"{service}_ready")
    signal_ready(service)


def _run_to_exit(main, name: str) -> int:
    """Run a child's main coroutine; the exit code says whether it ended cleanly (or, for
    a main that returns True, that it asks to be restarted now: an idle recycle)."""
    try:
        recycle = asyncio.run(main)
    except Exception:
        log.exception("%s stopped with an error", name)
        return 1
    return RECYCLE_EXIT_CODE if recycle is True else 0


def run_worker_process(paths: AppPaths, *, verbose: bool = False) -> None:
    from backend.temporal.loops.recycle_rule import RecyclePolicy
    from backend.temporal.worker import run_worker

    configure_logging(paths.logs, "worker", console=not supervised(), verbose=verbose)
    address = _temporal_address()

    async def main() -> bool:
        stop = asyncio.Event()
        stop_on_signals(stop)
        watcher = asyncio.create_task(stop_when_parent_dies(stop))
        try:
            return await run_worker(paths, address, stop,
                                    RecyclePolicy.from_env(supervised=supervised()),
                                    on_ready=lambda: _ready("worker"))
        finally:
            watcher.cancel()

    hard_exit(_run_to_exit(main(), "worker"))


def run_api_process(paths: AppPaths, *, port: int, verbose: bool = False) -> None:
    import uvicorn

    from backend.api.app import create_app

    configure_logging(paths.logs, "api", console=not supervised(), verbose=verbose)
    token = os.environ.get("JOBCTRL_API_TOKEN")
    if not token:
        sys.exit("JOBCTRL_API_TOKEN is not set: start the API through `jobctrl serve`.")
    keepalive = float(os.environ.get("JOBCTRL_SSE_KEEPALIVE_S", "15"))
    milestone("api_imported")  # what follows is the app's routes, lifespan and listen
    app = create_app(paths, api_token=token, temporal_address=_temporal_address(),
                     sse_keepalive_s=keepalive)
    config = uvicorn.Config(app, host=LOOPBACK, port=port, log_config=None,
                            access_log=False, lifespan="on", timeout_graceful_shutdown=3)

    class SignallingServer(uvicorn.Server):
        """Tells the supervisor once the lifespan ran and the socket listens."""

        async def startup(self, sockets=None) -> None:
            await super().startup(sockets=sockets)
            if self.started:
                _ready("api")

    server = SignallingServer(config)

    async def main() -> None:
        stop = asyncio.Event()

        async def exit_when_parent_dies() -> None:
            await stop_when_parent_dies(stop)
            if stop.is_set():
                server.should_exit = True

        watcher = asyncio.create_task(exit_when_parent_dies())
        try:
            await server.serve()
        finally:
            watcher.cancel()

    code = _run_to_exit(main(), "api")
    hard_exit(code if server.started or code else 1)
