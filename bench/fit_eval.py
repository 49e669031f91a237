"""Fit judgement on the evaluation set: twelve job seekers in eleven lines of work and nine
countries against a board of postings in five languages (``tests/fixtures/fit_eval``),
every pair labelled good / acceptable / no by what a person in that job would say.

Reports precision and recall at the default threshold (50), NDCG@10 of each seeker's
ranking, the deal-breaker leaks (a *no* for a deal-breaker reason scored at or above the
threshold) and every wrong call with its reason and the ledger's top lines.

    .venv/bin/python bench/fit_eval.py                         # the offline rules
    .venv/bin/python bench/fit_eval.py --wrong                 # and every wrong call
    .venv/bin/python bench/fit_eval.py --provider openai_compat --base-url http://127.0.0.1:11434/v1 \\
        --model llama3.1:8b                                    # a model's ledger, same set
    .venv/bin/python bench/fit_eval.py --json fit_eval.json
    .venv/bin/python bench/fit_eval.py --set fit_holdout       # the second set (six more people)

Targets (issue 30): precision ≥ 0.95, recall ≥ 0.95, NDCG@10 ≥ 0.90, no deal-breaker leak.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import machine_info, write_json  # noqa: E402

from tests.fit_evaluation import (  # noqa: E402
    ROOT,
    THRESHOLD,
    TODAY,
    Report,
    evaluate,
    load_postings,
    load_seekers,
    offline_scorer,
)

TARGETS = {"precision": 0.95, "recall": 0.95, "ndcg_at_10": 0.90, "deal_breaker_leaks": 0}


def model_scorer(args: argparse.Namespace):
    """A scorer that asks a model for the ledger (the same validation and deal-breaker
    checks as the pipeline's Score stage)."""
    from backend.domain.fit import score_from_ledger
    from backend.llm.openai_compat import OpenAiCompatProvider
    from backend.pipeline.score import model_ledger

    provider = OpenAiCompatProvider(base_url=args.base_url, model=args.model, api_key=args.api_key)

    async def complete(system: str, user: str) -> str:
        return (await provider.complete(system=system, user=user, max_tokens=2000, json_mode=True)).text

    def score(profile, job):
        ledger = asyncio.run(model_ledger(complete, profile, job, today=TODAY))
        return score_from_ledger(ledger), ledger

    return score


def summary(report: Report) -> dict:
    labels = Counter(p.label for p in report.pairs)
    return {
        "pairs": len(report.pairs), "labels": dict(labels),
        "prepared": sum(p.prepared for p in report.pairs),
        "precision": round(report.precision(), 4), "recall": round(report.recall(), 4),
        "ndcg_at_10": round(report.ndcg(10), 4),
        "deal_breaker_leaks": len(report.deal_breaker_leaks()),
        "wrong_calls": len(report.wrong()),
    }


def print_wrong(report: Report) -> None:
    for pair in sorted(report.wrong(), key=lambda p: (p.seeker, p.posting)):
        verdict = "prepared" if pair.prepared else "skipped"
        print(f"\n{pair.seeker} × {pair.posting} “{pair.title}”: {pair.score} ({verdict}); "
              f"labelled {pair.label}: {pair.reason}")
        for line in pair.reasons:
            print(f"    {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wrong", action="store_true", help="print every wrong call")
    parser.add_argument("--seeker", help="only this seeker id")
    parser.add_argument("--provider", choices=("offline", "openai_compat"), default="offline")
    parser.add_argument("--base-url")
    parser.add_argument("--model")
    parser.add_argument("--api-key")
    parser.add_argument("--json")
    parser.add_argument("--set", default="fit_eval", choices=("fit_eval", "fit_holdout"),
                        help="which evaluation set under tests/fixtures")
    args = parser.parse_args()
    root = ROOT.parent / args.set
    seekers = [s for s in load_seekers(root) if not args.seeker or s.id == args.seeker]
    postings = load_postings(root)
    scorer = offline_scorer if args.provider == "offline" else model_scorer(args)
    started = time.perf_counter()
    report = evaluate(scorer, seekers, postings)
    elapsed = time.perf_counter() - started
    result = summary(report) | {"seekers": len(seekers), "postings": len(postings),
                                "threshold": THRESHOLD, "seconds": round(elapsed, 2),
                                "provider": args.provider if args.provider == "offline" else args.model}
    if args.wrong:
        print_wrong(report)
        print()
    for key, value in result.items():
        target = TARGETS.get(key)
        mark = "" if target is None else (" ✓" if (value <= target if key == "deal_breaker_leaks"
                                                    else value >= target) else f" ✗ (target {target})")
        print(f"{key:20} {value}{mark}")
    write_json(args.json, {"machine": machine_info(), "result": result, "targets": TARGETS,
                           "wrong": [p.__dict__ | {"prepared": p.prepared} for p in report.wrong()]})


if __name__ == "__main__":
    main()
