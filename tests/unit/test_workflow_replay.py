"""An upgrade never breaks a workflow in flight: recorded histories replay on today's code.

JobCtrl runs unattended for days; an upgrade replaces the code while Discover, preparation,
batch, continuation, apply and contact-research runs are open in the embedded Temporal
server, and Temporal replays their histories against the new code. Every history in
tests/unit/data/histories (recorded from real runs by scripts/record_histories.py) is
replayed here against exactly the workflow classes the worker registers, with the worker's
data converter; any nondeterminism (other commands, another order, a renamed activity, a
removed patch) fails the test. A newly registered workflow must bring a recorded history.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer

from backend.temporal.client import pydantic_data_converter  # the one connect_temporal uses
from backend.temporal.worker import REGISTERED_WORKFLOWS

HISTORIES = Path(__file__).parent / "data" / "histories"
HISTORY_FILES = sorted(HISTORIES.glob("*.json"))


def started_attributes(path: Path) -> dict:
    events = json.loads(path.read_text(encoding="utf-8"))["events"]
    return events[0]["workflowExecutionStartedEventAttributes"]


def recorded_type(path: Path) -> str:
    return started_attributes(path)["workflowType"]["name"]


def load_history(path: Path) -> WorkflowHistory:
    # The workflow id is not stored in the history; the file name stands in for it.
    return WorkflowHistory.from_json(path.stem, path.read_text(encoding="utf-8"))


def registered_types() -> set[str]:
    # @workflow.defn stores the registered name on the class.
    return {getattr(workflow, "__temporal_workflow_definition").name
            for workflow in REGISTERED_WORKFLOWS}


def test_the_history_folder_holds_recordings():
    assert len(HISTORY_FILES) >= len(REGISTERED_WORKFLOWS), HISTORIES


@pytest.mark.parametrize("path", HISTORY_FILES, ids=[p.stem for p in HISTORY_FILES])
async def test_a_recorded_history_replays_on_the_current_code(path: Path):
    replayer = Replayer(workflows=REGISTERED_WORKFLOWS, data_converter=pydantic_data_converter)
    result = await replayer.replay_workflow(load_history(path), raise_on_replay_failure=False)
    assert result.replay_failure is None, (
        f"{path.name} ({recorded_type(path)}) no longer replays: {result.replay_failure!r}."
        " A workflow change must keep the commands and their order for open runs"
        " (guard new behaviour with workflow.patched), not edit this recording.")


def test_every_registered_workflow_has_a_recorded_history():
    recorded = {recorded_type(path) for path in HISTORY_FILES}
    missing = sorted(registered_types() - recorded)
    assert not missing, (
        f"no recorded history for {missing}: run scripts/record_histories.py"
        " (tests/unit/data/histories/README.md) and add one per new workflow type")


def test_every_recorded_history_is_of_a_registered_workflow():
    unknown = {path.name: recorded_type(path) for path in HISTORY_FILES
               if recorded_type(path) not in registered_types()}
    # A history nobody replays guards nothing; an unregistered type would also fail replay.
    assert not unknown, unknown


def test_the_recordings_cover_completed_failed_and_canceled_runs():
    # The closing paths (lifecycle activity, cancel bookkeeping, typed failure) issue
    # commands too; a refactor of them is guarded only if some history went through them.
    closes = {json.loads(path.read_text(encoding="utf-8"))["events"][-1]["eventType"]
              for path in HISTORY_FILES}
    assert {"EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED", "EVENT_TYPE_WORKFLOW_EXECUTION_FAILED",
            "EVENT_TYPE_WORKFLOW_EXECUTION_CANCELED"} <= closes, closes
