"""Bulk policy actions in the request: one Temporal call (the batch), whatever the number of
stale jobs; the batch's id is deterministic per action and job set."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

import pytest
from temporalio.exceptions import WorkflowAlreadyStartedError

from backend.api.routers.pipeline import _policy_rerun
from backend.api.routers.settings import prepare_threshold_cleared
from backend.config import AppSettings
from backend.pipeline.policy_rerun import (
    POLICY_RERUNS,
    fanout_chunks,
    policy_rerun_workflow_id,
)
from backend.temporal.policy_contracts import PolicyRerunInput


def test_the_batch_id_names_the_action_and_the_job_set_in_any_order():
    one = policy_rerun_workflow_id("rescore_stale", ["j2", "j1", "j3"])
    assert one == policy_rerun_workflow_id("rescore_stale", ["j3", "j1", "j2", "j1"])
    assert one.startswith("policy-rerun-rescore-stale-") and len(one.rsplit("-", 1)[1]) == 16
    assert one != policy_rerun_workflow_id("rescore_stale", ["j1", "j2"])
    assert one != policy_rerun_workflow_id("retailor_stale", ["j1", "j2", "j3"])
    with pytest.raises(ValueError):
        policy_rerun_workflow_id("rescore_everything", ["j1"])


def test_each_action_reruns_its_stages():
    assert POLICY_RERUNS["rescore_stale"].stages() == ["score", "tailor", "cover", "pdf"]
    assert POLICY_RERUNS["rescore_stale"].force == ("score",)
    assert POLICY_RERUNS["retailor_stale"].force == ("tailor", "cover", "pdf")
    assert POLICY_RERUNS["threshold_cleared"].stages() == ["tailor", "cover", "pdf"]
    assert POLICY_RERUNS["threshold_cleared"].force == ()
    assert [len(c) for c in fanout_chunks([str(i) for i in range(163)])] == [50, 50, 50, 13]


@dataclass
class FakeClient:
    """Records every start; the second start of a running id fails as Temporal does."""

    starts: list[tuple[str, object, str]] = field(default_factory=list)
    running: set[str] = field(default_factory=set)

    async def start_workflow(self, workflow, arg, *, id, task_queue, **_):
        self.starts.append((workflow, arg, id))
        if id in self.running:
            raise WorkflowAlreadyStartedError(id, workflow, run_id="run-0")
        self.running.add(id)
        return SimpleNamespace(first_execution_run_id=f"run-{len(self.starts)}")


def fake_context(client: FakeClient, db=None):
    async def require_runtime():
        return client

    return SimpleNamespace(settings=AppSettings(), require_runtime=require_runtime, db=db)


async def test_rescore_stale_starts_one_batch_however_many_jobs_are_stale():
    client = FakeClient()
    jobs = [f"job-{i:03d}" for i in range(163)]
    answer = await _policy_rerun(fake_context(client), "rescore_stale", jobs)
    assert [(workflow, id) for workflow, _arg, id in client.starts] == [
        ("PolicyRerunWorkflow", policy_rerun_workflow_id("rescore_stale", jobs))]
    batch: PolicyRerunInput = client.starts[0][1]
    assert batch.job_ids == jobs and batch.stages == ["score", "tailor", "cover", "pdf"]
    assert batch.force_stages == ["score"]
    assert (answer.stale_jobs, answer.started_workflows, answer.job_count) == (163, 163, 163)
    assert answer.workflow_id == client.starts[0][2] and answer.first_execution_run_id == "run-1"
    assert not answer.already_running

    again = await _policy_rerun(fake_context(client), "rescore_stale", jobs[::-1])
    assert again.already_running and again.first_execution_run_id == "run-0"
    assert again.workflow_id == answer.workflow_id


async def test_nothing_stale_starts_nothing():
    client = FakeClient()
    answer = await _policy_rerun(fake_context(client), "retailor_stale", [])
    assert answer.status_code == 200 and b'"noopReason":"nothing_stale"' in answer.body
    assert client.starts == []


async def test_a_lowered_threshold_starts_one_batch(monkeypatch):
    client = FakeClient()
    jobs = [f"job-{i}" for i in range(40)]

    async def cleared(_db, *, min_fit_score):
        return jobs

    monkeypatch.setattr("backend.api.routers.settings.threshold_cleared_jobs", cleared)
    await prepare_threshold_cleared(fake_context(client))
    assert [(workflow, id) for workflow, _arg, id in client.starts] == [
        ("PolicyRerunWorkflow", policy_rerun_workflow_id("threshold_cleared", jobs))]
    assert client.starts[0][1].stages == ["tailor", "cover", "pdf"]
