"""Guards against a reference-count bug of PySide6 6.12.0 on Python 3.11.

There, ``SignalInstance.emit()`` and ``SignalInstance.disconnect()`` return ``True``
without taking a new reference: each call from Python drops one reference to ``True``.
After some thousands (one Discover streams thousands of events) the interpreter aborts
with ``Fatal Python error: bool_dealloc: deallocating True or False``. qasync makes such
calls too: an emit in ``call_soon_threadsafe`` (every executor job, every aiosqlite
call), a disconnect whenever a socket stops being watched (``_remove_reader``, which
asyncio transports call each time they pause reading).

PySide6 6.11.3 (checked) does not drop the reference, and on Python 3.12+ ``True`` is
immortal, so there the probe below finds nothing and these helpers cost one attribute
check. Where the probe finds the drop, the helpers give the reference back after each
such call. Emit the shell's signals with ``emit(signal, ...)``, never ``signal.emit(...)``;
run the loop as ``QEventLoop`` from ``desktop.qt_loop`` (a module of its own, so that
the first frame, which emits signals, paints before qasync and asyncio are imported).
Pinning PySide6 below 6.12 (or to a fixed release) is the real fix; keep the probe test
(tests/desktop) to catch a regression.
"""

from __future__ import annotations

import sys
from typing import Any

from PySide6.QtCore import QObject, Signal, SignalInstance

PROBE_EMITS = 64


class _Probe(QObject):
    ping = Signal()


def true_refs_dropped_per_emit() -> int:
    """How many references to ``True`` one Python-side ``emit()`` loses (0 when sound)."""
    probe = _Probe()
    before = sys.getrefcount(True)
    for _ in range(PROBE_EMITS):
        probe.ping.emit()
    lost = before - sys.getrefcount(True)
    return max(0, round(lost / PROBE_EMITS))


DROPPED_PER_EMIT = true_refs_dropped_per_emit()


def _py_incref():
    import ctypes  # only where the drop was found: ~2 ms before the first frame otherwise

    incref = ctypes.pythonapi.Py_IncRef
    incref.argtypes = [ctypes.py_object]
    incref.restype = None
    return incref


_incref = _py_incref() if DROPPED_PER_EMIT else None


def give_back_true() -> None:
    for _ in range(DROPPED_PER_EMIT):
        _incref(True)


def emit(signal: SignalInstance, *args: Any) -> None:
    """``signal.emit(*args)`` without draining ``True`` on affected PySide6 releases."""
    signal.emit(*args)
    if DROPPED_PER_EMIT:
        give_back_true()
