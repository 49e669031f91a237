"""The children of ``services_floor.py``: a worker and an API built on the libraries alone.

``worker ADDRESS``: imports ``temporalio`` (client and worker), connects with retry, builds a
``Worker`` with one no-op workflow and one no-op activity, prints ``ready`` and polls until
SIGTERM. ``api ADDRESS PORT``: imports FastAPI, uvicorn and ``temporalio.client``, serves
``GET /health`` (200 once a ``check_health`` RPC to Temporal passes, else 503) until SIGTERM.
``both ADDRESS PORT``: one process doing both. No project code, no database, no settings:
what is left is the floor any Python worker + API on these libraries stands on. The
cyclic collector is paused while importing, as the project's children do.
"""

from __future__ import annotations

import gc

gc.disable()

import asyncio  # noqa: E402
import sys  # noqa: E402
from datetime import timedelta  # noqa: E402

# Each child imports what its mode needs, and nothing else.
MODE = sys.argv[1] if __name__ == "__main__" else "both"
if MODE in ("api", "both"):
    import fastapi
    import uvicorn
from temporalio.client import Client  # noqa: E402

if MODE in ("worker", "both"):
    from floor_workflow import NoopWorkflow, noop_activity
    from temporalio.worker import Worker

TASK_QUEUE = "floor"


async def connect(address: str) -> Client:
    while True:
        try:
            return await Client.connect(address, connect_timeout=timedelta(seconds=2))
        except Exception:  # noqa: BLE001 - Temporal not up yet
            await asyncio.sleep(0.01)


async def run_worker(address: str, stop: asyncio.Event) -> None:
    client = await connect(address)
    worker = Worker(client, task_queue=TASK_QUEUE, workflows=[NoopWorkflow],
                    activities=[noop_activity])
    async with worker:
        gc.enable()
        print("ready", flush=True)
        await stop.wait()


def health_app(address: str) -> fastapi.FastAPI:
    app = fastapi.FastAPI()
    clients: list[Client] = []

    @app.get("/health")
    async def health():
        try:
            if not clients:
                clients.append(await Client.connect(address,
                                                    connect_timeout=timedelta(seconds=2)))
            await asyncio.wait_for(clients[0].service_client.check_health(), timeout=2)
        except Exception:  # noqa: BLE001 - not reachable yet
            return fastapi.Response(status_code=503)
        return fastapi.Response(content='{"status":"ok"}', media_type="application/json")

    return app


async def run_api(address: str, port: int, stop: asyncio.Event) -> None:
    config = uvicorn.Config(health_app(address), host="127.0.0.1", port=port,
                            log_level="warning", lifespan="off")
    server = uvicorn.Server(config)
    server.install_signal_handlers = lambda: None
    serving = asyncio.create_task(server.serve())
    await stop.wait()
    server.should_exit = True
    await serving


async def main(mode: str, address: str, port: int | None) -> None:
    import signal

    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    parts = []
    if mode in ("worker", "both"):
        parts.append(run_worker(address, stop))
    if mode in ("api", "both"):
        parts.append(run_api(address, port, stop))
    await asyncio.gather(*parts)


if __name__ == "__main__":
    mode, address = sys.argv[1], sys.argv[2]
    asyncio.run(main(mode, address, int(sys.argv[3]) if len(sys.argv) > 3 else None))
