"""The paid-model stand-in's seeded random faults (``FakeLlmServer.fail_randomly``, used by
bench/sustained_load.py): the share asked for, the statuses asked for, the same sequence
for the same seed, and a faulted request is counted as a call but never as answered."""

from __future__ import annotations

import httpx

from tests.fakes.llm_servers import FakeLlmServer

REQUESTS = 40
BODY = {"model": "gpt-4o", "messages": [{"role": "user", "content": "u"}]}


def statuses(seed: int) -> tuple[list[int], FakeLlmServer]:
    """The status of each of ``REQUESTS`` calls (one kept-alive connection)."""
    with FakeLlmServer() as server, httpx.Client(base_url=server.openai_base_url) as client:
        server.fail_randomly(0.3, (429, 500), seed=seed)
        return [client.post("/chat/completions", json=BODY).status_code
                for _ in range(REQUESTS)], server


def test_faults_come_at_the_rate_and_statuses_asked_for_and_are_never_answered():
    seen, server = statuses(seed=7)
    faults = [status for status in seen if status != 200]
    assert 4 <= len(faults) <= 24, "about 30 % of 40"
    assert set(faults) == {429, 500}
    assert server.faults == len(faults)
    assert server.calls == REQUESTS and server.succeeded == REQUESTS - len(faults)


def test_the_same_seed_repeats_the_sequence():
    assert statuses(seed=7)[0] == statuses(seed=7)[0] != statuses(seed=8)[0]
