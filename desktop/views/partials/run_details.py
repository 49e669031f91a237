"""Pipelines' "Details" disclosure (collapsed by default): the full operations snapshot for
whoever wants it — sources and provider facts, the steps after the sources, the three
scopes' per-stage counts, worker capacity and what it works on now, approximate task-queue
observations, per-stage time estimates, run-history coverage, the services' states and
the Temporal Web UI link. Every word comes from desktop/presenters/operations.py.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from datetime import datetime
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from desktop.plain_text import PlainLabel, plain_tooltip, rich_label
from desktop.presenters import operations as ops
from desktop.views.partials.disclosure import Disclosure
from desktop.views.partials.stage_count_grid import StageCountGrid
from desktop.views.status_indicators import COLORS, SERVICE_STATES, STREAM_STATES

MUTED = "color: palette(placeholder-text);"
SERVICE_TITLES = {"temporal": "Temporal", "worker": "Worker", "api": "API"}


def _label(parent: QWidget, name: str, *, wrap: bool = True, muted: bool = False,
           rich: bool = False) -> QLabel:
    """A selectable label, plain text unless ``rich`` (its text escaped, ``_lines`` /
    ``_table``). Multi-line lists are built with <br> and do not wrap: a wrapping rich-text
    label inside nested layouts may be given too little height and overlap."""
    label = rich_label(QLabel(parent)) if rich else PlainLabel(parent)
    label.setObjectName(name)
    label.setWordWrap(wrap)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if muted:
        label.setStyleSheet(MUTED)
    return label


def _group(parent: QWidget, title: str, *widgets: QWidget) -> QGroupBox:
    """A titled box with ``widgets`` stacked at its top."""
    box = QGroupBox(title, parent)
    layout = QVBoxLayout(box)
    for widget in widgets:
        widget.setParent(box)
        layout.addWidget(widget)
    layout.addStretch(1)
    return box


def _lines(lines: list[str]) -> str:
    return "<br>".join(html.escape(line) for line in lines)


def _table(rows: list[tuple[str, str]]) -> str:
    cells = "".join(f"<tr><td style='padding-right:12px'>{html.escape(a)}</td>"
                    f"<td>{html.escape(b)}</td></tr>" for a, b in rows)
    return f"<table>{cells}</table>" if rows else ""


class RunDetails(Disclosure):
    def __init__(self, parent: QWidget | None = None):
        super().__init__("Details", parent, name="runDetails")
        self.snapshot: dict[str, Any] | None = None
        self.services: dict[str, str] = {}
        self.service_notes: dict[str, str] = {}  # per service: detail and pid (tooltip)
        self.stream = "offline"
        self.temporal_ui_url: str | None = None
        layout = self.body_layout
        layout.setSpacing(10)
        row = QHBoxLayout()
        row.setSpacing(10)
        row.addWidget(self._build_families(), 3)
        row.addWidget(self._build_reconciliation(), 2)
        layout.addLayout(row)
        layout.addWidget(self._build_scopes())
        row = QHBoxLayout()
        row.setSpacing(10)
        row.addWidget(self._build_capacity(), 3)
        row.addWidget(self._build_eta(), 2)
        layout.addLayout(row)
        layout.addWidget(self._build_services())

    # -- layout ---------------------------------------------------------------------------

    def _build_families(self) -> QGroupBox:
        self.family_text = _label(self.body, "familyProgressText")
        self.family_list = _label(self.body, "familyList", wrap=False, muted=True, rich=True)
        self.resumed_label = _label(self.body, "resumedLabel")
        self.provider_label = _label(self.body, "providerLabel", wrap=False, muted=True,
                                     rich=True)
        return _group(self.body, "Sources", self.family_text, self.family_list,
                      self.resumed_label, self.provider_label)

    def _build_reconciliation(self) -> QGroupBox:
        self.reconciliation_label = _label(self.body, "reconciliationLabel", wrap=False, rich=True)
        self.coverage_label = _label(self.body, "coverageLabel", muted=True)
        return _group(self.body, "After the sources", self.reconciliation_label,
                      self.coverage_label)

    def _build_scopes(self) -> QGroupBox:
        box = QGroupBox("Work by stage", self.body)
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

    def _build_capacity(self) -> QGroupBox:
        self.freshness_label = _label(self.body, "freshnessLabel")
        self.slots_label = _label(self.body, "slotsLabel")
        self.active_stages_label = _label(self.body, "activeStagesLabel")
        self.active_items_label = _label(self.body, "activeItemsLabel", muted=True)
        self.active_list_label = _label(self.body, "activeListLabel", wrap=False, muted=True,
                                        rich=True)
        # Long infrastructure lines wrap: a non-wrapping one widened the window past 900 px.
        self.queues_label = _label(self.body, "taskQueuesLabel", muted=True, rich=True)
        self.queues_label.setToolTip("Approximate infrastructure observations from Temporal, "
                                     "not job counts")
        return _group(self.body, "Worker capacity", self.freshness_label, self.slots_label,
                      self.active_stages_label, self.active_items_label,
                      self.active_list_label, self.queues_label)

    def _build_eta(self) -> QGroupBox:
        self.eta_label = _label(self.body, "etaLabel")
        # Per stage only the range or "No ETA" (narrow); why there is none is said once
        # below, wrapped, and in full in the tooltip.
        self.stage_eta_label = _label(self.body, "stageEtaLabel", wrap=False, muted=True,
                                      rich=True)
        self.stage_eta_reason = _label(self.body, "stageEtaReason", muted=True)
        caveat = _label(self.body, "etaCaveat", muted=True)
        caveat.setText("Estimates from recent work, not promises.")
        return _group(self.body, "Time estimates", self.eta_label, self.stage_eta_label,
                      self.stage_eta_reason, caveat)

    def _build_services(self) -> QGroupBox:
        self.services_label = _label(self.body, "servicesLabel", rich=True)
        self.temporal_label = _label(self.body, "temporalUiDetail", rich=True)
        self.temporal_label.setOpenExternalLinks(True)
        self.temporal_label.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextBrowserInteraction)
        box = _group(self.body, "Services", self.services_label, self.temporal_label)
        self._show_services()
        return box

    # -- showing --------------------------------------------------------------------------

    def show_snapshot(self, snapshot: dict[str, Any],
                      source_name: Callable[[str], str], now: datetime | None = None) -> None:
        self.snapshot = snapshot
        self._show_families(snapshot, source_name)
        self.reconciliation_label.setText(_table(ops.reconciliation_lines(snapshot))
                                          or "No Discover run yet.")
        self.coverage_label.setText(ops.coverage_text(snapshot))
        for scope, grid in self.scope_grids.items():
            grid.set_counts(ops.scope_counts(snapshot, scope),
                            ops.scope_unavailable_text(snapshot, scope))
        self._show_capacity(snapshot)
        self.eta_label.setText(ops.overall_eta_text(snapshot))
        self._show_stage_etas(snapshot)
        self.show_times(now)

    def show_times(self, now: datetime | None = None) -> None:
        """The texts that age (a timer calls this every second)."""
        if self.snapshot is not None:
            self.freshness_label.setText(ops.freshness_text(self.snapshot, now))

    def _show_families(self, snapshot: dict[str, Any], source_name: Callable[[str], str]) -> None:
        self.family_text.setText(ops.sources_text(snapshot))
        self.family_list.setText(_lines(ops.family_lines(snapshot, source_name)))
        resumed = ops.resumed_text(snapshot)
        self.resumed_label.setVisible(resumed is not None)
        self.resumed_label.setText(resumed or "")
        provider = ops.provider_lines(snapshot)
        self.provider_label.setVisible(bool(provider))
        self.provider_label.setText(_lines(provider))

    def _show_capacity(self, snapshot: dict[str, Any]) -> None:
        self.slots_label.setText(ops.slots_text(snapshot))
        self.active_stages_label.setText(ops.active_stage_text(snapshot))
        self.active_items_label.setText(ops.active_items_text(snapshot))
        active = ops.active_item_lines(snapshot)
        self.active_list_label.setVisible(bool(active))
        self.active_list_label.setText(_lines(active))
        self.queues_label.setText(_lines(ops.task_queue_lines(snapshot)))

    def _show_stage_etas(self, snapshot: dict[str, Any]) -> None:
        self.stage_eta_label.setText(_table(ops.stage_eta_short_rows(snapshot)))
        self.stage_eta_label.setToolTip(plain_tooltip("\n".join(
            f"{stage}: {text}" for stage, text in ops.stage_eta_rows(snapshot))))
        reasons = ops.stage_eta_reasons(snapshot)
        self.stage_eta_reason.setVisible(bool(reasons))
        self.stage_eta_reason.setText(f"No ETA: {'; '.join(reasons)}." if reasons else "")

    # -- services (from the shell, not the snapshot) --------------------------------------

    def set_service_status(self, status) -> None:
        """A ``ServiceStatus``: its state in the text; why it restarts (or the external
        address) and the process id in the tooltip."""
        self.services[status.name] = status.state
        pid = status.pid if status.state in ("starting", "ready") else None
        self.service_notes[status.name] = "".join(
            ([f" ({status.detail})"] if status.detail else [])
            + ([f", process id (pid) {pid}"] if pid else []))
        self._show_services()

    def set_stream_state(self, state: str) -> None:
        self.stream = state
        self._show_services()

    def set_temporal_ui(self, url: str | None) -> None:
        self.temporal_ui_url = url
        self._show_services()

    def _show_services(self) -> None:
        parts = []
        for name, title in SERVICE_TITLES.items():
            tone, words = SERVICE_STATES.get(self.services.get(name, "waiting"), ("idle", "?"))
            parts.append(f"<span style='color:{COLORS[tone]}'>●</span> {title} {words}")
        tone, words = STREAM_STATES.get(self.stream, ("idle", self.stream))
        parts.append(f"<span style='color:{COLORS[tone]}'>●</span> Live updates {words}")
        self.services_label.setText(" &nbsp; ".join(parts))
        self.services_label.setToolTip(plain_tooltip("\n".join(
            f"{title}: {SERVICE_STATES.get(self.services.get(name, 'waiting'), ('', '?'))[1]}"
            f"{self.service_notes.get(name, '')}" for name, title in SERVICE_TITLES.items())))
        if self.temporal_ui_url:
            url = html.escape(self.temporal_ui_url)
            self.temporal_label.setText(f"Temporal Web UI: <a href='{url}'>{url}</a>")
        else:
            self.temporal_label.setText("Temporal Web UI: off (Settings → Advanced turns it on)")
