"""Small pieces every Settings section uses: inline error labels and the 422 reader.

The API answers an invalid save with 422 ``{"error": {"code", "message", "fields"}}``;
the message lists ``field.path: reason`` parts joined by ``; ``. ``field_messages`` splits
it back by the known field names (a reason may itself contain ``; ``), so each message
lands under its own input. Qt-free parts first.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import (
    QAbstractScrollArea,
    QAbstractSpinBox,
    QApplication,
    QComboBox,
    QLabel,
    QWidget,
)

from desktop.client import ApiRequestError
from desktop.plain_text import PlainLabel
from desktop.theme import COLORS

HINT_STYLE = "color: palette(placeholder-text); font-size: 9pt;"


def field_messages(error: ApiRequestError, prefix: str = "") -> dict[str, str]:
    """``{"discoverySchedule.cron": "Value error, cron must have five fields ..."}``.

    ``prefix`` is put before every field name (e.g. ``profile.`` for the profile route)."""
    fields = list(error.fields or [])
    message = error.message
    # Where each "field: " part starts; the text up to the next one is its reason.
    starts = sorted((message.find(f"{field}: "), field) for field in fields
                    if message.find(f"{field}: ") >= 0)
    found: dict[str, str] = {}
    for index, (start, field) in enumerate(starts):
        end = starts[index + 1][0] if index + 1 < len(starts) else len(message)
        reason = message[start + len(field) + 2:end].strip().rstrip(";").strip()
        found[prefix + field] = _plain(reason)
    for field in fields:  # named but not spelled out in the message
        found.setdefault(prefix + field, "This value is not accepted.")
    return found


def _plain(reason: str) -> str:
    """Pydantic's "Value error, ..." prefix means nothing to a user."""
    for noise in ("Value error, ", "Assertion failed, "):
        reason = reason.removeprefix(noise)
    return reason[:1].upper() + reason[1:] if reason else "This value is not accepted."


def match_fields(messages: dict[str, str], owner: str) -> str | None:
    """The message(s) for one input: ``owner`` is its field path; nested paths under it
    (``sources.1.greenhouse.boardToken`` under ``sources``) count too."""
    hits = [text for field, text in messages.items()
            if field == owner or field.startswith(owner + ".")]
    return " ".join(dict.fromkeys(hits)) or None


class ErrorLabel(PlainLabel):
    """A red line under an input (the server's words, as plain text), hidden while there is
    nothing to say."""

    def __init__(self, field: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.field = field
        self.setObjectName(f"error:{field}")
        self.setStyleSheet(f"color: {COLORS['bad']}; font-size: 9pt;")
        self.setWordWrap(True)
        self.hide()

    def show_message(self, text: str | None) -> None:
        self.setText(text or "")
        self.setVisible(bool(text))


def hint(text: str, parent: QWidget | None = None) -> QLabel:
    label = QLabel(text, parent)
    label.setStyleSheet(HINT_STYLE)
    label.setWordWrap(True)
    return label


class WheelGuard(QObject):
    """In a scrolling form the wheel scrolls the form: a combo box or spin box the user has
    not clicked into would otherwise take the wheel and silently change a setting."""

    def guard(self, widget: QWidget) -> None:
        widget.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # the wheel gives it no focus
        widget.installEventFilter(self)

    def guard_all(self, root: QWidget) -> None:
        for widget in root.findChildren(QWidget):
            if isinstance(widget, QComboBox | QAbstractSpinBox):
                self.guard(widget)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 - Qt API
        if event.type() != QEvent.Type.Wheel or not isinstance(watched, QWidget) \
                or watched.hasFocus():
            return super().eventFilter(watched, event)
        # Handed to the form's scroll bar: Qt passes an ignored wheel event on to the
        # parents only for events from the window system, and this way both scroll.
        area = _scroll_area_of(watched)
        if area is not None:
            QApplication.sendEvent(area.verticalScrollBar(), event)
        event.accept()
        return True


def _scroll_area_of(widget: QWidget) -> QAbstractScrollArea | None:
    parent = widget.parentWidget()
    while parent is not None and not isinstance(parent, QAbstractScrollArea):
        parent = parent.parentWidget()
    return parent
