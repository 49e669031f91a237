"""The user's own edits of a résumé and letter: a new generation, PDFs rendered again,
kept across a restart, never replaced by a re-tailor the user did not confirm, and
attached by Apply Review. An edit that claims what the profile does not hold is answered
``unsupported_claims`` and saves nothing, unless the user keeps it (then it is recorded)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pdfplumber
import pytest

from backend.supervision.supervisor import Supervisor
from tests.api_http import api_http
from tests.integration.conftest import write_settings
from tests.integration.test_paid_pipeline import demo_subset
from tests.integration.test_preparation import PROFILE, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

EDIT = "I have shipped billing systems that people rely on every day, and I would like to do it for you."
SPARK = "I have also used Spark for three years."


def pdf_text(path: str) -> str:
    with pdfplumber.open(path) as pdf:
        return " ".join(page.extract_text() or "" for page in pdf.pages)


async def started(app_dir: Path) -> tuple[Supervisor, httpx.AsyncClient]:
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    http = api_http(supervisor.info)
    return supervisor, http


async def all_pdfs_settled(http, jobs: int) -> bool:
    """Every job's PDF stage reached an end: rendered, skipped or blocked (e.g. a posting
    whose description Enrich could not trust)."""
    settled = 0
    for status in ("succeeded", "skipped", "blocked"):
        page = (await http.get("/v1/jobs", params={"stage": "pdf", "stageStatus": status,
                                                   "limit": 1})).json()
        settled += page["total"]
    return settled == jobs


async def best_prepared_job(http) -> dict:
    """The best-fit job whose PDFs exist."""
    page = (await http.get("/v1/jobs", params={"stage": "pdf", "stageStatus": "succeeded",
                                               "limit": 1})).json()
    return (await http.get(f"/v1/jobs/{page['items'][0]['jobId']}")).json()


async def test_an_edited_letter_survives_a_restart_and_a_retailor_and_is_attached(tmp_path):
    board = tmp_path / "board.json"
    demo_subset(board, 12)
    write_settings(tmp_path, sources=[{"kind": "json_file", "id": "subset", "path": str(board)}],
                   minFitScore=0)
    supervisor, http = await started(tmp_path)
    try:
        assert (await http.put("/v1/profile", json=PROFILE)).status_code == 200
        assert (await http.post("/v1/pipeline/actions/run-stage",
                                json={"stage": "discover"})).status_code == 202

        await wait_for(lambda: all_pdfs_settled(http, 12), timeout=300)
        detail = await best_prepared_job(http)
        job_id, letter = detail["jobId"], detail["coverLetter"]
        assert not letter["content"]["edited"]
        first_pdf = {a["kind"]: a for a in detail["artifacts"]}["cover_letter_pdf"]
        assert Path(first_pdf["path"]).name == (
            f"Ada Example - Cover letter - {detail['company']}.pdf")

        edited = {**letter["content"], "paragraphs": [
            {"text": EDIT}, *letter["content"]["paragraphs"][1:]]}
        saved = await http.put(f"/v1/jobs/{job_id}/materials/cover-letter", json=edited)
        assert saved.status_code == 202, saved.text
        assert saved.json()["generation"] == letter["generation"] + 1

        async def rerendered() -> bool:
            now = (await http.get(f"/v1/jobs/{job_id}")).json()
            pdf = {a["kind"]: a for a in now["artifacts"]}.get("cover_letter_pdf")
            return pdf is not None and pdf["generation"] > first_pdf["generation"]

        await wait_for(rerendered, timeout=120)
        bad = await http.put(f"/v1/jobs/{job_id}/materials/cover-letter", json={"paragraphs": []})
        assert bad.status_code == 422 and bad.json()["error"]["code"] == "validation_error"

        # A claim the profile does not hold: named, nothing saved; kept, it is recorded.
        spark = {**saved.json()["content"], "paragraphs": [
            *saved.json()["content"]["paragraphs"], {"text": SPARK}]}
        refused = await http.put(f"/v1/jobs/{job_id}/materials/cover-letter", json=spark)
        assert refused.status_code == 409, refused.text
        assert refused.json()["error"]["code"] == "unsupported_claims"
        claim = {"claim": SPARK.rstrip("."), "why": "Spark is not in your profile"}
        assert refused.json()["error"]["unsupportedClaims"] == [claim]
        now = (await http.get(f"/v1/jobs/{job_id}")).json()
        assert now["coverLetter"]["generation"] == letter["generation"] + 1
        first_pdf = {a["kind"]: a for a in now["artifacts"]}["cover_letter_pdf"]
        kept = await http.put(f"/v1/jobs/{job_id}/materials/cover-letter", json=spark,
                              params={"keepUnsupported": "true"})
        assert kept.status_code == 202, kept.text
        assert kept.json()["keptClaims"] == [claim]
        now = (await http.get(f"/v1/jobs/{job_id}")).json()
        assert now["coverLetter"]["generation"] == letter["generation"] + 2
        assert now["coverLetter"]["keptClaims"] == [claim]
        await wait_for(rerendered, timeout=120)
    finally:
        await http.aclose()
        await supervisor.stop()

    supervisor, http = await started(tmp_path)
    try:
        detail = (await http.get(f"/v1/jobs/{job_id}")).json()
        assert detail["coverLetter"]["content"]["edited"] is True
        assert detail["coverLetter"]["content"]["paragraphs"][0]["text"] == EDIT
        refused = await http.post(f"/v1/jobs/{job_id}/actions/retailor")
        assert refused.status_code == 409 and refused.json()["error"]["code"] == "materials_edited"
        stale = await http.post("/v1/pipeline/actions/retailor-stale")
        assert job_id not in (stale.json().get("jobKeys") or [])
        queue = (await http.get("/v1/apply/queue", params={"limit": 500})).json()
        item = next(i for i in queue["items"] if i["jobKey"] == job_id)
        attached = item["packet"]["coverLetterPdf"]
        assert EDIT.split(",")[0] in pdf_text(attached)
        assert Path(attached).name.startswith("Ada Example - Cover letter - ")
    finally:
        await http.aclose()
        await supervisor.stop()



