"""The daily ceiling holds when the model changes mid-run: a demo board is being prepared
with the free offline model (every job admitted at a $0 estimate) when the user switches
to a paid OpenAI-compatible model (a real loopback stand-in that reports token usage and
counts its calls) with a small ceiling. Each stage about to call the paid model is
admitted again under it; the ones that do not fit stop with ``budget_exceeded``."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest

from backend.supervision.supervisor import Supervisor
from tests.api_http import api_http
from tests.app_db import connect_db
from tests.fakes.llm_servers import FakeLlmServer
from tests.integration.conftest import write_settings
from tests.integration.env_helpers import override_environ
from tests.integration.test_paid_pipeline import PER_CALL_USD, demo_subset, scripted_reply
from tests.integration.test_preparation import PROFILE, wait_for

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session"),
              pytest.mark.timeout(900)]

JOBS = 40
CEILING_USD = Decimal("0.25")  # eleven $0.022 calls


def query(app_dir, sql: str, params=()) -> list[tuple]:
    with connect_db(app_dir / "jobctrl.db") as conn:
        return conn.execute(sql, params).fetchall()


def scored(app_dir) -> int:
    return query(app_dir, "SELECT COUNT(*) FROM job_events WHERE type = 'JobScored'")[0][0]


async def wait_settled(app_dir, fake, *, quiet_s: float = 20, timeout: float = 600) -> None:
    """No preparation open and no new paid call for ``quiet_s`` (longer than a reconciler
    pass, so a budget resume that still fits would have started)."""
    loop = asyncio.get_running_loop()
    deadline, last, since = loop.time() + timeout, -1, loop.time()
    while loop.time() < deadline:
        open_runs = query(app_dir, "SELECT COUNT(*) FROM workflow_run_projections"
                          " WHERE status = 'running' AND workflow_type != 'DiscoverWorkflow'")
        busy = query(app_dir, "SELECT COUNT(*) FROM job_stage_states"
                     " WHERE status IN ('queued', 'running')")[0][0]
        if fake.calls != last or open_runs[0][0] or busy:
            last, since = fake.calls, loop.time()
        elif loop.time() - since >= quiet_s:
            return
        await asyncio.sleep(1)
    raise AssertionError("the board never settled")


async def test_switching_to_a_paid_model_mid_run_keeps_the_ceiling(tmp_path):
    board = tmp_path / "board.json"
    demo_subset(board, JOBS)
    fake = FakeLlmServer().start()
    fake.reply_with(scripted_reply)
    fake.set_usage(4000, 1200)  # exactly the typical call the admission estimates
    write_settings(tmp_path, sources=[{"kind": "json_file", "id": "subset", "path": str(board)}],
                   dailyBudgetUsd=0, stageHeartbeatTimeoutS=5)
    restore_environ = override_environ(JOBCTRL_SECRETS_BACKEND="file")
    supervisor = Supervisor(tmp_path, temporal_ui=False)
    await supervisor.start()
    http = api_http(supervisor.info)
    try:
        assert (await http.put("/v1/profile", json=PROFILE)).status_code == 200
        assert (await http.put("/v1/secrets/openai", json={"value": "sk-test"})).status_code == 204
        assert (await http.post("/v1/pipeline/actions/run-stage",
                                json={"stage": "discover"})).status_code == 202

        async def under_way() -> bool:
            return scored(tmp_path) >= 3

        await wait_for(under_way, timeout=300)
        in_flight_at_switch = fake.in_flight  # paid calls already running: none, all offline
        patched = await http.patch("/v1/settings", json={
            "dailyBudgetUsd": float(CEILING_USD),
            "llm": {"provider": "openai_compat", "baseUrl": fake.openai_base_url,
                    "model": "gpt-4o", "apiKeySecret": "openai"}})
        assert patched.status_code == 200, patched.text
        left = JOBS - scored(tmp_path)
        assert left >= 10, "the switch came mid-run, with most of the board still to score"

        await wait_settled(tmp_path, fake)
        assert fake.calls > 0, "the jobs after the switch used the paid model"
        assert fake.calls * PER_CALL_USD <= CEILING_USD + in_flight_at_switch * PER_CALL_USD, (
            f"{fake.calls} paid calls against a ${CEILING_USD} ceiling")
        ledger = query(tmp_path, "SELECT SUM(calls), SUM(cost_micro_usd) FROM llm_spend")[0]
        assert ledger[0] == fake.calls, "the ledger holds every call the provider saw"
        assert Decimal(ledger[1]) / 1_000_000 <= CEILING_USD
        halted = query(tmp_path, "SELECT COUNT(*) FROM job_events WHERE type = 'WorkflowFailed'"
                       " AND json_extract(payload_json, '$.errorCode') = 'budget_exceeded'")
        assert halted[0][0] > 0, "the ceiling, not the board, ended the paid work"
        stages = query(tmp_path, "SELECT DISTINCT error_code FROM job_stage_states"
                       " WHERE status IN ('failed', 'exhausted')")
        assert set(stages) <= {("budget_exceeded",)}, stages
    finally:
        await http.aclose()
        await supervisor.stop()
        fake.stop()
        restore_environ()
