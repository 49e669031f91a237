"""Recorded ``GET /v1/pipeline/operations`` answers (tests/desktop/fixtures/operations/).

Each file was recorded from a real run by scripts/record_operations_snapshots.py (its
docstring and the fixtures' README say how); ``recorded.how`` in each file names the case.
"""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "operations"

# One recorded snapshot per state the Pipelines headline distinguishes.
STATES = {
    "idle": "idle",
    "checking": "worker-stopped-no-run",
    "discovering": "discovering",
    "preparing (sources done, counts not measured yet)": "draining-sources-done",
    "preparing (half-way)": "draining-midway",
    "preparing (with an ETA)": "draining-eta",
    "paused by the budget": "paused-budget",
    "recovering": "recovering-history",
    "finished": "completed",
    "failed": "failed",
    "canceled": "canceled",
}


@cache
def _read(name: str) -> dict[str, Any]:
    return json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))


def recorded(name: str) -> dict[str, Any]:
    """A fresh copy of one recorded snapshot (tests may change it)."""
    return copy.deepcopy(_read(name)["snapshot"])


def recorded_series() -> list[dict[str, Any]]:
    """One demo-board Discover from start to finish (every distinct progress state, thinned)."""
    return copy.deepcopy(_read("discover-series")["snapshots"])
