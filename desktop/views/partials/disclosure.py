"""A folded section under a toggle (collapsed by default): the base of the "Details" and
"Technical details" disclosures. The caller fills ``body_layout``."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QSizePolicy, QToolButton, QVBoxLayout, QWidget


class Disclosure(QWidget):
    expanded_changed = Signal(bool)

    def __init__(self, title: str, parent: QWidget | None = None, *, name: str = "disclosure"):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        self.toggle = QToolButton(self)
        self.toggle.setObjectName(f"{name}Toggle")
        self.toggle.setText(title)
        self.toggle.setCheckable(True)
        self.toggle.setChecked(False)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.toggled.connect(self.set_expanded)
        self.body = QFrame(self)
        self.body.setObjectName(f"{name}Body")
        self.body.setStyleSheet(f"#{name}Body {{ border-left: 2px solid palette(mid); }}")
        self.body_layout = QVBoxLayout(self.body)
        self.body_layout.setContentsMargins(10, 2, 4, 2)
        # Never squeezed below what it needs when open: in a scroll column the page
        # scrolls instead of overlapping the rows.
        for widget in (self, self.body):
            widget.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
        layout.addWidget(self.toggle, 0, Qt.AlignmentFlag.AlignLeft)
        layout.addWidget(self.body)
        self.body.setVisible(False)

    @property
    def expanded(self) -> bool:
        return self.toggle.isChecked()

    def set_expanded(self, expanded: bool) -> None:
        if self.toggle.isChecked() != expanded:
            self.toggle.setChecked(expanded)  # re-enters through toggled
            return
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
        self.body.setVisible(expanded)
        self.expanded_changed.emit(expanded)
