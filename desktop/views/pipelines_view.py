"""Pipelines: the operations snapshot (``GET /v1/pipeline/operations``) for a job seeker.

Top (pinned above the scroll area, so it is in view at any size and scroll position): one
honest line about the run, one bar over the whole run, the ETA in words, and the primary
action — Discover, and Cancel while the run can be stopped. After a failed, problem or
closed-but-draining run Discover stays disabled until fresh inventory proves no work is
running (the spec's "Set up a new Discover run" gate: the reason, then the offer, is said
next to the button; the source ticks are right below it). Under it: an in-window banner
for notifications where no notification service exists. Then, scrolling: the sources to
search (with the first-run profile panel while no candidate profile is saved — Discover
alone only finds postings — and a marker while the saved one is the sample), the full
operations detail behind "Details" (collapsed), and the identifiers behind "Technical
details" (collapsed).

The headline, the bar and the ETA come from ``ops.summarize`` — the same summary the tray
tooltip and the notifications use. Relative times ("last report 3 s ago", "Updated 4 s
ago") are re-rendered every second from the stored snapshot's timestamps.

Timing follows the spec's live query: stale after 10 s, polled every 15 s while the
selected run is discovering or draining and every 60 s otherwise, never while hidden, and
invalidated by SSE events.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from typing import Any

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGroupBox,
    QHBoxLayout,
    QListWidget,
    QListWidgetItem,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from desktop.client import ApiClient
from desktop.event_router import PIPELINES, RUNS, SETTINGS
from desktop.formatting import describe_accepted, describe_api_error
from desktop.plain_text import PlainLabel, plain_tooltip
from desktop.presenters import operations as ops
from desktop.presenters.sources import KIND_LABELS  # not settings_sources: a pydantic adapter
from desktop.qt_compat import emit
from desktop.shell import ShellController
from desktop.views.live_view import LiveView
from desktop.views.partials.notice_banner import NoticeBanner
from desktop.views.partials.profile_prompt import ProfilePrompt
from desktop.views.partials.run_details import RunDetails
from desktop.views.partials.run_headline import RunHeadline
from desktop.views.partials.scroll_column import scroll_column
from desktop.views.partials.technical_disclosure import TechnicalDisclosure
from desktop.views.status_indicators import COLORS

TICK_MS = 1_000  # relative times ("3 s ago") re-rendered from the stored timestamps


def source_choice_label(source: dict[str, Any]) -> str:
    """``gh-acme (Greenhouse board)``; the bundled demo board is just "Demo board"."""
    kind = source.get("kind") or "?"
    kind_label = KIND_LABELS.get(kind, kind)
    source_id = source.get("id") or "?"
    return kind_label if source_id == kind else f"{source_id} ({kind_label})"


def source_name(source_id: str, sources: list[dict[str, Any]]) -> str:
    """A source id in the words of the sources to tick; a source no longer in Settings is
    named by its kind when the id is one (``demo_board``), else by its id."""
    for source in sources:
        if source.get("id") == source_id:
            return source_choice_label(source)
    return KIND_LABELS.get(source_id, source_id)


class PipelinesView(LiveView):
    view_keys = frozenset({PIPELINES, SETTINGS})
    discover_started = Signal(object)  # the accepted answer of run-stage discover
    profile_requested = Signal()  # "Type it in myself": the window opens Settings on it
    import_requested = Signal()   # "Import your résumé…": the window asks for the file
    sample_requested = Signal()   # "Try it with a sample profile"
    snapshot_shown = Signal(object)  # the operations snapshot now on screen (for the tray)

    def __init__(self, controller: ShellController, parent: QWidget | None = None):
        super().__init__(controller, parent)
        self.snapshot: dict[str, Any] | None = None
        self.summary = ops.summarize(None)
        self.sources: list[dict[str, Any]] = []
        self.progress_seen: list[float | None] = []  # the bar's numbers as shown, for tests
        self.cancel_requested_run: str | None = None
        self._discover_pending = False
        self._shell_block_reason: str | None = None  # the window's: services, stream, tray
        self._note_is_reason = False  # the note shows why Discover is disabled
        self.profile_saved: bool | None = None  # None until GET /v1/profile answered
        self._build()
        self._tick = QTimer(self)
        self._tick.setInterval(TICK_MS)
        self._tick.timeout.connect(self.show_times)
        # The services' states and the Temporal link live in Details. A view built after
        # start-up begins from what the controller already knows.
        for status in controller.statuses.values():
            self.details.set_service_status(status)
        if controller.info is not None:
            self.details.set_temporal_ui(getattr(controller.info, "temporal_ui_url", None))
        controller.service_status.connect(self.details.set_service_status)
        controller.stream_state.connect(self.details.set_stream_state)
        controller.runtime_ready.connect(
            lambda info: self.details.set_temporal_ui(getattr(info, "temporal_ui_url", None)))
        self.headline.show_summary(self.summary)

    # -- layout ---------------------------------------------------------------------------

    def _build(self) -> None:
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.setSpacing(6)
        self.headline = RunHeadline(self)
        self.discover_button = self.headline.discover_button
        self.cancel_button = self.headline.cancel_button
        self.discover_note = self.headline.note
        self.discover_button.clicked.connect(self.request_discover)
        self.cancel_button.clicked.connect(self.request_cancel)
        outer.addWidget(self.headline)
        self.notice = NoticeBanner(self)
        outer.addWidget(self.notice)
        self.error_label = PlainLabel(self)
        self.error_label.setObjectName("pipelinesError")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(f"color: {COLORS['bad']};")
        self.error_label.hide()
        outer.addWidget(self.error_label)

        self.scroll, content, layout = scroll_column(self, margins=(4, 4, 4, 8), spacing=10)
        outer.addWidget(self.scroll, 1)
        layout.addWidget(self._build_discover(content))
        self.details = RunDetails(content)
        layout.addWidget(self.details)
        self.technical = TechnicalDisclosure(content)
        layout.addWidget(self.technical)
        layout.addStretch(1)

    def _build_discover(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Sources to search", parent)
        box.setObjectName("discoverControls")
        self.discover_box = box
        column = QVBoxLayout(box)
        column.addWidget(self._build_profile_notice(box))
        layout = QHBoxLayout()
        layout.setSpacing(12)
        column.addLayout(layout)
        self.source_list = QListWidget(box)
        self.source_list.setObjectName("sourceList")
        self.source_list.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.source_list.setMaximumHeight(78)
        self.source_list.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.source_list.itemChanged.connect(lambda _item: self._update_discover())
        layout.addWidget(self.source_list)
        return box

    def _build_profile_notice(self, parent: QWidget) -> ProfilePrompt:
        """The first-run panel while no profile is saved (Discover alone only finds
        postings); a short marker while the saved one is the sample."""
        prompt = ProfilePrompt(parent)
        prompt.type_requested.connect(lambda: emit(self.profile_requested))
        prompt.import_requested.connect(lambda: emit(self.import_requested))
        prompt.sample_requested.connect(lambda: emit(self.sample_requested))
        self.profile_notice = prompt
        self.profile_notice_text = prompt.text
        return prompt

    def _show_profile_state(self, envelope: dict[str, Any] | None) -> None:
        # Revision 0 is the API's "nothing saved yet" (an empty default profile).
        revision = (envelope or {}).get("revision")
        self.profile_saved = None if revision is None else revision > 0
        profile = (envelope or {}).get("profile") or {}
        name = ((profile.get("resume") or {}).get("basics") or {}).get("name")
        self.profile_notice.show_state(self.profile_saved, bool(profile.get("sample")), name)

    # -- LiveView -------------------------------------------------------------------------

    async def fetch(self, client: ApiClient) -> dict[str, Any]:
        snapshot, settings, profile = await asyncio.gather(
            client.pipeline_operations(), client.settings(), client.profile())
        return {"snapshot": snapshot, "sources": settings.get("sources") or [],
                "profile": profile}

    def apply(self, result: dict[str, Any]) -> None:
        self.error_label.hide()
        self._show_profile_state(result["profile"])
        self._show_sources(result["sources"])
        self.show_snapshot(result["snapshot"])

    def show_error(self, error: Exception) -> None:
        self.error_label.setText(f"Could not refresh: {describe_api_error(error)}")
        self.error_label.show()

    def poll_interval_ms(self) -> int:
        return ops.poll_interval_ms(self.snapshot)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802 - Qt API
        # The snapshot is a live view: older than 10 s, it is refetched when shown again.
        if (self.last_refreshed_at is not None
                and time.monotonic() - self.last_refreshed_at > ops.STALE_AFTER_S):
            self.stale = True
        self._tick.start()
        super().showEvent(event)

    def hideEvent(self, event: QHideEvent) -> None:  # noqa: N802 - Qt API
        self._tick.stop()
        super().hideEvent(event)

    # -- showing a snapshot ---------------------------------------------------------------

    def show_snapshot(self, snapshot: dict[str, Any], now: datetime | None = None) -> None:
        self.snapshot = snapshot
        self.summary = ops.summarize(snapshot)
        self.headline.show_summary(self.summary)
        self._record_bar()
        self._show_actions(snapshot)
        self.details.show_snapshot(snapshot, lambda family: source_name(family, self.sources),
                                   now)
        self.technical.set_rows(ops.technical_rows(snapshot))
        self.show_times(now)
        self._update_discover()
        emit(self.snapshot_shown, snapshot)

    def offer_snapshot(self, snapshot: dict[str, Any] | None) -> None:
        """A snapshot the tray fetched: shown when it is newer than ours, so the window
        and the tray say the same thing."""
        if ops.newer(snapshot, self.snapshot):
            self.show_snapshot(snapshot)

    def show_times(self, now: datetime | None = None) -> None:
        """Re-render what ages ("3 s ago") from the stored snapshot; the timer's tick."""
        if self.snapshot is None:
            return
        now = now or datetime.now(UTC)
        self.headline.set_updated_text(ops.updated_text(self.snapshot, now))
        self.details.show_times(now)

    def show_notice(self, title: str, text: str, level: str = "info") -> None:
        """A notification shown in the window (where no notification service exists)."""
        self.notice.show_notice(title, text, level)

    def _record_bar(self) -> None:
        shown = self.headline.bar_fraction
        if not self.progress_seen or self.progress_seen[-1] != shown:
            self.progress_seen.append(shown)

    def _show_actions(self, snapshot: dict[str, Any]) -> None:
        selected = ops.execution(snapshot) or {}
        run_id = selected.get("discoverRunId")
        cancelable = self.summary.can_cancel
        if not cancelable:
            self.cancel_requested_run = None  # the run stopped (or another is selected)
        self.cancel_button.setVisible(cancelable)
        requested = cancelable and self.cancel_requested_run == run_id
        self.cancel_button.setEnabled(not requested)
        self.cancel_button.setText("Cancellation requested…" if requested else "Cancel run")

    # -- Discover launch controls ---------------------------------------------------------

    def _show_sources(self, sources: list[dict[str, Any]]) -> None:
        ids = [source.get("id") for source in sources]
        if ids == [self.source_list.item(i).data(Qt.ItemDataRole.UserRole)
                   for i in range(self.source_list.count())]:
            return  # same sources: keep the user's ticks
        self.sources = sources
        self.source_list.blockSignals(True)
        self.source_list.clear()
        for source in sources:
            label = source_choice_label(source)
            if not source.get("enabled", True):
                label += " — turned off in Settings"
            item = QListWidgetItem(label, self.source_list)
            item.setData(Qt.ItemDataRole.UserRole, source.get("id"))
            item.setFlags(item.flags() | Qt.ItemFlag.ItemIsUserCheckable)
            item.setCheckState(Qt.CheckState.Checked if source.get("enabled", True)
                               else Qt.CheckState.Unchecked)
        self.source_list.blockSignals(False)
        self._update_discover()

    def checked_source_ids(self) -> list[str]:
        return [self.source_list.item(i).data(Qt.ItemDataRole.UserRole)
                for i in range(self.source_list.count())
                if self.source_list.item(i).checkState() == Qt.CheckState.Checked]

    def set_source_checked(self, source_id: str, checked: bool) -> None:
        for i in range(self.source_list.count()):
            item = self.source_list.item(i)
            if item.data(Qt.ItemDataRole.UserRole) == source_id:
                item.setCheckState(Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked)

    def _selected_source_ids(self) -> list[str] | None:
        """None (every enabled source) when the ticks are the default selection."""
        checked = self.checked_source_ids()
        enabled = [s.get("id") for s in self.sources if s.get("enabled", True)]
        return None if checked == enabled else checked

    @property
    def discover_block_reason(self) -> str | None:
        if self._shell_block_reason is not None:
            return self._shell_block_reason
        if self.controller.client is None:
            return "Waiting for the API"
        if self._discover_pending:
            return "Starting Discover…"
        reason = ops.discover_block_reason(self.snapshot)
        if reason is None and not self.checked_source_ids():
            reason = "Tick at least one source"
        return reason

    def set_shell_block_reason(self, reason: str | None) -> None:
        """What the window knows against a Discover (services, event stream, a launch
        from the tray in flight); it comes before this view's own rules."""
        self._shell_block_reason = reason
        self._update_discover()

    def show_discover_outcome(self, text: str, *, ok: bool) -> None:
        """The answer to a Discover started elsewhere (the tray), shown like our own."""
        self._note_is_reason = False
        self._set_note(text, "ok" if ok else "bad")
        if ok:
            self._invalidate_everywhere()

    def _update_discover(self) -> None:
        reason = self.discover_block_reason
        self.discover_button.setEnabled(reason is None)
        self.discover_button.setToolTip(plain_tooltip(reason) or "Fetch postings from the ticked sources")
        if self._discover_pending:
            return
        offer = ops.recovery_gate(self.snapshot).text if self.snapshot else ""
        if reason is not None:
            # While a run is in progress the headline says so already.
            self._set_note("" if reason == ops.RUN_IN_PROGRESS else reason, "idle")
            self._note_is_reason = True
        elif offer and (self._note_is_reason or not self.discover_note.text()):
            # After an unsafe ending, proven idle: the offer of a new run.
            self._set_note(offer, "ok")
            self._note_is_reason = True
        elif self._note_is_reason:
            self._set_note("", "idle")
            self._note_is_reason = False

    def request_discover(self) -> None:
        if self.discover_block_reason is not None:
            return
        source_ids = self._selected_source_ids()
        extra = {} if source_ids is None else {"sourceIds": source_ids}
        self._discover_pending = True
        self._set_note("Starting Discover…", "idle")
        self._update_discover()
        self.controller.call(lambda client: client.run_stage("discover", **extra),
                             self._on_discover_started, self._on_discover_failed,
                             name="pipelines-discover")

    def _on_discover_started(self, accepted: dict[str, Any]) -> None:
        self._discover_pending = False
        self._note_is_reason = False
        self._set_note(describe_accepted(accepted), "ok")
        emit(self.discover_started, accepted)
        self._invalidate_everywhere()

    def _on_discover_failed(self, error: Exception) -> None:
        self._discover_pending = False
        self._note_is_reason = False
        self._set_note(describe_api_error(error), "bad")
        self._update_discover()

    def _set_note(self, text: str, tone: str) -> None:
        self.headline.set_note(text, COLORS[tone])

    # -- Cancel ---------------------------------------------------------------------------

    def request_cancel(self) -> None:
        if self.snapshot is None or not ops.can_cancel(self.snapshot):
            return
        run_id = self.snapshot["execution"]["discoverRunId"]
        self.cancel_requested_run = run_id
        self.cancel_button.setEnabled(False)
        self.cancel_button.setText("Cancellation requested…")
        self.controller.call(lambda client: client.cancel_run(run_id),
                             lambda _answer: self._invalidate_everywhere(),
                             self._on_cancel_failed, name="pipelines-cancel")

    def _on_cancel_failed(self, error: Exception) -> None:
        self.cancel_requested_run = None
        self.cancel_button.setEnabled(True)
        self.cancel_button.setText("Cancel run")
        self.show_error(error)

    def _invalidate_everywhere(self) -> None:
        # The stop or start request must not leave the runs list or this snapshot stale.
        emit(self.controller.views_invalidated, frozenset({PIPELINES, RUNS}))
