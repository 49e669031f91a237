"""The Jobs view's bulk controls and the blocked-site notice: the wording directly, then
against the real services: a selected Tailor batch with 2 workers, Rescore stale after a
profile change, and a job blocked by its site's robots.txt resumed from its notice.

The jobs come from this module's own source (added turned off and discovered with
``sourceIds``): three demo postings served from a loopback posting server, plus one
posting on a second server whose robots.txt disallows ``/jobs/``."""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QLabel

from backend.domain.ids import job_id_for_url
from backend.pipeline.access_grants import host_of
from backend.sources.board_file import demo_board_text
from desktop.views.job_detail import reason_words
from desktop.views.jobs_view import JobsView
from desktop.views.partials.batch_actions import (
    default_workers,
    describe_batch_answer,
    describe_stale_answer,
)
from desktop.views.partials.blocked_site_notice import describe_resolution, robots_blocked_host
from tests.desktop.discover_helpers import api, start_own_discover
from tests.fakes.posting_pages import PostingPagesServer
from tests.integration.test_preparation import PROFILE

ARTIFACTS = Path(__file__).resolve().parents[1] / "_artifacts"
MARK = "Actions Tester"
SOURCE_ID = "jobs-actions"
DISALLOW_JOBS = "User-agent: *\nDisallow: /jobs/\n"
SETUP_TIMEOUT_S = 300
BATCH_JOBS = 3


# -- the wording, directly ----------------------------------------------------------------

@pytest.mark.desktop
def test_batch_answers_read_plainly():
    started = {"workflowId": "batch-tailor-1", "jobCount": 3, "workers": 2,
               "busyJobKeys": []}
    assert describe_batch_answer("tailor", started) == (
        "Started: tailoring 3 jobs, 2 at a time. Follow it in Runs.", "ok")
    text, _ = describe_batch_answer("cover", {**started, "busyJobKeys": ["job_a"],
                                              "jobCount": 2})
    assert text.startswith("Started: writing cover letters for 2 jobs, 2 at a time.")
    assert "1 job left out: it is being prepared right now." in text
    again, _ = describe_batch_answer("tailor", {**started, "alreadyRunning": True})
    assert again.startswith("Already running")
    busy = {"noopReason": "nothing_eligible", "busyJobKeys": ["job_a", "job_b"]}
    assert describe_batch_answer("tailor", busy) == (
        "Nothing started: all 2 are being prepared right now. Try again when that "
        "finishes.", "busy")


@pytest.mark.desktop
def test_stale_answers_say_how_many_jobs():
    assert describe_stale_answer("rescore-stale", {
        "staleJobs": 12, "startedWorkflows": 12, "jobKeys": []})[0] == (
        "Rescoring 12 jobs whose score predates your profile.")
    assert describe_stale_answer("retailor-stale", {
        "staleJobs": 1, "startedWorkflows": 0, "jobKeys": []})[0] == (
        "Re-tailoring 1 job whose materials predate your profile. 1 job already being "
        "prepared will catch up.")
    assert describe_stale_answer("rescore-stale", {
        "staleJobs": 0, "startedWorkflows": 0, "noopReason": "nothing_stale"})[0] == (
        "Nothing to rescore: every score matches your current profile.")


@pytest.mark.desktop
def test_worker_default_comes_from_the_slots_capped_at_16():
    assert default_workers({"workerActivitySlots": 8}) == 8
    assert default_workers({"workerActivitySlots": 64}) == 16
    # Unreadable settings: the gentlest choice, not a made-up slot count.
    assert default_workers(None) == 1
    assert default_workers({"workerActivitySlots": None}) == 1


@pytest.mark.desktop
def test_only_a_robots_block_shows_the_notice():
    def detail(status, reason):
        return {"jobId": "job_1", "url": "http://127.0.0.1:8123/jobs/x",
                "stages": [{"stage": "enrich", "status": status, "blockedReason": reason,
                            "errorCode": None}]}
    assert robots_blocked_host(detail("blocked", "ENRICH_ROBOTS_DISALLOWED")) == \
        "127.0.0.1:8123"
    assert robots_blocked_host(detail("blocked", "ENRICH_LOW_CONFIDENCE")) is None
    assert robots_blocked_host(detail("succeeded", None)) is None
    assert robots_blocked_host(None) is None
    code = "ENRICH_ROBOTS_DISALLOWED"
    assert reason_words("enrich", code) == "the site asks tools not to read it"
    assert reason_words("score", code, "blocked") == "waiting for Enrich"
    assert reason_words("pdf", code, "succeeded").startswith("stopped by the block")
    # Other codes in plain words (never the raw code); an unknown one reads as its words.
    assert reason_words("score", "profile_missing") == "no profile saved yet (Settings)"
    assert reason_words("tailor", "below_min_fit_score") == "fit score below your minimum"
    assert reason_words("pdf", "upstream_not_succeeded") == "an earlier stage did not finish"
    assert reason_words("score", "LLM_TIMEOUT") == "llm timeout"
    assert describe_resolution("a.example", {"jobCount": 2}) == (
        "Allowed: JobCtrl may now read postings on a.example. 2 jobs waiting on this site "
        "are being prepared again.")
    assert "No job there" in describe_resolution("a.example", {"noopReason": "no_blocked_jobs",
                                                               "jobCount": 0})


# -- against the live services ------------------------------------------------------------

def job(http, key: str) -> dict:
    response = http.get(f"/v1/jobs/{key}")
    response.raise_for_status()
    return response.json()


def stages(detail: dict) -> dict[str, dict]:
    return {row["stage"]: row for row in detail["stages"]}


def idle(detail: dict) -> bool:
    return all(row["status"] not in ("queued", "running") for row in detail["stages"])


def wait_setup(check, what: str) -> None:
    """Setup only (never an assertion about timing): poll until ``check()`` holds."""
    deadline = time.monotonic() + SETUP_TIMEOUT_S
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"setup: {what} did not happen in time")
        time.sleep(0.5)


@pytest.fixture(scope="module")
def board(live_services, tmp_path_factory):
    good = PostingPagesServer().start()
    blocked = PostingPagesServer(robots_body=DISALLOW_JOBS).start()
    demo = [p for p in json.loads(demo_board_text())["postings"]
            if any(t in p["title"] for t in ("Backend", "Platform", "Data Engineer"))
            and "Python" in p.get("descriptionHtml", "")]
    postings = []
    for n, posting in enumerate(demo[:BATCH_JOBS]):
        posting.update(id=f"jobs-actions-{n}", title=f"{posting['title']} · {MARK} {n}",
                       url=good.url(f"/jobs/backend-engineer?actions={n}"))
        postings.append(posting)
    # No description: Enrich must read the page, and its robots.txt says no.
    postings.append({"id": "jobs-actions-blocked", "url": blocked.url("/jobs/backend-engineer"),
                     "title": f"Senior Backend Engineer · {MARK} blocked",
                     "company": "Harborlight Logistics", "location": "Rotterdam, Netherlands",
                     "remote": "hybrid"})
    path = tmp_path_factory.mktemp("jobs-actions") / "board.json"
    path.write_text(json.dumps({"postings": postings}), encoding="utf-8")
    batch_keys = [job_id_for_url(p["url"]) for p in postings[:BATCH_JOBS]]
    blocked_key = job_id_for_url(postings[-1]["url"])
    with api(live_services) as http:
        original = http.get("/v1/settings").json()["sources"]
        source = {"kind": "json_file", "id": SOURCE_ID, "path": str(path), "enabled": False}
        http.patch("/v1/settings", json={"sources": [*original, source],
                                         "localNetworkHosts": [good.host, blocked.host]}
                   ).raise_for_status()
        try:
            http.put("/v1/profile", json=PROFILE).raise_for_status()
            start_own_discover(http, sourceIds=[SOURCE_ID])

            def prepared() -> bool:
                try:
                    details = [job(http, key) for key in [*batch_keys, blocked_key]]
                except Exception:  # noqa: BLE001 - not discovered yet
                    return False
                return (all(stages(d).get("pdf", {}).get("status") == "succeeded"
                            for d in details[:-1])
                        and stages(details[-1]).get("enrich", {}).get("status") == "blocked"
                        and all(idle(d) for d in details))

            wait_setup(prepared, "the module's jobs prepared and the blocked one blocked")
            yield {"batch_keys": batch_keys, "blocked_key": blocked_key, "blocked": blocked}
        finally:
            http.patch("/v1/settings", json={"sources": original, "localNetworkHosts": []}
                       ).raise_for_status()
            good.stop()
            blocked.stop()


@pytest.fixture
def jobs_view(qtbot, live_controller, board):
    view = JobsView(live_controller)
    qtbot.addWidget(view)
    view.resize(1280, 720)
    with qtbot.waitSignal(view.refreshed, timeout=30_000):
        view.show()
    qtbot.keyClicks(view.search, MARK)
    qtbot.waitUntil(lambda: view.query().get("q") == MARK and not view.stale
                    and not view.refreshing and view.model.rowCount() == BATCH_JOBS + 1,
                    timeout=30_000)
    return view


def click_row(qtbot, view: JobsView, key: str, modifier=Qt.KeyboardModifier.NoModifier):
    index = view.proxy.mapFromSource(view.model.index(view.model.row_of(key), 0))
    view.table.scrollTo(index)
    point = view.table.visualRect(index).center()
    qtbot.mouseClick(view.table.viewport(), Qt.MouseButton.LeftButton, modifier, point)


def click(qtbot, button) -> None:
    assert button.isEnabled() and button.isVisible(), button.text()
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)


def save(widget, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    QApplication.processEvents()
    assert widget.grab().save(str(ARTIFACTS / name))


@pytest.mark.desktop
@pytest.mark.integration
def test_a_selected_tailor_batch_with_two_workers(qtbot, live_services, jobs_view, board):
    view, keys = jobs_view, board["batch_keys"]
    with api(live_services) as http:
        before = {key: job(http, key)["resume"]["generation"] for key in keys}

    bulk = view.bulk
    assert not bulk.batch_buttons["tailor"].isEnabled()  # nothing selected yet
    click_row(qtbot, view, keys[0])
    for key in keys[1:]:
        click_row(qtbot, view, key, Qt.KeyboardModifier.ControlModifier)
    assert sorted(view.selected_keys()) == sorted(keys)
    assert bulk.selection_label.text() == "3 selected"

    # Cancel in the dialog starts nothing.
    click(qtbot, bulk.batch_buttons["cover"])
    qtbot.waitUntil(lambda: bulk.dialog is not None and bulk.dialog.isVisible(), timeout=15_000)
    click(qtbot, bulk.dialog.cancel_button)
    qtbot.waitUntil(lambda: not bulk.dialog.isVisible(), timeout=5_000)
    assert not bulk.result_label.isVisible()

    cancelled = bulk.dialog
    click(qtbot, bulk.batch_buttons["tailor"])
    qtbot.waitUntil(lambda: bulk.dialog not in (None, cancelled) and bulk.dialog.isVisible(),
                    timeout=15_000)
    dialog = bulk.dialog
    assert "the 3 selected jobs" in dialog.findChild(QLabel, "batchDialogText").text()
    assert 1 <= dialog.workers.value() <= 16  # the worker's slots, capped
    dialog.workers.selectAll()
    qtbot.keyClicks(dialog.workers, "2")
    assert dialog.workers.value() == 2
    save(dialog, "jobs-batch-dialog.png")
    with qtbot.waitSignal(bulk.action_finished, timeout=30_000) as finished:
        click(qtbot, dialog.start_button)
    action, answer = finished.args
    assert action == "batch-tailor" and isinstance(answer, dict), answer
    assert answer["workflowId"].startswith("batch-tailor-")
    assert (answer["jobCount"], answer["workers"], answer["busyJobKeys"]) == (3, 2, [])
    assert bulk.result_label.text() == (
        "Started: tailoring 3 jobs, 2 at a time. Follow it in Runs.")
    save(view, "jobs-batch-controls.png")

    with api(live_services) as http:
        def run_listed() -> None:
            runs = http.get("/v1/workflow-runs",
                            params={"workflowType": "BatchStageWorkflow"}).json()["items"]
            assert answer["firstExecutionRunId"] in {run["runId"] for run in runs}

        qtbot.waitUntil(run_listed, timeout=30_000)

        def retailored() -> None:
            for key in keys:
                detail = job(http, key)
                tailor = stages(detail)["tailor"]
                assert tailor["ownerWorkflowId"] == answer["workflowId"], tailor
                assert tailor["status"] == "succeeded", tailor
                assert detail["resume"]["generation"] > before[key]

        qtbot.waitUntil(retailored, timeout=180_000)
    # The list follows the batch through events: every row ends ready again.
    qtbot.waitUntil(lambda: all(view.model.get(key)["stages"].get("pdf") == "succeeded"
                                for key in keys), timeout=60_000)


@pytest.mark.desktop
@pytest.mark.integration
def test_rescore_stale_after_a_profile_change(qtbot, live_services, jobs_view, board):
    view, keys = jobs_view, board["batch_keys"]
    changed = copy.deepcopy(PROFILE)
    changed["resume"]["skills"].append({"name": "Systems", "keywords": ["Rust"]})
    with api(live_services) as http:
        wait_setup(lambda: all(idle(job(http, key)) for key in keys), "the batch finished")
        before = {key: job(http, key)["score"]["version"] for key in keys}
        saved = http.put("/v1/profile", json=changed)
        saved.raise_for_status()
        revision = saved.json()["revision"]
        try:
            click(qtbot, view.bulk.stale_buttons["rescore-stale"])
            box = view.bulk.confirm
            qtbot.waitUntil(lambda: box.isVisible(), timeout=5_000)
            assert "older version of your profile" in box.text()
            confirm = next(b for b in box.buttons() if b.objectName() == "staleConfirmButton")
            # One batch workflow, however many jobs are stale in the whole app (hundreds
            # when other tests discovered the demo board): the API answers at once.
            with qtbot.waitSignal(view.bulk.action_finished, timeout=30_000) as finished:
                click(qtbot, confirm)
            action, answer = finished.args
            assert action == "rescore-stale" and isinstance(answer, dict), answer
            assert set(keys) <= set(answer["jobKeys"])
            assert view.bulk.result_label.text().startswith(
                f"Rescoring {answer['staleJobs']:,} jobs whose score predates your profile.")

            def rescored() -> None:
                for key in keys:
                    score = job(http, key)["score"]
                    assert score["version"] > before[key], score
                    assert score["profileRevision"] == revision, score

            qtbot.waitUntil(rescored, timeout=300_000)
        finally:
            http.put("/v1/profile", json=PROFILE).raise_for_status()


@pytest.mark.desktop
@pytest.mark.integration
def test_a_blocked_site_notice_resumes_the_job(qtbot, live_services, jobs_view, board):
    view, key, site = jobs_view, board["blocked_key"], board["blocked"]
    host = host_of(site.origin)
    assert view.select_job(key)
    notice = view.detail.blocked_notice
    qtbot.waitUntil(lambda: notice.isVisible() and notice.job_key == key, timeout=30_000)
    assert notice.title.text() == ("<b>This site asks automated tools not to read its "
                                   "pages</b>")
    assert notice.allow_button.text() == f"Allow JobCtrl to read postings on {host}"
    assert "the site asks tools not to read it" in view.detail.stage_labels["enrich"].text()
    assert site.count("/jobs/backend-engineer") == 0  # robots.txt was honoured
    save(view, "jobs-blocked-site-notice.png")

    with qtbot.waitSignal(notice.resolved, timeout=30_000) as resolved:
        click(qtbot, notice.allow_button)
    answer = resolved.args[0]
    assert isinstance(answer, dict) and answer["jobCount"] == 1, answer
    assert answer["host"] == host and answer["workflowId"]
    assert notice.isVisible() and not notice.allow_button.isVisible()
    assert notice.explanation.text() == describe_resolution(host, answer)

    # The job resumes: its Enrich reads the page and succeeds, and Score follows.
    def enriched() -> None:
        shown = stages(view.detail.detail or {})
        assert shown["enrich"]["status"] == "succeeded", shown.get("enrich")
        assert shown["score"]["status"] == "succeeded", shown.get("score")

    qtbot.waitUntil(enriched, timeout=180_000)
    assert site.count("/jobs/backend-engineer") >= 1
    assert "done" in view.detail.stage_labels["enrich"].text()
    save(view, "jobs-blocked-site-resolved.png")

    # The resumed work stops at Cover; the PDFs' line says Run finishes it, and it does.
    detail = view.detail
    qtbot.waitUntil(lambda: stages(detail.detail)["cover"]["status"] == "succeeded"
                    and idle(detail.detail), timeout=180_000)
    if stages(detail.detail)["pdf"]["status"] != "succeeded":
        assert "Run finishes it" in detail.stage_labels["pdf"].text()
        qtbot.waitUntil(detail.run_button.isEnabled, timeout=30_000)
        assert detail.stage_combo.currentData() == "pdf"
        with qtbot.waitSignal(detail.action_finished, timeout=30_000):
            click(qtbot, detail.run_button)
    qtbot.waitUntil(lambda: stages(detail.detail)["pdf"]["status"] == "succeeded",
                    timeout=120_000)
