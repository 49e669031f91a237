"""Environment overrides for the private Supervisors some integration modules start
(their child processes inherit os.environ when they start)."""

from __future__ import annotations

import os
from collections.abc import Callable


def override_environ(**overrides: str) -> Callable[[], None]:
    """Set ``overrides`` in os.environ; the returned function puts back what was there
    (unset variables are unset again)."""
    saved = {key: os.environ.get(key) for key in overrides}
    os.environ.update(overrides)

    def restore() -> None:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value

    return restore
