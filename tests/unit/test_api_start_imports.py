"""The API's start imports no workflow module and none of the route-only libraries.

The workflow modules import every activity they call (and those their libraries); the API
starts workflows from backend/temporal/start_contracts.py instead. Each module named here
cost the API's start (bench/README.md, "Start-up after issue 18, session 5"); a new
top-level import of one of them fails this test instead of slowing every start unseen."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from backend.temporal import start_contracts
from backend.temporal.workflows import apply, contact_research, discover, follow_up

# Imported by the routes that use them, not by the API's start.
ROUTE_ONLY = (
    "backend.pipeline.follow_up",
    "backend.pipeline.fit.rules",
    "backend.domain.interview_calendar",
    "backend.operations.snapshot",
    "backend.pipeline.access_grants",
)


@pytest.fixture(scope="module")
def api_start_modules() -> set[str]:
    probe = "import json, sys; import backend.api.app; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True,
                         text=True, timeout=120).stdout
    return set(json.loads(out))


def test_the_api_imports_no_workflow_and_no_workflow_only_activity(api_start_modules):
    workflows = sorted(m for m in api_start_modules if m.startswith("backend.temporal.workflows"))
    activities = sorted(m for m in api_start_modules
                        if m.startswith("backend.temporal.activities.")
                        and m != "backend.temporal.activities.continuation")  # its input
    assert workflows == []
    assert activities == []


@pytest.mark.parametrize("module", ROUTE_ONLY)
def test_route_only_modules_wait_for_their_route(api_start_modules, module):
    assert module not in api_start_modules


def test_the_workflow_modules_start_from_the_same_contracts():
    # One definition: the workflow modules re-export what starters use.
    assert apply.ApplyWorkflowInput is start_contracts.ApplyWorkflowInput
    assert apply.WORKFLOW_TYPE == start_contracts.APPLY_WORKFLOW_TYPE == "ApplyWorkflow"
    assert apply.APPLY_LOOP_WORKFLOW_ID == start_contracts.APPLY_LOOP_WORKFLOW_ID
    assert follow_up.FollowUpWorkflowInput is start_contracts.FollowUpWorkflowInput
    assert follow_up.WORKFLOW_TYPE == "FollowUpEmailWorkflow"
    assert contact_research.WORKFLOW_TYPE == "ContactResearchWorkflow"
    assert discover.DISCOVER_WORKFLOW_ID == "discover-local"
