"""The first-paint baseline: a process that only shows a QTableView over a plain model.

Started by bench/desktop_latency.py (``Popen`` is its time zero). It imports nothing but
PySide6, shows ``--rows`` rows at the benchmark's window size, prints a JSON line when
the table's viewport receives its first paint event (``paint_event``) and one once that
paint pass is done (``first_paint``: the next turn of the event loop, the same moment the
shell's ``first_paint`` milestone is taken — desktop/views/main_window.py), both
``time.perf_counter()``, the system-wide monotonic clock, so the parent can compare them
with its own launch time; then another with its RSS after ``--linger`` seconds, and exits.

    python bench/bare_table.py [--rows 10000] [--linger 3]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

from PySide6.QtCore import QAbstractTableModel, QEvent, QModelIndex, QObject, Qt, QTimer
from PySide6.QtWidgets import QApplication, QTableView

WINDOW = (1100, 820)
TITLES = ("Title", "Company", "Location", "Fit", "Stage", "Status")


class PlainModel(QAbstractTableModel):
    def __init__(self, rows: int):
        super().__init__()
        self.cells = [[f"Engineer {i}", f"Company {i % 97}", "Berlin", "", "", ""]
                      for i in range(rows)]

    def rowCount(self, parent=QModelIndex()):  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else len(self.cells)

    def columnCount(self, parent=QModelIndex()):  # noqa: N802, B008 - Qt API
        return 0 if parent.isValid() else len(TITLES)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole:
            return self.cells[index.row()][index.column()]
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole:
            return TITLES[section]
        return None


class FirstPaint(QObject):
    seen = False

    def eventFilter(self, watched, event):  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.Paint and not self.seen:
            self.seen = True
            print(json.dumps({"paint_event": time.perf_counter()}), flush=True)
            # The frame is painted once this paint pass returns (the shell's definition).
            QTimer.singleShot(0, lambda: print(json.dumps({"first_paint": time.perf_counter()}),
                                               flush=True))
        return False


def rss_bytes() -> int:
    with open(f"/proc/{os.getpid()}/statm") as statm:  # Linux; the benchmark's platform
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--linger", type=float, default=3.0)
    args = parser.parse_args()
    app = QApplication(sys.argv[:1])
    view = QTableView()
    view.setModel(PlainModel(args.rows))
    view.resize(*WINDOW)
    spy = FirstPaint()
    view.viewport().installEventFilter(spy)
    view.show()

    def report_and_quit() -> None:
        print(json.dumps({"rss": rss_bytes()}), flush=True)
        app.quit()

    QTimer.singleShot(int(args.linger * 1000), report_and_quit)
    app.exec()
    os._exit(0)


if __name__ == "__main__":
    main()
