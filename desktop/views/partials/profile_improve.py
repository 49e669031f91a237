""""Improve with AI" in the draft review of Settings → Your profile.

Shown under the draft banner only while an imported draft is reviewed, the draft has the
file's text, and a model is configured (``GET /v1/profile/import/improve``): the button,
the model's name and whether it may cost money. A click sends the draft being reviewed
(``POST /v1/profile/import/improve``) in the background, like ``ProfileImporter``; the
answer comes back by the ``improved`` signal for the page to show as the draft, and a
plain note says what was removed as not found in the file. Nothing is saved here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QPushButton, QVBoxLayout, QWidget

from desktop.formatting import describe_api_error
from desktop.plain_text import PlainLabel
from desktop.presenters.profile_improve import (
    busy_words,
    failure_words,
    offer_words,
    result_note,
)
from desktop.qt_compat import emit
from desktop.shell import ShellController
from desktop.views.partials.profile_import import notice_frame

MAX_TEXT_CHARS = 60_000
MAX_LINE_CHARS = 2_000
MAX_LINES = 1_000
SOURCE_KEYS = ("fileName", "format", "pages", "characters")


def improve_body(profile: dict[str, Any], answer: dict[str, Any]) -> dict[str, Any]:
    """The request: the draft's text and résumé as reviewed now, the import's unplaced
    lines and source (only the keys the route takes)."""
    source = answer.get("source") or {}
    return {
        "text": (profile.get("resumeText") or "")[:MAX_TEXT_CHARS],
        "draft": profile.get("resume") or {},
        "unplaced": [str(line)[:MAX_LINE_CHARS] for line in answer.get("unplaced") or []
                     ][:MAX_LINES],
        "source": {key: source[key] for key in SOURCE_KEYS if key in source} or None,
    }


class ImprovePanel(QFrame):
    """The offer, the busy line and the result note of "Improve with AI"."""

    improved = Signal(object)  # the improve answer: profile, unplaced, source, dropped, model

    def __init__(self, controller: ShellController, parent: QWidget | None = None):
        super().__init__(parent)
        self.controller = controller
        self.offer: dict[str, Any] | None = None
        self._answer: dict[str, Any] = {}
        self._draft: Callable[[], dict[str, Any]] = dict
        self._generation = 0  # a late answer for a draft no longer reviewed is ignored
        self.busy = False
        frame = notice_frame("improveBox", "info", self)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(0, 0, 0, 0)
        outer.addWidget(frame)
        row = QHBoxLayout(frame)
        row.setContentsMargins(12, 6, 8, 6)
        self.words = PlainLabel(frame)
        self.words.setObjectName("improveWords")
        self.words.setWordWrap(True)
        self.words.setTextFormat(Qt.TextFormat.PlainText)
        self.button = QPushButton("Improve with AI", frame)
        self.button.setObjectName("improveWithAi")
        self.button.clicked.connect(self.start)
        row.addWidget(self.words, 1)
        row.addWidget(self.button, 0, Qt.AlignmentFlag.AlignTop)
        self.hide()

    @property
    def import_answer(self) -> dict[str, Any]:
        """The import answer of the draft under review (what the offer was made for)."""
        return self._answer

    # -- offering -------------------------------------------------------------------------

    def offer_for(self, answer: dict[str, Any], draft: Callable[[], dict[str, Any]]) -> None:
        """A draft is open for review: offer the step when it can run. ``draft`` gives the
        draft as the editor holds it when the button is pressed."""
        self._generation += 1
        self._answer, self._draft = answer, draft
        self.busy = False
        self.hide()
        if not ((answer.get("profile") or {}).get("resumeText") or "").strip():
            return  # a JSON Resume import has no text to check a reading against
        generation = self._generation
        self.controller.call(lambda client: client.improve_offer(),
                             lambda offer: self._on_offer(generation, offer),
                             lambda _error: None, name="profile-improve-offer")

    def _on_offer(self, generation: int, offer: dict[str, Any]) -> None:
        if generation != self._generation:
            return
        self.offer = offer
        if not offer.get("available"):
            self.hide()
            return
        self.words.setText(offer_words(offer))
        self.button.setVisible(True)
        self.button.setEnabled(True)
        self.show()

    def withdraw(self) -> None:
        """The draft was saved or discarded: nothing to improve any more."""
        self._generation += 1
        self.busy = False
        self.hide()

    # -- running --------------------------------------------------------------------------

    def start(self) -> None:
        if self.busy or not self.offer:
            return
        self.busy = True
        generation = self._generation
        body = improve_body(self._draft(), self._answer)
        self.button.setEnabled(False)
        self.words.setText(busy_words(self.offer))

        def done(answer: dict[str, Any]) -> None:
            if generation != self._generation:
                return
            self.busy = False
            self.button.setVisible(False)  # one reading per import; the note stays
            self.words.setText(result_note(answer))
            emit(self.improved, answer)

        def failed(error: Exception) -> None:
            if generation != self._generation:
                return
            self.busy = False
            self.button.setEnabled(True)
            self.words.setText(failure_words(describe_api_error(error)))

        self.controller.call(lambda client: client.improve_import(body), done, failed,
                             name="profile-improve")
