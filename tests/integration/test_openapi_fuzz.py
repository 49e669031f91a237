"""The OpenAPI document is the truth: a bounded schemathesis run, every check, against the
real API of a real Supervisor (real Temporal dev server, worker and API processes), with
the bearer token, must find nothing.

Bounded and deterministic: a fixed seed, ``MAX_EXAMPLES`` generated cases per operation
and phase, no shrinking, one worker. What is left out, and why:

* ``GET /v1/events/stream`` is an endless SSE stream (a valid request never finishes);
  its input bounds are covered by ``tests/unit/test_api_hardening.py`` and its replay
  semantics by ``test_discover_sse.py``.
* The instance has an empty board (its only source is disabled) and no provider key, so
  the commands that start work (discover, per-job stages, batches, apply, contact
  research, rescore/retailor-stale) are fuzzed but have nothing to run on: they answer
  their declared no-op, 404 or 409 replies within the request.

Rules a JSON Schema cannot state are answered 422 (or 400) to schema-valid requests; for
exactly these operations ``positive_data_acceptance`` also accepts that status, and each
is named in ``RULES_THE_SCHEMA_CANNOT_STATE`` with its rule. Every other check still runs
on them.
"""

from __future__ import annotations

import pytest
import pytest_asyncio

from backend.runtime.supervisor import Supervisor
from tests.integration.conftest import write_settings

schemathesis = pytest.importorskip("schemathesis")

from schemathesis.config import SchemathesisConfig  # noqa: E402
from schemathesis.engine import events, from_schema  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

MAX_EXAMPLES = 20
SEED = 14
EXCLUDED_PATHS = ["/v1/events/stream"]
ACCEPTED_STATUSES = ["2xx", "3xx", "401", "403", "404", "409", "429"]
RULES_THE_SCHEMA_CANNOT_STATE = {
    # sourceIds must name configured sources; jobKeys must name stored jobs. (Still open,
    # issue 14 item 3: jobKeys/workers are declared for every stage but taken by tailor and
    # cover only.)
    "/v1/pipeline/actions/run-stage": "422",
    # A host that normalizes to nothing usable (e.g. a 300-character label) is refused.
    "/v1/pipeline/conditions/enrich/resolve": "422",
    # Either a file or sample=true: a pair of optional parameters, one of them required.
    "/v1/profile/import": "400",
}


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def fuzzed_instance(tmp_path_factory):
    """A private instance: the fuzzer saves profiles and settings, which must not leak
    into the tests sharing the session's instance."""
    app_dir = tmp_path_factory.mktemp("fuzz")
    write_settings(app_dir, sources=[{"kind": "demo_board", "id": "demo_board", "enabled": False}])
    supervisor = Supervisor(app_dir, temporal_ui=False)
    await supervisor.start()
    yield supervisor
    await supervisor.stop()


def fuzz_config(token: str) -> SchemathesisConfig:
    return SchemathesisConfig.from_dict({
        "seed": SEED,
        "headers": {"Authorization": f"Bearer {token}"},
        "request-timeout": 30,
        "generation": {"max-examples": MAX_EXAMPLES, "deterministic": True, "no-shrink": True},
        "checks": {"enabled": True},
        "workers": 1,
        "operations": [
            *({"include-path": path, "enabled": False} for path in EXCLUDED_PATHS),
            *({"include-path": path, "checks": {"positive_data_acceptance": {
                "expected-statuses": [*ACCEPTED_STATUSES, status]}}}
              for path, status in RULES_THE_SCHEMA_CANNOT_STATE.items()),
        ],
    })


def describe(label: str, check: str, info) -> str:
    """One line a reader can act on: the operation, the check, what it saw, and how to
    send the same request again (``curl``)."""
    message = " ".join(info.failure.message.split())[:300]
    return f"{label}: {check}: {info.failure.title}: {message}\n    {info.code_sample[:400]}"


def run_fuzzer(schema) -> tuple[list[str], list[str], int]:
    """(failed checks, engine errors, scenarios run) of one engine run."""
    failures: list[str] = []
    errors: list[str] = []
    scenarios = 0
    for event in from_schema(schema).execute():
        if isinstance(event, events.ScenarioFinished):
            scenarios += 1
            for checks in event.recorder.checks.values():
                failures += [describe(event.recorder.label, node.name, node.failure_info)
                             for node in checks if node.failure_info is not None]
        elif isinstance(event, events.NonFatalError):
            errors.append(f"{event.label}: {event.info.title}")
        elif isinstance(event, events.FatalError):
            errors.append(f"fatal: {event.exception!r}")
    return sorted(set(failures)), errors, scenarios


# Strict: once these are fixed the run passes, and this marker must go.
@pytest.mark.xfail(strict=True, reason=(
    "issue 14 item 3, still open: PATCH /v1/settings and POST /v1/settings/llm/test take "
    "an untyped object but refuse unknown keys; POST /v1/profile/import answers 422/400 to "
    "a text part named file and to extra form fields"))
def test_the_api_answers_what_its_openapi_document_says(fuzzed_instance):
    info = fuzzed_instance.info
    schema = schemathesis.openapi.from_url(
        f"{info.api_base_url}/openapi.json", config=fuzz_config(info.api_token),
        headers={"Authorization": f"Bearer {info.api_token}"})
    failures, errors, scenarios = run_fuzzer(schema)
    assert scenarios > 0
    assert errors == []
    assert failures == [], "\n".join(failures)
