"""Every test under tests/chaos is a reliability scenario (``chaos``); the slow ones are
also marked ``chaos_full`` in their module, which CI leaves to scripts/chaos."""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).parent


def pytest_collection_modifyitems(config, items):
    for item in items:
        if HERE in Path(item.fspath).parents:
            item.add_marker(pytest.mark.chaos)
