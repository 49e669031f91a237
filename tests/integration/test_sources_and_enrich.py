"""Real HTTP sources and posting pages: one job per posting across sources, robots.txt
honoured as a typed block, low-confidence postings keep Tailor blocked by Enrich."""

from __future__ import annotations

import json

import pytest
import pytest_asyncio

from backend.domain.ids import job_id_for_url
from backend.supervision.supervisor import Supervisor
from tests.api_http import api_http
from tests.app_db import connect_db
from tests.fakes.job_boards import SHARED_POSTING_URL, JobBoards
from tests.fakes.posting_pages import PostingPagesServer
from tests.integration.conftest import write_settings
from tests.integration.test_preparation import PROFILE, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]


def page_posting(key: str, url: str, title: str) -> dict:
    """A file-imported posting with no description: Enrich must fetch its page."""
    return {"id": key, "url": url, "title": title, "company": "Harborlight Logistics",
            "location": "Rotterdam, Netherlands", "remote": "hybrid"}


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def world(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("sources-app")
    boards, pages = JobBoards().start(), PostingPagesServer().start()
    urls = {
        "blocked": pages.url("/private/secret-role"),
        "expired": pages.url("/jobs/expired"),
        "rich": pages.url("/jobs/backend-engineer"),
    }
    board_file = app_dir / "pages.json"
    board_file.write_text(json.dumps({"postings": [
        page_posting("p-1", urls["blocked"], "Secret Role"),
        page_posting("p-2", urls["expired"], "Expired Role"),
        page_posting("p-3", urls["rich"], "Senior Backend Engineer"),
    ]}), encoding="utf-8")
    write_settings(app_dir, sources=[
        {"kind": "greenhouse", "id": "gh-acme", "boardToken": "acme",
         "companyName": "Acme Robotics", "baseUrl": boards.base_url},
        {"kind": "feed", "id": "feed-remote", "url": boards.url(JobBoards.RSS_PATH)},
        {"kind": "json_file", "id": "pages", "path": str(board_file)},
    ], localNetworkHosts=[pages.host])
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    http = api_http(supervisor.info)
    await http.put("/v1/profile", json=PROFILE)
    await http.post("/v1/pipeline/actions/run-stage", json={"stage": "discover"})
    ids = {name: job_id_for_url(url) for name, url in urls.items()}

    async def pages_prepared() -> bool:
        details = [(await http.get(f"/v1/jobs/{job_id}")) for job_id in ids.values()]
        if any(d.status_code != 200 for d in details):
            return False
        return all(not any(s["status"] in ("pending", "queued", "running")
                           for s in d.json()["stages"]) and d.json()["stages"]
                   for d in details)

    await wait_for(pages_prepared, timeout=180)
    yield {"app_dir": app_dir, "http": http, "ids": ids, "pages": pages}
    await http.aclose()
    await supervisor.stop()
    boards.stop()
    pages.stop()


async def stages_of(http, job_id: str) -> dict[str, dict]:
    detail = (await http.get(f"/v1/jobs/{job_id}")).json()
    return {row["stage"]: row for row in detail["stages"]}


async def test_the_same_posting_from_two_sources_is_one_job(world):
    job_id = job_id_for_url(SHARED_POSTING_URL)
    with connect_db(world["app_dir"] / "jobctrl.db") as conn:
        jobs = conn.execute("SELECT COUNT(*) FROM jobs WHERE job_id = ?", (job_id,)).fetchone()[0]
        families = {row[0] for row in conn.execute(
            "SELECT source_family FROM source_observations WHERE job_id = ?", (job_id,))}
        discovered = conn.execute(
            "SELECT COUNT(*) FROM job_events WHERE type = 'JobDiscovered' AND job_id = ?",
            (job_id,)).fetchone()[0]
    assert jobs == 1 and discovered == 1
    assert families == {"gh-acme", "feed-remote"}


async def test_robots_disallow_is_a_typed_block_and_the_page_is_never_fetched(world):
    stages = await stages_of(world["http"], world["ids"]["blocked"])
    assert stages["enrich"]["status"] == "blocked"
    assert stages["enrich"]["blockedReason"] == "ENRICH_ROBOTS_DISALLOWED"
    for downstream in ("score", "tailor", "cover", "pdf"):
        assert stages[downstream]["status"] == "blocked"
    assert world["pages"].count("/private/secret-role") == 0


async def test_a_low_confidence_posting_is_scored_but_tailor_stays_blocked(world):
    stages = await stages_of(world["http"], world["ids"]["expired"])
    assert stages["enrich"]["status"] == "succeeded"
    assert stages["score"]["status"] == "succeeded"
    assert stages["tailor"]["status"] == "blocked"
    assert stages["tailor"]["blockedReason"] == "ENRICH_LOW_CONFIDENCE"
    detail = (await world["http"].get(f"/v1/jobs/{world['ids']['expired']}")).json()
    assert detail["enrichment"]["confidence"] == "low"
    assert detail["enrichment"]["lowConfidenceReason"] == "expired_posting"


async def test_a_fetched_page_is_enriched_and_fully_prepared(world):
    stages = await stages_of(world["http"], world["ids"]["rich"])
    assert {row["status"] for row in stages.values()} == {"succeeded"}
    detail = (await world["http"].get(f"/v1/jobs/{world['ids']['rich']}")).json()
    assert detail["enrichment"]["origin"] == "page"
    assert "PostgreSQL" in detail["enrichment"]["descriptionText"]
    assert "cookies" not in detail["enrichment"]["descriptionText"]
