"""The evaluation set measures a model too (issue 30, item 5): ``bench/fit_eval.py
--provider openai_compat`` asks a model for the ledger through the pipeline's own
validation, and our deal-breaker checks hold whatever the model says.

The model here is a loopback OpenAI-compatible server (``tests/fakes/llm_servers.py``)
that answers every posting with an over-eager ledger: every requirement met.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tests.fakes.llm_servers import FakeLlmServer
from tests.fit_evaluation import evaluate, load_postings, load_seekers

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

import fit_eval  # noqa: E402

EAGER = json.dumps({"requirements": [
    {"kind": "title", "label": "The title", "importance": "must", "status": "met",
     "evidence": "Target title", "detail": None, "dealBreaker": False},
    {"kind": "skill", "label": "SQL", "importance": "must", "status": "met",
     "evidence": "Skills: SQL", "detail": None, "dealBreaker": False},
]})


def test_a_models_ledger_is_measured_on_the_same_set_and_cannot_skip_our_deal_breakers():
    seeker = next(s for s in load_seekers() if s.id == "data_analyst_toronto")
    postings = [p for p in load_postings() if p.id in ("data-001", "data-003", "data-010", "data-013")]
    with FakeLlmServer() as server:
        server.reply_with(EAGER)
        args = argparse.Namespace(base_url=server.openai_base_url, model="stand-in", api_key=None)
        report = evaluate(fit_eval.model_scorer(args), [seeker], postings)
        assert server.succeeded == len(postings)  # one validated answer each, no repair call
    scores = {pair.posting: pair.score for pair in report.pairs}
    # The model says all is met; on-site five days (data-001), Calgary (data-010) and
    # CAD 58–64k against an 85k floor (data-013) are deal-breakers our checks add,
    # whatever the model says. The remote-in-Canada BI role (data-003) keeps the model's
    # judgement.
    assert scores["data-001"] < 50 and scores["data-010"] < 50 and scores["data-013"] < 50
    assert scores["data-003"] >= 50
    assert {pair.posting for pair in report.deal_breaker_leaks()} == set()
