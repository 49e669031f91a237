"""The cyclic garbage collector paused while a child process starts.

Importing a few hundred modules allocates a great many container objects, none of them
garbage, and the collector scans them again and again meanwhile (bench/README.md, "Start-up
after issue 18": ~7 % of the worker's import time). A child pauses it first thing and, once
it is ready, moves everything it built so far out of the collector's sight (``gc.freeze``)
and turns it back on. A child that never becomes ready exits (its start has a deadline), so
the pause is bounded. Stdlib only: it runs before anything else is imported.
"""

from __future__ import annotations

import gc


def pause() -> None:
    gc.disable()


def resume() -> None:
    """Idempotent: the start-up objects go to the permanent generation, collection resumes."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()
