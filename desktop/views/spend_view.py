"""Spend: today's estimated LLM cost against the daily ceiling, the last 30 days, today's
cost by model, and the ceiling itself (edited here, saved through PATCH /v1/settings).

The spend day is the UTC day (as the ledger keeps it); the view says when it resets in the
user's local time. Amounts are estimates from per-model rates, and the view says so.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

from PySide6.QtCore import QPointF, QRectF, QSize, QSortFilterProxyModel, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSizePolicy,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from desktop.client import ApiClient
from desktop.event_router import SETTINGS, SPEND
from desktop.formatting import describe_api_error
from desktop.models.keyed_table_model import Column, KeyedTableModel, SortRole
from desktop.plain_text import PlainLabel, rich_label
from desktop.presenters.llm import model_name, provider_name
from desktop.qt_compat import emit
from desktop.shell import ShellController
from desktop.theme import notice_style
from desktop.views.live_view import LiveView
from desktop.views.partials.scroll_column import fill_with_scroll_column
from desktop.views.status_indicators import COLORS

CHART_DAYS = 30
NEAR_CEILING = 0.8
MAX_CEILING = Decimal(100_000)
POLL_MS = 60_000  # the spend day rolls over at UTC midnight without an event
WHAT_STOPS = ("New job preparation (scoring, resume tailoring, cover letters, PDFs), contact "
              "research and the apply loop will not start until then. Runs already going "
              "finish; discovery keeps working.")


def money(value: Any) -> str:
    return "—" if value is None else f"${Decimal(str(value)):,.2f}"


def local_reset_time(resets_at: str | None) -> str:
    if not resets_at:
        return "unknown"
    moment = datetime.fromisoformat(resets_at.replace("Z", "+00:00")).astimezone()
    return moment.strftime("%H:%M") + " your time"


def parse_ceiling(text: str) -> tuple[Decimal | None, str | None]:
    """(value, None) for a valid ceiling, (None, message) otherwise."""
    cleaned = text.strip().lstrip("$").replace(",", "")
    if not cleaned:
        return None, "Enter an amount in dollars; 0 means no limit."
    try:
        value = Decimal(cleaned)
    except InvalidOperation:
        return None, "That is not an amount. Use digits, e.g. 25 or 7.50."
    if not value.is_finite() or value < 0:
        return None, "The ceiling cannot be negative. 0 means no limit."
    if value > MAX_CEILING:
        return None, f"The largest ceiling is ${MAX_CEILING:,}."
    if value != value.quantize(Decimal("0.01")):
        return None, "Use at most two decimals (cents)."
    return value, None


def day_series(by_day: list[dict[str, Any]], today: str, days: int = CHART_DAYS
               ) -> list[tuple[str, float]]:
    """One (day, cost) per UTC day, oldest first. A day without ledger rows had no model
    calls: every call is recorded, so its spend is a real $0, not an unknown."""
    costs = {row["day"]: float(row["costUsd"]) for row in by_day}
    end = date.fromisoformat(today)
    series = []
    for back in range(days - 1, -1, -1):
        day = (end - timedelta(days=back)).isoformat()
        series.append((day, costs.get(day, 0.0)))
    return series


def fill_tone(today: dict[str, Any]) -> str:
    if today.get("unlimited"):
        return "ok"
    if today.get("exhausted"):
        return "bad"
    ceiling = float(today.get("ceilingUsd") or 0)
    spent = float(today.get("spentUsd") or 0)
    return "busy" if ceiling and spent / ceiling >= NEAR_CEILING else "ok"


class BudgetBar(QWidget):
    """Today's spend as a filled share of the ceiling (a neutral track when unlimited)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.fraction: float | None = None
        self.tone = "ok"
        self.setMinimumHeight(18)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)

    def set_value(self, fraction: float | None, tone: str) -> None:
        self.fraction, self.tone = fraction, tone
        self.update()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(300, 18)

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802 - Qt API
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        rect = QRectF(self.rect()).adjusted(0.5, 0.5, -0.5, -0.5)
        painter.setPen(QPen(self.palette().color(QPalette.ColorRole.Mid), 1))
        painter.setBrush(self.palette().color(QPalette.ColorRole.Base))
        painter.drawRoundedRect(rect, 5, 5)
        if self.fraction:
            filled = QRectF(rect)
            filled.setWidth(max(rect.width() * min(self.fraction, 1.0), 6))
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(COLORS[self.tone]))
            painter.drawRoundedRect(filled, 5, 5)
        painter.end()


class SpendChart(QWidget):
    """The last 30 days as bars, painted with QPainter; today's ceiling as a dashed line."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.series: list[tuple[str, float]] = []
        self.ceiling: float | None = None
        self.setMinimumHeight(150)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)

    def set_data(self, series: list[tuple[str, float]], ceiling: float | None) -> None:
        self.series, self.ceiling = series, ceiling
        self.setToolTip("\n".join(f"{day}: ${cost:,.2f}" for day, cost in series if cost))
        self.update()

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802 - Qt API
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        text = self.palette().color(QPalette.ColorRole.Text)
        muted = QColor(COLORS["idle"])
        font = QFont(self.font())
        font.setPointSizeF(font.pointSizeF() * 0.85)
        painter.setFont(font)
        metrics = painter.fontMetrics()
        left, bottom, top, right = metrics.horizontalAdvance("$000.00") + 8, 22, 18, 8
        plot = QRectF(left, top, self.width() - left - right, self.height() - top - bottom)
        if not self.series or plot.width() <= 0 or plot.height() <= 0:
            painter.end()
            return
        peak = max([cost for _day, cost in self.series] + [self.ceiling or 0, 0.01])
        painter.setPen(QPen(muted, 1))
        painter.drawLine(QPointF(plot.left(), plot.bottom()), QPointF(plot.right(), plot.bottom()))
        painter.drawText(QRectF(0, plot.top() - 6, left - 6, 14),
                         Qt.AlignmentFlag.AlignRight, f"${peak:,.2f}")
        painter.drawText(QRectF(0, plot.bottom() - 8, left - 6, 14),
                         Qt.AlignmentFlag.AlignRight, "$0")
        slot = plot.width() / len(self.series)
        bar_color = QColor(COLORS["ok"])
        for i, (_day, cost) in enumerate(self.series):
            if cost <= 0:
                continue
            height = max(plot.height() * cost / peak, 1.5)
            # Only today's ceiling is known, so only today's bar is judged against it.
            over = (i == len(self.series) - 1 and self.ceiling is not None
                    and cost >= self.ceiling)
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(QColor(COLORS["bad"]) if over else bar_color)
            painter.drawRect(QRectF(plot.left() + i * slot + slot * 0.15, plot.bottom() - height,
                                    slot * 0.7, height))
        if self.ceiling:
            y = plot.bottom() - plot.height() * self.ceiling / peak
            pen = QPen(QColor(COLORS["bad"]), 1, Qt.PenStyle.DashLine)
            painter.setPen(pen)
            painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
            label_top = y - 16 if y - 16 >= 0 else y + 2  # below the line at the very top
            painter.drawText(QRectF(plot.left() + 4, label_top, 260, 14),
                             Qt.AlignmentFlag.AlignLeft,
                             f"today's ceiling ${self.ceiling:,.2f}")
        painter.setPen(QPen(text, 1))
        first, last = self.series[0][0], self.series[-1][0]
        painter.drawText(QRectF(plot.left(), plot.bottom() + 4, 120, 16),
                         Qt.AlignmentFlag.AlignLeft, first[5:])
        painter.drawText(QRectF(plot.right() - 120, plot.bottom() + 4, 120, 16),
                         Qt.AlignmentFlag.AlignRight, f"{last[5:]} (today, UTC)")
        painter.end()


MODEL_COLUMNS = (
    Column("Provider", lambda r: provider_name(r.get("provider"))),
    Column("Model", lambda r: model_name(r.get("provider"), r.get("model"))),
    Column("Calls", lambda r: f"{r['calls']:,}", sort_value=lambda r: r["calls"],
           align_right=True),
    Column("Tokens in / out", lambda r: f"{r['inputTokens']:,} / {r['outputTokens']:,}",
           sort_value=lambda r: r["inputTokens"] + r["outputTokens"], align_right=True),
    Column("Cost today", lambda r: money(r["costUsd"]), sort_value=lambda r: r["costUsd"],
           align_right=True),
)


class SpendView(LiveView):
    view_keys = frozenset({SPEND, SETTINGS})

    def __init__(self, controller: ShellController, parent: QWidget | None = None):
        super().__init__(controller, parent)
        self.overview: dict[str, Any] | None = None
        self._saving = False
        self._build()

    def _build(self) -> None:
        # In a scroll area: the boxes need ~520 px, more than a small laptop's window has
        # left under the header and tabs; the window must not be taller than the screen.
        self.scroll, content, layout = fill_with_scroll_column(self, margins=(0, 6, 4, 0), spacing=10)

        self.banner = rich_label(QLabel("", self))
        self.banner.setObjectName("budgetBanner")
        self.banner.setWordWrap(True)
        self.banner.setStyleSheet(f"#budgetBanner {{ {notice_style('error')} border-radius: 6px;"
                                  " padding: 8px; }")
        self.banner.hide()
        layout.addWidget(self.banner)

        self.error_label = PlainLabel("", self)
        self.error_label.setObjectName("spendError")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet(f"color: {COLORS['bad']};")
        self.error_label.hide()
        layout.addWidget(self.error_label)

        today = QGroupBox("Today", self)
        today_layout = QVBoxLayout(today)
        self.spent_label = rich_label(QLabel("—", today))
        self.spent_label.setObjectName("spentLabel")
        self.bar = BudgetBar(today)
        self.bar.setObjectName("budgetBar")
        self.remaining_label = PlainLabel("", today)
        self.remaining_label.setObjectName("remainingLabel")
        self.remaining_label.setWordWrap(True)
        today_layout.addWidget(self.spent_label)
        today_layout.addWidget(self.bar)
        today_layout.addWidget(self.remaining_label)
        today_layout.addLayout(self._build_ceiling_editor(today))
        self.ceiling_message = PlainLabel("", today)
        self.ceiling_message.setObjectName("ceilingMessage")
        self.ceiling_message.setWordWrap(True)
        today_layout.addWidget(self.ceiling_message)
        layout.addWidget(today)

        chart_box = QGroupBox("Last 30 days", self)
        chart_layout = QVBoxLayout(chart_box)
        self.chart = SpendChart(chart_box)
        self.chart.setObjectName("spendChart")
        chart_layout.addWidget(self.chart)
        models_box = QGroupBox("Today by model", self)
        models_layout = QVBoxLayout(models_box)
        self.models = KeyedTableModel(MODEL_COLUMNS, key=lambda r: f"{r['provider']}/{r['model']}",
                                      parent=self)
        proxy = QSortFilterProxyModel(self)
        proxy.setSourceModel(self.models)
        proxy.setSortRole(SortRole)
        self.models_table = QTableView(models_box)
        self.models_table.setObjectName("modelsTable")
        self.models_table.setModel(proxy)
        self.models_table.setSortingEnabled(True)
        self.models_table.sortByColumn(4, Qt.SortOrder.DescendingOrder)
        self.models_table.verticalHeader().hide()
        self.models_table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.models_table.setFrameShape(QFrame.Shape.StyledPanel)
        self.models_table.horizontalHeader().setSectionResizeMode(
            QHeaderView.ResizeMode.Stretch)
        self.models_empty = QLabel("No model calls today.", models_box)
        self.models_empty.setStyleSheet("color: palette(placeholder-text);")
        models_layout.addWidget(self.models_empty)
        models_layout.addWidget(self.models_table)
        layout.addWidget(chart_box, 3)
        layout.addWidget(models_box, 2)

        note = QLabel("Costs are estimates from per-model rates, not your provider's bill. "
                      "The spend day follows UTC.", self)
        note.setStyleSheet(f"color: {COLORS['idle']};")
        layout.addWidget(note)

    def _build_ceiling_editor(self, parent: QWidget) -> QHBoxLayout:
        row = QHBoxLayout()
        row.addWidget(QLabel("Daily ceiling $", parent))
        self.ceiling_edit = QLineEdit(parent)
        self.ceiling_edit.setObjectName("ceilingEdit")
        self.ceiling_edit.setMaximumWidth(110)
        self.ceiling_edit.setPlaceholderText("25.00")
        self.ceiling_edit.setToolTip("0 means no limit")
        self.ceiling_edit.textEdited.connect(self._validate)
        self.ceiling_edit.returnPressed.connect(self.save_ceiling)
        self.save_button = QPushButton("Save", parent)
        self.save_button.setObjectName("saveCeilingButton")
        self.save_button.clicked.connect(self.save_ceiling)
        hint = QLabel("0 = no limit", parent)
        hint.setStyleSheet(f"color: {COLORS['idle']};")
        row.addWidget(self.ceiling_edit)
        row.addWidget(self.save_button)
        row.addWidget(hint)
        row.addStretch(1)
        return row

    # -- data -----------------------------------------------------------------------------

    async def fetch(self, client: ApiClient) -> dict[str, Any]:
        return await client.spend()

    def poll_interval_ms(self) -> int | None:
        return POLL_MS

    def apply(self, result: dict[str, Any]) -> None:
        self.overview = result
        self.error_label.hide()
        today = result["today"]
        self._show_today(today)
        ceiling = None if today["unlimited"] else float(today["ceilingUsd"])
        self.chart.set_data(day_series(result["byDay"], today["day"]), ceiling)
        self.models.set_rows(result["byModel"])
        self.models_empty.setVisible(not result["byModel"])
        self.models_table.setVisible(bool(result["byModel"]))
        if not self.ceiling_edit.hasFocus() and not self._saving:
            self.ceiling_edit.setText(f"{Decimal(str(today['ceilingUsd'])):.2f}")

    def show_error(self, error: Exception) -> None:
        self.error_label.setText(f"Could not load spend. {describe_api_error(error)}")
        self.error_label.show()

    def _show_today(self, today: dict[str, Any]) -> None:
        spent = money(today["spentUsd"])
        resets = local_reset_time(today.get("resetsAt"))
        if today["unlimited"]:
            self.spent_label.setText(f"<span style='font-size:15pt'><b>{spent}</b></span>"
                                     " spent today · no daily limit")
            self.bar.set_value(None, "ok")
            self.remaining_label.setText(f"Unlimited: nothing stops for cost. The day resets"
                                         f" at {resets}.")
        else:
            ceiling = float(today["ceilingUsd"])
            fraction = float(today["spentUsd"]) / ceiling if ceiling else None
            self.spent_label.setText(
                f"<span style='font-size:15pt'><b>{spent}</b></span> of "
                f"{money(today['ceilingUsd'])} today")
            self.bar.set_value(fraction, fill_tone(today))
            self.remaining_label.setText(f"{money(today['remainingUsd'])} left · resets at "
                                         f"{resets}")
        self.bar.setToolTip(self.spent_label.text().replace("<b>", "").replace("</b>", ""))
        if today["exhausted"]:
            self.banner.setText(
                f"<b>Today's budget is used up</b> ({spent} of {money(today['ceilingUsd'])})."
                f" {WHAT_STOPS} It resets at {resets}, or raise the ceiling below.")
            self.banner.show()
        else:
            self.banner.hide()

    # -- the ceiling ----------------------------------------------------------------------

    def _validate(self, text: str) -> Decimal | None:
        value, problem = parse_ceiling(text)
        if problem:
            self._say(problem, "bad")
        else:
            self._say("No daily limit: nothing stops for cost." if value == 0 else "", "idle")
        self.save_button.setEnabled(problem is None)
        return value

    def save_ceiling(self) -> None:
        value = self._validate(self.ceiling_edit.text())
        if value is None or self._saving:
            return
        self._saving = True
        self.save_button.setEnabled(False)
        self._say("Saving…", "idle")
        self.controller.call(
            lambda client: client.patch_settings(dailyBudgetUsd=float(value)),
            self._saved, self._save_failed, name="save-ceiling")

    def _saved(self, settings: dict[str, Any]) -> None:
        self._saving = False
        self.save_button.setEnabled(True)
        saved = settings.get("dailyBudgetUsd")
        self._say(f"Saved: {'no daily limit' if not saved else money(saved) + ' a day'}.", "ok")
        # No event tells other views (tray, Settings) about a settings change: say it here.
        emit(self.controller.views_invalidated, frozenset({SPEND, SETTINGS}))

    def _save_failed(self, error: Exception) -> None:
        self._saving = False
        self.save_button.setEnabled(True)
        self._say(f"Not saved. {describe_api_error(error)}", "bad")

    def _say(self, text: str, tone: str) -> None:
        self.ceiling_message.setText(text)
        self.ceiling_message.setStyleSheet(f"color: {COLORS[tone]};")
