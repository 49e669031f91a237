"""docs/reliability.md and tests/chaos/scenarios.py tell the same story: R01-R27 once
each, every test the ledger names exists, and the document names exactly those tests."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.chaos.scenarios import SCENARIOS, ledger_files

ROOT = Path(__file__).resolve().parents[2]
LEDGER = ROOT / "docs" / "reliability.md"


def defined_tests(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.name for node in tree.body
            if isinstance(node, ast.AsyncFunctionDef | ast.FunctionDef)
            and node.name.startswith("test_")}


def test_the_scenarios_are_r01_to_r27_once_each():
    assert [scenario.id for scenario in SCENARIOS] == [f"R{n:02d}" for n in range(1, 28)]
    assert all(scenario.tests for scenario in SCENARIOS)


def test_every_named_test_exists():
    for scenario in SCENARIOS:
        for node in scenario.tests:
            path, name = node.split("::", 1)
            assert (ROOT / path).is_file(), (scenario.id, path)
            assert name.split("[", 1)[0] in defined_tests(ROOT / path), (scenario.id, node)
    assert all((ROOT / path).is_file() for path in ledger_files())


def ledger_rows() -> dict[str, str]:
    """Scenario id -> its row of the ledger table."""
    rows = {}
    for line in LEDGER.read_text(encoding="utf-8").splitlines():
        found = re.match(r"\|\s*(R\d\d)\s*\|", line)
        if found:
            assert found.group(1) not in rows, f"{found.group(1)} twice in the ledger"
            rows[found.group(1)] = line
    return rows


def test_the_ledger_names_exactly_the_tests_of_each_scenario():
    rows = ledger_rows()
    assert sorted(rows) == [scenario.id for scenario in SCENARIOS]
    for scenario in SCENARIOS:
        named = set(re.findall(r"`(tests/[^`]+)`", rows[scenario.id]))
        assert named == set(scenario.tests), scenario.id
        result = rows[scenario.id].split("|")[5].strip()
        assert result in ("pass", "pass (fixed)", "not re-run", "not built"), (scenario.id, result)
