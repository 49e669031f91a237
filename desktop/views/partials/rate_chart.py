"""A horizontal bar chart of one rate per group, painted with QPainter (the installed
PySide6 has no QtCharts). A group without figures gets no bar but its reason in words, so
a small group never looks like a rate of zero."""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPaintEvent, QPalette, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from desktop.plain_text import plain_tooltip
from desktop.theme import COLORS

Bar = tuple[str, float | None, str]  # label, rate 0..1 (None: withheld), the value's words
ROW_HEIGHT = 26


class RateChart(QWidget):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.bars: list[Bar] = []
        self.title = ""
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Preferred)

    def set_bars(self, title: str, bars: list[Bar]) -> None:
        self.title, self.bars = title, bars
        self.setToolTip(plain_tooltip("\n".join(f"{label}: {words}" for label, _rate, words in bars)))
        self.updateGeometry()
        self.update()

    def sizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(520, 30 + ROW_HEIGHT * max(len(self.bars), 1))

    def minimumSizeHint(self) -> QSize:  # noqa: N802 - Qt API
        return QSize(300, 30 + ROW_HEIGHT * max(len(self.bars), 1))

    def paintEvent(self, _event: QPaintEvent) -> None:  # noqa: N802 - Qt API
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        text = self.palette().color(QPalette.ColorRole.Text)
        muted = QColor(COLORS["idle"])
        bold = QFont(self.font())
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(QPen(text, 1))
        painter.drawText(QRectF(0, 0, self.width(), 20), Qt.AlignmentFlag.AlignLeft, self.title)
        painter.setFont(self.font())
        metrics = painter.fontMetrics()
        label_width = min(max([metrics.horizontalAdvance(b[0]) for b in self.bars] + [60]) + 10,
                          self.width() // 3)
        value_width = metrics.horizontalAdvance("not enough applications yet") + 10
        plot_left = label_width
        plot_width = max(self.width() - label_width - value_width, 40)
        for row, (label, rate, words) in enumerate(self.bars):
            top = 26 + row * ROW_HEIGHT
            painter.setPen(QPen(text, 1))
            painter.drawText(QRectF(0, top, label_width - 8, ROW_HEIGHT - 6),
                             Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                             metrics.elidedText(label, Qt.TextElideMode.ElideRight,
                                                label_width - 8))
            track = QRectF(plot_left, top + 3, plot_width, ROW_HEIGHT - 12)
            painter.setPen(QPen(muted, 1, Qt.PenStyle.DotLine))
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.drawRect(track)
            if rate is not None:
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(QColor(COLORS["accent"]))
                painter.drawRect(QRectF(track.left(), track.top(),
                                        max(track.width() * min(rate, 1.0), 2), track.height()))
            painter.setPen(QPen(text if rate is not None else muted, 1))
            painter.drawText(QRectF(plot_left + plot_width + 8, top, value_width, ROW_HEIGHT - 6),
                             Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, words)
        painter.end()
