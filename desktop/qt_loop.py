"""qasync's event loop with the guard of ``desktop.qt_compat`` (see there why).

Its own module: importing it loads qasync and asyncio, which the window's first frame
does without (desktop/app.py starts this loop once the window has painted).
"""

from __future__ import annotations

import qasync

from desktop.qt_compat import DROPPED_PER_EMIT, give_back_true


class QEventLoop(qasync.QEventLoop):
    """qasync's loop with the same guard where it emits or disconnects a signal."""

    def call_soon_threadsafe(self, callback, *args, context=None):
        handle = super().call_soon_threadsafe(callback, *args, context=context)
        if DROPPED_PER_EMIT:
            give_back_true()
        return handle

    def _add_reader(self, fd, callback, *args):
        replaced = fd in (self._read_notifiers or ())  # qasync disconnects the old one
        super()._add_reader(fd, callback, *args)
        if replaced and DROPPED_PER_EMIT:
            give_back_true()

    def _remove_reader(self, fd):
        removed = super()._remove_reader(fd)
        if removed and DROPPED_PER_EMIT:
            give_back_true()
        return removed

    def _add_writer(self, fd, callback, *args):
        replaced = fd in (self._write_notifiers or ())
        super()._add_writer(fd, callback, *args)
        if replaced and DROPPED_PER_EMIT:
            give_back_true()

    def _remove_writer(self, fd):
        removed = super()._remove_writer(fd)
        if removed and DROPPED_PER_EMIT:
            give_back_true()
        return removed
