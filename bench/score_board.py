"""Offline Score over the whole demo board: the evidence-ledger scorer against the
pre-ledger keyword scorer (``baseline_keyword_score.py``), measured in the same run.

Every posting of ``resources/demo_board`` is read once (``description_from_source``, as
Enrich does for the demo board) into a ``JobText``, outside the timing. Then, per round,
each scorer scores every posting for one backend-engineer profile; the order of the two
alternates between rounds so drifting machine load hits both. Reported: per-round wall
and CPU time (median, min, max) of each, the ratio new / old of the medians and of the
minimums (target: ≤ 1.5× on the CPU medians), the one-time setup the new scorer pays on
first use (building the synonym index), and the new scores' distribution by title family,
so a change that makes the scorer faster by making it blind shows up too.

    .venv/bin/python bench/score_board.py
    .venv/bin/python bench/score_board.py --rounds 40 --json score_board.json
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_info, write_json  # noqa: E402
from baseline_keyword_score import keyword_score  # noqa: E402

from backend.domain.profile import CandidateProfile  # noqa: E402
from backend.pipeline.fit.synonyms import skill_index  # noqa: E402
from backend.pipeline.fit.titles import title_family  # noqa: E402
from backend.pipeline.posting_text import demo_board_jobs  # noqa: E402
from backend.pipeline.score import JobText, offline_score  # noqa: E402

TODAY = date(2026, 12, 1)
TARGET_RATIO = 1.5

PROFILE = CandidateProfile.model_validate({
    "resume": {
        "basics": {"name": "Ada Example", "label": "Senior Backend Engineer"},
        "work": [
            {"name": "Northwind", "position": "Senior Backend Engineer", "startDate": "2021-03",
             "highlights": ["Built Kafka event pipelines in Python", "Tuned PostgreSQL for billing",
                            "Ran services on Kubernetes in AWS"]},
            {"name": "Acme", "position": "Backend Engineer", "startDate": "2016-09", "endDate": "2021-02",
             "highlights": ["Wrote Go and Python APIs", "Docker, Redis and REST APIs"]},
        ],
        "skills": [{"name": "Backend", "keywords": ["Python", "Go", "PostgreSQL", "Kafka", "Kubernetes",
                                                     "AWS", "Docker", "Redis", "gRPC", "Terraform"]}],
        "languages": [{"language": "English", "fluency": "Native speaker"},
                      {"language": "German", "fluency": "B1"}],
        "education": [{"institution": "TU Berlin", "studyType": "BSc", "area": "Computer Science"}],
    },
    "targetTitles": ["Backend Engineer", "Senior Backend Engineer"], "locations": ["Berlin"],
    "remotePreference": "remote_or_hybrid", "salaryFloor": 70000, "salaryCurrency": "EUR",
})


def board_jobs() -> list[JobText]:
    return demo_board_jobs()


def time_round(score, jobs: list[JobText]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) to score every posting once."""
    wall, cpu = time.perf_counter(), time.process_time()
    for job in jobs:
        score(job)
    return time.perf_counter() - wall, time.process_time() - cpu


def distribution(jobs: list[JobText]) -> dict[str, dict]:
    by_family: dict[str, list[int]] = defaultdict(list)
    for job in jobs:
        by_family[title_family(job.title) or "(none)"].append(offline_score(PROFILE, job, today=TODAY).score)
    return {family: {"n": len(scores), "median": statistics.median(scores), "max": max(scores),
                     "at_least_50": sum(s >= 50 for s in scores)}
            for family, scores in sorted(by_family.items(), key=lambda kv: -statistics.median(kv[1]))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--json", help="also write the raw results here")
    args = parser.parse_args()

    jobs = board_jobs()
    started = time.perf_counter()
    skill_index()
    setup_s = time.perf_counter() - started

    scorers = {
        "keyword (old)": lambda job: keyword_score(PROFILE, job),
        "ledger (new)": lambda job: offline_score(PROFILE, job, today=TODAY),
    }
    for score in scorers.values():  # warm both: caches, lazy imports
        time_round(score, jobs[:20])
    wall: dict[str, list[float]] = {name: [] for name in scorers}
    cpu: dict[str, list[float]] = {name: [] for name in scorers}
    for index in range(args.rounds):
        order = list(scorers) if index % 2 == 0 else list(reversed(scorers))
        for name in order:
            seconds, cpu_seconds = time_round(scorers[name], jobs)
            wall[name].append(seconds)
            cpu[name].append(cpu_seconds)

    print(f"demo board: {len(jobs)} postings, {args.rounds} rounds per scorer; "
          f"synonym index built once in {setup_s * 1000:.1f} ms")
    print(f"{'scorer':<16}{'clock':<6}{'median ms':>11}{'min ms':>9}{'max ms':>9}{'µs/posting':>12}")
    for name in scorers:
        for clock, values in (("wall", wall[name]), ("cpu", cpu[name])):
            median = statistics.median(values)
            print(f"{name:<16}{clock:<6}{median * 1000:>11.1f}{min(values) * 1000:>9.1f}"
                  f"{max(values) * 1000:>9.1f}{median / len(jobs) * 1e6:>12.0f}")
    ratios = {}
    for clock, values in (("wall", wall), ("cpu", cpu)):
        old, new = values["keyword (old)"], values["ledger (new)"]
        ratios[clock] = {"median": statistics.median(new) / statistics.median(old),
                         "min": min(new) / min(old)}
    # CPU time is the verdict: other processes on a shared machine stretch wall time of
    # whichever scorer they happen to overlap, but not the CPU this process spends.
    verdict = "met" if ratios["cpu"]["median"] <= TARGET_RATIO else "MISSED"
    print(f"ratio new/old: cpu {ratios['cpu']['median']:.2f}× (medians), "
          f"{ratios['cpu']['min']:.2f}× (minimums); "
          f"wall {ratios['wall']['median']:.2f}× / {ratios['wall']['min']:.2f}×; "
          f"target ≤ {TARGET_RATIO}× (cpu medians) {verdict}")

    families = distribution(jobs)
    print(f"\n{'title family':<24}{'postings':>9}{'median':>8}{'max':>6}{'≥ 50':>6}")
    for family, row in families.items():
        print(f"{family:<24}{row['n']:>9}{row['median']:>8.0f}{row['max']:>6}{row['at_least_50']:>6}")

    write_json(args.json, {
        "postings": len(jobs), "wall_s": wall, "cpu_s": cpu, "setup_s": setup_s,
        "ratios": ratios, "target": TARGET_RATIO,
        "families": families, "machine": machine_info(),
    })
    return 0


if __name__ == "__main__":
    sys.exit(main())
