"""Column widths that follow a table's content and width (the Runs view's rule, generalised).

Fixed columns are as wide as their longest common text; fitted columns as wide as their
widest cell, up to a cap; the stretch column takes what is left. When the table is too
narrow, fitted columns give up width (never below ``FITTED_MIN``) before the stretch column
goes under its minimum. Long texts are elided by the view (``…``) and shown whole in the
cell's tooltip. Once the user drags a column edge, their widths are kept.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QTableView

CELL_PADDING = 22   # margins plus the sort indicator
FITTED_MIN = 90
STRETCH_MIN = 140
SAMPLE_ROWS = 400   # enough to find the widest common text without measuring thousands


def text_width(metrics: QFontMetrics, texts: Sequence[str]) -> int:
    return max((metrics.horizontalAdvance(text) for text in texts), default=0) + CELL_PADDING


def share_width(available: int, fixed: Mapping[int, int], wanted: Mapping[int, int],
                stretch: int, stretch_min: int = STRETCH_MIN) -> dict[int, int]:
    """Widths for every column: ``fixed`` as given, ``wanted`` as much as fits, ``stretch``
    the rest (a plain function, so tests call it directly)."""
    # A fitted column that wants no more than FITTED_MIN (an empty Salary) is not shrunk:
    # it keeps its width like a fixed one and the others share the shortfall.
    small = {column: want for column, want in wanted.items() if want <= FITTED_MIN}
    widths = {**fixed, **small}
    wanted = {column: want for column, want in wanted.items() if column not in small}
    room = available - sum(widths.values()) - stretch_min
    total_wanted = sum(wanted.values())
    if total_wanted <= room:
        widths.update(wanted)
    else:
        # Shrink each fitted column by its share of the shortfall, down to FITTED_MIN.
        shortfall = total_wanted - max(room, 0)
        for column, want in wanted.items():
            cut = round(shortfall * want / total_wanted) if total_wanted else 0
            widths[column] = max(FITTED_MIN, want - cut)
    widths[stretch] = max(stretch_min, available - sum(widths.values()))
    return widths


class ColumnFitter(QObject):
    def __init__(self, table: QTableView, *, fixed_texts: Mapping[int, Sequence[str]],
                 fitted: Mapping[int, int], stretch: int, stretch_min: int = STRETCH_MIN):
        """``fitted`` maps a column to its cap in pixels; ``stretch_min`` is the width the
        stretch column keeps before fitted columns are as wide as they want."""
        super().__init__(table)
        self.table = table
        self.fixed_texts = dict(fixed_texts)
        self.fitted = dict(fitted)
        self.stretch = stretch
        self.stretch_min = stretch_min
        self.user_sized = False
        self._wanted: dict[int, int] = {}  # the fitted columns' widths at the last fit
        self._applying = False
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self.fit)
        header = table.horizontalHeader()
        header.setStretchLastSection(False)
        header.sectionResized.connect(self._on_section_resized)
        # Compared by reference: the table may be half-destroyed when the last event comes.
        self._viewport = table.viewport()
        self._viewport.installEventFilter(self)
        model = table.model()
        for signal in (model.rowsInserted, model.rowsRemoved, model.modelReset,
                       model.layoutChanged):
            signal.connect(lambda *_: self._timer.start())
        model.dataChanged.connect(self._on_data_changed)

    def _on_data_changed(self, top_left, bottom_right, *_roles) -> None:
        """A changed row refits only when one of its fitted cells now wants more than the
        last fit gave: re-measuring the table on every live update (a score, a stage) cost
        ~20 ms per event in a 500/s burst. A cell that got shorter waits for the next
        reset, insert or resize, so widths do not jitter while a run streams."""
        model = self.table.model()
        metrics = self.table.fontMetrics()
        rows = range(top_left.row(), bottom_right.row() + 1)
        for column, cap in self.fitted.items():
            if not top_left.column() <= column <= bottom_right.column():
                continue
            texts = [str(model.index(row, column).data() or "") for row in rows]
            if min(cap, text_width(metrics, texts)) > self._wanted.get(column, 0):
                self._timer.start()
                return

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if watched is self._viewport and event.type() == QEvent.Type.Resize:
            self._timer.start()
        return False

    def _on_section_resized(self, *_args) -> None:
        if not self._applying:
            self.user_sized = True  # the user dragged an edge: their widths win

    def content_width(self, column: int) -> int:
        model = self.table.model()
        metrics = self.table.fontMetrics()
        texts = [str(model.headerData(column, Qt.Orientation.Horizontal) or "")]
        for row in range(min(model.rowCount(), SAMPLE_ROWS)):
            texts.append(str(model.index(row, column).data() or ""))
        return text_width(metrics, texts)

    def fit(self) -> None:
        if self.user_sized:
            return
        metrics = self.table.fontMetrics()
        fixed = {column: text_width(metrics, texts) for column, texts in self.fixed_texts.items()}
        wanted = {column: min(cap, self.content_width(column))
                  for column, cap in self.fitted.items()}
        self._wanted = wanted
        widths = share_width(self.table.viewport().width(), fixed, wanted, self.stretch,
                             self.stretch_min)
        self._applying = True
        try:
            for column, width in widths.items():
                if self.table.columnWidth(column) != width:
                    self.table.setColumnWidth(column, width)
        finally:
            self._applying = False
