"""Insights: what is working (``GET /v1/insights``). Reply rate, interview rate, the
median time to the first reply and ghosting, overall and by source, fit score, role and
résumé template, as a chart and a table. A group under 5 applications shows "not enough
applications yet" instead of its figures; the caption says how ghosting is counted."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QWidget,
)

from desktop.client import ApiClient
from desktop.event_router import INSIGHTS
from desktop.formatting import describe_api_error
from desktop.plain_text import PlainLabel, rich_label
from desktop.presenters.applications import figure_cells, first_reply_clause, percent_text
from desktop.shell import ShellController
from desktop.views.live_view import LiveView
from desktop.views.partials.rate_chart import RateChart
from desktop.views.partials.scroll_column import fill_with_scroll_column
from desktop.views.partials.settings_sources import KIND_LABELS
from desktop.views.status_indicators import COLORS

RATES = [("Reply rate", "replyRate"), ("Interview rate", "interviewRate"),
         ("Ghosted", "ghostedRate")]
COLUMNS = ["Group", "Applications", "Reply rate", "Interview rate", "First reply after",
           "Ghosted"]
TEMPLATE_LABELS = {"classic": "Classic", "compact": "Compact", "unknown": "Not recorded"}


def group_label(dimension: str, label: str) -> str:
    if dimension == "source":
        return KIND_LABELS.get(label, label)
    if dimension == "resumeTemplate":
        return TEMPLATE_LABELS.get(label, label)
    return label


def overall_text(overall: dict[str, Any]) -> str:
    n = overall.get("applications") or 0
    if overall.get("withheld"):
        return (f"{n} application{'s' if n != 1 else ''} so far: "
                f"{overall['withheld']} (figures appear at 5).")
    return (f"{n} applications: {percent_text(overall.get('replyRate'))} got a reply, "
            f"{percent_text(overall.get('interviewRate'))} led to an interview; "
            f"{first_reply_clause(overall.get('medianDaysToFirstReply'))}; "
            f"{percent_text(overall.get('ghostedRate'))} ghosted.")


class InsightsView(LiveView):
    view_keys = frozenset({INSIGHTS})

    def __init__(self, controller: ShellController, parent: QWidget | None = None):
        super().__init__(controller, parent)
        self.data: dict[str, Any] | None = None
        _scroll, body, layout = fill_with_scroll_column(self, margins=(0, 6, 0, 0), spacing=8,
                                                        wrap_width=True)
        self.headline = rich_label(QLabel("What is working: not loaded yet", body))
        self.headline.setObjectName("insightsHeadline")
        self.headline.setWordWrap(True)
        self.caption = PlainLabel("", body)
        self.caption.setObjectName("ghostingCaption")
        self.caption.setWordWrap(True)
        self.caption.setStyleSheet(f"color: {COLORS['idle']};")
        choose = QHBoxLayout()
        self.dimension = QComboBox(body)
        self.dimension.setObjectName("insightsDimension")
        self.rate = QComboBox(body)
        self.rate.setObjectName("insightsRate")
        for title, key in RATES:
            self.rate.addItem(title, key)
        self.dimension.currentIndexChanged.connect(lambda _i: self._show())
        self.rate.currentIndexChanged.connect(lambda _i: self._show())
        choose.addWidget(QLabel("By:", body))
        choose.addWidget(self.dimension)
        choose.addSpacing(12)
        choose.addWidget(QLabel("Chart:", body))
        choose.addWidget(self.rate)
        choose.addStretch(1)
        self.chart = RateChart(body)
        self.chart.setObjectName("insightsChart")
        self.table = QTableWidget(0, len(COLUMNS), body)
        self.table.setObjectName("insightsTable")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.message = PlainLabel("", body)
        self.message.setWordWrap(True)
        for widget in (self.headline, self.caption):
            layout.addWidget(widget)
        layout.addLayout(choose)
        layout.addWidget(self.chart)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.message)

    async def fetch(self, client: ApiClient) -> dict[str, Any]:
        return await client.insights()

    def apply(self, result: dict[str, Any]) -> None:
        self.data = result
        self.message.setText("")
        if self.dimension.count() == 0:
            for dimension in result.get("dimensions") or []:
                self.dimension.addItem(dimension["title"], dimension["key"])
        self.headline.setText(f"<b>What is working</b> — {html.escape(overall_text(result['overall']))}")
        self.caption.setText(result.get("caption") or "")
        self._show()

    def show_error(self, error: Exception) -> None:
        self.message.setText(f"Could not load Insights: {describe_api_error(error)}")
        self.message.setStyleSheet(f"color: {COLORS['bad']};")

    def current_groups(self) -> tuple[str, list[dict[str, Any]]]:
        key = self.dimension.currentData()
        for dimension in (self.data or {}).get("dimensions") or []:
            if dimension["key"] == key:
                return key, dimension["groups"]
        return key or "", []

    def _show(self) -> None:
        dimension, groups = self.current_groups()
        rate_key, rate_title = self.rate.currentData(), self.rate.currentText()
        bars = []
        for group in groups:
            label = group_label(dimension, group["label"])
            withheld = group.get("withheld")
            value = None if withheld else group.get(rate_key)
            bars.append((label, value, withheld or percent_text(value)))
        self.chart.set_bars(f"{rate_title} by {self.dimension.currentText().lower()}", bars)
        self.table.clearSpans()
        self.table.setRowCount(len(groups))
        for row, group in enumerate(groups):
            cells = [group_label(dimension, group["label"]), *figure_cells(group)]
            for column, text in enumerate(cells):
                self.table.setItem(row, column, QTableWidgetItem(text))
            if group.get("withheld"):  # one sentence across the figures it replaces
                self.table.setSpan(row, 2, 1, len(COLUMNS) - 2)
