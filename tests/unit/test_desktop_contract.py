"""backend.desktop_contract: the desktop's one door into the backend.

Every name the desktop imports from it resolves, and importing it (or the shell's entry
module) stays as light as the window's first frame needs: the heavier names load on
first use, not with the module.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import backend.desktop_contract as contract

ROOT = Path(__file__).resolve().parents[2]

# What the first frame must not pay for (pydantic models, the settings module, the event
# registry, the HTTP client, Temporal's SDK).
HEAVY = ("pydantic", "httpx", "temporalio", "backend.config", "backend.domain.events",
         "backend.supervision.supervisor", "backend.pipeline", "backend.sources")


def _names_the_desktop_imports() -> set[str]:
    names = set()
    for path in (ROOT / "desktop").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module == "backend.desktop_contract":
                names.update(alias.name for alias in node.names)
    return names


def test_every_name_the_desktop_imports_resolves():
    names = _names_the_desktop_imports()
    assert {"RuntimeInfo", "EVENT_TYPES", "new_supervisor"} <= names  # the scan sees them
    missing = [name for name in sorted(names) if not hasattr(contract, name)]
    assert not missing, f"backend.desktop_contract lacks {missing}"


def test_a_lazy_name_is_the_backend_object_itself():
    from backend.domain.applications import STAGE_LABELS
    from backend.domain.events import EVENT_TYPES

    assert contract.EVENT_TYPES is EVENT_TYPES
    assert contract.APPLICATION_STAGE_LABELS is STAGE_LABELS


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'Database'"):
        contract.Database  # noqa: B018 - the lookup is the test


@pytest.mark.parametrize("module", ["backend.desktop_contract", "desktop.app"])
def test_importing_it_loads_nothing_heavy(module):
    code = (f"import sys, {module}\n"
            f"print([name for name in {HEAVY!r} if name in sys.modules])")
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]", f"importing {module} loaded {result.stdout}"
