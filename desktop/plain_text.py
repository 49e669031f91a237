"""Untrusted text in the window: shown as the characters it is, never as Qt rich text.

Postings, boards, model answers, imported files and servers' error messages are untrusted
(docs: DESIGN.md, Security). Qt shows a label (its default ``Qt.AutoText``) and a tooltip
as HTML as soon as ``Qt.mightBeRichText`` guesses the text is markup, and Qt's HTML loads
``<img src>`` from local files: a posting whose location was ``<img src="/dev/zero">``
made the window read /dev/zero until it ran out of memory. So:

- a label that shows such text is a ``PlainLabel`` (or goes through ``plain_label``):
  plain text whatever the text looks like;
- a label that mixes our own markup with such text goes through ``rich_label`` and
  escapes every untrusted part with ``html.escape``;
- a tooltip (``setToolTip``, an item model's ``ToolTipRole``, the tray icon's) that may
  hold such text goes through ``plain_tooltip``;
- a rich text view (``QTextBrowser``) shows ``setPlainText`` or escaped text, and a
  posting's own HTML only after the backend's allowlist cleaner (no images).
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget


def plain_tooltip(text: str | None) -> str | None:
    """``text`` as a tooltip that Qt shows literally. Text with no ``<`` and no ``&`` is
    plain to Qt already and comes back unchanged; other text comes back escaped in a
    paragraph that keeps its line breaks (Qt then renders the escaped HTML, i.e. the
    characters themselves, and loads nothing)."""
    if not text or ("<" not in text and "&" not in text):
        return text
    return f"<p style='white-space:pre-wrap'>{html.escape(text, quote=False)}</p>"


_ANGLES = str.maketrans({"<": "\u2039", ">": "\u203a"})


def notification_text(text: str) -> str:
    """``text`` for the platform's notification: some Linux notification servers read a
    subset of markup (``<img>`` included) in the body, others show it as typed, so no
    escaping reads right everywhere. Angle brackets become look-alike quotes (‹ ›): no tag
    can form, and the words read the same on every platform."""
    return text.translate(_ANGLES)


def plain_label(label: QLabel) -> QLabel:
    """``label`` set to show its text as plain text, whatever the text looks like."""
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label


def rich_label(label: QLabel) -> QLabel:
    """``label`` set to rich text on purpose: its every untrusted part must be escaped
    (``html.escape``). Explicit, so escaped text never shows as ``&amp;`` because Qt's
    guess said plain."""
    label.setTextFormat(Qt.TextFormat.RichText)
    return label


class PlainLabel(QLabel):
    """A label for untrusted text: plain text from the start (the format is set before
    the first text, so no markup is ever parsed)."""

    def __init__(self, text: str | QWidget | None = None, parent: QWidget | None = None):
        if isinstance(text, QWidget):
            text, parent = None, text
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)
        if text:
            self.setText(text)
