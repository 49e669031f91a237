"""The profile panel next to Discover (Pipelines).

While no profile is saved it is the first-run panel: Discover alone only finds postings,
so it offers the three ways in — import a résumé, try the sample profile, type it in.
While the saved profile is the bundled sample it is a short marker with "Import your
résumé…". A real profile hides it. Unknown (not read yet) hides it too: unknown is not
"missing".
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from desktop.plain_text import PlainLabel
from desktop.views.partials.profile_import import IMPORT_KINDS, notice_frame, notice_label
from desktop.views.status_indicators import COLORS

PROFILE_NOTICE_TITLE = ("Add your profile so JobCtrl can score postings and write your "
                        "résumé and letters.")
PROFILE_NOTICE_DETAIL = ("Without it, Discover only finds postings: scoring, résumé "
                         "tailoring and cover letters wait until a profile is saved.")
IMPORT_LINE = f"Import your résumé ({IMPORT_KINDS}) — or drop the file on this window."


def sample_marker_text(name: str | None) -> str:
    who = f" ({name})" if name else ""
    return f"Using the sample profile{who} — not yours. Import your résumé to replace it."


class ProfilePrompt(QWidget):
    import_requested = Signal()
    sample_requested = Signal()
    type_requested = Signal()

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("profilePrompt")
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        frame = notice_frame("profileNotice", "info", self)
        outer.addWidget(frame)
        layout = QVBoxLayout(frame)
        layout.setContentsMargins(12, 8, 8, 8)
        layout.setSpacing(6)
        self.text = notice_label(frame, "profileNoticeText", rich=True)
        layout.addWidget(self.text)
        buttons = QHBoxLayout()
        self.import_button = self._button(frame, "Import your résumé…", "importResumeButton",
                                          self.import_requested, IMPORT_LINE)
        self.sample_button = self._button(frame, "Try it with a sample profile",
                                          "trySampleButton", self.sample_requested,
                                          "Load a made-up profile to see what JobCtrl does")
        self.type_button = self._button(frame, "Type it in myself", "addProfileButton",
                                        self.type_requested, "Open Settings at Your profile")
        for button in (self.import_button, self.sample_button, self.type_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        layout.addLayout(buttons)
        self.progress = PlainLabel(frame)
        self.progress.setObjectName("profilePromptProgress")
        self.progress.setWordWrap(True)
        self.progress.setTextFormat(Qt.TextFormat.PlainText)
        self.progress.hide()
        layout.addWidget(self.progress)
        self.state: str | None = None
        self.hide()

    def _button(self, parent: QWidget, text: str, name: str, signal, tip: str) -> QPushButton:
        button = QPushButton(text, parent)
        button.setObjectName(name)
        button.setToolTip(tip)
        button.clicked.connect(signal)
        return button

    def show_state(self, saved: bool | None, sample: bool = False, name: str | None = None) -> None:
        """``saved`` None: not read yet; False: nothing saved (first run)."""
        self.state = None if saved is None else "sample" if saved and sample else \
            "missing" if not saved else "real"
        if self.state == "missing":
            self.text.setText(f"<b>{html.escape(PROFILE_NOTICE_TITLE)}</b><br>"
                              f"{html.escape(PROFILE_NOTICE_DETAIL)}<br>{html.escape(IMPORT_LINE)}")
        elif self.state == "sample":
            self.text.setText(f"<b>{html.escape(sample_marker_text(name))}</b>")
        self.sample_button.setVisible(self.state == "missing")
        self.type_button.setVisible(self.state == "missing")
        self.setVisible(self.state in ("missing", "sample"))

    def show_progress(self, text: str, tone: str) -> None:
        self.progress.setText(text)
        self.progress.setStyleSheet(f"color: {COLORS[tone]};")
        self.progress.setVisible(bool(text))
