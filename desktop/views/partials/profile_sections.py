"""Building blocks of the structured profile editor: typed fields bound to a dict, a
list + detail editor for résumé entries (work, education, skills, ...) and a collapsible
section.

Every editor *overlays* what it shows onto the document it was loaded from: keys it does
not show (JSON Resume extras such as an entry's ``keywords`` or ``courses``) are kept as
they came, and an untouched empty value stays as it was loaded (missing, null or ``[]``),
so an unedited profile saves back exactly as it was read.
"""

from __future__ import annotations

import copy
import html
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from desktop.plain_text import PlainLabel, plain_tooltip
from desktop.views.partials.settings_form import ErrorLabel, hint

Document = dict[str, Any]


@dataclass(frozen=True)
class FieldSpec:
    """One input. ``key`` may be a dotted path (``location.city``). Kinds: ``line`` (text),
    ``text`` (several lines of text), ``csv`` (a list typed comma-separated), ``lines`` (a
    list, one item per line), ``number`` (a whole number; other text goes to the API as
    typed, to be refused with a message), ``code`` (upper-case, three letters) and
    ``choice`` (one of ``choices``: (value, words) pairs)."""

    key: str
    label: str
    kind: str = "line"
    placeholder: str = ""
    choices: tuple[tuple[str, str], ...] = ()


# -- dict paths and the overlay ----------------------------------------------------------


def is_blank(value: Any) -> bool:
    return value is None or value == "" or value == []


def get_path(document: Document, path: str) -> Any:
    node: Any = document
    for key in path.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def overlay(document: Document, path: str, value: Any) -> None:
    """Set ``path`` to ``value``, except that a blank value over a blank (or missing) one
    leaves the document as it was."""
    keys = path.split(".")
    node = document
    for key in keys[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            if is_blank(value):
                return
            child = node[key] = {}
        node = child
    if is_blank(value) and is_blank(node.get(keys[-1])):
        return
    node[keys[-1]] = value


# -- one input per kind ------------------------------------------------------------------


def split_list(text: str, separator: str = ",") -> list[str]:
    return [part.strip() for part in text.split(separator) if part.strip()]


def _number(text: str) -> Any:
    cleaned = text.strip().replace(",", "").replace(" ", "")
    if not cleaned:
        return None
    return int(cleaned) if cleaned.isdigit() else text.strip()


def make_input(spec: FieldSpec, parent: QWidget) -> QWidget:
    if spec.kind == "choice":
        widget: QWidget = QComboBox(parent)
        for value, words in spec.choices:
            widget.addItem(words, value)
    elif spec.kind in ("text", "lines"):
        widget = QPlainTextEdit(parent)
        widget.setTabChangesFocus(True)
        widget.setMinimumHeight(72 if spec.kind == "text" else 96)
        widget.setMaximumHeight(120 if spec.kind == "text" else 170)
        widget.setPlaceholderText(spec.placeholder or ("one per line" if spec.kind == "lines"
                                                       else ""))
    else:
        widget = QLineEdit(parent)
        widget.setPlaceholderText(spec.placeholder or ("comma-separated" if spec.kind == "csv"
                                                       else ""))
        if spec.kind == "code":
            widget.setMaxLength(3)
            widget.setMaximumWidth(80)
    widget.setObjectName(f"profile.{spec.key}")
    return widget


def write_input(widget: QWidget, spec: FieldSpec, value: Any) -> None:
    if isinstance(widget, QComboBox):
        widget.setCurrentIndex(max(widget.findData(value), 0))
    elif spec.kind == "lines":
        widget.setPlainText("\n".join(value or []))
    elif spec.kind == "csv":
        widget.setText(", ".join(value or []))
    elif isinstance(widget, QPlainTextEdit):
        widget.setPlainText("" if value is None else str(value))
    else:
        widget.setText("" if value is None else str(value))


def read_input(widget: QWidget, spec: FieldSpec) -> Any:
    if isinstance(widget, QComboBox):
        return widget.currentData()
    text = widget.toPlainText() if isinstance(widget, QPlainTextEdit) else widget.text()
    if spec.kind == "lines":
        return split_list(text, "\n")
    if spec.kind == "csv":
        return split_list(text)
    if spec.kind == "number":
        return _number(text)
    if spec.kind == "code":
        return text.strip().upper() or None
    return text.strip() or None


def _edit_signal(widget: QWidget):
    if isinstance(widget, QComboBox):
        return widget.currentIndexChanged
    if isinstance(widget, QPlainTextEdit):
        return widget.textChanged
    return widget.textEdited


# -- a form of fields bound to one dict --------------------------------------------------


class FieldForm(QWidget):
    """Inputs for ``specs``; ``load`` shows a dict, ``store`` overlays the inputs onto one.
    ``error_prefix`` names the fields in the API's 422 answers (``resume.basics.``)."""

    edited = Signal()

    def __init__(self, specs: Sequence[FieldSpec], parent: QWidget | None = None, *,
                 error_prefix: str = ""):
        super().__init__(parent)
        self.specs = tuple(specs)
        self.widgets: dict[str, QWidget] = {}
        self.errors: dict[str, ErrorLabel] = {}
        self._loading = False
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.marks: dict[str, QLabel] = {}
        for spec in self.specs:
            widget = make_input(spec, self)
            self.widgets[spec.key] = widget
            _edit_signal(widget).connect(lambda *_args, key=spec.key: self._on_edit(key))
            form.addRow(spec.label, self._with_error(widget, error_prefix + spec.key, spec.key))

    def _with_error(self, widget: QWidget, field: str, key: str) -> QWidget:
        box = QWidget(self)
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(widget)
        mark = hint("", box)  # "suggested from your résumé", until the field is edited
        mark.setObjectName(f"mark:{key}")
        mark.setTextFormat(Qt.TextFormat.PlainText)
        mark.hide()
        self.marks[key] = mark
        layout.addWidget(mark)
        error = ErrorLabel(field, box)
        self.errors[field] = error
        layout.addWidget(error)
        return box

    def _on_edit(self, key: str) -> None:
        if not self._loading:
            self.marks[key].hide()  # the user's own value now, not a suggestion
            self.edited.emit()

    def set_marks(self, keys: Sequence[str], text: str) -> None:
        """Mark the fields ``keys`` with ``text`` (and clear every other mark)."""
        for key, mark in self.marks.items():
            mark.setText(text if key in keys else "")
            mark.setVisible(key in keys)

    def marked(self) -> list[str]:
        return [key for key, mark in self.marks.items() if not mark.isHidden()]

    def load(self, document: Document | None) -> None:
        self._loading = True
        try:
            for spec in self.specs:
                write_input(self.widgets[spec.key], spec, get_path(document or {}, spec.key))
        finally:
            self._loading = False

    def store(self, document: Document) -> Document:
        for spec in self.specs:
            overlay(document, spec.key, read_input(self.widgets[spec.key], spec))
        return document

    def first_input(self) -> QWidget:
        return self.widgets[self.specs[0].key]


# -- a list of entries, edited one at a time ---------------------------------------------


class EntryListEditor(QWidget):
    """A compact list + detail: the entries by title on the left with Add, Remove and
    Move up / down; the selected entry's fields on the right. ``value()`` is the entries,
    each the loaded entry with the edits overlaid (unknown keys kept)."""

    edited = Signal()

    def __init__(self, name: str, specs: Sequence[FieldSpec], title_of: Callable[[Document], str],
                 noun: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName(name)
        self.title_of = title_of
        self.noun = noun
        self.entries: list[Document] = []
        self._current: int | None = None
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self._list_max = max(96, 40 * len(specs))  # about as tall as the form
        layout.addLayout(self._build_list(name), 2)
        self.form = FieldForm(specs, self)
        self.form.edited.connect(self._on_form_edited)
        self.empty_hint = hint(f"No {noun} yet. Add one with “Add”.", self)
        detail = QVBoxLayout()
        detail.addWidget(self.form)
        detail.addWidget(self.empty_hint)
        detail.addStretch(1)
        layout.addLayout(detail, 3)
        self._show_current()

    def _build_list(self, name: str) -> QVBoxLayout:
        column = QVBoxLayout()
        self.list = QListWidget(self)
        self.list.setObjectName(f"{name}.list")
        self.list.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.list.setMinimumWidth(170)
        self.list.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        # Long titles are elided (the tooltip has them whole), never scrolled sideways.
        self.list.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.list.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.list.currentRowChanged.connect(self._select)
        column.addWidget(self.list)
        buttons = QHBoxLayout()
        buttons.setSpacing(4)
        self.add_button = self._tool("Add", f"{name}.add", f"Add a {self.noun.rstrip('s')}",
                                     self.add_entry)
        self.remove_button = self._tool("Remove", f"{name}.remove", "Remove the selected one",
                                        self.remove_entry)
        self.up_button = self._tool("↑", f"{name}.up", "Move up", lambda: self.move_entry(-1))
        self.down_button = self._tool("↓", f"{name}.down", "Move down",
                                      lambda: self.move_entry(1))
        for button in (self.add_button, self.remove_button, self.up_button, self.down_button):
            button.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)
            buttons.addWidget(button)
        buttons.addStretch(1)
        column.addLayout(buttons)
        column.addStretch(1)
        return column

    def _tool(self, text: str, name: str, tip: str, slot: Callable[[], None]) -> QPushButton:
        button = QPushButton(text, self)
        button.setObjectName(name)
        button.setToolTip(tip)
        button.setAutoDefault(False)
        button.clicked.connect(slot)
        return button

    # -- data -----------------------------------------------------------------------------

    def set_entries(self, entries: Sequence[Document] | None) -> None:
        self.entries = [copy.deepcopy(entry) for entry in entries or [] if isinstance(entry, dict)]
        self._current = None
        self.list.blockSignals(True)
        self.list.clear()
        for entry in self.entries:
            self._append_item(entry)
        self.list.blockSignals(False)
        self._select(0 if self.entries else -1)

    def value(self) -> list[Document]:
        self._commit()
        return copy.deepcopy(self.entries)

    def _item_text(self, entry: Document) -> str:
        return self.title_of(entry) or f"(new {self.noun.rstrip('s')})"

    def _append_item(self, entry: Document) -> None:
        self.list.addItem(self._item_text(entry))
        self._retitle(self.list.count() - 1)

    def _retitle(self, row: int) -> None:
        item = self.list.item(row)
        item.setText(self._item_text(self.entries[row]))
        # The text comes from an imported file: escaped inside <p>, so Qt shows it as
        # written and never loads markup from it (a tooltip would be read as rich text).
        item.setToolTip(f"<p>{html.escape(item.text())}</p>")

    def _commit(self) -> None:
        if self._current is not None and self._current < len(self.entries):
            self.form.store(self.entries[self._current])

    # -- actions --------------------------------------------------------------------------

    def _select(self, row: int) -> None:
        self._commit()
        self._current = row if 0 <= row < len(self.entries) else None
        if self._current is not None and self.list.currentRow() != row:
            self.list.blockSignals(True)
            self.list.setCurrentRow(row)
            self.list.blockSignals(False)
        self._show_current()

    def _fit_list_height(self) -> None:
        """As tall as its entries (an empty list is one short line), at most ``_list_max``."""
        row = self.list.sizeHintForRow(0) if self.list.count() else 22
        wanted = row * max(self.list.count(), 1) + 2 * self.list.frameWidth() + 6
        self.list.setFixedHeight(min(max(wanted, 36), self._list_max))

    def _show_current(self) -> None:
        self._fit_list_height()
        has_entry = self._current is not None
        self.form.setVisible(has_entry)
        self.empty_hint.setVisible(not self.entries)
        self.form.load(self.entries[self._current] if has_entry else None)
        self.remove_button.setEnabled(has_entry)
        self.up_button.setEnabled(has_entry and self._current > 0)
        self.down_button.setEnabled(has_entry and self._current < len(self.entries) - 1)

    def add_entry(self) -> None:
        self._commit()
        self.entries.append({})
        self._append_item({})
        self._select(len(self.entries) - 1)
        self.form.first_input().setFocus(Qt.FocusReason.OtherFocusReason)
        self.edited.emit()

    def remove_entry(self) -> None:
        if self._current is None:
            return
        row = self._current
        self._current = None  # nothing to commit: it goes
        del self.entries[row]
        self.list.blockSignals(True)
        self.list.takeItem(row)
        self.list.blockSignals(False)
        self._select(min(row, len(self.entries) - 1))
        self.edited.emit()

    def move_entry(self, step: int) -> None:
        if self._current is None:
            return
        row, target = self._current, self._current + step
        if not 0 <= target < len(self.entries):
            return
        self._commit()
        self.entries[row], self.entries[target] = self.entries[target], self.entries[row]
        for position in (row, target):
            self._retitle(position)
        self._current = None
        self._select(target)
        self.edited.emit()

    def _on_form_edited(self) -> None:
        self._commit()
        if self._current is not None:
            self._retitle(self._current)
        self.edited.emit()

    def titles(self) -> list[str]:
        return [self.list.item(row).text() for row in range(self.list.count())]


# -- a section with a header that folds it -----------------------------------------------


class CollapsibleSection(QWidget):
    """A bold header (with a one-line summary while folded) over its content."""

    def __init__(self, title: str, content: QWidget, parent: QWidget | None = None, *,
                 expanded: bool = True, error_field: str | None = None):
        super().__init__(parent)
        self.title = title
        self.content = content
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        self.header = QToolButton(self)
        self.header.setObjectName(f"section:{title}")
        self.header.setCheckable(True)
        self.header.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.header.setAutoRaise(True)
        self.header.setStyleSheet("QToolButton { font-weight: 600; border: none; }")
        self.header.toggled.connect(self.set_expanded)
        row = QHBoxLayout()
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(10)
        row.addWidget(self.header, 0, Qt.AlignmentFlag.AlignLeft)
        # How sure an import's reading of this section is: plain text, never markup.
        self.note = PlainLabel(self)
        self.note.setObjectName(f"note:{title}")
        self.note.setTextFormat(Qt.TextFormat.PlainText)
        self.note.setWordWrap(True)
        self.note.hide()
        row.addWidget(self.note, 1)
        layout.addLayout(row)
        self.error = ErrorLabel(error_field or f"section:{title}", self)
        layout.addWidget(self.error)
        layout.addWidget(content)
        self._summary = ""
        self.header.setChecked(expanded)
        self.set_expanded(expanded)

    def set_expanded(self, expanded: bool) -> None:
        self.header.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
        self.content.setVisible(expanded)
        if self.header.isChecked() != expanded:
            self.header.setChecked(expanded)
        self._show_header()

    def set_note(self, text: str, color: str | None = None, tip: str = "") -> None:
        """A note beside the header (``""`` hides it), in ``color`` when given."""
        self.note.setText(text)
        self.note.setToolTip(plain_tooltip(tip))
        self.note.setStyleSheet(f"color: {color};" if color else "")
        self.note.setVisible(bool(text))

    def set_summary(self, summary: str) -> None:
        self._summary = summary
        self._show_header()

    def _show_header(self) -> None:
        folded = not self.header.isChecked() and self._summary
        self.header.setText(f"{self.title} — {self._summary}" if folded else self.title)

    @property
    def expanded(self) -> bool:
        return self.header.isChecked()
