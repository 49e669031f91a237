"""Reading a window as its user reads it: every visible label, button, group title, tab,
placeholder, combo item, tooltip, table header and table cell, outside the "Technical
details" disclosures. Used by tests/desktop/test_plain_language.py."""

from __future__ import annotations

from PySide6.QtCore import QAbstractListModel, QModelIndex, Qt
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractItemView,
    QComboBox,
    QGroupBox,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTabBar,
    QWidget,
)

from desktop.views.partials.technical_disclosure import TechnicalDisclosure
from tests.plain_words import findings

MAX_ROWS_READ = 300  # per table: every row a screen shows, and then some
ROLES = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole)


def in_technical_details(widget: QWidget) -> bool:
    parent = widget
    while parent is not None:
        if isinstance(parent, TechnicalDisclosure):
            return True
        parent = parent.parentWidget()
    return False


def _model_texts(view: QAbstractItemView) -> list[str]:
    model = view.model()
    if model is None:
        return []
    # A list model's columnCount is private in PySide6 (QListWidget's): one column.
    columns = 1 if isinstance(model, QAbstractListModel) else model.columnCount(QModelIndex())
    texts = [str(model.headerData(column, Qt.Orientation.Horizontal, role) or "")
             for column in range(columns) for role in ROLES]
    for row in range(min(model.rowCount(QModelIndex()), MAX_ROWS_READ)):
        for column in range(max(columns, 1)):
            index = model.index(row, column, QModelIndex())
            texts += [str(index.data(role) or "") for role in ROLES]
    return texts


def widget_texts(widget: QWidget) -> list[str]:
    """What one widget shows or says when hovered."""
    texts = [widget.toolTip()]
    if isinstance(widget, QLabel):
        texts.append(widget.text())
    if isinstance(widget, QAbstractButton):
        texts.append(widget.text())
    if isinstance(widget, QGroupBox):
        texts.append(widget.title())
    if isinstance(widget, QLineEdit):
        texts.append(widget.placeholderText())
    if isinstance(widget, QComboBox):
        texts += [widget.itemText(i) for i in range(widget.count())]
        texts += [str(widget.itemData(i, Qt.ItemDataRole.ToolTipRole) or "")
                  for i in range(widget.count())]
    if isinstance(widget, QTabBar):
        texts += [widget.tabText(i) for i in range(widget.count())]
        texts += [widget.tabToolTip(i) for i in range(widget.count())]
    # A view reads its model once (its header views and a combo's popup share it).
    if isinstance(widget, QAbstractItemView) and not isinstance(widget, QHeaderView) \
            and not isinstance(widget.parentWidget(), QComboBox):
        texts += _model_texts(widget)
    return [text for text in texts if text]


def read(root: QWidget, skip: QWidget | None = None) -> list[tuple[str, str]]:
    """``(widget name, text)`` for every text under ``root`` that is visible, outside
    Technical details, and not under ``skip``."""
    pairs = []
    for widget in [root, *root.findChildren(QWidget)]:
        if not widget.isVisible() or in_technical_details(widget):
            continue
        if skip is not None and (widget is skip or skip.isAncestorOf(widget)):
            continue
        name = widget.objectName() or type(widget).__name__
        pairs += [(name, text) for text in widget_texts(widget)]
    return pairs


def problems_in(pairs: list[tuple[str, str]]) -> list[str]:
    """``"<widget>: snake_case code 'demo_board' in '…'"`` for every finding."""
    return list(dict.fromkeys(f"{name}: {found} in {text!r}" for name, text in pairs
                              for found in findings(text)))


def scan(root: QWidget, skip: QWidget | None = None) -> list[str]:
    return problems_in(read(root, skip))
