"""PySide6 keeps the source text of every module imported after it; this stops that.

PySide6's import hook (``shibokensupport.feature.feature_imported``, run for each new
module once PySide6 is loaded) asks whether the module mentions "PySide6" by reading its
whole source with ``inspect.getsource``, which leaves the file's lines in ``linecache``
for the life of the process. In the shell that is ~300 files and ~157,000 lines that
nothing reads again: 14 MiB of its idle size (issue 18, bench/README.md).

``forget_module_sources`` wraps that check so it drops the lines it alone read into the
cache (a traceback still shows every line: linecache reads the file again when asked), and
clears what the cache holds so far. Same answer to PySide6, so ``from __feature__ import``
keeps working. Checked on PySide6 6.11.3; where the hook is not found (a release that
renamed it), nothing is changed and it answers False.
"""

from __future__ import annotations

import linecache
import sys
from collections.abc import Callable
from types import ModuleType

FEATURE_MODULE = "shibokensupport.feature"  # PySide6's own, loaded with PySide6
CHECK = "_mod_uses_pyside"  # (module) -> bool, called by feature_imported


def forget_module_sources() -> bool:
    """Install the wrapper once (after PySide6 is imported); True when it is in place."""
    feature = sys.modules.get(FEATURE_MODULE)
    check = getattr(feature, CHECK, None)
    if not callable(check):
        return False
    if not getattr(check, "forgets_sources", False):
        setattr(feature, CHECK, _forgetting(check))
    linecache.clearcache()
    return True


def _forgetting(check: Callable[[ModuleType], bool]) -> Callable[[ModuleType], bool]:
    def uses_pyside(module: ModuleType) -> bool:
        filename = getattr(module, "__file__", None)
        cached_before = filename in linecache.cache
        try:
            return check(module)
        finally:
            if filename and not cached_before:
                linecache.cache.pop(filename, None)

    uses_pyside.forgets_sources = True  # type: ignore[attr-defined]
    return uses_pyside
