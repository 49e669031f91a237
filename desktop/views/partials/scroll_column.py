"""A view's page that scrolls: a frameless, resizable scroll area around one widget with a
vertical layout the caller fills. Views use it so their content stays reachable in a small
window instead of forcing the window taller or wider than the screen."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QScrollArea, QVBoxLayout, QWidget


def scroll_column(parent: QWidget, *, margins: tuple[int, int, int, int], spacing: int,
                  wrap_width: bool = False) -> tuple[QScrollArea, QWidget, QVBoxLayout]:
    """(scroll area, its content widget, the content's layout). ``wrap_width``: no
    horizontal scroll bar; text wraps to the pane's width and only long content scrolls."""
    scroll = QScrollArea(parent)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    if wrap_width:
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    body = QWidget(scroll)
    scroll.setWidget(body)
    layout = QVBoxLayout(body)
    layout.setContentsMargins(*margins)
    layout.setSpacing(spacing)
    return scroll, body, layout


def fill_with_scroll_column(owner: QWidget, **options) -> tuple[QScrollArea, QWidget, QVBoxLayout]:
    """``scroll_column`` as the whole of ``owner`` (edge to edge)."""
    outer = QVBoxLayout(owner)
    outer.setContentsMargins(0, 0, 0, 0)
    scroll, body, layout = scroll_column(owner, **options)
    outer.addWidget(scroll, 1)
    return scroll, body, layout
