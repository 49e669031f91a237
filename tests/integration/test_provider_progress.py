"""``sourceFamilies.providerProgress`` on the real services: while the jobspy family of a
Discover run is traversing a provider (held after its first page), the operations
snapshot shows the latest traversal facts bound to that exact workflow id and run id, with
the unknown total null; an observation stamped for another run is never borrowed; once
the family step is terminal the value is omitted."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
import pytest_asyncio

from tests.app_db import connect_db
from tests.integration.conftest import write_settings
from tests.integration.jobspy_helpers import jobspy_supervisor

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

RAW = ("example.com", "cursor", "checkpoint", "token", "python developer")


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def held(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("provider-progress-app")
    hold = app_dir / "hold-first-page"
    hold.write_text("hold", encoding="utf-8")
    control = app_dir / "jobspy-control.json"
    control.write_text(json.dumps({"hold_while": str(hold)}), encoding="utf-8")
    write_settings(
        app_dir,
        sources=[{"kind": "jobspy", "id": "broad", "queries": ["python developer"],
                  "locations": ["Berlin", "Remote"], "boards": ["indeed"],
                  "resultsPerUnit": 10}],
    )
    async with jobspy_supervisor(app_dir, scraper="scrape_paged", control=control) as (
            _, http):
        try:
            yield {"app_dir": app_dir, "http": http, "hold": hold}
        finally:
            hold.unlink(missing_ok=True)


async def snapshot_when(http: httpx.AsyncClient, predicate, timeout: float) -> dict:
    deadline = asyncio.get_running_loop().time() + timeout
    last = None
    while asyncio.get_running_loop().time() < deadline:
        response = await http.get("/v1/pipeline/operations")
        assert response.status_code == 200, response.text
        last = response.json()
        if predicate(last):
            return last
        await asyncio.sleep(0.3)
    raise AssertionError(f"the snapshot never matched; last sourceFamilies:"
                         f" {last and last.get('sourceFamilies')}")


def insert_foreign(app_dir: Path, *, workflow_id: str, run_id: str) -> None:
    """An observation for another execution, newer and from a higher attempt than the
    real one: the reader must not borrow it."""
    with connect_db(app_dir / "jobctrl.db") as conn:
        conn.execute(
            "INSERT INTO discovery_provider_progress (tenant_id, discover_workflow_id,"
            " discover_run_id, family, attempt, sequence, provider, phase, unit,"
            " completed_units, total_units, raw_items_seen, emitted_jobs, continuation,"
            " observed_at) VALUES ('local', ?, ?, 'broad', 9, 99, 'linkedin', 'paging',"
            " 'page', 40, 50, 400, 300, 'more', '2999-01-01T00:00:00.000Z')",
            (workflow_id, run_id))


async def test_provider_progress_is_bound_to_the_exact_running_execution(held):
    http, app_dir = held["http"], held["app_dir"]
    started = await http.post("/v1/pipeline/actions/run-stage", json={"stage": "discover"})
    assert started.status_code == 202, started.text
    run_id = started.json()["firstExecutionRunId"]

    def traversing(snapshot) -> bool:
        # The first observation ("searching", nothing seen yet) is written before the first
        # page; the crawl is held right after that page, so wait for the page's facts.
        families = snapshot.get("sourceFamilies") or {}
        return ((families.get("providerProgress") or {}).get("completedUnits") or 0) >= 1

    snapshot = await snapshot_when(http, traversing, timeout=90)
    execution = snapshot["execution"]
    assert execution["discoverRunId"] == run_id and execution["phase"] == "discovering"
    progress = snapshot["sourceFamilies"]["providerProgress"]
    assert (progress["discoverWorkflowId"], progress["discoverRunId"]) == (
        execution["discoverWorkflowId"], run_id)
    # Held after the first page of the first unit: one page of two rows, more to come,
    # and the provider never said how many pages it has.
    assert progress == {**progress, "family": "broad", "provider": "indeed",
                        "phase": "paging", "unit": "page", "completedUnits": 1,
                        "totalUnits": None, "rawItemsSeen": 2, "emittedJobs": 2,
                        "continuation": "more"}
    assert not any(key.lower().endswith(("percent", "percentage", "eta")) for key in progress)
    assert not any(raw in json.dumps(progress).lower() for raw in RAW)
    # The source-family ETA is not provider-derived (no remaining-page count exists).
    assert "remainingUnits" not in json.dumps(snapshot["sourceFamilies"])

    # A newer observation stamped for another run of the same workflow id, and one for
    # another workflow with this run id: neither is accepted.
    insert_foreign(app_dir, workflow_id=execution["discoverWorkflowId"], run_id="run-not-this")
    insert_foreign(app_dir, workflow_id="discover-elsewhere", run_id=run_id)
    again = (await http.get("/v1/pipeline/operations")).json()
    assert again["sourceFamilies"]["providerProgress"]["provider"] == "indeed"
    assert again["sourceFamilies"]["providerProgress"]["discoverRunId"] == run_id

    held["hold"].unlink()  # the provider goes on; the crawl finishes

    def family_terminal(snap) -> bool:
        return snap["execution"]["phase"] != "discovering" and not any(
            family.get("status") == "running"
            for family in snap["sourceFamilies"]["families"])

    done = await snapshot_when(http, family_terminal, timeout=120)
    assert done["sourceFamilies"]["providerProgress"] is None  # terminal step: omitted
    with connect_db(app_dir / "jobctrl.db") as conn:
        final = conn.execute(
            "SELECT phase, unit, completed_units, total_units, raw_items_seen, emitted_jobs,"
            " continuation FROM discovery_provider_progress WHERE discover_run_id = ?",
            (run_id,)).fetchone()
    # The last unit's traversal: three pages, six raw rows, four emitted jobs.
    assert final == ("unit_completed", "page", 3, None, 6, 4, "exhausted")
