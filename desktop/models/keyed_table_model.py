"""A table of API rows (dicts) identified by a key, updated in place.

``set_rows`` turns a refetched page into the smallest set of Qt notifications: removed rows,
a layout change only when retained rows changed order, inserted rows and ``dataChanged``
for rows whose content changed — never a model reset. Views on top keep their selection,
sorting and scroll position (the napari pattern: plain data in, precise row events out).
``patch`` updates one row from an event that carries enough canonical data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt

from desktop.plain_text import plain_tooltip

Row = Mapping[str, Any]
Index = QModelIndex | QPersistentModelIndex

RowRole = Qt.ItemDataRole.UserRole + 1    # the row's dict
KeyRole = Qt.ItemDataRole.UserRole + 2    # the row's key
SortRole = Qt.ItemDataRole.UserRole + 3   # a comparable value for QSortFilterProxyModel


@dataclass(frozen=True)
class Column:
    title: str
    display: Callable[[Row], Any]
    sort_value: Callable[[Row], Any] | None = None
    tooltip: Callable[[Row], str | None] | None = None
    foreground: Callable[[Row], Any] | None = None
    align_right: bool = False


def field(name: str, empty: str = "—") -> Callable[[Row], Any]:
    """Display a top-level field, or ``empty`` when it is null or missing."""
    def display(row: Row) -> Any:
        value = row.get(name)
        return empty if value is None or value == "" else value
    return display


class KeyedTableModel(QAbstractTableModel):
    def __init__(self, columns: Iterable[Column], key: Callable[[Row], str], parent=None):
        super().__init__(parent)
        self.columns = list(columns)
        self._key = key
        self._keys: list[str] = []
        self._rows: dict[str, Row] = {}
        self._positions: dict[str, int] = {}

    # -- writing --------------------------------------------------------------------------

    def set_rows(self, rows: Iterable[Row]) -> None:
        incoming: dict[str, Row] = {}
        for row in rows:
            incoming[self._key(row)] = row
        self._remove_missing(incoming)
        self._reorder_retained([key for key in incoming if key in self._rows])
        self._insert_new(list(incoming), incoming)
        self._update_changed(incoming)

    def patch(self, key: str, changes: Mapping[str, Any]) -> bool:
        """Merge ``changes`` into one row; False when the row is not shown."""
        position = self._positions.get(key)
        if position is None:
            return False
        merged = {**self._rows[key], **changes}
        if merged != self._rows[key]:
            self._rows[key] = merged
            self._row_changed(position)
        return True

    def clear(self) -> None:
        self.set_rows(())

    def _remove_missing(self, incoming: Mapping[str, Row]) -> None:
        row = len(self._keys) - 1
        while row >= 0:
            if self._keys[row] in incoming:
                row -= 1
                continue
            last = row
            while row >= 0 and self._keys[row] not in incoming:
                row -= 1
            first = row + 1
            self.beginRemoveRows(QModelIndex(), first, last)
            for key in self._keys[first:last + 1]:
                del self._rows[key]
            del self._keys[first:last + 1]
            self.endRemoveRows()
        self._reindex()

    def _reorder_retained(self, order: list[str]) -> None:
        if order == self._keys:
            return
        self.layoutAboutToBeChanged.emit()
        old_keys = self._keys
        self._keys = order
        self._reindex()
        persistent = self.persistentIndexList()  # selection and current index follow their row
        moved = [self.index(self._positions[old_keys[index.row()]], index.column())
                 for index in persistent]
        self.changePersistentIndexList(persistent, moved)
        self.layoutChanged.emit()

    def _insert_new(self, order: list[str], incoming: Mapping[str, Row]) -> None:
        position = 0
        i = 0
        while i < len(order):
            if order[i] in self._rows:
                position += 1
                i += 1
                continue
            j = i
            while j < len(order) and order[j] not in self._rows:
                j += 1
            batch = order[i:j]
            self.beginInsertRows(QModelIndex(), position, position + len(batch) - 1)
            self._keys[position:position] = batch
            for key in batch:
                self._rows[key] = incoming[key]
            self._reindex()
            self.endInsertRows()
            position += len(batch)
            i = j

    def _update_changed(self, incoming: Mapping[str, Row]) -> None:
        for key, row in incoming.items():
            if self._rows[key] is not row and self._rows[key] != row:
                self._rows[key] = row
                self._row_changed(self._positions[key])

    def _row_changed(self, position: int) -> None:
        self.dataChanged.emit(self.index(position, 0),
                              self.index(position, len(self.columns) - 1))

    def _reindex(self) -> None:
        self._positions = {key: row for row, key in enumerate(self._keys)}

    # -- reading --------------------------------------------------------------------------

    def keys(self) -> list[str]:
        return list(self._keys)

    def row_of(self, key: str) -> int | None:
        return self._positions.get(key)

    def key_at(self, row: int) -> str:
        return self._keys[row]

    def row_at(self, row: int) -> Row:
        return self._rows[self._keys[row]]

    def get(self, key: str) -> Row | None:
        return self._rows.get(key)

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802 - Qt API
        return 0 if parent.isValid() else len(self._keys)

    def columnCount(self, parent: Index = QModelIndex()) -> int:  # noqa: N802 - Qt API
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation,  # noqa: N802 - Qt API
                   role: int = Qt.ItemDataRole.DisplayRole):
        if (orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole
                and 0 <= section < len(self.columns)):
            return self.columns[section].title
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < len(self._keys):
            return None
        row = self._rows[self._keys[index.row()]]
        column = self.columns[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            value = column.display(row)
            return value if isinstance(value, str) else ("" if value is None else str(value))
        if role == SortRole:
            value = (column.sort_value or column.display)(row)
            return "" if value is None else value
        if role == RowRole:
            return row
        if role == KeyRole:
            return self._keys[index.row()]
        if role == Qt.ItemDataRole.ToolTipRole and column.tooltip is not None:
            return plain_tooltip(column.tooltip(row))  # a posting's text, shown as text
        if role == Qt.ItemDataRole.ForegroundRole and column.foreground is not None:
            return column.foreground(row)
        if role == Qt.ItemDataRole.TextAlignmentRole and column.align_right:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None
