"""The layers of docs/architecture.md, checked on every run of the README's test command.

- The import-linter contracts in pyproject.toml (`[tool.importlinter]`): domain imports
  nothing of the project, store only domain and config, no Qt or temporalio under store,
  projections and operations, sources without store or Temporal, the desktop through
  `backend.desktop_contract` only, no cycles.
- SQL runs only under backend/store/, and only the store appends to `job_events`.

While issue 17 is being fixed, the violations still present are listed explicitly (the
contracts' `ignore_imports`, the allow-lists below), each group naming who removes it.
A listed file that no longer violates fails too, so a fix deletes its entry.
"""

from __future__ import annotations

import ast
import functools
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Where SQL may run and events may be appended.
SQL_HOMES = ("backend/store/",)

# Calls that run SQL: the aiosqlite connection's, and Database.fetchall/fetchone(sql, ...)
# (with an argument; a cursor's fetchall() reads a result the execute already ran).
SQL_CALLS = {"execute", "executemany", "executescript", "execute_fetchall", "execute_insert"}
SQL_FETCHES = {"fetchall", "fetchone"}

# Names that write job_events (store/events.py) and the statement itself.
EVENT_WRITERS = {"append_event", "EVENT_INSERT_SQL", "event_params"}
EVENT_INSERT = re.compile(r"INSERT\s+(OR\s+\w+\s+)?INTO\s+job_events\b", re.IGNORECASE)

SQL_OUTSIDE_STORE: set[str] = set()  # the projections' tables too: store/read_models/

EVENT_WRITES_OUTSIDE_STORE: set[str] = set()  # the store is the one writer


@functools.cache  # parsed once for both scans
def _sources_outside(homes: tuple[str, ...]) -> dict[str, ast.Module]:
    trees = {}
    for package in ("backend", "desktop"):
        for path in sorted((ROOT / package).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if not name.startswith(homes):
                trees[name] = ast.parse(path.read_text(encoding="utf-8"), filename=name)
    return trees


def _runs_sql(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in SQL_CALLS:
                return True
            if node.func.attr in SQL_FETCHES and (node.args or node.keywords):
                return True
    return False


def _writes_events(tree: ast.Module) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in EVENT_WRITERS:
            return True
        if isinstance(node, ast.Attribute) and node.attr in EVENT_WRITERS:
            return True
        if isinstance(node, ast.alias) and node.name in EVENT_WRITERS:
            return True
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and EVENT_INSERT.search(node.value):
            return True
    return False


def _assert_matches_allow_list(found: set[str], allowed: set[str], what: str) -> None:
    new, fixed = sorted(found - allowed), sorted(allowed - found)
    assert not new, f"{what} outside backend/store/ (move it into a store repository): {new}"
    assert not fixed, f"no longer {what}; delete from the allow-list: {fixed}"


def test_sql_runs_only_in_the_store():
    trees = _sources_outside(SQL_HOMES)
    found = {name for name, tree in trees.items() if _runs_sql(tree)}
    _assert_matches_allow_list(found, SQL_OUTSIDE_STORE, "runs SQL")


def test_only_the_store_appends_events():
    trees = _sources_outside(SQL_HOMES)
    found = {name for name, tree in trees.items() if _writes_events(tree)}
    _assert_matches_allow_list(found, EVENT_WRITES_OUTSIDE_STORE, "appends to job_events")


def test_the_checks_see_what_they_look_for():
    """The detectors themselves, on the shapes the code uses."""
    assert _runs_sql(ast.parse("await conn.execute('DELETE FROM jobs')"))
    assert _runs_sql(ast.parse("rows = await db.fetchall(SQL, (1,))"))
    assert not _runs_sql(ast.parse("rows = await cursor.fetchall()"))
    assert not _runs_sql(ast.parse("await workflow.execute_activity(run, x)"))
    assert _writes_events(ast.parse("from backend.store.events import append_event"))
    assert _writes_events(ast.parse("await events.append_event(conn, e)"))
    assert _writes_events(ast.parse("SQL = 'insert or ignore into job_events (type) values (?)'"))
    assert not _writes_events(ast.parse("SQL = 'SELECT * FROM job_events'"))


def test_the_import_contracts_hold():
    """`lint-imports` with the contracts of pyproject.toml, as CI runs it."""
    result = subprocess.run(
        [sys.executable, "-c", "from importlinter.cli import lint_imports_command as c; c()",
         "--no-cache"],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def _backend_top_level() -> set[str]:
    backend = ROOT / "backend"
    packages = {p.name for p in backend.iterdir() if (p / "__init__.py").is_file()}
    modules = {p.stem for p in backend.glob("*.py") if p.stem != "__init__"}
    return {f"backend.{name}" for name in packages | modules}


def _contract(contract_id: str) -> dict:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    return next(c for c in contracts if c["id"] == contract_id)


def test_the_contracts_name_every_backend_package():
    """A new backend package is forbidden to domain, store and desktop until a contract
    says otherwise (a forbidden list names modules, so a new one would slip through).
    The desktop may import backend.desktop_contract alone."""
    everything = _backend_top_level()
    assert set(_contract("domain")["forbidden_modules"]) == \
        everything - {"backend.domain"} | {"desktop"}
    assert set(_contract("store")["forbidden_modules"]) == \
        everything - {"backend.store", "backend.domain", "backend.config", "backend.paths"} \
        | {"desktop"}
    assert set(_contract("desktop")["forbidden_modules"]) == \
        everything - {"backend.desktop_contract"}
