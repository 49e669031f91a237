"""Policy edits racing each other and the work they steer, on the offline model:
concurrent profile and settings saves, and a profile change over a board whose scores
fall on both sides of the materials threshold (some jobs rise above it, one drops below)."""

from __future__ import annotations

import asyncio
import json
from datetime import date

import pytest
import pytest_asyncio

from backend.domain.profile import CandidateProfile
from backend.pipeline.score import offline_score
from tests.chaos.invariants import assert_invariants, last_event_id, wait_quiet
from tests.chaos.stack import chaos_app, discover_and_settle, outbox_settled
from tests.chaos.test_service_faults import demo_postings
from tests.integration.test_preparation import PROFILE

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session"),
              pytest.mark.timeout(600)]

THRESHOLD = 50
FIRST = {**PROFILE, "targetTitles": ["Platform Engineer", "Site Reliability Engineer"],
         "mustHaveKeywords": ["Kubernetes"]}
SECOND = {**PROFILE, "targetTitles": ["Data Engineer", "Analytics Engineer"],
          "mustHaveKeywords": ["SQL"]}


def mixed_board() -> list[int]:
    """Demo postings whose offline scores (the worker's own scoring, computed here the
    same way) cross the threshold both ways from FIRST to SECOND: two rise, one drops,
    one stays above and one below. Chosen now, as scores move with the calendar."""
    from backend.pipeline.posting_text import demo_board_jobs

    today = date.today()
    first, second = (CandidateProfile.model_validate(p) for p in (FIRST, SECOND))
    scores = [(offline_score(first, job, today=today).score,
               offline_score(second, job, today=today).score) for job in demo_board_jobs()]

    def where(test) -> list[int]:
        return [index for index, (a, b) in enumerate(scores) if test(a >= THRESHOLD,
                                                                    b >= THRESHOLD)]

    rise, drop = where(lambda a, b: not a and b), where(lambda a, b: a and not b)
    above, below = where(lambda a, b: a and b), where(lambda a, b: not a and not b)
    assert len(rise) >= 2 and drop and above and below, "the demo board offers a mixed board"
    return [*rise[:2], drop[0], above[0], below[0]]


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def app(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("chaos-policy")
    async with chaos_app(app_dir, postings=demo_postings(mixed_board()), paid=False,
                         profile=FIRST, minFitScore=THRESHOLD) as running:
        await discover_and_settle(running)
        yield running


def latest_scores(app) -> dict[str, int]:
    return dict(app.rows("SELECT job_id, score FROM job_scores s WHERE version ="
                         " (SELECT MAX(version) FROM job_scores x WHERE x.job_id = s.job_id)"))


def materials(app) -> dict[str, list[tuple]]:
    found: dict[str, list[tuple]] = {}
    for job_id, kind, generation in app.rows("SELECT job_id, kind, generation FROM"
                                             " job_materials ORDER BY 1, 2, 3"):
        found.setdefault(job_id, []).append((kind, generation))
    return found


async def queue(app) -> set[str]:
    body = (await app.http.get("/v1/apply/queue", params={"limit": 500})).json()
    return {item["jobKey"] for item in body["items"]}


def events_per_job(app, kind: str, after: int) -> dict[str, int]:
    return dict(app.rows("SELECT job_id, COUNT(*) FROM job_events WHERE type = ? AND id > ?"
                         " GROUP BY job_id", (kind, after)))


async def test_r22_a_profile_change_over_mixed_scores_moves_exactly_the_crossing_jobs(app):
    before_scores, before_materials = latest_scores(app), materials(app)
    assert set(before_materials) == {job for job, s in before_scores.items() if s >= THRESHOLD}
    after = last_event_id(app.app_dir)
    assert (await app.http.put("/v1/profile", json=SECOND)).json()["changed"] is True
    await outbox_settled(app)
    await wait_quiet(app.app_dir, client=app.client, after=after)
    answer = await app.http.post("/v1/pipeline/actions/rescore-stale")
    assert answer.status_code == 202, answer.text
    assert sorted(answer.json()["jobKeys"]) == sorted(before_scores)
    await wait_quiet(app.app_dir, client=app.client, after=after)

    scores = latest_scores(app)
    rose = {job for job in scores if before_scores[job] < THRESHOLD <= scores[job]}
    dropped = {job for job in scores if scores[job] < THRESHOLD <= before_scores[job]}
    assert (len(rose), len(dropped)) == (2, 1), (before_scores, scores)
    assert events_per_job(app, "JobScored", after) == {job: 1 for job in scores}
    # Exactly the jobs that rose got materials (once); nobody else got new ones.
    assert events_per_job(app, "ResumeApproved", after) == {job: 1 for job in rose}
    assert events_per_job(app, "PdfRendered", after) == {job: 2 for job in rose}
    now = materials(app)
    for job in dropped:
        assert now[job] == before_materials[job], "a dropped job keeps what it had"
    assert await queue(app) == {job for job, s in scores.items() if s >= THRESHOLD}
    await assert_invariants(app.app_dir, client=app.client, http=app.http, after=after)

    # "Re-tailor stale" re-tailors the jobs above the threshold whose materials predate
    # the profile, once; a job below it is not stale work (it would only be skipped).
    retailor = await app.http.post("/v1/pipeline/actions/retailor-stale")
    assert retailor.status_code == 202, retailor.text
    stale = {job for job, s in scores.items() if s >= THRESHOLD} - rose
    assert set(retailor.json()["jobKeys"]) == stale
    await wait_quiet(app.app_dir, client=app.client, after=after)
    again = await app.http.post("/v1/pipeline/actions/retailor-stale")
    assert again.status_code == 200 and again.json()["noopReason"] == "nothing_stale"
    await assert_invariants(app.app_dir, client=app.client, http=app.http, after=after)


SETTINGS_PATCHES = [{"dailyBudgetUsd": 7}, {"materials": {"paper": "letter"}},
                    {"materials": {"template": "compact"}}, {"llm": {"timeoutS": 30}},
                    {"stageHeartbeatTimeoutS": 6}, {"workerActivitySlots": 4}]


async def test_r11_concurrent_profile_and_settings_edits_lose_nothing(app):
    """Eight profile saves and six settings patches at once: every save gets its own
    revision and the newest is stored; no patch is lost (not even two to the same nested
    group); every revision's continuation is delivered or coalesced, one at a time."""
    after = last_event_id(app.app_dir)
    start = (await app.http.get("/v1/profile")).json()["revision"]
    profiles = [{**SECOND, "resume": {**SECOND["resume"], "basics": {
        **SECOND["resume"]["basics"], "label": f"Backend Engineer {n}"}}} for n in range(8)]
    answers = await asyncio.gather(
        *(app.http.put("/v1/profile", json=profile) for profile in profiles),
        *(app.http.patch("/v1/settings", json=patch) for patch in SETTINGS_PATCHES))
    assert all(answer.status_code == 200 for answer in answers), [a.text for a in answers]
    saves = [answer.json() for answer in answers[:len(profiles)]]
    assert sorted(save["revision"] for save in saves) == list(range(start + 1, start + 9))
    newest = max(saves, key=lambda save: save["revision"])
    stored = (await app.http.get("/v1/profile")).json()
    assert stored["revision"] == newest["revision"]
    assert stored["profile"]["resume"]["basics"]["label"] == newest["profile"]["resume"][
        "basics"]["label"]
    settings = (await app.http.get("/v1/settings")).json()
    assert settings["dailyBudgetUsd"] == 7 and settings["materials"] == {
        "paper": "letter", "template": "compact", "letterLanguage": "profile"}
    assert (settings["llm"]["timeoutS"], settings["stageHeartbeatTimeoutS"],
            settings["workerActivitySlots"]) == (30, 6, 4)
    assert json.loads((app.app_dir / "settings.json").read_text(encoding="utf-8")) == settings

    await outbox_settled(app)
    await wait_quiet(app.app_dir, client=app.client, after=after)
    outbox = app.rows("SELECT revision, status FROM profile_outbox WHERE revision > ?",
                      (start,))
    assert {status for _, status in outbox} <= {"finished", "coalesced"}, outbox
    assert max(outbox)[1] == "finished", "the newest revision was delivered"
    continuations = app.rows(
        "SELECT workflow_id, MIN(CASE WHEN type = 'WorkflowStarted' THEN id END),"
        " MAX(CASE WHEN type = 'WorkflowCompleted' THEN id END) FROM job_events"
        " WHERE workflow_id LIKE 'profile-continuation-%' AND id > ? GROUP BY 1 ORDER BY 2",
        (after,))
    for (_, _, closed), (_, started, _) in zip(continuations, continuations[1:], strict=False):
        assert closed < started, "two continuations ran side by side"
    await assert_invariants(app.app_dir, client=app.client, http=app.http, after=after)
