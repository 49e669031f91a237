"""Pipelines: the operations snapshot (``GET /v1/pipeline/operations``) as widgets.

What the user sees, top to bottom: the selected Discover run's phase with Cancel (only
while it is in progress and discovering / draining) and, after an unsafe ending, "Set up a
new Discover run" (only when no work is running; it only focuses the Discover controls);
the run-history coverage; the source-family progress bar (the monotonic spine) with
provider facts and "N resumed"; reconciliation; the three scopes' per-stage counts;
capacity (slots, active items, approximate task-queue observations); the ETA as a range
with confidence or "No ETA" with its reason; the Discover launch controls (with the
first-run profile panel while no candidate profile is saved — Discover alone only finds
postings — and a marker while the saved one is the sample); and the identifiers in a
collapsed technical disclosure.

Timing follows the spec's live query: stale after 10 s, polled every 15 s while the
selected run is discovering or draining and every 60 s otherwise, never while hidden, and
invalidated by SSE events. All words come from ``desktop.presenters.operations``.
"""

from __future__ import annotations

import asyncio
import html
import time
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.client import ApiClient
from desktop.event_router import PIPELINES, RUNS, SETTINGS
from desktop.formatting import describe_accepted, describe_api_error
from desktop.presenters import operations as ops
from desktop.qt_compat import emit
from desktop.shell import ShellController
from desktop.views.live_view import LiveView
from desktop.views.partials.profile_prompt import ProfilePrompt
from desktop.views.partials.scroll_column import fill_with_scroll_column
from desktop.views.partials.settings_sources import KIND_LABELS
from desktop.views.partials.stage_count_grid import StageCountGrid
from desktop.views.partials.technical_disclosure import TechnicalDisclosure
from desktop.views.status_indicators import COLORS

PRIMARY_BUTTON = """
QPushButton { background: #1f6feb; color: white; border: 1px solid #1a5fcc;
              border-radius: 5px; padding: 6px 16px; font-weight: 600; }
QPushButton:hover { background: #2a78f0; }
QPushButton:pressed { background: #1a5fcc; }
QPushButton:disabled { background: #c9d3df; border-color: #b9c4d1; color: #f4f6f8; }
"""
MUTED = "color: palette(placeholder-text);"
def _label(parent: QWidget, name: str, *, wrap: bool = True, muted: bool = False) -> QLabel:
    """A selectable label. Multi-line lists are built with <br> and do not wrap: a wrapping
    rich-text label inside nested layouts may be given too little height and overlap."""
    label = QLabel(parent)
    label.setObjectName(name)
    label.setWordWrap(wrap)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if muted:
        label.setStyleSheet(MUTED)
    return label


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
    setup_focused = Signal()       # "Set up a new Discover run" moved focus to the controls
    discover_started = Signal(object)  # the accepted answer of run-stage discover
    profile_requested = Signal()  # "Type it in myself": the window opens Settings on it
    import_requested = Signal()   # "Import your résumé…": the window asks for the file
    sample_requested = Signal()   # "Try it with a sample profile"

    def __init__(self, controller: ShellController, parent: QWidget | None = None):
        super().__init__(controller, parent)
        self.snapshot: dict[str, Any] | None = None
        self.sources: list[dict[str, Any]] = []
        self.progress_seen: list[tuple[int, int]] = []  # (value, maximum) as shown, for tests
        self.cancel_requested_run: str | None = None
        self._discover_pending = False
        self._shell_block_reason: str | None = None  # the window's: services, stream, tray
        self._note_is_reason = False  # the note shows why Discover is disabled
        self.profile_saved: bool | None = None  # None until GET /v1/profile answered
        self._build()

    # -- layout ---------------------------------------------------------------------------

    def _build(self) -> None:
        self.scroll, content, layout = fill_with_scroll_column(self, margins=(4, 8, 4, 8), spacing=10)
        layout.addLayout(self._build_header(content))
        self.error_label = _label(content, "pipelinesError")
        self.error_label.setStyleSheet(f"color: {COLORS['bad']};")
        self.error_label.hide()
        layout.addWidget(self.error_label)

        row = QHBoxLayout()
        row.setSpacing(10)
        row.addWidget(self._build_families(content), 3)
        row.addWidget(self._build_reconciliation(content), 2)
        layout.addLayout(row)
        layout.addWidget(self._build_scopes(content))
        row = QHBoxLayout()
        row.setSpacing(10)
        row.addWidget(self._build_capacity(content), 3)
        row.addWidget(self._build_eta(content), 2)
        layout.addLayout(row)
        layout.addWidget(self._build_discover(content))
        self.technical = TechnicalDisclosure(content)
        layout.addWidget(self.technical)
        layout.addStretch(1)

    def _build_header(self, parent: QWidget) -> QHBoxLayout:
        header = QHBoxLayout()
        header.setSpacing(12)
        text = QVBoxLayout()
        text.setSpacing(2)
        self.phase_label = _label(parent, "phaseLabel", wrap=False)
        self.phase_label.setText("Loading…")  # until the first snapshot arrives
        font = self.phase_label.font()
        font.setPointSizeF(font.pointSizeF() * 1.35)
        font.setBold(True)
        self.phase_label.setFont(font)
        self.phase_hint = _label(parent, "phaseHint", muted=True)
        self.coverage_label = _label(parent, "coverageLabel")
        self.updated_label = _label(parent, "updatedLabel", wrap=False, muted=True)
        self.recovery_label = _label(parent, "recoveryLabel")
        self.recovery_label.hide()
        for widget in (self.phase_label, self.phase_hint, self.coverage_label,
                       self.recovery_label):
            text.addWidget(widget)
        header.addLayout(text, 1)
        self.cancel_button = QPushButton("Cancel run", parent)
        self.cancel_button.setObjectName("cancelRunButton")
        self.cancel_button.setToolTip("Stop the selected Discover run")
        self.cancel_button.clicked.connect(self.request_cancel)
        self.cancel_button.hide()
        self.setup_button = QPushButton("Set up a new Discover run", parent)
        self.setup_button.setObjectName("setupDiscoverButton")
        self.setup_button.clicked.connect(self.focus_discover_controls)
        self.setup_button.hide()
        header.addWidget(self.updated_label, 0, Qt.AlignmentFlag.AlignTop)
        header.addWidget(self.cancel_button, 0, Qt.AlignmentFlag.AlignTop)
        header.addWidget(self.setup_button, 0, Qt.AlignmentFlag.AlignTop)
        return header

    def _build_families(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Sources", parent)
        layout = QVBoxLayout(box)
        self.family_bar = QProgressBar(box)
        self.family_bar.setObjectName("familyProgress")
        self.family_bar.setTextVisible(True)
        self.family_bar.hide()  # until a snapshot has a number to show
        self.family_text = _label(box, "familyProgressText")
        self.family_list = _label(box, "familyList", wrap=False, muted=True)
        self.resumed_label = _label(box, "resumedLabel")
        self.provider_label = _label(box, "providerLabel", wrap=False, muted=True)
        for widget in (self.family_bar, self.family_text, self.family_list,
                       self.resumed_label, self.provider_label):
            layout.addWidget(widget)
        layout.addStretch(1)
        return box

    def _build_reconciliation(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox("After the sources", parent)
        layout = QVBoxLayout(box)
        self.reconciliation_label = _label(box, "reconciliationLabel", wrap=False)
        self.reconciliation_label.setTextFormat(Qt.TextFormat.RichText)
        layout.addWidget(self.reconciliation_label)
        layout.addStretch(1)
        return box

    def _build_scopes(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Work by stage", parent)
        layout = QVBoxLayout(box)
        self.scope_tabs = QTabWidget(box)
        self.scope_tabs.setObjectName("scopeTabs")
        self.scope_grids: dict[str, StageCountGrid] = {}
        for scope in ops.SCOPES:
            grid = StageCountGrid(self.scope_tabs)
            grid.setObjectName(f"scope_{scope}")
            self.scope_grids[scope] = grid
            self.scope_tabs.addTab(grid, ops.SCOPE_LABELS[scope])
        # As tall as the tab bar plus the five rows: no empty band under the last row.
        self.scope_tabs.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        layout.addWidget(self.scope_tabs)
        return box

    def _build_capacity(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Worker capacity", parent)
        layout = QVBoxLayout(box)
        self.freshness_label = _label(box, "freshnessLabel")
        self.slots_label = _label(box, "slotsLabel")
        self.active_items_label = _label(box, "activeItemsLabel")
        self.active_list_label = _label(box, "activeListLabel", wrap=False, muted=True)
        self.active_stages_label = _label(box, "activeStagesLabel", wrap=False, muted=True)
        # Long infrastructure lines wrap: a non-wrapping one widened the window past 900 px.
        self.queues_label = _label(box, "taskQueuesLabel", muted=True)
        self.queues_label.setToolTip("Approximate infrastructure observations from Temporal, "
                                     "not job counts")
        for widget in (self.freshness_label, self.slots_label, self.active_items_label,
                       self.active_list_label, self.active_stages_label, self.queues_label):
            layout.addWidget(widget)
        layout.addStretch(1)
        return box

    def _build_eta(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Time remaining", parent)
        layout = QVBoxLayout(box)
        self.eta_label = _label(box, "etaLabel")
        font = self.eta_label.font()
        font.setPointSizeF(font.pointSizeF() * 1.15)
        self.eta_label.setFont(font)
        # Per stage only the range or "No ETA" (narrow); why there is none is said once
        # below, wrapped, and in full in the tooltip.
        self.stage_eta_label = _label(box, "stageEtaLabel", wrap=False, muted=True)
        self.stage_eta_reason = _label(box, "stageEtaReason", muted=True)
        caveat = _label(box, "etaCaveat", muted=True)
        caveat.setText("An estimate from recent work, not a promise.")
        for widget in (self.eta_label, self.stage_eta_label, self.stage_eta_reason, caveat):
            layout.addWidget(widget)
        layout.addStretch(1)
        return box

    def _build_discover(self, parent: QWidget) -> QGroupBox:
        box = QGroupBox("Start a Discover run", parent)
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
        side = QVBoxLayout()
        self.discover_button = QPushButton("Discover", box)
        self.discover_button.setObjectName("pipelinesDiscoverButton")
        self.discover_button.setMinimumWidth(120)
        self.discover_button.setStyleSheet(PRIMARY_BUTTON)
        self.discover_button.clicked.connect(self.request_discover)
        self.discover_note = _label(box, "discoverNote", muted=True)
        side.addWidget(self.discover_button, 0, Qt.AlignmentFlag.AlignLeft)
        side.addWidget(self.discover_note)
        side.addStretch(1)
        layout.addWidget(self.source_list, 3)
        layout.addLayout(side, 2)
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
        super().showEvent(event)

    # -- showing a snapshot ---------------------------------------------------------------

    def show_snapshot(self, snapshot: dict[str, Any]) -> None:
        self.snapshot = snapshot
        self._show_phase(snapshot)
        self._show_families(snapshot)
        self._show_reconciliation(snapshot)
        for scope, grid in self.scope_grids.items():
            grid.set_counts(ops.scope_counts(snapshot, scope),
                            ops.scope_unavailable_text(snapshot, scope))
        self._show_capacity(snapshot)
        self.eta_label.setText(ops.overall_eta_text(snapshot))
        self._show_stage_etas(snapshot)
        self.technical.set_rows(ops.technical_rows(snapshot))
        self.updated_label.setText(ops.updated_text(snapshot))
        self._update_discover()

    def _show_stage_etas(self, snapshot: dict[str, Any]) -> None:
        rows = ops.stage_eta_short_rows(snapshot)
        cells = "".join(f"<tr><td style='padding-right:12px'>{html.escape(stage)}</td>"
                        f"<td>{html.escape(text)}</td></tr>" for stage, text in rows)
        self.stage_eta_label.setText(f"<table>{cells}</table>" if rows else "")
        self.stage_eta_label.setToolTip("\n".join(f"{stage}: {text}"
                                                  for stage, text in ops.stage_eta_rows(snapshot)))
        reasons = ops.stage_eta_reasons(snapshot)
        self.stage_eta_reason.setVisible(bool(reasons))
        self.stage_eta_reason.setText(f"No ETA: {'; '.join(reasons)}." if reasons else "")

    def _show_phase(self, snapshot: dict[str, Any]) -> None:
        phase = ops.phase(snapshot)
        self.phase_label.setText(ops.phase_label(phase))
        self.phase_label.setStyleSheet(f"color: {COLORS[ops.phase_tone(phase)]};")
        self.phase_hint.setText(ops.PHASE_HINTS.get(phase or "", "Start one below."))
        self.coverage_label.setText(ops.coverage_text(snapshot))
        tone = "busy" if ops.history_restoring(snapshot) else "idle"
        self.coverage_label.setStyleSheet(f"color: {COLORS[tone]};")
        selected = ops.execution(snapshot) or {}
        run_id = selected.get("discoverRunId")
        cancelable = ops.can_cancel(snapshot)
        if not cancelable:
            self.cancel_requested_run = None  # the run stopped (or another is selected)
        self.cancel_button.setVisible(cancelable)
        requested = cancelable and self.cancel_requested_run == run_id
        self.cancel_button.setEnabled(not requested)
        self.cancel_button.setText("Cancellation requested…" if requested else "Cancel run")
        gate = ops.recovery_gate(snapshot)
        self.setup_button.setVisible(gate.kind != "not_needed")
        self.setup_button.setEnabled(gate.kind == "ready")
        self.setup_button.setToolTip(gate.text)
        self.recovery_label.setVisible(gate.kind != "not_needed")
        self.recovery_label.setText(gate.text)
        self.recovery_label.setStyleSheet(
            f"color: {COLORS['ok' if gate.kind == 'ready' else 'busy']};")

    def _show_families(self, snapshot: dict[str, Any]) -> None:
        progress = ops.family_progress(snapshot)
        # No number may be shown (no run yet, progress unknown or hidden while history is
        # restored): no bar at all, an empty one reads like a stuck run; the text says why.
        self.family_bar.setVisible(progress.value is not None)
        if progress.value is None:
            self.family_bar.setRange(0, 1)
            self.family_bar.setValue(0)
            self.family_bar.setFormat("")
        else:
            self.family_bar.setRange(0, progress.maximum)
            self.family_bar.setValue(progress.value)
            self.family_bar.setFormat("%p%")
            if not self.progress_seen or self.progress_seen[-1] != (progress.value,
                                                                    progress.maximum):
                self.progress_seen.append((progress.value, progress.maximum))
        self.family_text.setText(progress.text)
        lines = ops.family_lines(snapshot, lambda family: source_name(family, self.sources))
        self.family_list.setText("<br>".join(html.escape(line) for line in lines))
        resumed = ops.resumed_text(snapshot)
        self.resumed_label.setVisible(resumed is not None)
        self.resumed_label.setText(resumed or "")
        provider = ops.provider_lines(snapshot)
        self.provider_label.setVisible(bool(provider))
        self.provider_label.setText("<br>".join(html.escape(line) for line in provider))

    def _show_reconciliation(self, snapshot: dict[str, Any]) -> None:
        rows = ops.reconciliation_lines(snapshot)
        cells = "".join(f"<tr><td style='padding-right:12px'>{html.escape(label)}</td>"
                        f"<td>{html.escape(text)}</td></tr>" for label, text in rows)
        self.reconciliation_label.setText(f"<table>{cells}</table>" if rows
                                          else "No Discover run yet.")

    def _show_capacity(self, snapshot: dict[str, Any]) -> None:
        self.freshness_label.setText(ops.freshness_text(snapshot))
        self.slots_label.setText(ops.slots_text(snapshot))
        self.active_items_label.setText(ops.active_items_text(snapshot))
        active = ops.active_item_lines(snapshot)
        self.active_list_label.setVisible(bool(active))
        self.active_list_label.setText("<br>".join(html.escape(line) for line in active))
        self.active_stages_label.setText(ops.active_stage_text(snapshot))
        self.queues_label.setText("<br>".join(html.escape(line)
                                              for line in ops.task_queue_lines(snapshot)))

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
        self.discover_button.setToolTip(reason or "Fetch postings from the ticked sources")
        if self._discover_pending:
            return
        if reason is not None:
            self._set_note(reason, "idle")
            self._note_is_reason = True
        elif self._note_is_reason:
            self._set_note("Ready: tick the sources to search and press Discover.", "idle")
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
        self.discover_note.setText(text)
        self.discover_note.setStyleSheet(f"color: {COLORS[tone]};")

    def focus_discover_controls(self) -> None:
        """Only selects and focuses the launch controls; never starts anything."""
        self.scroll.ensureWidgetVisible(self.discover_box)
        target = self.source_list if self.source_list.count() else self.discover_button
        target.setFocus(Qt.FocusReason.OtherFocusReason)
        emit(self.setup_focused)

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
