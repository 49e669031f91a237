"""docs/security.md's ledger and this folder stay in step: every test the ledger names
exists, and every test here is named in the ledger (a new attack gets a row)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LEDGER = ROOT / "docs" / "security.md"
NAMED = re.compile(r"`(tests/security/[\w/]+\.py)::(\w+)`")


def folder_tests() -> set[str]:
    found = set()
    for path in (ROOT / "tests" / "security").glob("test_*.py"):
        if path.name == Path(__file__).name:
            continue
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith("test_"):
                found.add(f"{path.relative_to(ROOT).as_posix()}::{node.name}")
    return found


def ledger_tests() -> set[str]:
    return {f"{file}::{name}" for file, name in NAMED.findall(LEDGER.read_text(encoding="utf-8"))}


def test_every_test_the_ledger_names_exists():
    assert ledger_tests() - folder_tests() == set()


def test_every_security_test_is_in_the_ledger():
    assert folder_tests() - ledger_tests() == set()
