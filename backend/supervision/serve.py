"""``jobctrl serve``: the three services without Qt, until Ctrl-C or SIGTERM."""

from __future__ import annotations

import asyncio
import logging
import sys

from backend.paths import AppPaths
from backend.supervision.process import configure_logging, hard_exit, stop_on_signals
from backend.supervision.services import ServiceStatus
from backend.supervision.supervisor import Supervisor

log = logging.getLogger(__name__)


def _print_status(status: ServiceStatus) -> None:
    detail = f" ({status.detail})" if status.detail else ""
    print(f"  {status.name:<9} {status.state}{detail}", file=sys.stderr, flush=True)


async def serve(paths: AppPaths, args) -> None:
    stop = asyncio.Event()
    stop_on_signals(stop)
    supervisor = Supervisor(
        paths.app_dir,
        api_port=args.api_port,
        temporal_port=args.temporal_port,
        temporal_ui=False if args.no_temporal_ui else None,  # None: the setting (off)
        on_status=_print_status,
    )
    print(f"Starting JobCtrl in {paths.app_dir}", file=sys.stderr, flush=True)
    starting = asyncio.create_task(supervisor.start())
    stopped = asyncio.create_task(stop.wait())
    await asyncio.wait({starting, stopped}, return_when=asyncio.FIRST_COMPLETED)
    if starting.done() and starting.exception() is None:
        info = starting.result()
        print(
            f"JobCtrl is running.\n  API          {info.api_base_url}\n"
            f"  Temporal     {info.temporal_address}\n"
            f"  Temporal UI  {info.temporal_ui_url or '-'}\n"
            f"  runtime.json {paths.runtime_file} (API token inside)\n"
            "Press Ctrl-C to stop.",
            file=sys.stderr, flush=True,
        )
        await stop.wait()
    elif not starting.done():
        starting.cancel()  # start() cleans up after itself when cancelled
        await asyncio.wait({starting})
    print("Stopping JobCtrl...", file=sys.stderr, flush=True)
    await supervisor.stop()
    if not starting.cancelled() and starting.exception() is not None:
        raise starting.exception()


def run_serve(paths: AppPaths, args) -> None:
    configure_logging(paths.logs, "serve", console=True, verbose=args.verbose)  # a terminal
    code = 0
    try:
        asyncio.run(serve(paths, args))
    except Exception as error:  # noqa: BLE001 - a readable reason, details in the log
        log.debug("serve failed", exc_info=True)
        print(f"JobCtrl could not start: {error}", file=sys.stderr, flush=True)
        code = 1
    hard_exit(code)
