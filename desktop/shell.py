"""The shell's controller: owns the Supervisor, the API client and the SSE consumer.

Views hold no I/O. They call the plain methods here (``start``, ``request_discover``,
``shutdown``) and listen to Qt signals. Everything runs on the qasync loop in the GUI
thread, so callbacks emit signals directly, always through ``qt_compat.emit`` (see there
why). qasync keeps no reference to tasks it starts, so every task this object creates is
kept in ``_tasks`` until it finishes.

Importing this module and building the controller are cheap (the window's first frame
needs both): asyncio, the Supervisor, the HTTP client, the event router and the formatting
helpers are imported where they are first used, once the window is on screen — every
coroutine here runs on the loop, which starts after the first paint.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from PySide6.QtCore import QObject, Signal

from backend.desktop_contract import new_supervisor
from desktop.qt_compat import emit

if TYPE_CHECKING:
    import asyncio

    from backend.desktop_contract import RuntimeInfo, ServiceStatus, Supervisor
    from desktop.client import ApiClient, StreamedEvent
    from desktop.event_router import EventRouter

log = logging.getLogger(__name__)

SERVICE_NAMES = ("temporal", "worker", "api")
STREAM_ERROR_RETRY_S = 2.0

T = TypeVar("T")
SupervisorFactory = Callable[..., "Supervisor"]
ClientFactory = Callable[["RuntimeInfo"], "ApiClient"]


def default_client(info: RuntimeInfo) -> ApiClient:
    from desktop.client import ApiClient

    return ApiClient.from_runtime(info)


@dataclass(frozen=True)
class DiscoverOutcome:
    ok: bool
    message: str
    run_id: str | None = None
    error_code: str | None = None


class ShellController(QObject):
    service_status = Signal(object)     # ServiceStatus
    runtime_ready = Signal(object)      # RuntimeInfo, once all services answered
    start_failed = Signal(str)          # a readable reason
    event_received = Signal(object)     # StreamedEvent
    views_invalidated = Signal(object)  # frozenset of view keys (see event_router)
    stream_state = Signal(str)          # "offline" | "connecting" | "live" | "reconnecting"
    discover_pending = Signal()
    discover_result = Signal(object)    # DiscoverOutcome
    stopping = Signal()
    stopped = Signal()

    def __init__(
        self,
        app_dir: Path,
        *,
        api_port: int | None = None,
        temporal_port: int | None = None,
        temporal_ui: bool | None = None,  # None: the setting (temporal.webUi, off by default)
        supervisor_factory: SupervisorFactory = new_supervisor,
        client_factory: ClientFactory = default_client,
        router: EventRouter | None = None,
        parent: QObject | None = None,
    ):
        super().__init__(parent)
        self.app_dir = Path(app_dir)
        self._supervisor_options = {"api_port": api_port, "temporal_port": temporal_port,
                                    "temporal_ui": temporal_ui}
        self._supervisor_factory = supervisor_factory
        self._client_factory = client_factory
        self._router = router
        self.supervisor: Supervisor | None = None
        self.client: ApiClient | None = None
        self.info: RuntimeInfo | None = None
        self.statuses: dict[str, ServiceStatus] = {}
        self.last_event_id: int | None = None
        self._tasks: set[asyncio.Task] = set()
        self._start_task: asyncio.Task | None = None
        self._stream_task: asyncio.Task | None = None
        self._stop_task: asyncio.Task | None = None
        self.stream_retry_s = STREAM_ERROR_RETRY_S
        self._launched_event: asyncio.Event | None = None

    @property
    def router(self) -> EventRouter:
        """Built with the first event (it imports every event model)."""
        if self._router is None:
            from desktop.event_router import EventRouter

            self._router = EventRouter()
        return self._router

    @property
    def _launched(self) -> asyncio.Event:
        """Set once the services' processes are spawned (or the start ended); made on
        first use, on the loop."""
        if self._launched_event is None:
            import asyncio

            self._launched_event = asyncio.Event()
        return self._launched_event

    async def until_launched(self) -> None:
        """Returns once the services' processes are spawned (or the start ended): the
        window builds its first view after that, so the children start first."""
        await self._launched.wait()

    # -- tasks --------------------------------------------------------------------------

    def _spawn(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task:
        import asyncio

        task = asyncio.get_running_loop().create_task(coro, name=name)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)
        return task

    def _task_done(self, task: asyncio.Task) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("task %s failed", task.get_name(), exc_info=task.exception())

    @property
    def starting(self) -> bool:
        return self._start_task is not None and not self._start_task.done()

    @property
    def shutting_down(self) -> bool:
        return self._stop_task is not None

    # -- start --------------------------------------------------------------------------

    def start(self) -> None:
        """Start the services in the background (also the Retry after a failure)."""
        if self.starting or self.shutting_down or self.info is not None:
            return
        self._start_task = self._spawn(self._start(), "shell-start")

    async def _start(self) -> None:
        import asyncio

        self._launched.clear()
        try:
            self.supervisor = self._supervisor_factory(
                self.app_dir, on_status=self._on_status, **self._supervisor_options
            )
            info = await self.supervisor.start()  # stops what it started when it fails
        except asyncio.CancelledError:
            self._launched.set()
            raise
        except Exception as error:  # noqa: BLE001 - shown in the window, details in the log
            log.warning("start failed: %s", error, exc_info=True)
            self.supervisor = None
            self._launched.set()
            emit(self.start_failed, str(error) or type(error).__name__)
            return
        self.attach(info)

    def attach(self, info: RuntimeInfo) -> None:
        """Talk to the services that ``info`` describes: open the client, follow the stream.

        Called once the Supervisor is ready; tests attach to services started elsewhere."""
        self.info = info
        self._launched.set()
        self.client = self._client_factory(info)
        emit(self.stream_state, "connecting")
        self._stream_task = self._spawn(self._consume_events(self.client), "shell-events")
        emit(self.runtime_ready, info)

    def restart(self) -> None:
        """Stop what runs and start again (Retry after a service failed for good)."""
        if self.starting or self.shutting_down:
            return
        self._start_task = self._spawn(self._restart(), "shell-restart")

    async def _restart(self) -> None:
        import asyncio

        if self._stream_task is not None:
            self._stream_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._stream_task
            self._stream_task = None
        client, supervisor = self.client, self.supervisor
        self.client, self.supervisor, self.info = None, None, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()
        if supervisor is not None:
            await supervisor.stop()
        await self._start()

    def _on_status(self, status: ServiceStatus) -> None:
        self.statuses[status.name] = status
        if status.name == "api" and self.client is not None:
            # Called in-process before the supervisor stops the API on purpose: the
            # client's calls and stream then wait for the new API instead of failing.
            self.client.planned_restart.note(status.state)
        if status.name == "api" and status.state == "starting":
            self._launched.set()  # the last child; its process is spawned right after this
        emit(self.service_status, status)

    # -- events -------------------------------------------------------------------------

    async def _consume_events(self, client: ApiClient) -> None:
        """From the moment the stream is live, forever; resumes by Last-Event-ID after drops
        (the client reconnects itself) and after typed errors (here)."""
        import asyncio

        from desktop.client import ApiRequestError

        while True:
            stream = client.events(self.last_event_id, on_state=self._on_stream_state)
            try:
                async with contextlib.aclosing(stream):
                    async for event in stream:
                        self.dispatch(event)
            except ApiRequestError as error:
                log.warning("event stream refused: %s", error)
                if error.code == "last_event_id_out_of_range":
                    self.last_event_id = None  # the database was replaced: start afresh
            except Exception:  # noqa: BLE001 - e.g. an unreadable event; retry after it
                log.exception("event stream broke after event %s", self.last_event_id)
            emit(self.stream_state, "reconnecting")
            await asyncio.sleep(self.stream_retry_s)

    def _on_stream_state(self, state: str) -> None:
        emit(self.stream_state, state)

    def dispatch(self, event: StreamedEvent) -> None:
        """Hand one streamed event to the views."""
        self.last_event_id = event.id
        views = self.router.route(event)
        emit(self.event_received, event)
        emit(self.views_invalidated, views)

    # -- background calls ---------------------------------------------------------------

    def call(
        self,
        request: Callable[[ApiClient], Coroutine[Any, Any, T]],
        on_done: Callable[[T], None],
        on_error: Callable[[Exception], None] | None = None,
        *,
        name: str = "shell-call",
    ) -> asyncio.Task | None:
        """Run ``request(client)`` on the loop; its result or error comes back to a callback
        on the GUI thread (the Anki ``QueryOp`` pattern), so views never block on I/O.

        Without a client (services not up yet, or stopping) ``on_error`` gets
        ``ApiUnavailable`` at once and no task starts."""
        client = self.client
        if client is None or self.shutting_down:
            if on_error is not None:
                from desktop.client import ApiUnavailable

                on_error(ApiUnavailable())
            return None
        return self._spawn(self._call(client, request, on_done, on_error), name)

    async def _call(self, client, request, on_done, on_error) -> None:
        import asyncio

        try:
            result = await request(client)
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - handed to the caller's callback
            if on_error is None:
                log.warning("background call failed: %s", error)
                return
            on_error(error)
            return
        on_done(result)

    # -- commands -----------------------------------------------------------------------

    def request_discover(self) -> None:
        if self.shutting_down:
            return
        emit(self.discover_pending)
        self._spawn(self._discover(), "shell-discover")

    async def _discover(self) -> None:
        import asyncio

        from desktop.client import ApiRequestError
        from desktop.formatting import describe_accepted, describe_api_error

        client = self.client
        if client is None:
            emit(self.discover_result, DiscoverOutcome(False, "The API is not running yet."))
            return
        try:
            accepted = await client.run_stage("discover")
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - every failure gets a readable line
            code = error.code if isinstance(error, ApiRequestError) else None
            outcome = DiscoverOutcome(False, describe_api_error(error), error_code=code)
            emit(self.discover_result, outcome)
            return
        run_id = accepted.get("firstExecutionRunId")
        emit(self.discover_result, DiscoverOutcome(True, describe_accepted(accepted), run_id))

    # -- stop ---------------------------------------------------------------------------

    def shutdown(self) -> asyncio.Task:
        """Start the ordered shutdown (idempotent); ``stopped`` is emitted at the end."""
        import asyncio

        if self._stop_task is None:
            emit(self.stopping)
            self._stop_task = asyncio.get_running_loop().create_task(
                self._stop(), name="shell-stop"
            )
        return self._stop_task

    async def stop(self) -> None:
        await self.shutdown()

    async def _stop(self) -> None:
        import asyncio

        pending = [task for task in self._tasks if not task.done()]
        for task in pending:
            task.cancel()  # a cancelled Supervisor.start() stops what it started
        await asyncio.gather(*pending, return_exceptions=True)
        try:
            if self.client is not None:
                with contextlib.suppress(Exception):
                    await self.client.close()
            if self.supervisor is not None:
                await self.supervisor.stop()  # API, worker, Temporal; safe to call twice
        finally:
            emit(self.stream_state, "offline")
            emit(self.stopped)
