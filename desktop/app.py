"""``jobctrl desktop``: the Qt shell on a qasync loop.

The window appears at once: its first frame (layout, menus, service states, a
"Starting…" tab) is painted before anything heavy is imported — even before asyncio and
qasync: Qt paints it in a local event loop, and the asyncio loop starts after. Then the Supervisor
spawns Temporal, the worker and the API; once they are spawned the shell builds the tray,
and once they are ready (or the start failed) the current tab's view: until then the tab
shows "Starting…" (a view built earlier could only say its services were not running yet),
and the view's imports (presenters, HTTP client, models) do not compete for the CPU with
the children's own imports on the way to "Ready".

Quitting (closing the window, SIGINT, SIGTERM) always takes the same path:
``DesktopShell.run()`` wakes, awaits the controller's ordered shutdown, closes the window
and returns; only then does the loop end (awaiting after ``aboutToQuit`` would be too
late: Qt's loop has stopped). The process leaves through ``hard_exit``.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEventLoop as QtLocalLoop
from PySide6.QtCore import QTimer
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QSystemTrayIcon

from backend.desktop_contract import configure_logging, hard_exit, startup_milestone, trim_after_bursts
from desktop import theme
from desktop.qt_sources import forget_module_sources
from desktop.shell import ShellController
from desktop.single_instance import InstanceServer, activate_running_instance
from desktop.views.main_window import MainWindow

if TYPE_CHECKING:
    import asyncio

log = logging.getLogger(__name__)

SIGNAL_POLL_MS = 250
FIRST_FRAME_WAIT_S = 5.0  # a window that never paints (hidden, odd platform) must not block
LAUNCH_WAIT_S = 10.0      # the tray is built after the children are spawned, or after this
READY_WAIT_S = 30.0       # the view is built once the services are ready, or after this


class DesktopShell:
    """The app's lifetime: one window, one controller, one way to quit."""

    def __init__(
        self,
        app_dir: Path,
        *,
        api_port: int | None = None,
        temporal_port: int | None = None,
        temporal_ui: bool | None = None,
        controller: ShellController | None = None,
    ):
        self.controller = controller or ShellController(
            app_dir, api_port=api_port, temporal_port=temporal_port, temporal_ui=temporal_ui
        )
        # Light or dark, following the system; the check-box style once the frame is painted.
        self.appearance = theme.install(checks_style=False)
        self.window = MainWindow(self.controller, lazy_first_view=True)
        self.appearance.restyle_widgets()  # the window's styles in the current appearance
        self.window.close_requested.connect(self.request_quit)
        self.window.quit_requested.connect(self.request_quit)
        self._quit_requested = False
        self._quit: asyncio.Event | None = None  # made by run(), on the loop
        # Built after the first frame (they import the presenters and the HTTP client).
        self._tray = None
        self.notifier = None
        self._finishing: asyncio.Task | None = None
        self.instance: InstanceServer | None = None

    @property
    def tray(self):
        """The tray icon and the notifier, built on first use (after the first frame)."""
        if self._tray is None:
            from desktop.notifications import Notifier, tray_sink
            from desktop.tray import SpendTray

            tray = self._tray = SpendTray(self.controller)
            tray.open_requested.connect(self.window.bring_to_front)
            tray.quit_requested.connect(self.request_quit)
            tray.cancel_result.connect(self._show_note)
            self.notifier = Notifier(self.controller, tray.status, tray_sink(tray.icon))
            self.notifier.notified.connect(
                lambda title, text: self._show_note(f"{title}: {text}"))
            self._wire_tray(tray)
            # The Pipelines view shares notices and snapshots with the tray: wired now if it
            # is built, else when it is (at the latest once the services are ready).
            pipelines = self.window.views.built.get("pipelines")
            if pipelines is not None:
                self._wire_tray_to_pipelines(pipelines)
            else:
                self.window.view_built.connect(self._on_view_built)
        return self._tray

    def _wire_tray(self, tray) -> None:
        from desktop.follow_ups import FollowUpReminders

        # No tray or notification service: the notice stays in the window until dismissed
        # (in Pipelines, built for it if it is not yet).
        self.notifier.undelivered.connect(
            lambda title, text, level: self.window.views["pipelines"].show_notice(
                title, text, level))
        self.reminders = FollowUpReminders(self.controller, self.controller.app_dir)
        self.reminders.changed.connect(tray.show_follow_ups)
        self.reminders.announce.connect(self.notifier.announce_follow_ups)
        tray.applications_requested.connect(self.open_applications)

    def _on_view_built(self, key: str, view) -> None:
        if key == "pipelines":
            self.window.view_built.disconnect(self._on_view_built)
            self._wire_tray_to_pipelines(view)

    def _wire_tray_to_pipelines(self, pipelines) -> None:
        tray = self._tray
        # One snapshot on screen: the window and the tray both show the newest either fetched.
        pipelines.snapshot_shown.connect(tray.status.offer_operations)
        tray.status.changed.connect(lambda status: pipelines.offer_snapshot(status.operations))
        pipelines.offer_snapshot(tray.status.snapshot.operations)  # what the tray has so far

    def open_applications(self) -> None:
        self.window.bring_to_front()
        self.window.show_view("applications")

    def listen_for_second_launches(self, instance: InstanceServer) -> None:
        self.instance = instance
        instance.activation_requested.connect(self.window.bring_to_front)

    def _after_first_frame(self) -> None:
        """What the first frame does not need: the proxy style that keeps a list's check
        boxes visible on a dark base (the lists are built later, with their views)."""
        try:
            theme.install_checks_style()
        except Exception:  # noqa: BLE001 - the window stays usable; the log says why
            log.exception("installing the check-box style failed")

    def _show_note(self, text: str) -> None:
        self.window.statusBar().showMessage(text, 15_000)

    @property
    def quitting(self) -> bool:
        return self._quit_requested

    def request_quit(self) -> None:
        self._quit_requested = True
        if self._quit is not None:
            self._quit.set()

    def paint_first_frame(self) -> None:
        """Before the asyncio loop runs: show the window and return once its first frame
        is painted (or after FIRST_FRAME_WAIT_S), in a local Qt event loop."""
        waiting = QtLocalLoop()
        self.window.first_frame_painted.connect(waiting.quit)
        QTimer.singleShot(int(FIRST_FRAME_WAIT_S * 1000), waiting.quit)
        self.window.show()
        if not self.window.painted:
            waiting.exec()
        self.window.first_frame_painted.disconnect(waiting.quit)
        startup_milestone("first_paint")
        self._after_first_frame()

    async def _first_frame(self) -> None:
        """On the loop, when paint_first_frame did not run (a shell built by a test):
        the same wait without a nested Qt loop (qasync's callbacks must not run in one)."""
        import asyncio

        painted = asyncio.Event()
        self.window.first_frame_painted.connect(painted.set)
        self.window.show()
        if not self.window.painted:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(painted.wait(), FIRST_FRAME_WAIT_S)
        startup_milestone("first_paint")
        self._after_first_frame()

    async def _finish_start(self, settled: asyncio.Event) -> None:
        """Once the children are spawned: the tray; once the services are ready (or the
        start failed: ``settled``): the current view, and the tray's link to Pipelines.
        A tab the user opens meanwhile is built when shown, as always."""
        import asyncio

        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.controller.until_launched(), LAUNCH_WAIT_S)
        try:
            if self.window.hide_to_tray:
                self.tray.show()
            else:
                self.tray  # noqa: B018 - built for its notifications (no tray host to show it)
        except Exception:  # noqa: BLE001 - the window stays usable; the log says why
            log.exception("building the tray failed")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(settled.wait(), READY_WAIT_S)
        try:
            self.window.build_current_view()
        except Exception:  # noqa: BLE001 - the window stays usable; the log says why
            log.exception("building the first view failed")
        startup_milestone("views_built")

    async def run(self) -> int:
        """The app's life on the loop; paints the first frame first if run_desktop did not."""
        import asyncio

        self._quit = asyncio.Event()
        if self._quit_requested:
            self._quit.set()
        # Closing the window keeps the app in the tray only where a tray exists.
        self.window.hide_to_tray = QSystemTrayIcon.isSystemTrayAvailable()
        settled = asyncio.Event()  # the services are ready, or their start failed
        self.controller.runtime_ready.connect(
            lambda _info: startup_milestone("services_ready"))
        self.controller.runtime_ready.connect(lambda _info: settled.set())
        self.controller.start_failed.connect(lambda _reason: settled.set())
        if not self.window.isVisible():  # run_desktop painted it before the loop started
            await self._first_frame()
        self.controller.start()
        loop = asyncio.get_running_loop()
        self._finishing = loop.create_task(self._finish_start(settled))
        trimmer = loop.create_task(trim_after_bursts())  # memory back after event bursts
        await self._quit.wait()
        log.info("quitting: stopping the services")
        try:
            trimmer.cancel()
            if not self._finishing.done():
                self._finishing.cancel()
            await self.controller.stop()  # API, worker, Temporal, in that order
        finally:
            if self._tray is not None:
                self._tray.hide()
            if self.instance is not None:
                self.instance.close()
            self.window.allow_close()
            self.window.close()
        return 0


def install_quit_signals(on_signal: Callable[[], None]) -> Callable[[], None]:
    """SIGINT/SIGTERM call ``on_signal`` on the loop; returns a function that uninstalls.

    On Unix the qasync loop is a selector loop: ``add_signal_handler`` wakes it through
    its self-pipe, which Qt watches with a socket notifier, so signals arrive while Qt's
    C++ loop waits. Elsewhere a plain handler plus a timer that lets Python run now and
    then (Python handlers only run between bytecodes, never inside Qt's wait).
    """
    import asyncio

    loop = asyncio.get_running_loop()
    signums = [signal.SIGINT, signal.SIGTERM]
    try:
        for signum in signums:
            loop.add_signal_handler(signum, on_signal)
    except (NotImplementedError, RuntimeError, AttributeError):
        previous = {signum: signal.getsignal(signum) for signum in signums}
        for signum in signums:
            signal.signal(signum, lambda *_: loop.call_soon_threadsafe(on_signal))
        timer = QTimer()
        timer.timeout.connect(lambda: None)
        timer.start(SIGNAL_POLL_MS)

        def uninstall_fallback() -> None:
            timer.stop()
            for signum, handler in previous.items():
                signal.signal(signum, handler)

        return uninstall_fallback

    def uninstall() -> None:
        for signum in signums:
            with contextlib.suppress(Exception):
                loop.remove_signal_handler(signum)

    return uninstall


async def _main(shell: DesktopShell) -> int:
    def on_signal() -> None:
        if shell.quitting:
            log.warning("second quit signal while stopping: leaving now")
            hard_exit(1)
        shell.request_quit()

    uninstall = install_quit_signals(on_signal)
    try:
        return await shell.run()
    finally:
        uninstall()


def run_desktop(paths, args) -> None:
    # Before the bulk of the imports (views, HTTP client, supervisor): PySide6 would keep
    # every module's source text in memory all week (desktop/qt_sources.py).
    forget_module_sources()
    configure_logging(paths.logs, "desktop", console=True, verbose=getattr(args, "verbose", False))
    app = QApplication.instance() or QApplication(sys.argv[:1])
    app.setApplicationName("JobCtrl")
    # The installed launcher's name (Wayland app id) and the app icon, from the package's
    # resources so the frozen app finds it too.
    app.setDesktopFileName("jobctrl")
    app.setWindowIcon(QIcon(str(resources.files("resources") / "icons" / "jobctrl.png")))
    # Before any widget: light or dark as the system (or JOBCTRL_APPEARANCE) says.
    theme.install(app, checks_style=False)
    # The window's close button asks the shell to stop the services first; Qt must not
    # end the loop on its own when the last window closes.
    app.setQuitOnLastWindowClosed(False)
    # A second launch on the same app folder raises the running window and leaves.
    if activate_running_instance(paths.app_dir):
        log.info("JobCtrl already runs for %s: raised its window", paths.app_dir)
        print("JobCtrl is already running: its window was brought to the front.")
        hard_exit(0)
    code = 1
    try:
        shell = DesktopShell(
            paths.app_dir,
            api_port=getattr(args, "api_port", None),
            temporal_port=getattr(args, "temporal_port", None),
            temporal_ui=False if getattr(args, "no_temporal_ui", False) else None,
        )
        shell.paint_first_frame()  # before asyncio and qasync are even imported
        # The listener after the frame (it imports QtNetwork); a launch in between is
        # refused by the app-dir lock (desktop/single_instance.py).
        instance = InstanceServer(paths.app_dir)
        instance.listen()
        shell.listen_for_second_launches(instance)
        import asyncio

        from desktop.qt_loop import QEventLoop

        # What qasync.run() does, with the guarded loop of desktop.qt_loop.
        with asyncio.Runner(loop_factory=lambda: QEventLoop(app)) as runner:
            code = runner.run(_main(shell))
    except Exception:  # noqa: BLE001 - logged; the exit code tells the caller
        log.exception("the desktop shell failed")
    hard_exit(code)
