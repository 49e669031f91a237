"""The read-model tables kept by SQL triggers: each says so in its migration, the triggers
are its only keeper (no Python under backend/ writes it), and no migration re-creates a
trigger of an earlier one without dropping it first in the same file."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MIGRATIONS = sorted((ROOT / "backend" / "store" / "migrations").glob("*.sql"))
KEEPER = re.compile(r"^-- Sole keeper of (\w+): ", re.MULTILINE)
CREATE = re.compile(r"\bCREATE TRIGGER (?:IF NOT EXISTS )?(\w+)", re.IGNORECASE)
DROP = re.compile(r"\bDROP TRIGGER (?:IF EXISTS )?(\w+)", re.IGNORECASE)
TRIGGER_BODY = re.compile(r"CREATE TRIGGER.*?\bEND;", re.IGNORECASE | re.DOTALL)


def writes(table: str) -> re.Pattern[str]:
    return re.compile(rf"\b(INSERT(?: OR \w+)? INTO|UPDATE|DELETE FROM|REPLACE INTO)\s+{table}\b",
                      re.IGNORECASE)


def kept_tables() -> dict[str, list[Path]]:
    tables: dict[str, list[Path]] = {}
    for path in MIGRATIONS:
        for table in KEEPER.findall(path.read_text(encoding="utf-8")):
            tables.setdefault(table, []).append(path)
    return tables


def test_the_trigger_kept_tables_are_declared():
    assert set(kept_tables()) == {
        "job_stage_status_counts", "job_counts", "execution_cohort_stage_counts",
        "execution_cohort_job_counts", "counted_executions"}


def test_each_declared_table_is_written_by_a_trigger_of_its_migration():
    for table, paths in kept_tables().items():
        for path in paths:
            bodies = TRIGGER_BODY.findall(path.read_text(encoding="utf-8"))
            assert any(writes(table).search(body) for body in bodies), (
                f"{path.name} declares the triggers sole keeper of {table} but none writes it")


def test_no_python_writes_a_trigger_kept_table():
    sources = [p for p in (ROOT / "backend").rglob("*.py")]
    for table in kept_tables():
        pattern = writes(table)
        offenders = [str(p.relative_to(ROOT)) for p in sources
                     if pattern.search(p.read_text(encoding="utf-8"))]
        assert offenders == [], f"{table} is kept by triggers only, but {offenders} write it"


def test_a_later_migration_drops_a_trigger_before_creating_it_again():
    created: set[str] = set()
    for path in MIGRATIONS:
        text = path.read_text(encoding="utf-8")
        for match in CREATE.finditer(text):
            name = match.group(1)
            if name in created:
                dropped = {m.group(1) for m in DROP.finditer(text[:match.start()])}
                assert name in dropped, (
                    f"{path.name} re-creates trigger {name} without dropping it first")
        created |= set(CREATE.findall(text))
