"""A paid provider (a real loopback OpenAI-compatible server that counts every call):
the daily ceiling, unlimited budgets, retried 500s, fail-fast 401s, a worker killed
right after committing a score, and malformed fit ledgers (one repair, then typed)."""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager
from decimal import Decimal

import pytest
import pytest_asyncio

from backend.config import TemporalSettings
from backend.supervision.supervisor import Supervisor
from backend.temporal.client import connect_temporal
from tests.api_http import api_http
from tests.app_db import connect_db
from tests.fakes.llm_servers import FakeLlmServer
from tests.integration.conftest import write_settings
from tests.integration.env_helpers import override_environ
from tests.integration.test_preparation import PROFILE, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

JOBS = 6
PER_CALL_USD = Decimal("0.022")  # gpt-4o: 4,000 in x $2.50/M + 1,200 out x $10/M


LEDGER_REPLY = json.dumps({"requirements": [
    {"kind": "skill", "label": "Python", "importance": "must", "status": "met",
     "evidence": "Senior Backend Engineer, Northwind GmbH (2020–)"},
    {"kind": "skill", "label": "PostgreSQL", "importance": "must", "status": "met",
     "evidence": "Skills: PostgreSQL"},
    {"kind": "work_authorization", "label": "Work authorization", "importance": "must",
     "status": "unknown", "detail": "not stated"},
]})


def is_score_request(request) -> bool:
    return "check a job posting against" in request.body["messages"][0]["content"]


TAILOR_REPLY = json.dumps({"summary": "Backend engineer with eight years of Python.",
                           "entries": [{"entry": 0, "bullets": [{"source": 0}, {"source": 1}]},
                                       {"entry": 1, "bullets": [{"source": 0}]}]})
LETTER_REPLY = json.dumps({"paragraphs": [
    {"text": "I am applying for this role because I build billing platforms on PostgreSQL.",
     "evidence": ["entry0.bullet0"]},
    {"text": "Thank you for considering my application.", "evidence": []}]})


def scripted_reply(request) -> str:
    if is_score_request(request):
        return LEDGER_REPLY
    system = request.body["messages"][0]["content"]
    if system.startswith("You tailor"):
        return TAILOR_REPLY
    return LETTER_REPLY


def demo_subset(path, count: int) -> None:
    from backend.sources.board_file import demo_board_text

    postings = json.loads(demo_board_text())["postings"][:count]
    path.write_text(json.dumps({"postings": postings}), encoding="utf-8")


@asynccontextmanager
async def paid_app(app_dir, jobs: int, daily_budget_usd: float, **environ: str):
    """A running app over ``jobs`` demo postings, priced by a paid loopback provider
    (gpt-4o, 4,000 in / 1,200 out tokens a call) with its secret and the profile set.
    Yields (supervisor, http client, fake provider)."""
    board = app_dir / "board.json"
    demo_subset(board, jobs)
    fake = FakeLlmServer().start()
    fake.reply_with(scripted_reply)
    fake.set_usage(4000, 1200)
    write_settings(
        app_dir,
        sources=[{"kind": "json_file", "id": "subset", "path": str(board)}],
        llm={"provider": "openai_compat", "baseUrl": fake.openai_base_url, "model": "gpt-4o",
             "apiKeySecret": "openai"},
        dailyBudgetUsd=daily_budget_usd,
        stageHeartbeatTimeoutS=5,
    )
    restore_environ = override_environ(JOBCTRL_SECRETS_BACKEND="file", **environ)
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    http = api_http(supervisor.info)
    try:
        assert (await http.put("/v1/secrets/openai", json={"value": "sk-test-123"})
                ).status_code == 204
        assert (await http.put("/v1/profile", json=PROFILE)).status_code == 200
        yield supervisor, http, fake
    finally:
        await http.aclose()
        await supervisor.stop()
        fake.stop()
        restore_environ()


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def paid(tmp_path_factory):
    app_dir = tmp_path_factory.mktemp("paid-app")
    async with paid_app(app_dir, JOBS, 0.15, JOBCTRL_ENABLE_FAULTS="1") as (
            supervisor, http, fake):
        yield {"app_dir": app_dir, "http": http, "fake": fake, "supervisor": supervisor}


def prep_terminals(app_dir) -> list[tuple[str, str | None]]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute(
            "SELECT type, json_extract(payload_json, '$.errorCode') FROM job_events"
            " WHERE type IN ('WorkflowCompleted', 'WorkflowFailed', 'WorkflowCanceled')"
            " AND json_extract(payload_json, '$.workflowType') = 'JobPreparationWorkflow'"
            " ORDER BY id").fetchall()


def count_events(app_dir, kind: str) -> int:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute("SELECT COUNT(*) FROM job_events WHERE type = ?", (kind,)).fetchone()[0]


async def wait_terminals(app_dir, count: int, timeout: float = 120) -> list:
    async def enough() -> bool:
        return len(prep_terminals(app_dir)) >= count

    await wait_for(enough, timeout=timeout)
    return prep_terminals(app_dir)


async def test_the_ceiling_admits_only_runs_whose_cost_fits(paid):
    http, fake, app_dir = paid["http"], paid["fake"], paid["app_dir"]
    await http.post("/v1/pipeline/actions/run-stage", json={"stage": "discover"})
    terminals = await wait_terminals(app_dir, JOBS)
    completed = [t for t in terminals if t[0] == "WorkflowCompleted"]
    refused = [t for t in terminals if t[0] == "WorkflowFailed"]
    # $0.15 fits two jobs of three $0.022 calls each; the third would pass the ceiling.
    assert len(completed) == 2
    assert refused == [("WorkflowFailed", "budget_exceeded")] * (JOBS - 2)
    assert fake.calls == 6
    spend = (await http.get("/v1/spend")).json()
    assert Decimal(str(spend["today"]["spentUsd"])) == PER_CALL_USD * 6
    assert spend["byModel"][0]["model"] == "gpt-4o" and spend["byModel"][0]["calls"] == 6
    await asyncio.sleep(2)
    assert fake.calls == 6, "no paid call after the ceiling"
    assert await preflight_attempts(paid["supervisor"], app_dir) == [1] * (JOBS - 2), \
        "budget_exceeded fails fast: one attempt, never retried"


def local_activity_attempts(history, activity_type: str) -> list[int]:
    """The attempt each local activity of this type ended on: its marker's data (Temporal
    records one ``core_local_activity`` marker per local activity, with the final attempt)."""
    attempts = []
    for event in history.events:
        if not event.HasField("marker_recorded_event_attributes"):
            continue
        marker = event.marker_recorded_event_attributes
        if marker.marker_name != "core_local_activity":
            continue
        data = json.loads(marker.details["data"].payloads[0].data)
        if data["activity_type"] == activity_type:
            attempts.append(data["attempt"])
    return attempts


async def preflight_attempts(supervisor, app_dir) -> list[int]:
    """The attempt each refused preparation's ``check_spend_budget`` ended on (Temporal
    records the started event of the last attempt only; a local preflight, its marker)."""
    with connect_db(app_dir / "jobctrl.db") as conn:
        refused = conn.execute(
            "SELECT workflow_id, run_id FROM job_events WHERE type = 'WorkflowFailed'"
            " AND json_extract(payload_json, '$.errorCode') = 'budget_exceeded'").fetchall()
    client = await connect_temporal(TemporalSettings(), supervisor.info.temporal_address,
                                    app_dir=supervisor.paths.app_dir)
    attempts = []
    for workflow_id, run_id in refused:
        history = await client.get_workflow_handle(workflow_id, run_id=run_id).fetch_history()
        scheduled = {event.event_id for event in history.events
                     if event.HasField("activity_task_scheduled_event_attributes")
                     and event.activity_task_scheduled_event_attributes.activity_type.name
                     == "check_spend_budget"}
        attempts += [event.activity_task_started_event_attributes.attempt
                     for event in history.events
                     if event.HasField("activity_task_started_event_attributes")
                     and event.activity_task_started_event_attributes.scheduled_event_id
                     in scheduled]
        attempts += local_activity_attempts(history, "check_spend_budget")
    return attempts


async def test_a_zero_ceiling_means_unlimited(paid):
    http, fake, app_dir = paid["http"], paid["fake"], paid["app_dir"]
    patched = await http.patch("/v1/settings", json={"dailyBudgetUsd": 0})
    assert patched.status_code == 200 and patched.json()["dailyBudgetUsd"] == 0
    # Clearing the ceiling resumes the budget-halted jobs by itself (the budget-resume pass).
    final = await wait_terminals(app_dir, JOBS + JOBS - 2)
    assert final[JOBS:] == [("WorkflowCompleted", None)] * (JOBS - 2)
    assert fake.calls == 6 + 3 * (JOBS - 2)
    started = await http.post("/v1/pipeline/actions/run-stage", json={"stage": "enrich"})
    assert started.status_code == 200 and started.json()["noopReason"] == "nothing_eligible"
    spend = (await http.get("/v1/spend")).json()["today"]
    assert spend["unlimited"] is True and spend["remainingUsd"] is None


async def first_job(http) -> str:
    return (await http.get("/v1/jobs", params={"sort": "title", "limit": 1})).json()["items"][0][
        "jobId"]


async def test_a_provider_500_is_retried_then_succeeds(paid):
    http, fake, app_dir = paid["http"], paid["fake"], paid["app_dir"]
    job = await first_job(http)
    calls, scored, terminals = fake.calls, count_events(app_dir, "JobScored"), len(
        prep_terminals(app_dir))
    fake.fail_next(500, times=2)
    assert (await http.post(f"/v1/jobs/{job}/actions/rescore")).status_code == 202
    final = await wait_terminals(app_dir, terminals + 1)
    assert final[-1] == ("WorkflowCompleted", None)
    assert fake.calls == calls + 3  # two failures, one success
    assert count_events(app_dir, "JobScored") == scored + 1
    assert count_events(app_dir, "StageFailed") == 0


async def test_a_provider_401_fails_fast_without_retries(paid):
    http, fake, app_dir = paid["http"], paid["fake"], paid["app_dir"]
    job = await first_job(http)
    calls, terminals = fake.calls, len(prep_terminals(app_dir))
    fake.require_key("a-different-key")
    try:
        assert (await http.post(f"/v1/jobs/{job}/actions/rescore")).status_code == 202
        final = await wait_terminals(app_dir, terminals + 1)
    finally:
        fake.require_key(None)
    assert final[-1] == ("WorkflowFailed", "authentication")
    assert fake.calls == calls + 1
    detail = (await http.get(f"/v1/jobs/{job}")).json()
    score = next(s for s in detail["stages"] if s["stage"] == "score")
    assert score["status"] == "failed" and score["errorCode"] == "authentication"
    assert score["retryable"] == 0
    # The failed stage can be retried; runAfter first checks the runtime, then resets.
    retried = await http.post(f"/v1/jobs/{job}/actions/retry-stage",
                              json={"stage": "score", "runAfter": True})
    assert retried.status_code == 202
    await wait_terminals(app_dir, terminals + 2)
    assert fake.calls == calls + 2


async def test_a_worker_killed_after_committing_a_score_never_pays_twice(paid):
    http, fake, app_dir, supervisor = (paid["http"], paid["fake"], paid["app_dir"],
                                       paid["supervisor"])
    job = await first_job(http)
    worker_pid = supervisor.service("worker").pid
    calls, scored, terminals = fake.calls, count_events(app_dir, "JobScored"), len(
        prep_terminals(app_dir))
    (app_dir / "faults").mkdir(exist_ok=True)
    (app_dir / "faults" / "after-commit-score").touch()
    assert (await http.post(f"/v1/jobs/{job}/actions/rescore")).status_code == 202
    final = await wait_terminals(app_dir, terminals + 1, timeout=180)
    assert supervisor.service("worker").pid != worker_pid, "the worker really died"
    assert final[-1] == ("WorkflowCompleted", None)
    assert fake.calls == calls + 1, "the retried attempt reused the committed score"
    assert count_events(app_dir, "JobScored") == scored + 1


def scripted_for(is_target, *replies: str):
    """Requests ``is_target`` picks answer ``replies`` in turn (the last one repeats); the
    rest get the usual scripted reply."""
    answers = list(replies)

    def reply(request) -> str:
        if not is_target(request):
            return scripted_reply(request)
        return answers.pop(0) if len(answers) > 1 else answers[0]

    return reply


def score_replies(*replies: str):
    return scripted_for(is_score_request, *replies)


async def test_a_malformed_ledger_gets_one_repair_then_scores(paid):
    http, fake, app_dir = paid["http"], paid["fake"], paid["app_dir"]
    job = await first_job(http)
    calls, scored, terminals = fake.calls, count_events(app_dir, "JobScored"), len(
        prep_terminals(app_dir))
    fake.reply_with(score_replies('Sure! Here is my assessment: {"requirements": [{"kind": 3}',
                                  LEDGER_REPLY))
    try:
        assert (await http.post(f"/v1/jobs/{job}/actions/rescore")).status_code == 202
        final = await wait_terminals(app_dir, terminals + 1)
    finally:
        fake.reply_with(scripted_reply)
    assert final[-1] == ("WorkflowCompleted", None)
    assert fake.calls == calls + 2, "the answer and exactly one repair"
    repair = fake.requests[-1].body["messages"][-1]["content"]
    assert "Your previous answer could not be used" in repair
    assert count_events(app_dir, "JobScored") == scored + 1
    ledger = (await http.get(f"/v1/jobs/{job}")).json()["score"]["ledger"]
    labels = [r["label"] for r in ledger["requirements"]]
    assert {"Python", "PostgreSQL"} <= set(labels), "the model's ledger, after the repair"


async def test_a_ledger_malformed_after_its_repair_is_a_typed_failure_and_no_score(paid):
    http, fake, app_dir = paid["http"], paid["fake"], paid["app_dir"]
    job = await first_job(http)
    before = (await http.get(f"/v1/jobs/{job}")).json()["score"]["version"]
    calls, scored, terminals = fake.calls, count_events(app_dir, "JobScored"), len(
        prep_terminals(app_dir))
    fake.reply_with(score_replies("I cannot answer in JSON today."))
    try:
        assert (await http.post(f"/v1/jobs/{job}/actions/rescore")).status_code == 202
        final = await wait_terminals(app_dir, terminals + 1)
    finally:
        fake.reply_with(scripted_reply)
    assert final[-1] == ("WorkflowFailed", "provider_response_invalid")
    assert fake.calls == calls + 2, "no retry pays for the same two calls again"
    assert count_events(app_dir, "JobScored") == scored
    detail = (await http.get(f"/v1/jobs/{job}")).json()
    assert detail["score"]["version"] == before
    stage = next(s for s in detail["stages"] if s["stage"] == "score")
    assert stage["status"] == "failed" and stage["errorCode"] == "provider_response_invalid"
