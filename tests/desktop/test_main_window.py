"""The desktop shell offscreen: the window fed through the controller's signals, the
controller against fakes, and one end-to-end run against the real services.

Async work runs on the ``qloop`` fixture (see conftest.py): every wait below is a
``qtbot.waitUntil`` on an observable condition, never a sleep.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import psutil
import pytest
from filelock import FileLock
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QPushButton

from backend.config import RuntimeInfo
from backend.supervision.services import ServiceStatus
from desktop.app import DesktopShell
from desktop.client import ApiRequestError, PlannedRestart, StreamedEvent
from desktop.models.event_list_model import EventListModel
from desktop.shell import DiscoverOutcome, ShellController
from desktop.views.main_window import MainWindow
from tests.unit.test_operations_presenter import snapshot

pytestmark = pytest.mark.desktop

ARTIFACTS = Path(__file__).resolve().parents[1] / "_artifacts"
DEMO_DISTINCT_JOBS = 234  # the bundled demo board: 240 postings, 6 of them duplicates
RUN = {"discoverWorkflowId": "discover-local", "discoverRunId": "run-0001"}


def job(event_id: int, title: str, company: str, location: str | None = "Berlin"):
    return StreamedEvent(event_id, "JobDiscovered", {
        **RUN, "jobId": f"job_{event_id:024d}", "title": title, "company": company,
        "location": location, "remote": "remote", "sourceFamily": "demo_board",
    })


def started(event_id: int):
    return StreamedEvent(event_id, "DiscoveryRunStarted",
                         {**RUN, "families": ["demo_board"], "progressTotal": 3})


def completed(event_id: int, new: int, seen: int):
    return StreamedEvent(event_id, "DiscoveryRunCompleted", {
        **RUN, "status": "completed", "jobsObserved": seen, "jobsNew": new,
        "familiesSucceeded": ["demo_board"], "familiesFailed": [],
    })


def runtime_info(app_dir: Path) -> RuntimeInfo:
    return RuntimeInfo(
        app_dir=str(app_dir), database=str(app_dir / "jobctrl.db"),
        api_base_url="http://127.0.0.1:9", api_token="token",
        temporal_address="127.0.0.1:7233", temporal_ui_url="http://127.0.0.1:8233",
    )


def all_services(window: MainWindow, state: str) -> bool:
    return window.service_states == dict.fromkeys(("temporal", "worker", "api"), state)


def ready_all(controller: ShellController) -> None:
    for pid, name in enumerate(("temporal", "worker", "api"), start=100):
        controller.service_status.emit(ServiceStatus(name, "ready", pid=pid))


# -- the window alone ----------------------------------------------------------------------


def test_window_shows_statuses_rows_and_counters(qtbot, tmp_path):
    controller = ShellController(tmp_path)
    window = MainWindow(controller)
    qtbot.addWidget(window)
    window.show()
    assert window.jobs_label.text() == "New jobs since opening: <b>0</b>"  # not a total
    button = window.discover_button
    pipelines = window.views["pipelines"]
    assert button is pipelines.discover_button  # the one Discover control
    assert window.findChildren(QPushButton, "discoverButton") == []  # no header duplicate
    assert not button.isEnabled()
    assert button.toolTip() == "Waiting for the API"
    # The window says one plain thing; each service's state is in Pipelines → Details.
    services = pipelines.details.services_label
    assert window.status_line.plain_text() == "Starting…"
    assert "API waiting" in services.text()

    controller.service_status.emit(ServiceStatus("temporal", "starting", pid=7))
    # The process id is in the tooltip, not in the text.
    assert "Temporal starting…" in services.text() and "pid" not in services.text()
    assert "Temporal: starting…, process id (pid) 7" in services.toolTip()
    ready_all(controller)
    assert "Worker ready" in services.text()
    assert "Worker: ready, process id (pid) 101" in services.toolTip()
    assert window.status_line.plain_text() == "Starting…"  # the event stream is not live yet
    assert not button.isEnabled(), "no runtime info yet"
    controller.runtime_ready.emit(runtime_info(tmp_path))
    assert not button.isEnabled()
    assert button.toolTip() == "Waiting for the event stream"
    assert "http://127.0.0.1:8233" in pipelines.details.temporal_label.text()
    assert str(tmp_path) in window.app_dir_label.text()
    controller.stream_state.emit("live")
    assert window.discover_enabled_reason is None
    assert button.toolTip() != "Waiting for the event stream"  # the view's own rules now
    assert window.status_line.plain_text() == "Ready"
    assert "Live updates live" in services.text()

    with qtbot.waitSignal(controller.views_invalidated) as invalidated:
        controller.dispatch(started(41))
    assert "runs" in invalidated.args[0]
    for event in (job(42, "Senior Backend Engineer", "Acme Robotics"),
                  job(43, "Data Engineer", "Northwind", location=None),
                  job(44, "Product Manager", "Ledgerline", location="Remote (US)")):
        controller.dispatch(event)
    controller.dispatch(completed(45, new=3, seen=3))
    assert window.activity.model.texts() == [
        "Started looking for jobs on Demo board",
        "Found Senior Backend Engineer at Acme Robotics (Berlin)",
        "Found Data Engineer at Northwind (remote)",
        "Found Product Manager at Ledgerline (Remote (US))",
        "Found 3 jobs on Demo board",
    ]
    assert window.jobs_discovered == 3
    assert window.jobs_label.text() == "New jobs since opening: <b>3</b>"
    assert controller.last_event_id == 45
    assert not window.activity.empty_label.isVisible()

    # The API restarting disables Discover; a reconnecting stream alone does not.
    controller.stream_state.emit("reconnecting")
    assert window.status_line.plain_text() == "Reconnecting to the background service…"
    assert window.discover_enabled_reason is None
    controller.service_status.emit(ServiceStatus("api", "restarting", "exited with code 1"))
    assert not button.isEnabled()
    assert button.toolTip() == "Waiting for the API"
    assert "API restarting…" in services.text()
    assert "API: restarting… (exited with code 1)" in services.toolTip()
    controller.service_status.emit(ServiceStatus("api", "ready", pid=200))
    assert window.discover_enabled_reason is None

    # A Discover from the tray: the Pipelines button waits, and its note gives the answer.
    controller.discover_pending.emit()
    assert not button.isEnabled()
    assert button.toolTip() == "Starting Discover…"
    controller.discover_result.emit(DiscoverOutcome(
        False, "Worker not running: The worker is not running (no_heartbeat); nothing was"
        " started.", error_code="worker_runtime_unavailable"))
    assert pipelines.discover_note.text().startswith("Worker not running: ")
    assert window.discover_enabled_reason is None
    controller.discover_result.emit(DiscoverOutcome(True, "Discover started — run r-2", "r-2"))
    assert pipelines.discover_note.text() == "Discover started — run r-2"


SMALL_LAPTOP = (900, 600)  # a 1280x720 screen less a panel leaves about 1280x650


def test_the_window_fits_a_small_laptop_screen(qtbot, tmp_path):
    """No view, and no header state a working app shows, makes the window need more than
    900x600; a window resized to that size gets it, and the Spend view scrolls instead."""
    controller = ShellController(tmp_path)
    window = MainWindow(controller)
    qtbot.addWidget(window)
    window.show()
    for pid, name in enumerate(("temporal", "worker", "api"), start=424_242):
        controller.service_status.emit(ServiceStatus(name, "starting", pid=pid))
    controller.stream_state.emit("reconnecting")
    controller.service_status.emit(ServiceStatus(
        "api", "restarting", "exited with code 1; restarting in 2.0s", pid=424_244))
    window.jobs_discovered = 12_345  # a wide count
    window._show_jobs_count()
    for key in window.views:
        window.show_view(key)
        QApplication.processEvents()
        hint = window.minimumSizeHint()
        assert hint.width() <= SMALL_LAPTOP[0] and hint.height() <= SMALL_LAPTOP[1], (key, hint)
    window.resize(*SMALL_LAPTOP)
    spend = window.show_view("spend")
    qtbot.waitUntil(lambda: (window.width(), window.height()) == SMALL_LAPTOP)
    qtbot.waitUntil(spend.scroll.verticalScrollBar().isVisible)
    assert spend.scroll.widget().height() > spend.scroll.viewport().height()


def test_event_list_is_capped_by_dropping_the_oldest_rows(qtmodeltester):
    model = EventListModel(max_rows=5)
    qtmodeltester.check(model)
    removed = []
    model.rowsRemoved.connect(lambda _parent, first, last: removed.append((first, last)))
    for event_id in range(1, 8):
        model.append(job(event_id, f"Role {event_id}", "Acme"))
    assert model.rowCount() == 5
    assert [text.split()[2] for text in model.texts()] == ["3", "4", "5", "6", "7"]
    assert removed == [(0, 0), (0, 0)]
    model.extend(job(event_id, f"Role {event_id}", "Acme") for event_id in range(8, 20))
    assert model.texts()[0] == "Found Role 15 at Acme (Berlin)" and model.last_event_id() == 19
    qtmodeltester.check(model)


def test_job_rows_are_named_by_title_once_discovered():
    model = EventListModel()
    model.append(job(1, "Senior Backend Engineer", "Acme Robotics"))
    model.append(StreamedEvent(2, "StageStarted",
                               {"jobId": f"job_{1:024d}", "stage": "enrich", "attempt": 1}))
    assert model.row_text(1) == "Started reading the posting for Senior Backend Engineer at Acme Robotics"


# -- the controller against fakes ------------------------------------------------------------


class FakeSupervisor:
    instances: list[FakeSupervisor] = []

    def __init__(self, app_dir, *, on_status, **options):
        self.app_dir = Path(app_dir)
        self.on_status = on_status
        self.options = options
        self.stopped = False
        FakeSupervisor.instances.append(self)

    async def start(self) -> RuntimeInfo:
        for pid, name in enumerate(("temporal", "worker", "api"), start=100):
            self.on_status(ServiceStatus(name, "starting", pid=pid))
            await asyncio.sleep(0)
            self.on_status(ServiceStatus(name, "ready", pid=pid))
        return runtime_info(self.app_dir)

    async def stop(self) -> None:
        for name in ("api", "worker", "temporal"):
            self.on_status(ServiceStatus(name, "stopped"))
        self.stopped = True


class FakeClient:
    def __init__(self, refusals: list[ApiRequestError] | None = None):
        self.feed: asyncio.Queue[StreamedEvent] = asyncio.Queue()
        self.answer: dict | Exception = {}
        self.closed = False
        self.refusals = list(refusals or [])
        self.subscriptions: list[int | None] = []
        # What the Pipelines view reads: a finished run, one enabled source.
        self.operations = snapshot(execution={"workflowStatus": "completed",
                                              "phase": "completed"})
        self.sources = [{"id": "demo_board", "kind": "demo_board", "enabled": True}]
        self.run_stage_calls: list[tuple[str, dict]] = []
        self.planned_restart = PlannedRestart()  # the shell tells it the API's states

    async def pipeline_operations(self) -> dict:
        return self.operations

    async def settings(self) -> dict:
        return {"sources": self.sources}

    async def profile(self) -> dict:
        # A saved profile (revision 1): the notice for a first run is tested live.
        return {"revision": 1, "profile": {"resume": {"basics": {"name": "Ada"}}, "sample": False}}

    async def events(self, last_event_id=None, *, on_state=None):
        self.subscriptions.append(last_event_id)
        if self.refusals:
            raise self.refusals.pop(0)
        on_state("live")
        while True:
            yield await self.feed.get()

    async def run_stage(self, stage: str, **extra) -> dict:
        assert stage == "discover"
        self.run_stage_calls.append((stage, extra))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    async def close(self) -> None:
        self.closed = True


def test_controller_drives_the_window_and_quits_in_order(qtbot, qloop, tmp_path):
    FakeSupervisor.instances.clear()
    client = FakeClient()
    controller = ShellController(tmp_path, temporal_ui=False, supervisor_factory=FakeSupervisor,
                                 client_factory=lambda info: client)
    shell = DesktopShell(tmp_path, controller=controller)
    window = shell.window
    qtbot.addWidget(window)
    run = qloop.create_task(shell.run())

    qtbot.waitUntil(window.discover_button.isEnabled, timeout=10_000)
    assert all_services(window, "ready")
    assert FakeSupervisor.instances[0].options["temporal_ui"] is False

    for event in (started(1), job(2, "Staff Engineer", "Initech"), completed(3, 1, 1)):
        client.feed.put_nowait(event)
    qtbot.waitUntil(lambda: window.activity.model.rowCount() == 3, timeout=10_000)
    assert window.jobs_discovered == 1

    note = window.views["pipelines"].discover_note
    client.answer = ApiRequestError(503, "worker_runtime_unavailable",
                                    "The worker is not running (no_heartbeat); nothing was started.")
    qtbot.mouseClick(window.discover_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: note.text().startswith("Worker not running"), timeout=10_000)
    assert "nothing was started" in note.text()
    assert window.discover_button.isEnabled()

    client.answer = {"workflowId": "discover-local", "firstExecutionRunId": "run-0002",
                     "alreadyRunning": False}
    qtbot.mouseClick(window.discover_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: note.text() == "Discover started", timeout=10_000)
    # The Pipelines button ran the default selection (every enabled source).
    assert client.run_stage_calls == [("discover", {}), ("discover", {})]

    # The tray's Start Discover goes through the controller; its answer lands in the same note.
    client.answer = {"workflowId": "discover-local", "firstExecutionRunId": "run-0003",
                     "alreadyRunning": False}
    controller.request_discover()
    qtbot.waitUntil(lambda: len(client.run_stage_calls) == 3, timeout=10_000)
    qtbot.waitUntil(lambda: note.text() == "Discover started", timeout=10_000)

    window.close()  # the close button: stop the services first, then close
    qtbot.waitUntil(run.done, timeout=10_000)
    assert run.result() == 0
    assert FakeSupervisor.instances[0].stopped and client.closed
    assert not window.isVisible()
    assert window.stream == "offline" and window.status_line.plain_text() == "Stopped"
    assert all_services(window, "stopped")


class BlockingSupervisor(FakeSupervisor):
    """Temporal comes up, the worker never does: a quit must not wait for it."""

    async def start(self) -> RuntimeInfo:
        self.on_status(ServiceStatus("temporal", "ready", pid=100))
        self.on_status(ServiceStatus("worker", "starting", pid=101))
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def test_quit_while_starting_cancels_the_start_and_stops(qtbot, qloop, tmp_path):
    FakeSupervisor.instances.clear()
    controller = ShellController(tmp_path, supervisor_factory=BlockingSupervisor)
    shell = DesktopShell(tmp_path, controller=controller)
    qtbot.addWidget(shell.window)
    run = qloop.create_task(shell.run())
    qtbot.waitUntil(lambda: shell.window.service_states.get("worker") == "starting",
                    timeout=10_000)
    assert not shell.window.discover_button.isEnabled()
    shell.request_quit()  # what SIGINT / SIGTERM do
    qtbot.waitUntil(run.done, timeout=10_000)
    assert run.result() == 0
    assert FakeSupervisor.instances[0].stopped
    assert controller.info is None and not controller.starting


def test_a_refused_stream_is_retried_and_resumes_after_the_last_event(qtbot, qloop, tmp_path):
    client = FakeClient(refusals=[ApiRequestError(503, "http_error", "upstream restarting")])
    controller = ShellController(tmp_path, supervisor_factory=FakeSupervisor,
                                 client_factory=lambda info: client)
    controller.stream_retry_s = 0.01
    states = []
    controller.stream_state.connect(states.append)
    window = MainWindow(controller)
    qtbot.addWidget(window)
    window.show()  # the Pipelines view reads its status only while shown
    controller.start()
    qtbot.waitUntil(window.discover_button.isEnabled, timeout=10_000)
    assert states[:3] == ["connecting", "reconnecting", "live"]
    client.feed.put_nowait(started(7))
    qtbot.waitUntil(lambda: controller.last_event_id == 7, timeout=10_000)
    assert client.subscriptions == [None, None]
    with qtbot.waitSignal(controller.stopped, timeout=10_000):
        controller.shutdown()


def test_start_failure_is_shown_with_a_retry(qtbot, qloop, tmp_path):
    """Another instance owns the app dir: the readable reason and a Retry button."""
    other_instance = FileLock(str(tmp_path / "instance.lock"))
    other_instance.acquire()
    try:
        controller = ShellController(tmp_path)
        window = MainWindow(controller)
        qtbot.addWidget(window)
        window.show()
        with qtbot.waitSignal(controller.start_failed, timeout=10_000) as failed:
            controller.start()
        assert "already in use by another JobCtrl instance" in failed.args[0]
        assert window.banner.isVisible() and window.banner.retry_button.isVisible()
        assert "already in use" in window.banner.message.text()
        assert not window.discover_button.isEnabled()

        with qtbot.waitSignal(controller.start_failed, timeout=10_000):
            qtbot.mouseClick(window.banner.retry_button, Qt.MouseButton.LeftButton)
        assert window.banner.isVisible()
        with qtbot.waitSignal(controller.stopped, timeout=10_000):
            controller.shutdown()
    finally:
        other_instance.release()


# -- end to end ------------------------------------------------------------------------------


@pytest.fixture
def shell_app_dir(tmp_path) -> Path:
    app_dir = tmp_path / "app"
    app_dir.mkdir()
    return app_dir


@pytest.mark.integration
def test_discover_end_to_end(qtbot, qloop, shell_app_dir):
    """Real Temporal, worker and API: Retry after a refused start, Discover, quit."""
    other_instance = FileLock(str(shell_app_dir / "instance.lock"))
    other_instance.acquire()
    shell = DesktopShell(shell_app_dir)
    window, controller = shell.window, shell.controller
    qtbot.addWidget(window)
    run = qloop.create_task(shell.run())
    try:
        qtbot.waitUntil(window.banner.retry_button.isVisible, timeout=10_000)
        assert "already in use" in window.banner.message.text()
        other_instance.release()
        qtbot.mouseClick(window.banner.retry_button, Qt.MouseButton.LeftButton)

        qtbot.waitUntil(
            lambda: all_services(window, "ready"),
            timeout=90_000,
        )
        assert not window.banner.isVisible()
        qtbot.waitUntil(window.discover_button.isEnabled, timeout=30_000)
        assert window.stream == "live" and window.status_line.plain_text() == "Ready"
        temporal_link = window.views["pipelines"].details.temporal_label.text()
        assert "http" not in temporal_link and "off" in temporal_link  # opt-in: off by default

        # One blocker for the whole run, no polling: pytest-qt's own waits drop references
        # to True on the affected PySide6 (see desktop/qt_compat.py), the shell must not.
        model = window.activity.model
        accepted: list[dict] = []  # the Pipelines note moves on once the run is shown
        window.views["pipelines"].discover_started.connect(accepted.append)
        true_refs = sys.getrefcount(True)
        with qtbot.waitSignal(controller.event_received, timeout=240_000,
                              check_params_cb=lambda event: event.type == "DiscoveryRunCompleted"):
            qtbot.mouseClick(window.discover_button, Qt.MouseButton.LeftButton)
        drift, rows = sys.getrefcount(True) - true_refs, model.rowCount()
        # Unguarded, each row costs at least two references (two emits); guarded, about none.
        assert drift > -(100 + rows // 5), f"the shell dropped {-drift} references to True ({rows} rows)"
        assert len(accepted) == 1  # one click, one run
        assert window.jobs_discovered == DEMO_DISTINCT_JOBS
        assert window.jobs_label.text() == f"New jobs since opening: <b>{DEMO_DISTINCT_JOBS}</b>"
        assert f"Found {DEMO_DISTINCT_JOBS} jobs on Demo board" in model.texts()
        assert "Started looking for jobs on Demo board" in model.texts()

        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        window.resize(1240, 860)  # the size a real screen gets (the offscreen one is tiny)
        QApplication.processEvents()  # settle pending layout requests before the picture
        assert window.grab().save(str(ARTIFACTS / "desktop-main-window.png"))

        pids = dict(controller.info.pids)
        assert (shell_app_dir / "runtime.json").exists()
        window.close()
        qtbot.waitUntil(run.done, timeout=60_000)
        assert run.result() == 0
        assert not (shell_app_dir / "runtime.json").exists()
        assert all_services(window, "stopped")
        for name in ("temporal", "worker", "api"):
            assert not _alive(pids[name]), f"{name} (pid {pids[name]}) still runs"
    finally:
        if other_instance.is_locked:
            other_instance.release()
        if not run.done():
            shell.request_quit()
            qtbot.waitUntil(run.done, timeout=60_000)


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_retry_after_a_service_failed_for_good_restarts_the_services(qtbot, qloop, tmp_path):
    FakeSupervisor.instances.clear()
    clients: list[FakeClient] = []

    def new_client(_info):
        clients.append(FakeClient())
        return clients[-1]

    controller = ShellController(tmp_path, supervisor_factory=FakeSupervisor,
                                 client_factory=new_client)
    window = MainWindow(controller)
    qtbot.addWidget(window)
    window.show()
    controller.start()
    qtbot.waitUntil(lambda: controller.info is not None, timeout=10_000)

    controller.service_status.emit(ServiceStatus("temporal", "failed", "exited with code 1"))
    assert window.banner.retry_button.isVisible()
    qtbot.mouseClick(window.banner.retry_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: len(FakeSupervisor.instances) == 2 and controller.info is not None,
                    timeout=10_000)
    assert FakeSupervisor.instances[0].stopped and clients[0].closed
    assert not FakeSupervisor.instances[1].stopped
    assert not window.banner.isVisible()
    assert all_services(window, "ready")
    stopping = controller.shutdown()
    qtbot.waitUntil(stopping.done, timeout=10_000)
