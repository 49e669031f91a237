"""The SQLite store on real files: migrations, transactions, the event log, jobs and
discovery-run progress."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from backend.domain import events as ev
from backend.domain.ids import canonical_url, job_id_for_url
from backend.domain.postings import Posting, Salary
from backend.store import discovery as runs
from backend.store.db import Database, migrate
from backend.store.events import append_event, latest_event_id, read_events_after
from backend.store.jobs import observe_posting

ROOT = Path(__file__).resolve().parents[2]
EXPECTED_TABLES = {
    "schema_migrations",
    "job_events",
    "jobs",
    "discovery_runs",
    "source_observations",
    "worker_runtime_heartbeats",
}




def _tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _count(path: Path, sql: str, params=()) -> int:
    conn = sqlite3.connect(path)
    try:
        return conn.execute(sql, params).fetchone()[0]
    finally:
        conn.close()


def _posting(url: str, key: str = "k-1", **overrides) -> Posting:
    fields = {"source_key": key, "url": url, "title": "Backend Engineer", "company": "Acme",
              "remote": "remote"}
    return Posting(**{**fields, **overrides})


def _event(run_id: str = "run-1") -> ev.WorkflowCompleted:
    return ev.WorkflowCompleted(workflow_id="discover-local", run_id=run_id,
                                workflow_type="DiscoverWorkflow")


# --- migrations -------------------------------------------------------------------------


def test_migrate_creates_the_schema_and_is_idempotent(tmp_path):
    path = tmp_path / "jobctrl.db"
    first = migrate(path)
    assert first and first == sorted(first)
    assert _tables(path) >= EXPECTED_TABLES
    assert migrate(path) == []
    assert _count(path, "SELECT COUNT(*) FROM schema_migrations") == len(first)


_RACER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from backend.store.db import migrate
    start, spacing, files = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
    results = []
    for index, name in enumerate(files):
        delay = start + index * spacing - time.time()
        if delay > 0:
            time.sleep(delay)
        try:
            results.append(migrate(Path(name)))
        except Exception as exc:
            results.append(f"{type(exc).__name__}: {exc}")
    print(json.dumps(results))
    """
)


def _race_migrations(files: list[Path], processes: int) -> list[list]:
    """Run ``processes`` interpreters that call migrate() on each file at the same instant
    (a shared wall-clock schedule, one file per round). Returns per-file lists of what each
    process got: the versions it applied, or an error string."""
    spacing = 0.03
    start = time.time() + 0.8  # time for every interpreter to start and import
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _RACER, repr(start), repr(spacing), *map(str, files)],
            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for _ in range(processes)
    ]
    try:
        outputs = [proc.communicate(timeout=60) for proc in procs]
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    per_process = []
    for proc, (out, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err
        per_process.append(json.loads(out))
    return [list(results) for results in zip(*per_process, strict=True)]


def _assert_migrated_exactly_once(path: Path, outcomes: list) -> None:
    errors = [o for o in outcomes if isinstance(o, str)]
    assert not errors, f"{path.name}: {errors}"
    non_empty = [versions for versions in outcomes if versions]
    assert len(non_empty) == 1, outcomes  # exactly one process applied the migrations
    conn = sqlite3.connect(path)
    try:
        versions = [row[0] for row in conn.execute("SELECT version FROM schema_migrations")]
    finally:
        conn.close()
    assert sorted(versions) == non_empty[0]
    assert _tables(path) >= EXPECTED_TABLES


def test_concurrent_migrations_from_several_processes_serialize(tmp_path):
    """The BEGIN IMMEDIATE protocol: racing processes apply each migration once. The files
    are already in WAL mode (as after any first open), isolating the schema race from the
    journal-mode switch covered below."""
    files = []
    for i in range(6):
        path = tmp_path / f"db{i}.sqlite"
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.close()
        files.append(path)
    for path, outcomes in zip(files, _race_migrations(files, processes=3), strict=True):
        _assert_migrated_exactly_once(path, outcomes)


def test_migrate_waits_for_a_concurrent_writer_on_a_brand_new_file(tmp_path):
    """What a second process sees while the first is mid-migration of a new database:
    it must wait (busy timeout is 10 s), not fail in microseconds."""
    path = tmp_path / "fresh.db"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    other.execute("CREATE TABLE other_writer (v)")
    release = threading.Timer(0.3, lambda: other.execute("COMMIT"))
    release.start()
    try:
        assert migrate(path)
    finally:
        release.join()
        other.close()
    assert _tables(path) >= EXPECTED_TABLES


def test_migrate_waits_for_a_concurrent_writer_on_a_wal_file(tmp_path):
    path = tmp_path / "wal.db"
    setup = sqlite3.connect(path)
    setup.execute("PRAGMA journal_mode=WAL")
    setup.close()
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    other.execute("CREATE TABLE other_writer (v)")
    release = threading.Timer(0.3, lambda: other.execute("COMMIT"))
    release.start()
    started = time.monotonic()
    try:
        assert migrate(path)
    finally:
        release.join()
        other.close()
    assert time.monotonic() - started >= 0.25  # it waited for the lock instead of failing
    assert {"other_writer"} | EXPECTED_TABLES <= _tables(path)


async def test_database_pragmas(db):
    assert (await db.fetchone("PRAGMA journal_mode"))[0].lower() == "wal"
    assert (await db.fetchone("PRAGMA foreign_keys"))[0] == 1
    assert (await db.fetchone("PRAGMA busy_timeout"))[0] >= 1000


async def test_open_without_migrations_on_a_fresh_file_has_no_schema(tmp_path):
    database = await Database.open(tmp_path / "bare.db", run_migrations=False)
    try:
        assert await database.fetchall("SELECT name FROM sqlite_master WHERE type='table'") == []
    finally:
        await database.close()


async def test_data_version_changes_when_another_connection_commits(tmp_path):
    path = tmp_path / "jobctrl.db"
    reader = await Database.open(path)
    writer = await Database.open(path)
    try:
        before = await reader.data_version()
        assert await reader.data_version() == before  # nothing happened
        async with writer.transaction() as conn:
            await append_event(conn, _event())
        assert await reader.data_version() != before
    finally:
        await reader.close()
        await writer.close()


# --- the event log ----------------------------------------------------------------------


async def test_append_event_ids_increase_and_payload_is_stored(db):
    async with db.transaction() as conn:
        first = await append_event(conn, _event("r1"), workflow_id="discover-local", run_id="r1")
        second = await append_event(conn, _event("r2"), workflow_id="discover-local", run_id="r2")
    assert first is not None and second is not None
    assert second > first
    stored = await read_events_after(db, 0, 10)
    assert [e.id for e in stored] == [first, second]
    assert stored[0].type == "WorkflowCompleted"
    assert stored[0].run_id == "r1"
    assert isinstance(ev.parse_event(stored[0].type, stored[0].payload_json), ev.WorkflowCompleted)
    assert await latest_event_id(db) == second


async def test_append_event_with_dedupe_key_is_a_no_op_the_second_time(db):
    async with db.transaction() as conn:
        first = await append_event(conn, _event(), dedupe_key="WorkflowTerminal:run-1")
    async with db.transaction() as conn:
        again = await append_event(conn, _event(), dedupe_key="WorkflowTerminal:run-1")
        other = await append_event(conn, _event(), dedupe_key="WorkflowTerminal:run-2")
    assert first is not None
    assert again is None
    assert other is not None and other > first
    rows = await db.fetchall("SELECT dedupe_key FROM job_events ORDER BY id")
    assert [r[0] for r in rows] == ["WorkflowTerminal:run-1", "WorkflowTerminal:run-2"]


async def test_events_without_dedupe_key_are_never_deduplicated(db):
    async with db.transaction() as conn:
        ids = [await append_event(conn, _event()) for _ in range(3)]
    assert None not in ids
    assert len(set(ids)) == 3


async def test_dedupe_and_reads_are_scoped_by_tenant(db):
    async with db.transaction() as conn:
        local = await append_event(conn, _event(), dedupe_key="k")
        other = await append_event(conn, _event(), dedupe_key="k", tenant_id="other")
    assert local is not None and other is not None
    assert [e.id for e in await read_events_after(db, 0, 10)] == [local]
    assert [e.id for e in await read_events_after(db, 0, 10, tenant_id="other")] == [other]
    assert await latest_event_id(db) == local


async def test_read_events_after_pages_in_id_order(db):
    async with db.transaction() as conn:
        ids = [await append_event(conn, _event(f"r{i}")) for i in range(5)]
    assert [e.id for e in await read_events_after(db, ids[1], 2)] == ids[2:4]
    assert await read_events_after(db, ids[-1], 10) == []
    assert await latest_event_id(db) == ids[-1]


async def test_latest_event_id_on_an_empty_log_is_zero(db):
    assert await latest_event_id(db) == 0


async def test_failed_transaction_rolls_back_canonical_row_and_event(db):
    async with db.transaction() as conn:
        await runs.insert_run(conn, workflow_id="discover-local", run_id="run-1",
                              families=["demo_board"])

    with pytest.raises(RuntimeError, match="boom"):
        async with db.transaction() as conn:
            observed = await observe_posting(conn, _posting("https://x.example/jobs/1"),
                                             source_family="demo_board", discover_run_id="run-1")
            await append_event(conn, _event(), job_id=observed.job_id, dedupe_key="d-1")
            raise RuntimeError("boom")

    assert (await db.fetchone("SELECT COUNT(*) FROM jobs"))[0] == 0
    assert (await db.fetchone("SELECT COUNT(*) FROM source_observations"))[0] == 0
    assert (await db.fetchone("SELECT COUNT(*) FROM job_events"))[0] == 0
    # The connection is usable again and the dedupe key was not consumed.
    async with db.transaction() as conn:
        assert await append_event(conn, _event(), dedupe_key="d-1") is not None


async def test_a_cancelled_transaction_also_rolls_back(db):
    started = asyncio.Event()

    async def writer():
        async with db.transaction() as conn:
            await append_event(conn, _event(), dedupe_key="cancelled")
            started.set()
            await asyncio.sleep(60)

    task = asyncio.create_task(writer())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (await db.fetchone("SELECT COUNT(*) FROM job_events"))[0] == 0
    async with db.transaction() as conn:  # the write lock was released
        assert await append_event(conn, _event(), dedupe_key="after") is not None


async def test_transaction_commit_is_visible_to_another_connection(db, tmp_path):
    async with db.transaction() as conn:
        await append_event(conn, _event())
    assert _count(tmp_path / "jobctrl.db", "SELECT COUNT(*) FROM job_events") == 1


# --- jobs and observations --------------------------------------------------------------


async def _start_run(db: Database, run_id: str, families: list[str]) -> None:
    async with db.transaction() as conn:
        assert await runs.insert_run(conn, workflow_id="discover-local", run_id=run_id,
                                     families=families)


async def test_observe_posting_new_then_existing(db):
    await _start_run(db, "run-1", ["demo_board"])
    await _start_run(db, "run-2", ["demo_board"])
    posting = _posting("https://x.example/jobs/1?utm_source=feed", key="p-1",
                       salary=Salary(min=100, max=200, currency="USD", period="year"),
                       tags=["python"], description_html="<p>Hi</p>")
    async with db.transaction() as conn:
        first = await observe_posting(conn, posting, source_family="demo_board",
                                      discover_run_id="run-1")
    async with db.transaction() as conn:
        second = await observe_posting(conn, posting, source_family="demo_board",
                                       discover_run_id="run-2")
    assert first.is_new is True
    assert second.is_new is False
    assert first.job_id == second.job_id == job_id_for_url(posting.url)

    row = await db.fetchone("SELECT * FROM jobs WHERE job_id = ?", (first.job_id,))
    assert row["canonical_url"] == canonical_url(posting.url) == "https://x.example/jobs/1"
    assert row["url"] == posting.url  # the original link is kept for display
    assert (row["salary_min"], row["salary_max"], row["salary_currency"]) == (100, 200, "USD")
    assert json.loads(row["tags_json"]) == ["python"]
    assert row["first_source"] == "demo_board"
    assert row["last_seen_at"] >= row["first_seen_at"]

    obs = await db.fetchall(
        "SELECT discover_run_id, first_observation FROM source_observations ORDER BY id"
    )
    assert [tuple(r) for r in obs] == [("run-1", 1), ("run-2", 0)]


async def test_urls_differing_only_by_tracking_junk_are_one_job(db):
    await _start_run(db, "run-1", ["demo_board"])
    variants = [
        "https://x.example/jobs/7",
        "https://X.EXAMPLE/jobs/7/?utm_source=newsletter&gh_src=1#apply",
        "http://x.example/jobs/7?ref=homepage",
    ]
    async with db.transaction() as conn:
        results = [
            await observe_posting(conn, _posting(url, key=f"k-{i}"), source_family="demo_board",
                                  discover_run_id="run-1")
            for i, url in enumerate(variants)
        ]
    assert [r.is_new for r in results] == [True, False, False]
    assert len({r.job_id for r in results}) == 1
    assert (await db.fetchone("SELECT COUNT(*) FROM jobs"))[0] == 1
    async with db.transaction() as conn:
        assert await runs.finish_run(conn, "run-1", status="completed", error_code=None)
        assert await runs.run_counts(conn, "run-1") == (1, 1)  # observed, new


async def test_observation_is_recorded_once_per_run_family_and_source_key(db):
    await _start_run(db, "run-1", ["demo_board", "mine"])
    url = "https://x.example/jobs/1"
    async with db.transaction() as conn:
        for _ in range(3):  # a retried activity re-observes the same postings
            await observe_posting(conn, _posting(url, key="p-1"), source_family="demo_board",
                                  discover_run_id="run-1")
        await observe_posting(conn, _posting(url, key="p-2"), source_family="demo_board",
                              discover_run_id="run-1")
        await observe_posting(conn, _posting(url, key="p-1"), source_family="mine",
                              discover_run_id="run-1")
    rows = await db.fetchall(
        "SELECT source_family, source_key, first_observation FROM source_observations"
        " ORDER BY id"
    )
    assert [tuple(r) for r in rows] == [
        ("demo_board", "p-1", 1),
        ("demo_board", "p-2", 0),
        ("mine", "p-1", 0),
    ]


async def test_observation_requires_an_existing_run(db):
    with pytest.raises(sqlite3.IntegrityError):
        async with db.transaction() as conn:
            await observe_posting(conn, _posting("https://x.example/jobs/1"),
                                  source_family="demo_board", discover_run_id="no-such-run")
    assert (await db.fetchone("SELECT COUNT(*) FROM jobs"))[0] == 0


# --- discovery runs and progress --------------------------------------------------------


async def _progress(db: Database, run_id: str):
    row = await db.fetchone(
        "SELECT progress_current, progress_total, progress_json FROM discovery_runs"
        " WHERE discover_run_id = ?", (run_id,),
    )
    return row[0], row[1], json.loads(row[2])


async def test_insert_run_total_is_families_plus_two_and_is_idempotent(db):
    async with db.transaction() as conn:
        assert await runs.insert_run(conn, workflow_id="discover-local", run_id="run-1",
                                     families=["a", "b", "c"])
        assert not await runs.insert_run(conn, workflow_id="discover-local", run_id="run-1",
                                         families=["other"])
    current, total, payload = await _progress(db, "run-1")
    assert (current, total) == (0, 5)
    assert payload["progressCurrent"] == 0 and payload["progressTotal"] == 5
    assert payload["percent"] == 0
    row = await db.fetchone("SELECT status, families_json FROM discovery_runs")
    assert row["status"] == "running"
    assert json.loads(row["families_json"]) == ["a", "b", "c"]  # the retry changed nothing


async def test_insert_run_with_zero_families_has_a_nonzero_total(db):
    async with db.transaction() as conn:
        await runs.insert_run(conn, workflow_id="discover-local", run_id="run-0", families=[])
    assert (await _progress(db, "run-0"))[:2] == (0, 2)


async def test_advance_progress_is_monotonic_and_clamped(db):
    await _start_run(db, "run-1", ["a", "b", "c"])  # total 5

    async def advance(reached, **kw):
        async with db.transaction() as conn:
            await runs.advance_progress(conn, "run-1", reached=reached, **kw)
        return await _progress(db, "run-1")

    assert (await advance(2))[0] == 2
    assert (await advance(1))[0] == 2  # a late, lower report never moves the bar back
    assert (await advance(0))[0] == 2
    assert (await advance(3))[0] == 3
    current, total, payload = await advance(99)
    assert current == total == 5
    current, _, payload = await advance(runs.PROGRESS_COMPLETE)
    assert current == 5
    assert payload["percent"] == 100
    assert payload["progressCurrent"] == 5
    assert (await advance(1))[0] == 5


async def test_advance_progress_records_each_family_outcome(db):
    await _start_run(db, "run-1", ["a", "b"])
    async with db.transaction() as conn:
        await runs.advance_progress(conn, "run-1", reached=1, family="a",
                                    family_progress={"status": "succeeded", "newJobs": 3})
        # A lower step (families finishing out of order) still records the family.
        await runs.advance_progress(conn, "run-1", reached=2, family="b",
                                    family_progress={"status": "failed", "errorCode": "x"})
        await runs.advance_progress(conn, "run-1", reached=1)
    current, _, payload = await _progress(db, "run-1")
    assert current == 2
    assert payload["families"] == {
        "a": {"status": "succeeded", "newJobs": 3},
        "b": {"status": "failed", "errorCode": "x"},
    }
    assert payload["percent"] == 50


async def test_finish_run_writes_terminal_state_only_once(db):
    await _start_run(db, "run-1", ["demo_board"])
    async with db.transaction() as conn:
        await observe_posting(conn, _posting("https://x.example/jobs/1", key="a"),
                              source_family="demo_board", discover_run_id="run-1")
        await observe_posting(conn, _posting("https://x.example/jobs/2", key="b"),
                              source_family="demo_board", discover_run_id="run-1")
    async with db.transaction() as conn:
        assert await runs.finish_run(conn, "run-1", status="completed_with_issues",
                                     error_code="source_failed")
    async with db.transaction() as conn:
        assert not await runs.finish_run(conn, "run-1", status="canceled", error_code="canceled")
    row = await db.fetchone(
        "SELECT status, error_code, finished_at, jobs_new, jobs_observed FROM discovery_runs"
    )
    assert row["status"] == "completed_with_issues"
    assert row["error_code"] == "source_failed"
    assert row["finished_at"] is not None
    assert (row["jobs_new"], row["jobs_observed"]) == (2, 2)


async def test_finish_run_counts_only_its_own_runs_observations(db):
    await _start_run(db, "run-1", ["demo_board"])
    await _start_run(db, "run-2", ["demo_board"])
    async with db.transaction() as conn:
        for i in range(3):
            await observe_posting(conn, _posting(f"https://x.example/jobs/{i}", key=f"k{i}"),
                                  source_family="demo_board", discover_run_id="run-1")
        for i in range(2, 5):  # one already known, two new
            await observe_posting(conn, _posting(f"https://x.example/jobs/{i}", key=f"k{i}"),
                                  source_family="demo_board", discover_run_id="run-2")
        await runs.finish_run(conn, "run-1", status="completed", error_code=None)
        await runs.finish_run(conn, "run-2", status="completed", error_code=None)
        assert await runs.run_counts(conn, "run-1") == (3, 3)
        assert await runs.run_counts(conn, "run-2") == (3, 2)


async def test_list_runs_newest_first(db):
    await _start_run(db, "run-old", ["a"])
    await asyncio.sleep(0.005)  # started_at has millisecond precision
    await _start_run(db, "run-new", ["a"])
    listed = await runs.list_runs(db, limit=10)
    assert [r["discover_run_id"] for r in listed] == ["run-new", "run-old"]
    assert len(await runs.list_runs(db, limit=1)) == 1



async def test_a_write_waits_for_a_pending_read_on_the_same_connection(tmp_path):
    """Another coroutine's read statement still pending + another process's commit made
    BEGIN IMMEDIATE fail at once with "database is locked" (a stale read snapshot cannot
    be upgraded; SQLite skips the busy handler). The write must wait for the read."""
    first = await Database.open(tmp_path / "shared.db")
    other_process = await Database.open(tmp_path / "shared.db")
    try:
        async with other_process.transaction() as conn:
            await conn.execute("CREATE TABLE t (v INTEGER)")
            await conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(100)])
        reading = await first._conn.execute("SELECT v FROM t")
        await reading.fetchone()  # pending: the connection keeps its read snapshot
        async with other_process.transaction() as conn:
            await conn.execute("INSERT INTO t VALUES (1000)")

        async def finish_reading() -> None:
            await asyncio.sleep(0.1)
            await reading.close()

        finisher = asyncio.create_task(finish_reading())
        async with first.transaction() as conn:
            await conn.execute("INSERT INTO t VALUES (2000)")
        await finisher
        assert (await first.fetchone("SELECT COUNT(*) FROM t"))[0] == 102
    finally:
        await first.close()
        await other_process.close()


async def test_reads_answer_while_a_write_waits_out_another_process_lock(tmp_path):
    """A write of this process waiting on another process's write lock (up to the busy
    timeout) must not hold up this process's reads: they go through their own connection
    and see the last committed state; the write goes ahead once the lock is released."""
    db = await Database.open(tmp_path / "locked.db")
    try:
        async with db.transaction() as conn:
            await conn.execute("CREATE TABLE t (v INTEGER)")
            await conn.execute("INSERT INTO t VALUES (1)")
        other = sqlite3.connect(tmp_path / "locked.db", isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock

        async def write() -> None:
            async with db.transaction() as conn:
                await conn.execute("INSERT INTO t VALUES (2)")
                # Inside the transaction, reads see what it wrote so far.
                assert (await db.fetchone("SELECT COUNT(*) FROM t"))[0] == 2

        writer = asyncio.create_task(write())
        await asyncio.sleep(0.3)  # the writer now waits on the lock
        answered = await asyncio.wait_for(db.fetchone("SELECT COUNT(*) FROM t"), timeout=5)
        assert answered[0] == 1 and not writer.done()
        async with db.read_snapshot() as conn, conn.execute("SELECT v FROM t") as cursor:
            assert [row[0] for row in await cursor.fetchall()] == [1]
        other.execute("ROLLBACK")
        other.close()
        await asyncio.wait_for(writer, timeout=10)
        assert (await db.fetchone("SELECT COUNT(*) FROM t"))[0] == 2
    finally:
        await db.close()
