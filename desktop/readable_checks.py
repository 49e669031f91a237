"""The check-box proxy style, imported once the window's first frame is painted.

Its own module because subclassing ``QProxyStyle`` builds the Python enums of ``QStyle``
(several milliseconds of CPU) that nothing on the way to the first frame needs.
:func:`desktop.theme.install_checks_style` installs it.
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QProxyStyle, QStyle, QStyleOptionViewItem

# The window colour the check-box frame is derived from on a dark base (Fusion darkens it
# by 40 %: #8a8a8a gives a #626262 frame, plainly visible on #242424).
DARK_CHECK_FRAME_BASE = "#8a8a8a"

_CHECK = QStyle.PrimitiveElement.PE_IndicatorItemViewItemCheck
_BASE = QPalette.ColorRole.Base
_WINDOW = QPalette.ColorRole.Window
_FRAME_BASE = QColor(DARK_CHECK_FRAME_BASE)


class ReadableChecksStyle(QProxyStyle):
    """The platform's style, except that a list's check boxes keep a visible frame on a
    dark base: Fusion outlines them in the window colour darkened, which on a dark palette
    is the list's own background, so an unticked source looked like no box at all."""

    def drawPrimitive(self, element, option, painter, widget=None):  # noqa: N802 - Qt's name
        if element == _CHECK and option.palette.color(_BASE).lightness() < 128:
            option = QStyleOptionViewItem(option)
            option.palette.setColor(_WINDOW, _FRAME_BASE)
        super().drawPrimitive(element, option, painter, widget)
