"""The application board's widgets: one column per stage, cards that drag from column to
column, and the card's menu. No I/O: a drop or a menu choice becomes a signal the view
turns into an API call; the board shows the answer on its next refresh (a dropped card is
never moved optimistically, so a refused move cannot leave it in the wrong column)."""

from __future__ import annotations

from datetime import date
from typing import Any

from PySide6.QtCore import QMimeData, QPoint, QRect, QRectF, QSize, Qt, Signal
from PySide6.QtGui import (
    QAction,
    QColor,
    QDragEnterEvent,
    QDragMoveEvent,
    QDropEvent,
    QFont,
    QFontMetrics,
    QGuiApplication,
    QPainter,
    QPalette,
    QPen,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QLabel,
    QListView,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QVBoxLayout,
    QWidget,
)

from backend.desktop_contract import APPLICATION_STAGE_LABELS, APPLICATION_STAGES
from desktop.plain_text import plain_tooltip
from desktop.presenters.applications import card_lines, card_tooltip
from desktop.theme import COLORS

CARD_MIME = "application/x-jobctrl-application"
KEY_ROLE = Qt.ItemDataRole.UserRole
CARD_ROLE = Qt.ItemDataRole.UserRole + 1
COLUMN_MIN_WIDTH = 128
CARD_PADDING = 7
CARD_GAP = 3
# Columns that end an application, set apart from the way forward.
ENDINGS = frozenset({"rejected", "withdrawn", "ghosted"})


def card_text(card: dict[str, Any], today: date) -> str:
    return "\n".join([card.get("title") or "Untitled", *card_lines(card, today)])


def card_look(card: dict[str, Any], today: date) -> dict[str, Any]:
    """What the card delegate paints: the title, its lines, and which line is the due
    follow-up (amber) or the silence past the threshold (muted)."""
    lines = card_lines(card, today)
    due = bool((card.get("followUp") or {}).get("due"))
    return {"title": card.get("title") or "Untitled", "lines": lines, "due": due,
            "warn": {i for i, line in enumerate(lines)
                     if (due and line.startswith(("Follow up", "Follow-up")))},
            "muted": {i for i, line in enumerate(lines) if line.startswith("No reply yet")}}


class CardDelegate(QStyledItemDelegate):
    """A card: a rounded frame (accent when selected, amber when a follow-up is due), the
    title in bold, then its lines, each wrapped to the column's width."""

    def _fonts(self, option: QStyleOptionViewItem) -> tuple[QFont, QFont]:
        bold = QFont(option.font)
        bold.setBold(True)
        return bold, QFont(option.font)

    def _blocks(self, option: QStyleOptionViewItem, look: dict[str, Any], width: int):
        bold, plain = self._fonts(option)
        flags = int(Qt.TextFlag.TextWordWrap)
        blocks = [(look["title"], bold, "text")]
        for i, line in enumerate(look["lines"]):
            tone = "warn" if i in look["warn"] else ("muted" if i in look["muted"] else "text")
            blocks.append((line, plain, tone))
        measured = []
        for text, font, tone in blocks:
            rect = QFontMetrics(font).boundingRect(QRect(0, 0, width, 10_000), flags, text)
            measured.append((text, font, tone, rect.height()))
        return measured

    def sizeHint(self, option: QStyleOptionViewItem, index) -> QSize:  # noqa: N802 - Qt API
        look = index.data(CARD_ROLE)
        if not look:
            return super().sizeHint(option, index)
        # The column's width: a card is as wide as the column and as tall as its text.
        view = self.parent()
        available = view.viewport().width() - 2 * view.spacing() if view else option.rect.width()
        width = max(available, COLUMN_MIN_WIDTH) - 2 * CARD_PADDING - 2
        height = sum(block[3] for block in self._blocks(option, look, width))
        return QSize(width, height + 2 * CARD_PADDING + 2 * CARD_GAP)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index) -> None:
        look = index.data(CARD_ROLE)
        if not look:
            super().paint(painter, option, index)
            return
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        frame = QRectF(option.rect).adjusted(1, CARD_GAP, -1, -CARD_GAP)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        edge = COLORS["accent"] if selected else (COLORS["busy"] if look["due"] else COLORS["idle"])
        painter.setPen(QPen(QColor(edge), 2 if selected or look["due"] else 1))
        # The application's palette: the column's own is see-through (its style sheet).
        palette = QGuiApplication.palette()
        painter.setBrush(palette.color(QPalette.ColorRole.Base))
        painter.drawRoundedRect(frame, 6, 6)
        width = int(frame.width()) - 2 * CARD_PADDING
        top = frame.top() + CARD_PADDING
        text_color = palette.color(QPalette.ColorRole.Text)
        tones = {"text": text_color, "warn": QColor(COLORS["busy"]), "muted": QColor(COLORS["idle"])}
        for text, font, tone, height in self._blocks(option, look, width):
            painter.setFont(font)
            painter.setPen(tones[tone])
            painter.drawText(QRectF(frame.left() + CARD_PADDING, top, width, height),
                             int(Qt.TextFlag.TextWordWrap), text)
            top += height
        painter.restore()


class BoardColumn(QListWidget):
    """One stage's cards. Drags carry the job key in ``CARD_MIME``; a drop from another
    column asks for a move (``card_dropped``)."""

    card_dropped = Signal(str, str)  # job key, stage

    def __init__(self, stage: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.stage = stage
        self.setObjectName(f"column-{stage}")
        self.setDragEnabled(True)
        self.setAcceptDrops(True)
        self.setDragDropMode(QAbstractItemView.DragDropMode.DragDrop)
        self.setDefaultDropAction(Qt.DropAction.MoveAction)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.setWordWrap(True)
        self.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.setSpacing(4)
        self.setVerticalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setMinimumWidth(COLUMN_MIN_WIDTH)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.setResizeMode(QListView.ResizeMode.Adjust)  # re-wrap the cards on resize
        self.setItemDelegate(CardDelegate(self))
        # Transparent over the column without a style sheet: one on the list would style
        # its scroll bar too (Qt's style-sheet style drew the handle solid black).
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.viewport().setAutoFillBackground(False)

    def keys(self) -> list[str]:
        return [self.item(row).data(KEY_ROLE) for row in range(self.count())]

    def item_for(self, job_key: str) -> QListWidgetItem | None:
        return next((self.item(row) for row in range(self.count())
                     if self.item(row).data(KEY_ROLE) == job_key), None)

    # -- drag and drop ----------------------------------------------------------------------

    def mimeTypes(self) -> list[str]:  # noqa: N802 - Qt API
        return [CARD_MIME]

    def mimeData(self, items: list[QListWidgetItem]) -> QMimeData:  # noqa: N802 - Qt API
        data = QMimeData()
        if items:
            data.setData(CARD_MIME, str(items[0].data(KEY_ROLE)).encode("utf-8"))
        return data

    def supportedDropActions(self) -> Qt.DropAction:  # noqa: N802 - Qt API
        return Qt.DropAction.MoveAction | Qt.DropAction.CopyAction

    def _accepts(self, event: QDragEnterEvent | QDragMoveEvent | QDropEvent) -> bool:
        return event.mimeData().hasFormat(CARD_MIME) and event.source() is not self

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 - Qt API
        if self._accepts(event):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dragMoveEvent(self, event: QDragMoveEvent) -> None:  # noqa: N802 - Qt API
        if self._accepts(event):
            event.acceptProposedAction()
        else:
            event.ignore()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 - Qt API
        if not self._accepts(event):
            event.ignore()
            return
        job_key = bytes(event.mimeData().data(CARD_MIME)).decode("utf-8")
        # Copy, not move: the source keeps its card until the board refreshes with the
        # recorded move (a refused move then leaves nothing to put back).
        event.setDropAction(Qt.DropAction.CopyAction)
        event.accept()
        self.card_dropped.emit(job_key, self.stage)


class ApplicationBoard(QWidget):
    """The columns side by side, each with its title and count."""

    move_requested = Signal(str, str)        # job key, stage
    card_selected = Signal(str)              # job key ("" when none)
    menu_requested = Signal(str, QPoint)     # job key, global position

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.columns: dict[str, BoardColumn] = {}
        self.titles: dict[str, QLabel] = {}
        self.cards: dict[str, dict[str, Any]] = {}
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(6)
        for stage in APPLICATION_STAGES:
            layout.addWidget(self._column(stage), 1)

    def _column(self, stage: str) -> QFrame:
        frame = QFrame(self)
        frame.setObjectName(f"columnFrame-{stage}")
        tone = COLORS["idle"] if stage in ENDINGS else COLORS["accent"]
        frame.setStyleSheet(f"#columnFrame-{stage} {{ border-top: 3px solid {tone}; }}")
        box = QVBoxLayout(frame)
        box.setContentsMargins(0, 6, 0, 0)
        title = QLabel(APPLICATION_STAGE_LABELS[stage], frame)
        title.setObjectName(f"columnTitle-{stage}")
        title.setStyleSheet("font-weight: 600;")
        column = BoardColumn(stage, frame)
        column.card_dropped.connect(self.move_requested)
        column.itemSelectionChanged.connect(lambda c=column: self._selected(c))
        column.customContextMenuRequested.connect(
            lambda pos, c=column: self._menu(c, pos))
        box.addWidget(title)
        box.addWidget(column, 1)
        self.columns[stage], self.titles[stage] = column, title
        return frame

    def set_cards(self, cards: list[dict[str, Any]], today: date) -> None:
        """Show these cards, keeping the selected one selected."""
        selected = self.selected_key()
        self.cards = {card["jobKey"]: card for card in cards}
        for stage, column in self.columns.items():
            mine = [card for card in cards if card.get("stage") == stage]
            column.blockSignals(True)
            column.clear()
            for card in mine:
                item = QListWidgetItem(card_text(card, today))
                item.setData(KEY_ROLE, card["jobKey"])
                item.setToolTip(plain_tooltip(card_tooltip(card, today)))
                item.setData(CARD_ROLE, card_look(card, today))
                column.addItem(item)
            column.blockSignals(False)
            self.titles[stage].setText(f"{APPLICATION_STAGE_LABELS[stage]} ({len(mine)})")
        if selected and not self.select(selected):
            self.card_selected.emit("")

    def column_of(self, job_key: str) -> str | None:
        return next((stage for stage, column in self.columns.items()
                     if column.item_for(job_key) is not None), None)

    def select(self, job_key: str) -> bool:
        for column in self.columns.values():
            item = column.item_for(job_key)
            if item is not None:
                column.setCurrentItem(item)
                item.setSelected(True)
                return True
        return False

    def selected_key(self) -> str | None:
        for column in self.columns.values():
            items = column.selectedItems()
            if items:
                return items[0].data(KEY_ROLE)
        return None

    def _selected(self, column: BoardColumn) -> None:
        items = column.selectedItems()
        if not items:
            return
        for other in self.columns.values():  # one selected card on the whole board
            if other is not column:
                other.blockSignals(True)
                other.clearSelection()
                other.blockSignals(False)
        self.card_selected.emit(items[0].data(KEY_ROLE))

    def _menu(self, column: BoardColumn, pos: QPoint) -> None:
        item = column.itemAt(pos)
        if item is not None:
            column.setCurrentItem(item)
            self.menu_requested.emit(item.data(KEY_ROLE), column.viewport().mapToGlobal(pos))


def card_menu(parent: QWidget, card: dict[str, Any]) -> tuple[QMenu, dict[str, QAction]]:
    """The card's menu; the actions are keyed ``move:<stage>``, ``undo``, ``snooze:<days>``,
    ``done``, ``interview``, ``email``, ``job``."""
    menu = QMenu(parent)
    actions: dict[str, QAction] = {}
    move_to = menu.addMenu("Move to")
    for stage in APPLICATION_STAGES:
        action = move_to.addAction(APPLICATION_STAGE_LABELS[stage])
        action.setEnabled(stage != card.get("stage"))
        actions[f"move:{stage}"] = action
    last = card.get("lastMove")
    undo = menu.addAction("Undo last move" if last else "Nothing to undo")
    undo.setEnabled(bool(last))
    actions["undo"] = undo
    menu.addSeparator()
    open_follow_up = (card.get("followUp") or {}).get("status") == "scheduled"
    for days, label in ((3, "Follow up in 3 days"), (7, "Follow up in a week")):
        actions[f"snooze:{days}"] = menu.addAction(label)
    done = menu.addAction("Follow-up done")
    done.setEnabled(open_follow_up)
    actions["done"] = done
    actions["email"] = menu.addAction("Write a follow-up email…")
    menu.addSeparator()
    actions["interview"] = menu.addAction("Add an interview…")
    actions["job"] = menu.addAction("Show job details")
    return menu, actions
