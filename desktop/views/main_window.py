"""The main window: one plain status line (starting, ready, reconnecting; the services'
own states and the Temporal Web UI link are in Pipelines → Details), the views as tabs
(Discover is in Pipelines), the live Activity list, a menu bar with the platform's
shortcuts (File → Refresh F5, Settings, Quit; Edit → Find jobs; Help → About), and its
size, position and last view remembered in the app dir (``desktop.window_state``).

No I/O here: the window calls the controller's plain methods and reacts to its signals.
A résumé file dragged anywhere over the window shows a drop hint; dropped, it goes
through Settings' one importer and opens as a draft in Settings → Your profile.
Each view is a tab (``VIEW_TABS``) built the first time it is shown or asked for (a job
link, a dropped résumé, the first event for Activity): until then its tab holds a
"Starting…" placeholder, and this module imports no view module, so the window's first
frame — its layout, menus and status line — paints before anything heavy is imported.
Views connect to ``controller.views_invalidated`` for the view keys they show.
"""

from __future__ import annotations

import html
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QEvent, QObject, QRect, Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QCloseEvent,
    QDesktopServices,
    QDropEvent,
    QGuiApplication,
    QMoveEvent,
    QResizeEvent,
)
from PySide6.QtWidgets import (
    QApplication,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPushButton,
    QSizePolicy,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.plain_text import PlainLabel, rich_label
from desktop.presenters.window_status import READY, status_line
from desktop.qt_compat import emit
from desktop.shell import DiscoverOutcome, ShellController
from desktop.theme import COLORS, notice_style
from desktop.views.partials.menu_bar import MenuCommands, build_menu_bar
from desktop.views.status_indicators import WindowStatusLine
from desktop.window_state import (
    WindowState,
    clamp_to_screens,
    read_window_state,
    write_window_state,
)

if TYPE_CHECKING:
    from backend.desktop_contract import RuntimeInfo, ServiceStatus
    from desktop.client import StreamedEvent
    from desktop.views.activity_view import ActivityView
    from desktop.views.live_view import LiveView
    from desktop.views.partials import profile_import

SERVICE_TITLES = {"temporal": "Temporal", "worker": "Worker", "api": "API"}


class Banner(QFrame):
    """A one-line message above the content; the error variant offers Retry."""

    retry_clicked = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("banner")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(12, 8, 8, 8)
        self.message = PlainLabel(self)
        self.message.setObjectName("bannerMessage")
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)
        self.retry_button = QPushButton("Retry", self)
        self.retry_button.setObjectName("retryButton")
        self.retry_button.clicked.connect(self.retry_clicked)
        layout.addWidget(self.message, 1)
        layout.addWidget(self.retry_button)
        self.hide()

    def show_message(self, text: str, tone: str = "error", *, retry: bool = False) -> None:
        self.setStyleSheet(f"#banner {{ {notice_style(tone)} border-radius: 6px; }}"
                           " #bannerMessage { border: none; background: transparent; }")
        self.message.setText(text)
        self.retry_button.setVisible(retry)
        self.show()


DRAG_EVENTS = frozenset({QEvent.Type.DragEnter, QEvent.Type.DragMove, QEvent.Type.Drop})


def drop_hint_style() -> str:
    return (f"#dropHint {{ background: rgba(31, 111, 235, 0.12); border: 2px dashed"
            f" {COLORS['accent']}; border-radius: 10px; color: {COLORS['info_text']};"
            " font-size: 15pt; font-weight: 600; }")


class DropHint(PlainLabel):
    """Covers the window while a résumé file is dragged over it (its name is plain text)."""

    def __init__(self, parent: QWidget):
        super().__init__(parent)
        self.setObjectName("dropHint")
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setWordWrap(True)
        self.setStyleSheet(drop_hint_style())
        self.setAttribute(Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.hide()

    def show_for(self, path: Path) -> None:
        self.setText(f"Drop {path.name} to import your résumé\n"
                     "It opens as a draft in Settings → Your profile; nothing is saved yet.")
        self.setGeometry(self.parentWidget().rect().adjusted(8, 8, -8, -8))
        self.raise_()
        self.show()


@dataclass(frozen=True)
class ViewTab:
    key: str
    title: str
    module: str
    class_name: str
    takes_controller: bool = True  # cls(controller, parent), else cls(parent, controller=...)


# One tab per view, in this order. Each view module owns its widgets and its API calls.
VIEW_TABS: tuple[ViewTab, ...] = (
    ViewTab("pipelines", "Pipelines", "desktop.views.pipelines_view", "PipelinesView"),
    ViewTab("runs", "Runs", "desktop.views.runs_view", "RunsView"),
    ViewTab("jobs", "Jobs", "desktop.views.jobs_view", "JobsView"),
    ViewTab("apply", "Apply Review", "desktop.views.apply_review_view", "ApplyReviewView"),
    ViewTab("applications", "Applications", "desktop.views.applications_view",
            "ApplicationsView"),
    ViewTab("insights", "Insights", "desktop.views.insights_view", "InsightsView"),
    ViewTab("spend", "Spend", "desktop.views.spend_view", "SpendView"),
    ViewTab("settings", "Settings", "desktop.views.settings_view", "SettingsView"),
    ViewTab("activity", "Activity", "desktop.views.activity_view", "ActivityView",
            takes_controller=False),  # built as cls(parent, controller=controller)
)
STARTING_TEXT = "Starting…"


class ViewSlot(QLabel):
    """A tab's place until its view is built; what the first frame shows in the tab."""

    def __init__(self, key: str, parent: QWidget | None = None):
        super().__init__(STARTING_TEXT, parent)
        self.key = key
        self.setObjectName(f"{key}Slot")
        self.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.setStyleSheet("color: palette(placeholder-text); font-size: 13pt;")


class LazyViews(Mapping[str, QWidget]):
    """``window.views``: every tab's view by key, built on first access."""

    def __init__(self, build) -> None:
        self._build = build
        self.keys_in_order: list[str] = []
        self.built: dict[str, QWidget] = {}

    def __getitem__(self, key: str) -> QWidget:
        if key not in self.keys_in_order:
            raise KeyError(key)
        return self.built.get(key) or self._build(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys_in_order)

    def __len__(self) -> int:
        return len(self.keys_in_order)

    def __contains__(self, key: object) -> bool:
        return key in self.keys_in_order


PREFERRED_SIZE = (1240, 860)  # the Pipelines grid and its side panels without scrolling


SAVE_STATE_DELAY_MS = 500  # a drag or resize is saved once it pauses


def initial_size(screen) -> tuple[int, int]:
    """The preferred size, shrunk to 90% of the screen's free area on small screens."""
    if screen is None:
        return PREFERRED_SIZE
    free = screen.availableGeometry()
    return (min(PREFERRED_SIZE[0], int(free.width() * 0.9)),
            min(PREFERRED_SIZE[1], int(free.height() * 0.9)))


def available_screen_rects() -> list[tuple[int, int, int, int]]:
    """Every screen's free area, the primary screen first."""
    primary = QGuiApplication.primaryScreen()
    screens = [primary, *(s for s in QGuiApplication.screens() if s is not primary)]
    return [_rect(screen.availableGeometry()) for screen in screens if screen is not None]


def _rect(rect: QRect) -> tuple[int, int, int, int]:
    return rect.x(), rect.y(), rect.width(), rect.height()


def about_text(app_dir: Path) -> str:
    from importlib import metadata  # slow to import; only for this dialog

    try:
        version = metadata.version("jobctrl")
    except metadata.PackageNotFoundError:  # a source checkout that was never installed
        version = "development version"
    return (f"<b>JobCtrl</b> {html.escape(version)}<br>Finds jobs, scores them against your "
            "profile and prepares your applications, on your own computer.<br><br>"
            f"Your data is kept in {html.escape(str(app_dir))}.")


class MainWindow(QMainWindow):
    close_requested = Signal()  # the app stops the services, then closes the window
    hidden_to_tray = Signal()   # the close button hid the window; the tray keeps the app
    quit_requested = Signal()   # File → Quit: the app stops the services and leaves
    first_frame_painted = Signal()  # once, after the window's first paint
    view_built = Signal(str, object)  # (key, view), once per view, when it is first built

    def __init__(self, controller: ShellController, parent: QWidget | None = None, *,
                 lazy_first_view: bool = False):
        """``lazy_first_view``: leave even the current tab's view to ``build_current_view``
        (the app calls it after the first frame, once the services are spawned)."""
        super().__init__(parent)
        self._painted = False
        self.painted = False  # True once first_frame_painted was emitted
        self.controller = controller
        self.jobs_discovered = 0
        self._api_ready = False
        self._runtime: RuntimeInfo | None = None
        self._stream_seen_live = False
        # What the status line is made of: each service's latest state, the stream's.
        self.service_states: dict[str, str] = {}
        self.stream = "offline"
        self._was_ready = False
        self._start_failed = False
        self._discover_pending = False
        self._stopping = False
        self._may_close = False
        # Set by the app when a system tray icon is shown: then closing hides the window.
        self.hide_to_tray = False
        self.setWindowTitle("JobCtrl")
        self.resize(*initial_size(self.screen()))
        self._banner_shows_import = False
        self._build()
        self.menu_actions = build_menu_bar(self, MenuCommands(
            refresh=self.refresh_current_view, find=self.find_jobs,
            settings=lambda: self.show_view("settings"), quit=lambda: emit(self.quit_requested),
            about=self.show_about, open_app_folder=self.open_app_folder))
        self._save_timer = QTimer(self)
        self._save_timer.setSingleShot(True)
        self._save_timer.setInterval(SAVE_STATE_DELAY_MS)
        self._save_timer.timeout.connect(self.save_state)
        self.restore_state()
        self._connect()
        if not lazy_first_view:
            self.build_current_view()
        self._update_actions()
        self.menu_actions.refresh.setEnabled(bool(self.live_views_shown()))
        self.setAcceptDrops(True)

    # -- layout ---------------------------------------------------------------------------

    def _build(self) -> None:
        central = QWidget(self)
        root = QVBoxLayout(central)
        root.setContentsMargins(14, 12, 14, 10)
        root.setSpacing(10)

        status_row = QHBoxLayout()
        status_row.setSpacing(8)
        self.status_line = WindowStatusLine(central)
        status_row.addWidget(self.status_line)
        status_row.addStretch(1)
        # Discover lives in the Pipelines view (one control, next to the sources it runs).
        self.jobs_label = rich_label(QLabel(central))
        self.jobs_label.setObjectName("jobsDiscovered")
        status_row.addWidget(self.jobs_label)
        root.addLayout(status_row)

        self.banner = Banner(central)
        root.addWidget(self.banner)

        self.tabs = QTabWidget(central)
        self.tabs.setDocumentMode(True)
        self.tabs.setObjectName("viewTabs")
        self.views = LazyViews(self._build_view)
        self._tabs_by_key: dict[str, ViewTab] = {}
        for tab in VIEW_TABS:
            self.add_view(tab)
        root.addWidget(self.tabs, 1)

        footer = QHBoxLayout()
        footer.setSpacing(18)
        self.app_dir_label = rich_label(QLabel(central))
        self.app_dir_label.setObjectName("appDirLabel")
        self.app_dir_label.setOpenExternalLinks(True)
        footer.addWidget(self.app_dir_label)
        footer.addStretch(1)
        root.addLayout(footer)

        self.drop_hint = DropHint(central)
        self.setCentralWidget(central)
        self._show_jobs_count()
        self._show_links()

    def add_view(self, tab: ViewTab) -> None:
        """A tab for the view, with a placeholder until the view is built."""
        self._tabs_by_key[tab.key] = tab
        self.views.keys_in_order.append(tab.key)
        self.tabs.addTab(ViewSlot(tab.key, self.tabs), tab.title)

    def _build_view(self, key: str) -> QWidget:
        """Build the view (importing its module), put it in place of its placeholder and
        connect it. The swap is not a tab change: the same tab stays current."""
        tab = self._tabs_by_key[key]
        view_class = getattr(import_module(tab.module), tab.class_name)
        view = (view_class(self.controller, self.tabs) if tab.takes_controller
                else view_class(self.tabs, controller=self.controller))
        view.setObjectName(f"{key}View")
        self.views.built[key] = view
        slot = self._slot(key)
        index = self.tabs.indexOf(slot)
        self.tabs.blockSignals(True)
        try:
            current = self.tabs.currentIndex() == index
            self.tabs.insertTab(index, view, tab.title)  # the placeholder moves to index + 1
            if current:
                self.tabs.setCurrentIndex(index)
            self.tabs.removeTab(index + 1)
        finally:
            self.tabs.blockSignals(False)
        slot.deleteLater()
        self._wire(key, view)
        emit(self.view_built, key, view)
        if current:
            self.menu_actions.refresh.setEnabled(bool(self.live_views_shown()))
        return view

    def _slot(self, key: str) -> ViewSlot:
        for index in range(self.tabs.count()):
            page = self.tabs.widget(index)
            if isinstance(page, ViewSlot) and page.key == key:
                return page
        raise KeyError(key)

    def build_current_view(self) -> QWidget:
        return self.views[self.current_view_key]

    @property
    def activity(self) -> ActivityView:
        return self.views["activity"]

    def show_view(self, key: str) -> QWidget:
        view = self.views[key]
        self.tabs.setCurrentWidget(view)
        return view

    def open_job(self, job_key: str) -> None:
        """Follow a job link from any view (Runs, Apply Review, ...) to its Jobs detail."""
        jobs = self.show_view("jobs")
        jobs.select_job(job_key)

    def open_profile(self) -> None:
        """The first-run panel's "Type it in myself": Settings → Your profile."""
        self.show_view("settings").focus_profile()

    # -- menu commands --------------------------------------------------------------------

    def live_views_shown(self) -> list[LiveView]:
        """The current tab's API-backed views that are on screen (e.g. Jobs: the list and
        the selected job's detail)."""
        view = self.tabs.currentWidget()
        if isinstance(view, ViewSlot):
            return []  # not built yet: nothing fetched, nothing to refresh
        from desktop.views.live_view import LiveView

        candidates = [view, *view.findChildren(LiveView)]
        return [live for live in candidates if isinstance(live, LiveView)
                and (live is view or live.isVisibleTo(view))]

    def refresh_current_view(self) -> int:
        """File → Refresh (F5): fetch what the current tab shows again; how many views."""
        views = self.live_views_shown()
        for view in views:
            view.refresh()
        return len(views)

    def find_jobs(self) -> None:
        """Edit → Find (Ctrl/Cmd+F): the Jobs search, ready to type."""
        self.show_view("jobs").focus_search()

    def show_about(self) -> None:
        QMessageBox.about(self, "About JobCtrl", about_text(self.controller.app_dir))

    def open_app_folder(self) -> None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.controller.app_dir)))

    def _on_tab_changed(self, index: int) -> None:
        page = self.tabs.widget(index)
        if isinstance(page, ViewSlot) and self.isVisible():
            self._build_view(page.key)  # a lazy tab: built the first time it is shown
        self.menu_actions.refresh.setEnabled(bool(self.live_views_shown()))
        self._save_timer.start()

    # -- size, position and last view ----------------------------------------------------

    @property
    def current_view_key(self) -> str | None:
        current = self.tabs.currentWidget()
        if isinstance(current, ViewSlot):
            return current.key
        return next((key for key, view in self.views.built.items() if view is current), None)

    def window_state(self) -> WindowState:
        # The normal geometry also while maximized: un-maximizing after a restart returns
        # to the size the user had.
        rect = self.normalGeometry() if self.isMaximized() else self.geometry()
        return WindowState(rect.x(), rect.y(), rect.width(), rect.height(),
                           maximized=self.isMaximized(), view=self.current_view_key)

    def save_state(self) -> None:
        self._save_timer.stop()
        write_window_state(self.controller.app_dir, self.window_state())

    def restore_state(self) -> bool:
        """The last size, position (on a screen that is still there) and view."""
        state = read_window_state(self.controller.app_dir)
        if state is None:
            return False
        x, y, width, height = clamp_to_screens(state.rect, available_screen_rects())
        self.setGeometry(x, y, width, height)
        if state.maximized:
            self.setWindowState(self.windowState() | Qt.WindowState.WindowMaximized)
        if state.view in self.views:
            # The tab only: its view is built when shown (or by build_current_view).
            view = self.views.built.get(state.view)
            self.tabs.setCurrentWidget(view or self._slot(state.view))
        return True

    def moveEvent(self, event: QMoveEvent) -> None:  # noqa: N802 - Qt API
        super().moveEvent(event)
        if self.isVisible():
            self._save_timer.start()

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 - Qt API
        super().resizeEvent(event)
        if self.isVisible():
            self._save_timer.start()

    # -- importing a résumé ---------------------------------------------------------------

    @property
    def importer(self) -> profile_import.ProfileImporter:
        return self.views["settings"].profile_page.importer

    def choose_resume(self, origin: str) -> None:
        from desktop.views.partials import profile_import

        path = profile_import.choose_resume_file(self)
        if path is not None:
            self.importer.import_file(path, origin)

    def _on_import_progress(self, origin: str, text: str, tone: str) -> None:
        """An import's words where it was started: the first-run panel, or (a drop) the
        banner over every view."""
        if origin == "first-run":
            self.views["pipelines"].profile_notice.show_progress(text, tone)
        elif origin == "drop" and text:
            self._banner_shows_import = True
            self.banner.show_message(text, "error" if tone == "bad" else "info")
        elif origin == "drop" and self._banner_shows_import:
            self._banner_shows_import = False
            self.banner.hide()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        kind = event.type()
        if kind == QEvent.Type.DragLeave:
            self.drop_hint.hide()
        elif (kind in DRAG_EVENTS and isinstance(watched, QWidget)
              and watched.window() is self):
            return self._on_drag(event)
        return super().eventFilter(watched, event)

    def _on_drag(self, event: QDropEvent) -> bool:
        """Accept one résumé file; anything else goes on to the widget under the cursor."""
        from desktop.views.partials.profile_import import dropped_resume

        path = dropped_resume(event.mimeData())
        if path is None:
            self.drop_hint.hide()
            return False
        event.acceptProposedAction()
        if event.type() == QEvent.Type.Drop:
            self.drop_hint.hide()
            self.importer.import_file(path, "drop")
        else:
            self.drop_hint.show_for(path)
        return True

    def _wire(self, key: str, view: QWidget) -> None:
        """A freshly built view's connections to the window."""
        if key != "jobs" and hasattr(view, "open_job"):
            view.open_job.connect(self.open_job)
        if key == "pipelines":
            view.profile_requested.connect(self.open_profile)
            view.import_requested.connect(lambda: self.choose_resume("first-run"))
            view.sample_requested.connect(lambda: self.importer.import_sample("first-run"))
            view.set_shell_block_reason(self.discover_enabled_reason)
        elif key == "settings":
            view.profile_page.draft_opened.connect(lambda: self.show_view("settings"))
            view.profile_page.importer.progress.connect(self._on_import_progress)

    def paintEvent(self, event) -> None:  # noqa: N802 - Qt API
        super().paintEvent(event)
        if not self._painted:
            self._painted = True
            # After this paint has reached the screen, not in the middle of it.
            QTimer.singleShot(0, self._announce_first_frame)

    def _announce_first_frame(self) -> None:
        self.painted = True
        # Drags are watched app-wide: a text input under the cursor must not swallow a
        # résumé file (it would paste its path). Installed after the first frame: an
        # app-wide Python filter sees every event of every object, and wrapping each
        # object's class for Python the first time (~150 Qt enum types) would delay it.
        QApplication.instance().installEventFilter(self)
        emit(self.first_frame_painted)

    def _connect(self) -> None:
        self.tabs.currentChanged.connect(self._on_tab_changed)
        c = self.controller
        c.service_status.connect(self.on_service_status)
        c.runtime_ready.connect(self.on_runtime_ready)
        c.start_failed.connect(self.on_start_failed)
        c.event_received.connect(self.on_event)
        c.stream_state.connect(self.on_stream_state)
        c.discover_pending.connect(self.on_discover_pending)
        c.discover_result.connect(self.on_discover_result)
        c.stopping.connect(self.on_stopping)
        self.banner.retry_clicked.connect(self.on_retry)

    # -- controller signals ---------------------------------------------------------------

    def on_service_status(self, status: ServiceStatus) -> None:
        self.service_states[status.name] = status.state
        self._show_status()
        if status.name == "api":
            # Calls made while it restarts on purpose wait for it (desktop/client.py).
            self._api_ready = status.state in ("ready", "recycling")
            self._update_actions()
        if status.state == "failed" and self._runtime is not None:
            # A service that ran and then failed for good (no automatic restart left).
            title = SERVICE_TITLES.get(status.name, status.name)
            self.banner.show_message(
                f"{title} stopped: {status.detail or 'no reason was given'}. "
                "Retry restarts JobCtrl's services.", "error", retry=True)

    def on_runtime_ready(self, info: RuntimeInfo) -> None:
        self._runtime = info
        self._start_failed = False
        self.banner.hide()
        self._show_links()
        self._show_status()
        self._update_actions()

    def on_start_failed(self, reason: str) -> None:
        self._runtime = None
        self._api_ready = False
        self._start_failed = True
        self.banner.show_message(f"JobCtrl could not start: {reason}", "error", retry=True)
        self._show_status()
        self._update_actions()

    def on_retry(self) -> None:
        self.banner.hide()
        self.service_states.clear()  # every service starts again
        self._start_failed = False
        self._show_status()
        if self._runtime is None:
            self.controller.start()
        else:  # a service failed after start-up: stop what still runs, then start again
            self._runtime = None
            self._api_ready = False
            self._update_actions()
            self.controller.restart()

    def on_event(self, event: StreamedEvent) -> None:
        self.activity.append(event)  # the first event builds the Activity view
        if event.type == "JobDiscovered":
            self.jobs_discovered += 1
            self._show_jobs_count()

    def on_stream_state(self, state: str) -> None:
        self.stream = state
        self._show_status()
        if state == "live" and not self._stream_seen_live:
            self._stream_seen_live = True
            self._update_actions()

    def on_discover_pending(self) -> None:
        """A Discover started outside the Pipelines view (the tray's Start Discover)."""
        self._discover_pending = True
        self._update_actions()

    def on_discover_result(self, outcome: DiscoverOutcome) -> None:
        self._discover_pending = False
        self._update_actions()
        # Its answer shows where the Pipelines view shows its own launches' answers.
        self.views["pipelines"].show_discover_outcome(outcome.message, ok=outcome.ok)

    def on_stopping(self) -> None:
        self._stopping = True
        self.banner.show_message("Stopping services…", "info")
        self._show_status()
        self._update_actions()

    # -- state --------------------------------------------------------------------------

    @property
    def discover_enabled_reason(self) -> str | None:
        """Why Discover is disabled, or None when it is enabled."""
        if self._stopping:
            return "JobCtrl is stopping"
        if not (self._api_ready and self._runtime is not None):
            return "Waiting for the API"
        if not self._stream_seen_live:
            return "Waiting for the event stream"  # so the list misses none of the run
        if self._discover_pending:
            return "Starting Discover…"
        return None

    @property
    def discover_button(self) -> QPushButton:
        """The one Discover control: the Pipelines view's (the tray has Start Discover)."""
        return self.views["pipelines"].discover_button

    def _update_actions(self) -> None:
        # The window knows the service and stream states; the Pipelines view adds its own
        # rules (the run in progress, the recovery gate, the ticked sources). A Pipelines
        # view built later gets the reason when it is wired.
        pipelines = self.views.built.get("pipelines")
        if pipelines is not None:
            pipelines.set_shell_block_reason(self.discover_enabled_reason)

    def _show_jobs_count(self) -> None:
        # Counted from the live events, so it says "since opening": after a restart a
        # plain "Jobs discovered: 0" would read as a total and contradict the Jobs list.
        self.jobs_label.setText(f"New jobs since opening: <b>{self.jobs_discovered:,}</b>")
        self.jobs_label.setToolTip("Jobs found by Discover since this window opened; "
                                   "the Jobs tab lists every job")

    def _show_status(self) -> None:
        line = status_line(self.service_states, self.stream, was_ready=self._was_ready,
                           stopping=self._stopping, start_failed=self._start_failed)
        self._was_ready = self._was_ready or line == READY
        self.status_line.show_line(line)

    def _show_links(self) -> None:
        app_dir = self.controller.app_dir
        url = QUrl.fromLocalFile(str(app_dir)).toString()
        self.app_dir_label.setText(
            f"App folder: <a href='{html.escape(url)}'>{html.escape(str(app_dir))}</a>"
        )

    # -- closing ------------------------------------------------------------------------

    def allow_close(self) -> None:
        self._may_close = True

    def bring_to_front(self) -> None:
        """Open from the tray, or a second launch: show, un-minimise, raise, focus."""
        if self.isMinimized():
            self.showNormal()
        self.show()
        self.raise_()
        self.activateWindow()

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802 - Qt API
        self.save_state()  # hidden to the tray or quitting: the next launch opens like this
        if self._may_close:
            event.accept()
            return
        event.ignore()
        if self.hide_to_tray:
            # A tray icon exists: the app keeps running there (Quit is in its menu).
            self.hide()
            emit(self.hidden_to_tray)
            return
        # No tray (e.g. some Linux desktops): closing quits. Stop the services first; the
        # app closes the window after that.
        emit(self.close_requested)
