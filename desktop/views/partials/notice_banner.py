"""The in-window stand-in for a desktop notification ("Discover finished", "Today's
budget is used up") where no tray or notification service exists: a banner that stays
until dismissed, so a notice that arrived while the user looked away is not lost."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

STYLES = {
    "info": "background: #e8f1fd; border: 1px solid #9cc2f5;",
    "warning": "background: #fff4e0; border: 1px solid #f0c27a;",
    "critical": "background: #fdecea; border: 1px solid #f1a8a2;",
}


class NoticeBanner(QFrame):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("noticeBanner")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(10, 6, 6, 6)
        self.message = QLabel(self)
        self.message.setObjectName("noticeMessage")
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.RichText)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.dismiss = QToolButton(self)
        self.dismiss.setObjectName("noticeDismiss")
        self.dismiss.setText("Dismiss")
        self.dismiss.setAutoRaise(True)
        self.dismiss.clicked.connect(self.hide)
        layout.addWidget(self.message, 1)
        layout.addWidget(self.dismiss, 0, Qt.AlignmentFlag.AlignTop)
        self.title = ""
        self.text = ""
        self.hide()

    def show_notice(self, title: str, text: str, level: str = "info") -> None:
        self.title, self.text = title, text
        self.message.setText(f"<b>{html.escape(title)}</b> — {html.escape(text)}")
        self.setStyleSheet(f"#noticeBanner {{ {STYLES.get(level, STYLES['info'])}"
                           " border-radius: 6px; } #noticeMessage { border: none;"
                           " background: transparent; }")
        self.show()
